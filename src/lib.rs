//! beryl: find where an algorithm is implemented in C, C++ and Java code bases.
//!
//! Stages, data flowing one way: [`corpus`] (files) → [`lang`] (per-function CFGs) →
//! [`graph`] (ICFG) → [`features`] (node features) and [`shape`] (nesting trees) → [`model`] (node vectors) → [`index`]
//! (FAISS + SQLite) → [`search`] (fragments) → [`report`]. [`eval`] measures the result.

pub mod anonymize;
pub mod corpus;
pub mod eval;
pub mod features;
pub mod graph;
pub mod index;
pub mod lang;
pub mod model;
pub mod pcode;
pub mod native;
pub mod report;
pub mod search;
pub mod shape;
