//! Output formats.

pub mod graph;
