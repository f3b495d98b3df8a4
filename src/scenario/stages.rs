//! The workload: stage names and `after` references, ordering (via `dag`), and each
//! stage built by a [`StageCx`]: its steps in `stage` (time, demands, shares), its
//! duration distribution in `duration`, its holds in `holds`, a PCIe transfer in
//! `transfer`.

mod duration;
mod holds;
mod stage;
mod transfer;

use std::collections::HashMap;

use crate::model::{Hardware, Stage, Workload};

use super::capacity::check_live_holds;
use super::cpu_load::KernelCpuLoad;
use super::dag::{Reach, topo_order};
use super::error::{ErrorKind, Locator, ScenarioError, join_index, join_key};
use super::host_scaling::{HostScaling, ScaledStage};
use super::schema::WorkloadSpec;

/// The longest job name accepted (a word, as reports print it: "s/proof", "proofs/day").
pub const MAX_JOB_NAME_CHARS: usize = 24;

/// `workload.job_name`: what one job is called in reports, a lowercase word (default
/// "job"); its plural adds an "s".
fn job_name(name: Option<&str>, loc: &Locator) -> Result<String, ScenarioError> {
    let Some(name) = name else {
        return Ok("job".into());
    };
    let word = !name.is_empty()
        && name.len() <= MAX_JOB_NAME_CHARS
        && name.chars().all(|c| c.is_ascii_lowercase() || c == '_');
    if !word {
        return Err(loc.error(
            ErrorKind::Value,
            "workload.job_name",
            format!(
                "{name:?} is not a job name; give one lowercase word of 1 to \
                 {MAX_JOB_NAME_CHARS} letters (a-z, _), e.g. \"proof\" (reports then say \
                 s/proof and proofs/day)"
            ),
        ));
    }
    Ok(name.to_string())
}

/// Builds the workload; stages come out in topological order.
/// Stage times are carried from `[workload.measured_on]` to `hw` by `scaling`; each
/// stage it changes is listed in `scaled`.
pub fn workload(
    w: &WorkloadSpec,
    hw: &Hardware,
    scaling: &HostScaling,
    kernel_load: &KernelCpuLoad,
    loc: &Locator,
    scaled: &mut Vec<ScaledStage>,
) -> Result<Workload, ScenarioError> {
    let partitions = w.partitions.unwrap_or(1);
    if partitions == 0 {
        return Err(loc.error(
            ErrorKind::Value,
            "workload.partitions",
            "0 partitions; a job has at least 1",
        ));
    }
    if w.stages.is_empty() {
        return Err(loc.error(
            ErrorKind::MissingKey,
            "workload.stages",
            "no stages; declare at least one [[workload.stages]]",
        ));
    }
    let job_name = job_name(w.job_name.as_deref(), loc)?;
    let key = |i: usize| join_index("workload.stages", i);

    // Names and `after` references, in file order.
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    for (i, s) in w.stages.iter().enumerate() {
        if s.name.trim().is_empty() {
            return Err(loc.error(
                ErrorKind::Value,
                &join_key(&key(i), "name"),
                "empty stage name",
            ));
        }
        if let Some(j) = by_name.insert(s.name.as_str(), i) {
            return Err(loc.error(
                ErrorKind::Value,
                &join_key(&key(i), "name"),
                format!(
                    "stage name {:?} is already used by workload.stages[{j}]; stage names are unique",
                    s.name
                ),
            ));
        }
    }
    let all_names = || {
        w.stages
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut after: Vec<Vec<usize>> = Vec::with_capacity(w.stages.len());
    for (i, s) in w.stages.iter().enumerate() {
        let mut deps = Vec::new();
        for (j, a) in s.after.iter().enumerate() {
            let d = *by_name.get(a.as_str()).ok_or_else(|| {
                loc.error(
                    ErrorKind::Reference,
                    &join_index(&join_key(&key(i), "after"), j),
                    format!("no stage named {a:?}; stages: {}", all_names()),
                )
            })?;
            if !deps.contains(&d) {
                deps.push(d);
            }
        }
        after.push(deps);
    }
    let order = topo_order(&after).map_err(|cycle| {
        let names: Vec<&str> = cycle.iter().map(|&i| w.stages[i].name.as_str()).collect();
        loc.error(
            ErrorKind::Cycle,
            &join_key(&key(cycle[0]), "after"),
            format!(
                "the stages' `after` lists form a cycle: {} (each runs after the one before it); the stages must form a DAG",
                names.join(" -> ")
            ),
        )
    })?;
    // new index of each file-order stage
    let mut new_of = vec![0usize; w.stages.len()];
    for (n, &old) in order.iter().enumerate() {
        new_of[old] = n;
    }
    let reach = Reach::new(&after);
    let per_partition: Vec<bool> = w
        .stages
        .iter()
        .map(|s| s.per_partition.unwrap_or(true))
        .collect();

    let mut built: Vec<Option<Stage>> = vec![None; w.stages.len()];
    for (i, s) in w.stages.iter().enumerate() {
        let cx = StageCx {
            i,
            key: key(i),
            hw,
            scaling,
            kernel_load,
            measured_elsewhere: w.measured_on.is_some(),
            loc,
            by_name: &by_name,
            reach: &reach,
            per_partition: &per_partition,
            all_names: &all_names,
        };
        let (mut st, note) = cx.stage(s)?;
        scaled.extend(note);
        st.after = after[i].iter().map(|&d| new_of[d]).collect();
        st.after.sort_unstable();
        for h in &mut st.holds {
            h.until = new_of[h.until];
        }
        built[new_of[i]] = Some(st);
    }
    let stages: Vec<Stage> = built.into_iter().flatten().collect();
    let wl = Workload {
        job_name,
        partitions,
        stages,
    };
    check_live_holds(&wl, hw, &order, loc)?;
    Ok(wl)
}

/// What building one stage needs to know: its place in the file, the host, the other
/// stages (names, order, scope) and where errors point.
struct StageCx<'a> {
    i: usize,
    key: String,
    hw: &'a Hardware,
    scaling: &'a HostScaling,
    /// Measured kernel stretches next to busy CPUs.
    kernel_load: &'a KernelCpuLoad,
    /// The scenario states `[workload.measured_on]`: a stage may ask for more threads
    /// than the running pool has (its time stretches).
    measured_elsewhere: bool,
    loc: &'a Locator,
    by_name: &'a HashMap<&'a str, usize>,
    reach: &'a Reach,
    per_partition: &'a [bool],
    /// Every stage name, comma separated (built only for an error message).
    all_names: &'a dyn Fn() -> String,
}

impl StageCx<'_> {
    fn k(&self, field: &str) -> String {
        join_key(&self.key, field)
    }

    fn err(&self, kind: ErrorKind, field: &str, msg: impl Into<String>) -> ScenarioError {
        self.loc.error(kind, &self.k(field), msg)
    }

    fn need_gpu(&self, field: &str, what: &str) -> Result<(), ScenarioError> {
        if self.hw.gpus.is_empty() {
            return Err(self.err(
                ErrorKind::Value,
                field,
                format!(
                    "{what} needs a GPU, but the host has none (add [hardware.gpu] with count >= 1)"
                ),
            ));
        }
        Ok(())
    }
}
