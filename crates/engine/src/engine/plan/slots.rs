//! Where a stage's instances sit within a job: their slots, and which instances of a
//! child a finished parent instance counts off.

use crate::engine::ids::Scope;

/// The instance slot within a job of a stage's instance in `scope`: a per-partition stage
/// has one slot per partition from `slot_offset`, any other stage the one at
/// `slot_offset` (a job-level scope names a per-partition stage's first instance).
pub(crate) fn instance_slot(slot_offset: usize, per_partition: bool, scope: Scope) -> usize {
    match scope {
        Scope::Partition(p) if per_partition => slot_offset + p as usize,
        _ => slot_offset,
    }
}

/// The instances of a child that a finished parent instance in `scope` counts off: a
/// job-level parent fans out to every partition of a per-partition child, a
/// per-partition parent wakes its own partition's, and a job-level child is woken once.
pub(crate) fn woken_scopes(
    parent_per_partition: bool,
    child_per_partition: bool,
    scope: Scope,
    partitions: u32,
) -> impl Iterator<Item = Scope> {
    let (every, only) = match (child_per_partition, parent_per_partition) {
        (true, false) => (partitions, None),
        (true, true) => (1, Some(scope)),
        (false, _) => (1, Some(Scope::Job)),
    };
    (0..every).map(move |p| only.unwrap_or(Scope::Partition(p)))
}
