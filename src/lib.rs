//! beryl: find where an algorithm is implemented in C, C++, Java, Python, Rust and Go code bases.
//!
//! The library holds the pipeline stages only, data flowing one way: [`corpus`] (files) →
//! [`lang`] (per-function CFGs) → [`graph`] (ICFG) → [`features`] (node features) and
//! [`shape`] (nesting trees) → [`model`] (node vectors) → [`index`] (FAISS + SQLite) →
//! [`search`] (fragments) → [`report`]. [`pcode`] turns pseudocode into graphs of the same
//! vocabulary; [`anonymize`] rewrites identifiers. It parses no arguments and prints
//! nothing to stdout: the command line (`cli/`) does that, and the benchmarks live in
//! the lab (`lab/`). See docs/architecture.md.

pub mod anonymize;
pub mod cluster;
pub mod corpus;
pub mod features;
pub mod graph;
pub mod index;
pub mod lang;
pub mod mapped;
pub mod model;
pub mod native;
pub mod pcode;
pub mod report;
pub mod search;
pub mod shape;
pub mod text;

use std::path::{Path, PathBuf};

/// A file of the source checkout. The shipped models, queries and benchmark files live
/// there; every use has a flag or variable that names another place.
pub fn repo_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// A file of the third-party benchmark data, which is never part of the checkout: the
/// folder named by `BERYL_SHARED_DATA`, else `../shared/data` beside the checkout.
pub fn shared_data(rel: &str) -> PathBuf {
    match std::env::var_os("BERYL_SHARED_DATA") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir).join(rel),
        _ => repo_path("../shared/data").join(rel),
    }
}
