//! What a bad `--param` argument or SPEC is: the error type, the forms a SPEC may take
//! (quoted in every error) and the most values one SPEC may expand to. Its own file so
//! that the SPEC parser and the range expander both build on it.

/// The most values one SPEC may expand to; guards against `1..1000000000` typos.
pub const MAX_VALUES: usize = 10_000;

/// What a valid SPEC looks like, quoted in every error.
pub const SPEC_FORMS: &str = "a range START..END (inclusive, e.g. 1..32), a stepped range \
START..END:STEP (e.g. 1..64:4 or 0.5..2.0:0.25), or a list of integers, floats or \
true/false (e.g. 4,8,12,16)";

/// A bad `--param` argument or SPEC.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    /// `--param` without `KEY=`.
    #[error("--param '{arg}': expected KEY=SPEC, e.g. params.synthesis_concurrency=1..32")]
    MissingKey {
        /// The whole argument.
        arg: String,
    },
    /// The same key swept twice.
    #[error("--param '{key}' is given twice; give each parameter once")]
    DuplicateKey {
        /// The key.
        key: String,
    },
    /// The sweep would run more points or simulations than it can hold in memory.
    #[error("{what} is more than the limit of {limit}; sweep fewer values or fewer seeds")]
    TooLarge {
        /// What is counted, e.g. "the grid's 1000000000000 points".
        what: String,
        /// The limit.
        limit: u64,
    },
    /// A malformed `--shard I/N`.
    #[error("--shard '{arg}': {problem}; give I/N with 0 <= I < N, e.g. 0/4 .. 3/4")]
    Shard {
        /// The argument as given.
        arg: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The SPEC is malformed.
    #[error("invalid SPEC '{spec}': {problem}; a SPEC is {SPEC_FORMS}")]
    Invalid {
        /// The SPEC as given.
        spec: String,
        /// What is wrong with it.
        problem: String,
    },
}

impl SpecError {
    pub(crate) fn invalid(spec: &str, problem: impl Into<String>) -> SpecError {
        SpecError::Invalid {
            spec: spec.to_string(),
            problem: problem.into(),
        }
    }
}
