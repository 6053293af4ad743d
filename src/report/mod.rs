//! Output formats.

pub mod graph;
pub mod search;
