//! `bwsim compare`'s library: host profiles (`scenarios/hosts/*.toml`, [`host`]), how a
//! profile maps onto a scenario's keys as `--set` overrides ([`mapping`]), what a proof
//! costs on a host ([`cost`]), which settings are searched and which wins ([`search`]),
//! each host's search run through the sweep machinery ([`runner`]), and the comparison
//! table in Markdown and JSON ([`table`]) with its notes ([`assumptions`]). Flags and
//! files belong to `commands::compare`.

pub mod assumptions;
pub mod cost;
pub mod error;
pub mod host;
pub mod kept;
pub mod mapping;
pub mod prediction;
pub mod runner;
pub mod search;
pub mod table;

pub use cost::{CostAssumptions, Target, cheapest_for_target};
pub use error::CompareInputError;
pub use host::{HostError, HostProfile, load_host};
pub use mapping::{ScenarioKnobs, host_overrides};
pub use table::{Comparison, HostResult, NoResult, Outcome};
