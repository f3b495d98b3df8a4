//! A measured stretch curve read at a load: what a CPU-load curve and a staged copy's
//! streaming-neighbour curve share.

/// A [`CpuLoad`](super::CpuLoad) curve's stretch at `load` runnable threads per CPU: piecewise linear
/// through `points`, flat past either end, 1 with no points.
pub fn stretch_at(points: &[(f64, f64)], load: f64) -> f64 {
    let Some(&(x0, y0)) = points.first() else {
        return 1.0;
    };
    if load <= x0 {
        return y0;
    }
    for w in points.windows(2) {
        let ((xa, ya), (xb, yb)) = (w[0], w[1]);
        if load <= xb {
            return ya + (yb - ya) * (load - xa) / (xb - xa);
        }
    }
    points[points.len() - 1].1
}
