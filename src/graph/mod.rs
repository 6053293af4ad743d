//! Graphs of code: the node vocabulary, per-function CFGs and the corpus-wide ICFG.

pub mod cfg;
pub mod csr;
pub mod icfg;
pub mod node;
mod resolve;
pub mod stats;
pub mod thin;
pub mod unit;

pub use csr::{Bfs, Csr, Rows};
pub use cfg::{FnCfg, FunctionMeta, LocalId, ENTRY, EXIT};
pub use icfg::{CallSite, Icfg, Replaced};
pub use unit::{FileUnit, Function, SourceFile};
pub use node::{normalize_ws, CallRef, EdgeKind, Lang, Node, NodeKind, Parent};
pub use thin::{Text, Thin};
