//! The notes under the comparison table: how stage times carry to a host, how bandwidths
//! are derived, how the best setting is chosen, what each host gets and where prices
//! come from.

use std::path::Path;

use crate::analysis::throughput::JobName;

/// The assumptions, one note each, for the scenario `scenario` (which states it measured
/// its stage times on `measured_on`, if it does) searched over `search` with `seeds`
/// replications per setting, its jobs called `job`.
pub fn assumptions(
    scenario: &Path,
    measured_on: Option<&str>,
    search: &[String],
    seeds: u32,
    job: &JobName,
) -> Vec<String> {
    let work = match measured_on {
        Some(host) => format!(
            "Stage times are those {} states it measured{}; on each host a CPU stage's time \
             scales by the work rate it gets there (threads x per-thread throughput (SMT, \
             all-core clock) x one core's speed), its DRAM-latency share by the threads alone, \
             and a GPU kernel's by the GPU's kernel speed (listed per host above). Transfers \
             take the host's link; the latency curve, DMA factors and staging stay the \
             scenario's.",
            scenario.display(),
            if host.is_empty() {
                String::new()
            } else {
                format!(" on {host}")
            }
        ),
        None => format!(
            "A host profile changes the machine, not the work: {} does not say where its \
             stage times were measured ([workload.measured_on]), so they are kept on every \
             host; another GPU model counts by number, memory and PCIe link only, and a \
             stage asking for more threads of the cpu pool than a host has is given the \
             host's threads with its time unchanged (optimistic for smaller hosts).",
            scenario.display()
        ),
    };
    vec![
        work,
        format!(
            "DRAM GB/s = channels x MT/s x 8 B x efficiency ({} unless the host file says), \
             or the host's measured figure; PCIe GB/s per direction = lanes x lane rate x {} \
             unless measured.",
            super::host::DEFAULT_DRAM_EFFICIENCY,
            super::host::DEFAULT_PCIE_EFFICIENCY
        ),
        format!(
            "Best setting: searched over {} ({seeds} replication(s) per setting; {per_day} \
             and {per} are their mean ± a 95% Student t interval). The setting named is the \
             smallest whose {per_day} lie inside the 95% interval of the difference from \
             the highest mean, as `sweep` names its knee: the highest mean alone is picked \
             from noise. Settings that stalled, or whose measured {plural} mostly started \
             together at t = 0 (no steady state), are not results.",
            search.join(" x "),
            per_day = job.per_day(),
            per = job.seconds_per(),
            plural = job.plural(),
        ),
        "Each host gets its own cores, threads per core, SMT yield (the host file's, else \
         the scenario's capped at threads per core), all-core curve (from its boost and \
         all-core clocks) and core speed where the host file gives them; a key it leaves \
         out keeps the scenario's."
            .into(),
        "RAM needed: the modelled peak host RAM at the best setting plus what the scenario \
         keeps resident (host RAM minus the RAM it leaves to jobs)."
            .into(),
        "Prices and power: from each host file, which cites its sources and marks estimates."
            .into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notes_name_where_stage_times_were_measured_and_what_was_searched() {
        let notes = assumptions(
            Path::new("s.toml"),
            Some("box A"),
            &["params.c=1..4".into(), "params.d=1,2".into()],
            3,
            &JobName::new("proof"),
        );
        assert!(notes[0].starts_with("Stage times are those s.toml states it measured on box A;"));
        assert!(notes[2].contains("over params.c=1..4 x params.d=1,2 (3 replication(s)"));
        assert!(notes[2].contains("the smallest whose proofs/day lie inside"));
        // A scenario that does not say where it was measured keeps its times everywhere.
        let job = JobName::default();
        let kept = assumptions(
            Path::new("s.toml"),
            None,
            &["params.c=1..4".into()],
            1,
            &job,
        );
        assert!(kept[0].contains("does not say where its stage times were measured"));
        // Unnamed host: no " on ".
        let unnamed = assumptions(Path::new("s.toml"), Some(""), &[], 1, &job);
        assert!(unnamed[0].starts_with("Stage times are those s.toml states it measured;"));
    }
}
