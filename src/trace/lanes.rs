//! Lanes for drawing a run: per GPU a bracket track (its `gpu_busy` brackets), a kernel
//! track and, when the model has any, a copy track; then one group of lanes per host
//! stage, wherever it ran (prep_msm on a GPU worker is host work, so it is not on a GPU
//! lane). Within a group, intervals are packed greedily onto the lowest free lane, so
//! the group has as many lanes as it has peak concurrency.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::phases::{Bracket, brackets};
use super::recorder::{StageKind, TraceRecorder};
use crate::time::SimTime;

/// What a lane shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LaneKind {
    /// A GPU's brackets (the markers' view of GPU busy).
    Bracket,
    /// A GPU's kernels.
    Kernel,
    /// Copies over a GPU's link.
    Copy,
    /// Host stages.
    Host,
}

/// One horizontal lane.
#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    /// Group name: `gpu0 brackets`, `gpu0 kernels`, `gpu0 copies` or a stage name.
    pub group: String,
    /// Lane number within the group.
    pub slot: usize,
    /// Lanes in the group.
    pub group_lanes: usize,
    /// What the lane shows.
    pub kind: LaneKind,
}

impl Lane {
    /// Display name: `gpu0 kernels` or `gpu0 kernels #2`, `synthesis #5`.
    pub fn label(&self) -> String {
        if self.group_lanes == 1 {
            self.group.clone()
        } else {
            format!("{} #{}", self.group, self.slot)
        }
    }

    /// The lane belongs to a GPU (brackets, kernels or copies).
    pub fn gpu(&self) -> bool {
        self.kind != LaneKind::Host
    }
}

/// Lanes, top to bottom, and the lane of every stage instance and bracket.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LaneLayout {
    /// Lanes in display order (GPU groups first).
    pub lanes: Vec<Lane>,
    /// For `rec.stages[i]`, its lane index.
    pub lane_of: Vec<usize>,
    /// The run's brackets ([`brackets`]).
    pub brackets: Vec<Bracket>,
    /// For `brackets[i]`, its lane index.
    pub bracket_lane_of: Vec<usize>,
}

/// A group's sort key: GPU groups by GPU then kind, then host stages by stage id.
type GroupKey = (LaneKind, usize);

fn sort_key(g: GroupKey) -> (u8, usize, LaneKind) {
    match g.0 {
        LaneKind::Host => (1, g.1, g.0),
        k => (0, g.1, k),
    }
}

/// Packs intervals, in start order, greedily onto the lowest free lane (one whose last
/// interval ended by this one's start), telling `place` each interval's lane; returns
/// the lanes used. Free lanes wait in a heap, so a group of many lanes (a burst of
/// brackets waiting for a GPU) costs n log n, not n x lanes.
fn pack(
    intervals: impl Iterator<Item = (SimTime, SimTime)>,
    mut place: impl FnMut(usize, usize),
) -> usize {
    let mut busy: BinaryHeap<Reverse<(SimTime, usize)>> = BinaryHeap::new();
    let mut free: BinaryHeap<Reverse<usize>> = BinaryHeap::new();
    let mut lanes = 0;
    for (k, (start, end)) in intervals.enumerate() {
        while let Some(&Reverse((e, lane))) = busy.peek() {
            if e > start {
                break;
            }
            busy.pop();
            free.push(Reverse(lane));
        }
        let lane = match free.pop() {
            Some(Reverse(lane)) => lane,
            None => {
                lanes += 1;
                lanes - 1
            }
        };
        busy.push(Reverse((end, lane)));
        place(k, lane);
    }
    lanes
}

/// Assigns every stage instance and bracket of `rec` to a lane.
pub fn assign_lanes(rec: &TraceRecorder) -> LaneLayout {
    let brackets = brackets(rec);
    // Items: stage instances first, then brackets, each with its group and interval.
    let stage_group = |i: usize| -> GroupKey {
        let s = &rec.stages[i];
        match (rec.stage_kind(s.stage), s.gpu) {
            (StageKind::Kernel, Some(g)) => (LaneKind::Kernel, g as usize),
            (StageKind::Copy, Some(g)) => (LaneKind::Copy, g as usize),
            _ => (LaneKind::Host, s.stage),
        }
    };
    let mut items: Vec<(GroupKey, SimTime, SimTime)> = (0..rec.stages.len())
        .map(|i| (stage_group(i), rec.stages[i].start, rec.stages[i].end))
        .collect();
    items.extend((brackets.iter()).map(|b| ((LaneKind::Bracket, b.gpu as usize), b.start, b.end)));
    // Every item once, by group (in display order), then start, end and index.
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_unstable_by_key(|&i| (sort_key(items[i].0), items[i].1, items[i].2, i));

    let mut lanes = Vec::new();
    let mut lane_of_item = vec![0; items.len()];
    for members in order.chunk_by(|&a, &b| items[a].0 == items[b].0) {
        let g = items[members[0]].0;
        let base = lanes.len();
        let count = pack(
            members.iter().map(|&i| (items[i].1, items[i].2)),
            |k, slot| {
                lane_of_item[members[k]] = base + slot;
            },
        );
        let group = match g {
            (LaneKind::Host, st) => rec
                .stage_names
                .get(st)
                .cloned()
                .unwrap_or_else(|| format!("stage{st}")),
            (kind, gpu) => {
                let what = match kind {
                    LaneKind::Bracket => "brackets",
                    LaneKind::Kernel => "kernels",
                    _ => "copies",
                };
                format!("{} {what}", rec.gpu_name(gpu as u32))
            }
        };
        for slot in 0..count {
            lanes.push(Lane {
                group: group.clone(),
                slot,
                group_lanes: count,
                kind: g.0,
            });
        }
    }
    let bracket_lane_of = lane_of_item.split_off(rec.stages.len());
    LaneLayout {
        lanes,
        lane_of: lane_of_item,
        brackets,
        bracket_lane_of,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The greedy rule the heaps keep: the lowest lane whose last interval has ended,
    /// found by scanning every lane.
    fn by_scan(intervals: &[(SimTime, SimTime)]) -> Vec<usize> {
        let mut ends: Vec<SimTime> = Vec::new();
        let mut lanes = Vec::new();
        for &(start, end) in intervals {
            let lane = match ends.iter().position(|&e| e <= start) {
                Some(k) => k,
                None => {
                    ends.push(SimTime::ZERO);
                    ends.len() - 1
                }
            };
            ends[lane] = end;
            lanes.push(lane);
        }
        lanes
    }

    #[test]
    fn heaps_pick_the_lanes_a_scan_of_every_lane_picks() {
        let mut x: u64 = 7;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for case in 0..300 {
            // Short and long, tied and zero-length intervals, in start order.
            let n = 1 + case % 60;
            let mut intervals: Vec<(SimTime, SimTime)> = (0..n)
                .map(|_| {
                    let start = next(20) * 1_000_000;
                    let len = next(4) * next(15) * 1_000_000;
                    (SimTime(start), SimTime(start + len))
                })
                .collect();
            intervals.sort();
            let mut lanes = vec![usize::MAX; n as usize];
            let count = pack(intervals.iter().copied(), |k, lane| lanes[k] = lane);
            let want = by_scan(&intervals);
            assert_eq!(lanes, want, "{intervals:?}");
            assert_eq!(count, want.iter().max().unwrap() + 1);
        }
    }
}
