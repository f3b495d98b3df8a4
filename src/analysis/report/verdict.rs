//! The two verdicts a program reads from a run before trusting its numbers: did it stall
//! ([`Stall`]), and did its closed loop reach a steady state ([`SteadyState`]). Both are
//! typed fields of the report. Its JSON carries each as a note that begins with a fixed
//! prefix (the text users read); [`Verdicts::from_notes`] reads them back from a stored
//! report, the only place that looks at those prefixes.

use std::fmt;

/// How the note of a run that stalled begins.
const NOTE_STALLED: &str = "stalled";
/// How the note of a closed loop with no steady state begins.
const NOTE_NO_STEADY_STATE: &str = "no steady state";

/// Why a run stopped with jobs unfinished: its numbers then describe only the part that
/// ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stall {
    /// What the engine found ("3 of 10 jobs finished: ..."), or for a replicated report
    /// "seed N: " and that seed's reason.
    pub why: String,
}

impl Stall {
    /// The note the report shows for it.
    pub fn note(&self) -> String {
        format!("{NOTE_STALLED}: {}", self.why)
    }
}

impl fmt::Display for Stall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.why)
    }
}

impl From<&str> for Stall {
    fn from(why: &str) -> Stall {
        Stall { why: why.into() }
    }
}

/// Whether the measurement window times the loop's steady state.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SteadyState {
    /// Open arrivals, or a closed loop whose measured jobs mostly start after its first
    /// wave.
    #[default]
    Reached,
    /// A closed loop whose measured jobs mostly start together at t = 0: the window times
    /// one batch draining, and its throughput can be any number.
    FirstWave {
        /// How many measured jobs start at once, and what to change.
        why: String,
    },
}

impl SteadyState {
    /// True unless the window times the first wave.
    pub fn is_reached(&self) -> bool {
        matches!(self, SteadyState::Reached)
    }

    /// The note the report shows, when the steady state was not reached.
    pub fn note(&self) -> Option<String> {
        match self {
            SteadyState::Reached => None,
            SteadyState::FirstWave { why } => Some(format!("{NOTE_NO_STEADY_STATE}: {why}")),
        }
    }
}

/// Both verdicts of one run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Verdicts {
    /// Why it stalled, if it did.
    pub stalled: Option<Stall>,
    /// Whether its window times a steady state.
    pub steady_state: SteadyState,
}

impl Verdicts {
    /// Reads the verdicts back from a report's notes, as its JSON stores them: the first
    /// note of each kind counts.
    pub fn from_notes<'a>(notes: impl IntoIterator<Item = &'a str>) -> Verdicts {
        let mut verdicts = Verdicts::default();
        for note in notes {
            if verdicts.stalled.is_none()
                && let Some(why) = after_prefix(note, NOTE_STALLED)
            {
                verdicts.stalled = Some(Stall::from(why));
            }
            if verdicts.steady_state.is_reached()
                && let Some(why) = after_prefix(note, NOTE_NO_STEADY_STATE)
            {
                verdicts.steady_state = SteadyState::FirstWave { why: why.into() };
            }
        }
        verdicts
    }
}

/// The text after "`prefix`: ".
fn after_prefix<'a>(note: &'a str, prefix: &str) -> Option<&'a str> {
    note.strip_prefix(prefix)?.strip_prefix(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_read_back_from_their_notes() {
        let stall = Stall::from("3 of 10 jobs finished");
        let wave = SteadyState::FirstWave {
            why: "12 of the 20 measured jobs start together".into(),
        };
        let wave_note = wave.note().unwrap();
        let notes = [
            "host_ram is full at times".to_string(),
            stall.note(),
            wave_note,
            Stall::from("seed 2: later").note(),
        ];
        let read = Verdicts::from_notes(notes.iter().map(String::as_str));
        assert_eq!(read.stalled, Some(stall));
        assert_eq!(read.steady_state, wave);
        assert_eq!(
            Verdicts::from_notes(["stalledness is not a stall", "no steady statement"]),
            Verdicts::default()
        );
        assert!(Verdicts::default().steady_state.is_reached());
        assert_eq!(SteadyState::Reached.note(), None);
    }
}
