//! The two verdicts a program reads from a run before trusting its numbers: did it stall
//! (the engine's [`Stall`], carried as it is), and did its closed loop reach a steady
//! state ([`SteadyState`]). Both are typed fields of the report. Its JSON carries each
//! as a note that begins with a fixed prefix (the text users read);
//! [`Verdicts::from_notes`] reads them back from a stored report, the only place that
//! looks at those prefixes.

use crate::engine::Stall;

/// How the note of a run that stalled begins.
const NOTE_STALLED: &str = "stalled";
/// How the note of a closed loop with no steady state begins.
const NOTE_NO_STEADY_STATE: &str = "no steady state";

/// Why the run of seed `seed` stopped with jobs unfinished, as a report of the run of
/// seed `report_seed` says it: the engine's words, after "seed N: " when the stall is
/// another seed's (a replicated report names the first seed that stalled).
pub fn stall_why(stall: &Stall, report_seed: u64) -> String {
    if stall.seed == report_seed {
        stall.to_string()
    } else {
        format!("seed {}: {stall}", stall.seed)
    }
}

/// The note a report of the run of seed `report_seed` shows for `stall`.
pub fn stall_note(stall: &Stall, report_seed: u64) -> String {
    format!("{NOTE_STALLED}: {}", stall_why(stall, report_seed))
}

/// The stall whose [`stall_why`] is `why` in a report of seed `report_seed` (None: a
/// report that does not say its seed); None when bwsim does not write such text.
fn read_stall(why: &str, report_seed: Option<u64>) -> Option<Stall> {
    let (seed, text) = match why.strip_prefix("seed ") {
        Some(rest) => {
            let (seed, text) = rest.split_once(": ")?;
            (seed.parse().ok()?, text)
        }
        None => (report_seed?, why),
    };
    let (completed, rest) = text.split_once(" of ")?;
    let (total, rest) = rest.split_once(" jobs finished; ")?;
    let waiting =
        rest.strip_suffix(" stage instances wait for holdable resources that are never released")?;
    let stall = Stall {
        seed,
        jobs_completed: completed.parse().ok()?,
        jobs_total: total.parse().ok()?,
        waiting_instances: waiting.parse().ok()?,
    };
    // Only what the engine writes, to the letter ("seed N: " only before another seed's
    // stall).
    let written = match report_seed {
        Some(own) => stall_why(&stall, own),
        // (Without a seed of its own, only a named seed's stall reads: see above.)
        None => format!("seed {seed}: {stall}"),
    };
    (written == why).then_some(stall)
}

/// A stall note whose text is not one bwsim writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("holds a stall note bwsim does not write: '{0}'")]
pub struct UnreadStall(pub String);

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
    /// Reads the verdicts back from the notes of a report of seed `seed` (None: a report
    /// that does not say), as its JSON stores them: the first note of each kind counts.
    pub fn from_notes<'a>(
        notes: impl IntoIterator<Item = &'a str>,
        seed: Option<u64>,
    ) -> Result<Verdicts, UnreadStall> {
        let mut verdicts = Verdicts::default();
        for note in notes {
            if verdicts.stalled.is_none()
                && let Some(why) = after_prefix(note, NOTE_STALLED)
            {
                let stall = read_stall(why, seed).ok_or_else(|| UnreadStall(note.into()))?;
                verdicts.stalled = Some(stall);
            }
            if verdicts.steady_state.is_reached()
                && let Some(why) = after_prefix(note, NOTE_NO_STEADY_STATE)
            {
                verdicts.steady_state = SteadyState::FirstWave { why: why.into() };
            }
        }
        Ok(verdicts)
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
        // A report of seed 1 that stalled, with seed 2's stall noted after it.
        let stall = Stall {
            seed: 1,
            jobs_completed: 3,
            jobs_total: 10,
            waiting_instances: 2,
        };
        let later = Stall { seed: 2, ..stall };
        let wave = SteadyState::FirstWave {
            why: "12 of the 20 measured jobs start together".into(),
        };
        let wave_note = wave.note().unwrap();
        let notes = [
            "host_ram is full at times".to_string(),
            stall_note(&stall, 1),
            wave_note,
            stall_note(&later, 1),
        ];
        assert_eq!(
            notes[1],
            "stalled: 3 of 10 jobs finished; 2 stage instances wait for holdable resources \
             that are never released"
        );
        assert!(notes[3].starts_with("stalled: seed 2: 3 of 10 jobs finished; "));
        let read = Verdicts::from_notes(notes.iter().map(String::as_str), Some(1)).unwrap();
        assert_eq!(read.stalled, Some(stall));
        assert_eq!(read.steady_state, wave);
        // Read by a report of another seed, the first note is that seed's stall.
        let other = Verdicts::from_notes([notes[3].as_str()], Some(7)).unwrap();
        assert_eq!(other.stalled, Some(later));
        assert_eq!(
            Verdicts::from_notes(
                ["stalledness is not a stall", "no steady statement"],
                Some(1)
            ),
            Ok(Verdicts::default())
        );
        assert_eq!(
            Verdicts::from_notes(["stalled: 3 of 10 jobs finished"], Some(1)),
            Err(UnreadStall("stalled: 3 of 10 jobs finished".into()))
        );
        // A report that does not say its seed: only another seed's stall reads.
        assert_eq!(
            Verdicts::from_notes([notes[3].as_str()], None).map(|v| v.stalled),
            Ok(Some(later))
        );
        assert!(Verdicts::from_notes([notes[1].as_str()], None).is_err());
        assert!(Verdicts::default().steady_state.is_reached());
        assert_eq!(SteadyState::Reached.note(), None);
    }
}
