//! What a proof costs on a host: a purchase amortised over some years plus its power at
//! a price per kWh, or an hourly rent; and the cheapest way (k hosts of one kind) to
//! reach a target number of proofs per day.

use serde::Serialize;

use super::host::HostProfile;

/// The money assumptions of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CostAssumptions {
    /// Years a purchase is written off over (`--amortise-years`).
    pub amortise_years: f64,
    /// US dollars per kWh (`--power-price-per-kwh`).
    pub power_price_per_kwh: f64,
}

/// Default write-off period: 3 years, a common server depreciation schedule.
pub const DEFAULT_AMORTISE_YEARS: f64 = 3.0;
/// Default power price: 0.15 USD/kWh, a round figure near US commercial rates.
pub const DEFAULT_POWER_PRICE_PER_KWH: f64 = 0.15;

impl Default for CostAssumptions {
    fn default() -> Self {
        CostAssumptions {
            amortise_years: DEFAULT_AMORTISE_YEARS,
            power_price_per_kwh: DEFAULT_POWER_PRICE_PER_KWH,
        }
    }
}

impl CostAssumptions {
    /// US dollars per day of running `host`.
    pub fn daily_usd(&self, host: &HostProfile) -> f64 {
        if let Some(h) = host.cost.hourly_usd {
            return h * 24.0;
        }
        let capital = host.cost.price_usd.unwrap_or(0.0) / (self.amortise_years * 365.0);
        let power = host.cost.power_w.unwrap_or(0.0) / 1000.0 * 24.0 * self.power_price_per_kwh;
        capital + power
    }
}

/// One way to reach a target: `hosts` machines of one kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Target {
    /// Proofs per day asked for.
    pub proofs_per_day: f64,
    /// Row of the comparison (index into the hosts).
    pub host: usize,
    /// How many of that host.
    pub count: u32,
    /// Proofs per day they give together.
    pub total_proofs_per_day: f64,
    /// US dollars per day they cost together.
    pub daily_usd: f64,
}

/// The largest fleet named for a target: a host that would need more is no way to reach
/// it (the count saturated at 4,294,967,295 hosts, a "fleet" that missed the target).
pub const MAX_FLEET: u32 = 1_000_000;

/// The cheapest fleet of one host kind reaching `target` proofs/day, from each host's
/// (proofs/day, $/day); hosts with no throughput, or that would need more than
/// [`MAX_FLEET`] machines, are skipped. Ties go to fewer machines.
pub fn cheapest_for_target(target: f64, hosts: &[(f64, f64)]) -> Option<Target> {
    hosts
        .iter()
        .enumerate()
        .filter(|(_, (ppd, cost))| *ppd > 0.0 && cost.is_finite())
        .filter(|(_, (ppd, _))| (target / ppd).ceil() <= f64::from(MAX_FLEET))
        .map(|(i, &(ppd, cost))| {
            let count = (target / ppd).ceil().max(1.0) as u32;
            Target {
                proofs_per_day: target,
                host: i,
                count,
                total_proofs_per_day: ppd * f64::from(count),
                daily_usd: cost * f64::from(count),
            }
        })
        .min_by(|a, b| {
            a.daily_usd
                .total_cmp(&b.daily_usd)
                .then(a.count.cmp(&b.count))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cheapest_fleet_may_be_several_small_hosts() {
        // A: 100/day for $50/day; B: 30/day for $10/day. 250/day: 3 A = $150, 9 B = $90.
        let t = cheapest_for_target(250.0, &[(100.0, 50.0), (30.0, 10.0), (0.0, 1.0)]).unwrap();
        assert_eq!((t.host, t.count), (1, 9));
        assert!((t.daily_usd - 90.0).abs() < 1e-9);
        assert!(cheapest_for_target(1.0, &[(0.0, 1.0)]).is_none());
    }

    #[test]
    fn a_target_beyond_any_fleet_names_none() {
        assert!(cheapest_for_target(1e15, &[(1000.0, 50.0)]).is_none());
        let t = cheapest_for_target(1e9, &[(1000.0, 50.0)]).unwrap();
        assert_eq!(t.count, MAX_FLEET);
        assert!(t.total_proofs_per_day >= 1e9);
    }
}
