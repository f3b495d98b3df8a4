//! A stage's holds: the resource (cores, host RAM, VRAM or a lock), the amount within
//! its capacity, and the stage whose end releases it; and a stage's own holds together.

use std::collections::BTreeMap;

use crate::model::{Hold, HoldResource};
use crate::scenario::capacity::{capacity, quantity};
use crate::scenario::error::{ErrorKind, ScenarioError, join_index, join_key};
use crate::scenario::schema::HoldSpec;
use crate::scenario::units::{Dim, GIB, Qty, to_bytes};
use crate::scenario::values::{UNLIMITED_RAM, one_of, qty};

use super::StageCx;

impl StageCx<'_> {
    pub(super) fn hold(&self, h: &HoldSpec, j: usize, name: &str) -> Result<Hold, ScenarioError> {
        let p = join_index("holds", j);
        let f = |x: &str| join_key(&p, x);
        let count = |what: &str| -> Result<u64, ScenarioError> {
            if h.gib.is_some() {
                return Err(self.err(
                    ErrorKind::Value,
                    &f("gib"),
                    format!("{what} are counted with amount, not gib"),
                ));
            }
            match &h.amount {
                None => Ok(1),
                Some(Qty::Num(x)) if x.fract() == 0.0 && *x >= 1.0 && *x < 1e15 => Ok(*x as u64),
                Some(q) => Err(self.err(
                    ErrorKind::Value,
                    &f("amount"),
                    format!(
                        "{} is not allowed; {what} are held as a whole number >= 1",
                        q.shown()
                    ),
                )),
            }
        };
        let bytes = || -> Result<u64, ScenarioError> {
            let (ka, kg) = (self.k(&f("amount")), self.k(&f("gib")));
            let b = match one_of((&h.amount, &ka), (&h.gib, &kg), self.loc)? {
                Some((q, 0)) => qty(q, Dim::Size, 1.0, &ka, self.loc)?,
                Some((q, _)) => qty(q, Dim::Size, GIB, &kg, self.loc)?,
                None => {
                    return Err(self.err(
                        ErrorKind::MissingKey,
                        &f("gib"),
                        "missing; give the memory held as gib = 14 or amount = \"14 GiB\"",
                    ));
                }
            };
            to_bytes(b).map_err(|m| self.err(ErrorKind::Value, &f("gib"), m))
        };
        let (resource, amount, cap, what) = match h.resource.as_str() {
            "cores" => {
                let a = count("cores")?;
                (
                    HoldResource::Cores,
                    a,
                    u64::from(self.hw.cpu_cores),
                    "hardware.cpu_cores".to_string(),
                )
            }
            "host_ram" => {
                if self.hw.host_ram_bytes == UNLIMITED_RAM {
                    return Err(self.err(
                        ErrorKind::Value,
                        &f("resource"),
                        "holding host RAM needs the host's RAM: set hardware.host_ram_gib",
                    ));
                }
                let a = bytes()?;
                (
                    HoldResource::HostRam,
                    a,
                    self.hw.host_ram_bytes,
                    self.capacity_key("hardware.host_ram_gib"),
                )
            }
            "vram" => {
                self.need_gpu(&f("resource"), "holding VRAM")?;
                let a = bytes()?;
                (
                    HoldResource::Vram,
                    a,
                    self.hw.gpus[0].vram_bytes,
                    "per GPU, hardware.gpu.vram_gib".to_string(),
                )
            }
            other => {
                let Some(id) = self.hw.locks.iter().position(|l| l.name == other) else {
                    let locks: Vec<&str> = self.hw.locks.iter().map(|l| l.name.as_str()).collect();
                    return Err(self.err(
                        ErrorKind::Reference,
                        &f("resource"),
                        format!(
                            "{other:?} is not a resource; use \"cores\", \"host_ram\", \"vram\" or a lock ({})",
                            if locks.is_empty() { "none declared in [hardware.locks]".into() } else { locks.join(", ") }
                        ),
                    ));
                };
                let a = count("lock units")?;
                let l = &self.hw.locks[id];
                (
                    HoldResource::Lock(id),
                    a,
                    l.capacity,
                    "hardware.locks".to_string(),
                )
            }
        };
        if amount > cap {
            return Err(self.err(
                ErrorKind::Capacity,
                &p,
                format!(
                    "stage {name:?} holds {}, but there are only {} ({what})",
                    quantity(self.hw, resource, amount),
                    quantity(self.hw, resource, cap)
                ),
            ));
        }
        let until = match &h.until {
            None => self.i,
            Some(u) => self.release_stage(u, &f("until"), name)?,
        };
        Ok(Hold {
            resource,
            amount,
            until,
        })
    }

    /// The stage named `u` whose end releases a hold of stage `name`: the holder itself
    /// or a stage that runs after it, and per partition only when the holder is.
    fn release_stage(&self, u: &str, ku: &str, name: &str) -> Result<usize, ScenarioError> {
        let Some(&t) = self.by_name.get(u) else {
            return Err(self.err(
                ErrorKind::Reference,
                ku,
                format!("no stage named {u:?}; stages: {}", (self.all_names)()),
            ));
        };
        if t != self.i && !self.reach.runs_after(self.i, t) {
            return Err(self.err(
                ErrorKind::Value,
                ku,
                format!("stage {u:?} does not run after {name:?}; a hold is released at the end of the holding stage or of a stage that (transitively) runs after it"),
            ));
        }
        if !self.per_partition[self.i] && self.per_partition[t] {
            return Err(self.err(
                ErrorKind::Value,
                ku,
                format!("{name:?} runs once per job but {u:?} once per partition; a per-job hold cannot be released by a per-partition stage"),
            ));
        }
        Ok(t)
    }

    /// A capacity's key for a message, with the knobs it was computed from: the RAM a
    /// user changes is often `params.host_ram_gib`, not the hardware key it feeds.
    fn capacity_key(&self, key: &str) -> String {
        let Some(note) = self.loc.notes.get(key) else {
            return key.to_string();
        };
        let knobs: Vec<String> = note
            .split('$')
            .skip(1)
            .map(|t| {
                t.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<String>()
            })
            .filter(|n| !n.is_empty())
            .map(|n| format!("params.{n}"))
            .collect();
        match (note.strip_prefix("params."), knobs.is_empty()) {
            (Some(_), _) => format!("{key} = {note}; change {note}"),
            (None, false) => format!("{key} = {note}; change {}", knobs.join(", ")),
            (None, true) => format!("{key} = {note}"),
        }
    }

    /// A stage's own holds of one resource together must fit.
    pub(super) fn check_own_holds(&self, name: &str, holds: &[Hold]) -> Result<(), ScenarioError> {
        let mut sum: BTreeMap<HoldResource, u64> = BTreeMap::new();
        for h in holds {
            *sum.entry(h.resource).or_default() += h.amount;
        }
        for (r, total) in sum {
            let cap = capacity(self.hw, r, false);
            if total > cap {
                return Err(self.err(
                    ErrorKind::Capacity,
                    "holds",
                    format!(
                        "stage {name:?} holds {} in all, but there are only {}",
                        quantity(self.hw, r, total),
                        quantity(self.hw, r, cap)
                    ),
                ));
            }
        }
        Ok(())
    }
}
