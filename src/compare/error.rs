//! A `bwsim compare` flag that cannot be used (exit 2); host files have
//! [`super::HostError`].

/// A bad `compare` flag: which one and what is allowed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{flag}: {problem}")]
pub struct CompareInputError {
    /// The flag, e.g. `--amortise-years`.
    pub flag: String,
    /// What is wrong and what is allowed.
    pub problem: String,
}

impl CompareInputError {
    /// An error about `flag`.
    pub fn new(flag: &str, problem: impl Into<String>) -> Self {
        CompareInputError {
            flag: flag.into(),
            problem: problem.into(),
        }
    }
}
