//! One seed's run as a sweep keeps it: the report's verdicts, typed, and the report as
//! JSON, whose numeric leaves are the sweep's metrics and which the resume journal and
//! shard files store. A report read back from those files gets its verdicts from its
//! notes ([`Verdicts::from_notes`]).
//!
//! The JSON is kept, not re-rendered from a parsed report: it holds derived leaves
//! (`dram.mean_gbps`, the breakdown's shares) rounded to 9 digits, which a report rebuilt
//! from rounded fields would not reproduce to the last digit, so a resumed or merged
//! sweep would differ from one run in one go.

use serde_json::Value;

use crate::analysis::report::{Report, SteadyState, UnreadStall, Verdicts};
use crate::engine::Stall;

/// One seed's run within a sweep point.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedReport {
    /// Why the run stalled, if it did.
    pub stalled: Option<Stall>,
    /// Whether its window times the loop's steady state.
    pub steady_state: SteadyState,
    /// The report as `bwsim run --format json` writes it.
    pub json: Value,
}

impl From<&Report> for SeedReport {
    fn from(report: &Report) -> SeedReport {
        let Verdicts {
            stalled,
            steady_state,
        } = report.verdicts();
        SeedReport {
            stalled,
            steady_state,
            json: report.to_json(),
        }
    }
}

impl SeedReport {
    /// A report read back from a file: a JSON object whose `notes`, when present, are a
    /// list of strings. The error says what is wrong, for the caller to place.
    pub fn from_json(json: Value) -> Result<SeedReport, StoredReportError> {
        if !json.is_object() {
            return Err(StoredReportError::NotAnObject);
        }
        // Its stall note names its seed only when the stall is another seed's.
        let seed = json.get("seed").and_then(Value::as_u64);
        let Verdicts {
            stalled,
            steady_state,
        } = Verdicts::from_notes(notes_of(&json)?, seed).map_err(StoredReportError::Stall)?;
        Ok(SeedReport {
            stalled,
            steady_state,
            json,
        })
    }
}

/// Why a value read back from a file is not a run report a sweep can use (said after
/// the file and the place in it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoredReportError {
    /// Not a JSON object.
    #[error("is not a run report (a JSON object)")]
    NotAnObject,
    /// `notes` is there but not a list.
    #[error("notes is not a list of text")]
    NotesNotAList,
    /// A note is not text.
    #[error("notes holds something other than text")]
    NoteNotText,
    /// A stall note bwsim does not write.
    #[error("notes {0}")]
    Stall(UnreadStall),
}

/// A stored report's notes: absent, null or a list of text.
pub fn notes_of(report: &Value) -> Result<Vec<&str>, StoredReportError> {
    match report.get("notes") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => (items.iter())
            .map(|n| n.as_str().ok_or(StoredReportError::NoteNotText))
            .collect(),
        Some(_) => Err(StoredReportError::NotesNotAList),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_stored_report_gets_its_verdicts_from_its_notes() {
        let why = "3 of 10 jobs finished; 2 stage instances wait for holdable resources that \
                   are never released";
        let stalled = json!({"seed": 4, "notes": [format!("stalled: {why}")]});
        let r = SeedReport::from_json(stalled).unwrap();
        let stall = Stall {
            seed: 4,
            jobs_completed: 3,
            jobs_total: 10,
            waiting_instances: 2,
        };
        assert_eq!(r.stalled, Some(stall));
        assert!(r.steady_state.is_reached());
        let fine = SeedReport::from_json(json!({"jobs_per_hour": 1.0})).unwrap();
        assert_eq!(
            (fine.stalled, fine.steady_state),
            (None, SteadyState::Reached)
        );
        let err = |v: Value| SeedReport::from_json(v).unwrap_err();
        assert_eq!(err(json!([1])), StoredReportError::NotAnObject);
        assert_eq!(
            err(json!({"notes": "stalled: x"})),
            StoredReportError::NotesNotAList
        );
        assert_eq!(err(json!({"notes": [1]})), StoredReportError::NoteNotText);
        let unread = "stalled: 3 of 10 jobs finished";
        assert_eq!(
            err(json!({"seed": 1, "notes": [unread]})),
            StoredReportError::Stall(UnreadStall(unread.into()))
        );
    }
}
