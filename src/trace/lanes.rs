//! Lanes for drawing stage instances: instances are grouped by where they run (a GPU,
//! else their stage), and within a group packed greedily onto the lowest free lane, so
//! the number of lanes is the group's peak concurrency. GPU groups come first.

use super::recorder::TraceRecorder;

/// One horizontal lane.
#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    /// Group name: a GPU name or a stage name.
    pub group: String,
    /// Lane number within the group.
    pub slot: usize,
    /// Lanes in the group.
    pub group_lanes: usize,
    /// The group is a GPU.
    pub gpu: bool,
}

impl Lane {
    /// Display name: `gpu0` or `gpu0 #2`, `synthesis #5`.
    pub fn label(&self) -> String {
        if self.group_lanes == 1 {
            self.group.clone()
        } else {
            format!("{} #{}", self.group, self.slot)
        }
    }
}

/// Lanes, top to bottom, and the lane of each recorded stage instance.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LaneLayout {
    /// Lanes in display order (GPU groups first).
    pub lanes: Vec<Lane>,
    /// For `rec.stages[i]`, its lane index.
    pub lane_of: Vec<usize>,
}

/// Assigns every stage instance of `rec` to a lane.
pub fn assign_lanes(rec: &TraceRecorder) -> LaneLayout {
    // Group key: (0, gpu) for GPU-bound instances, (1, stage) for the rest.
    let key = |i: usize| {
        let s = &rec.stages[i];
        match s.gpu {
            Some(g) => (0u8, g as usize),
            None => (1u8, s.stage),
        }
    };
    let mut groups: Vec<(u8, usize)> = (0..rec.stages.len()).map(key).collect();
    groups.sort_unstable();
    groups.dedup();

    let mut lanes = Vec::new();
    let mut lane_of = vec![0; rec.stages.len()];
    for g in groups {
        let mut members: Vec<usize> = (0..rec.stages.len()).filter(|&i| key(i) == g).collect();
        members.sort_by_key(|&i| (rec.stages[i].start, rec.stages[i].end, i));
        let mut ends: Vec<crate::time::SimTime> = Vec::new();
        let mut slot_of = Vec::with_capacity(members.len());
        for &i in &members {
            let s = &rec.stages[i];
            let slot = match ends.iter().position(|&e| e <= s.start) {
                Some(k) => k,
                None => {
                    ends.push(s.end);
                    ends.len() - 1
                }
            };
            ends[slot] = s.end;
            slot_of.push(slot);
        }
        let base = lanes.len();
        let (gpu, group) = match g {
            (0, gi) => (true, rec.gpu_name(gi as u32)),
            (_, st) => (
                false,
                rec.stage_names
                    .get(st)
                    .cloned()
                    .unwrap_or_else(|| format!("stage{st}")),
            ),
        };
        for slot in 0..ends.len() {
            lanes.push(Lane {
                group: group.clone(),
                slot,
                group_lanes: ends.len(),
                gpu,
            });
        }
        for (&i, slot) in members.iter().zip(slot_of) {
            lane_of[i] = base + slot;
        }
    }
    LaneLayout { lanes, lane_of }
}
