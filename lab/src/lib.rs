//! beryl's lab: benchmarks of search quality and what trains or tunes the shipped models.
//!
//! It depends on the library (`beryl`) and never the reverse: the library holds the
//! pipeline a user runs, the lab measures it and fits what it ships.
//!
//! [`clarc`] and [`gecs`] read the benchmark files and rank candidates by a method;
//! [`metrics`] scores rankings; [`bm25`] with [`tokenize`] is the lexical baseline;
//! [`profile`] reads loops, recursion and operator families from source, assembly and
//! Wasm for the structure-aware method; [`rank`] holds encoding and fusion helpers.

pub mod algo;
pub mod fit;
pub mod bm25;
pub mod clarc;
mod error;
pub mod gecs;
pub mod located;
pub mod metrics;
pub mod pool;
pub mod pairs;
pub mod profile;
pub mod rank;
pub mod synth;
pub use beryl::features::words as tokenize;

pub use error::EvalError;
pub use metrics::{query_metrics, Metrics};
