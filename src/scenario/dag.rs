//! The stage graph: topological order (ties kept in file order), cycle reporting and
//! reachability. Indices are positions in whatever list the caller uses.

use std::collections::BTreeSet;

/// Kahn's algorithm, ties broken by file order; on a cycle, returns one cycle's stages
/// (first stage repeated at the end).
pub fn topo_order(after: &[Vec<usize>]) -> Result<Vec<usize>, Vec<usize>> {
    let n = after.len();
    let mut indeg: Vec<usize> = after.iter().map(Vec::len).collect();
    let mut dependents = vec![Vec::new(); n];
    for (i, deps) in after.iter().enumerate() {
        for &d in deps {
            dependents[d].push(i);
        }
    }
    let mut ready: BTreeSet<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop_first() {
        order.push(i);
        for &j in &dependents[i] {
            indeg[j] -= 1;
            if indeg[j] == 0 {
                ready.insert(j);
            }
        }
    }
    if order.len() == n {
        return Ok(order);
    }
    // Every leftover stage has a leftover dependency; walk them until one repeats.
    let left: Vec<bool> = (0..n).map(|i| indeg[i] > 0).collect();
    let start = (0..n).find(|&i| left[i]).unwrap_or(0);
    let mut path = vec![start];
    let mut cur = start;
    loop {
        let Some(&next) = after[cur].iter().find(|&&d| left[d]) else {
            return Err(path);
        };
        if let Some(pos) = path.iter().position(|&p| p == next) {
            // path[pos..] runs backwards along `after`; show it in execution order.
            let mut cycle: Vec<usize> = path[pos..].to_vec();
            cycle.reverse();
            let min = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap_or(0);
            cycle.rotate_left(min);
            cycle.push(cycle[0]);
            return Err(cycle);
        }
        path.push(next);
        cur = next;
    }
}

/// Reachability along `after` edges, answered on demand (a depth-first walk per query),
/// so that loading stays linear in the number of stages: a full reachability matrix is
/// quadratic in time and memory, and an 8,000-stage chain took seconds to build.
pub struct Reach {
    /// `dependents[a]`: the stages that list `a` in their `after`.
    dependents: Vec<Vec<usize>>,
    /// `after[b]`: the stages `b` runs after (directly).
    after: Vec<Vec<usize>>,
}

impl Reach {
    /// Indexes a stage graph given as each stage's `after` list.
    pub fn new(after: &[Vec<usize>]) -> Reach {
        let n = after.len();
        let mut dependents = vec![Vec::new(); n];
        for (i, deps) in after.iter().enumerate() {
            for &d in deps {
                dependents[d].push(i);
            }
        }
        Reach {
            dependents,
            after: after.to_vec(),
        }
    }

    /// Stage `b` (transitively) runs after stage `a`.
    pub fn runs_after(&self, a: usize, b: usize) -> bool {
        a != b && self.descendants(a)[b]
    }

    /// `out[b]`: stage b (transitively) runs after `a` (`out[a]` is false).
    pub fn descendants(&self, a: usize) -> Vec<bool> {
        walk(&self.dependents, a)
    }

    /// `out[b]`: stage `a` (transitively) runs after b (`out[a]` is false).
    pub fn ancestors(&self, a: usize) -> Vec<bool> {
        walk(&self.after, a)
    }
}

fn walk(edges: &[Vec<usize>], from: usize) -> Vec<bool> {
    let mut seen = vec![false; edges.len()];
    let mut stack = edges[from].clone();
    while let Some(b) = stack.pop() {
        if !seen[b] {
            seen[b] = true;
            stack.extend(edges[b].iter().copied());
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topo_order_keeps_file_order_among_ready_stages() {
        // 0 after 2, 1 free, 2 free
        assert_eq!(
            topo_order(&[vec![2], vec![], vec![]]).unwrap(),
            vec![1, 2, 0]
        );
    }

    #[test]
    fn topo_order_reports_a_cycle_in_execution_order() {
        // a(0) after b(1), b after a
        let c = topo_order(&[vec![1], vec![0], vec![]]).unwrap_err();
        assert_eq!(c.len(), 3);
        assert_eq!(c[0], c[2]);
        // self-loop
        assert_eq!(topo_order(&[vec![0]]).unwrap_err(), vec![0, 0]);
        // 0 -> 1 -> 2 -> 0, with 3 hanging off the cycle
        let c = topo_order(&[vec![2], vec![0], vec![1], vec![2]]).unwrap_err();
        assert_eq!(c, vec![0, 1, 2, 0]);
    }

    #[test]
    fn reachability_is_transitive() {
        let r = Reach::new(&[vec![], vec![0], vec![1]]);
        assert!(r.runs_after(0, 2) && r.runs_after(0, 1) && r.runs_after(1, 2));
        assert!(!r.runs_after(2, 0) && !r.runs_after(1, 1));
        assert!(r.ancestors(2)[0] && !r.ancestors(0)[2]);
    }
}
