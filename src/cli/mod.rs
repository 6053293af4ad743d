//! Subcommands that live outside main.rs, one file per area.

pub mod algo;
pub mod anonymize;
pub mod eval;
pub mod search;
