//! What the ICFG is made of: source files with the file-level facts call resolution needs,
//! and functions with their place in the graph.

use super::cfg::FunctionMeta;
use super::node::Lang;
use petgraph::graph::NodeIndex;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// File-level facts call resolution needs.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FileUnit {
    /// Java package (`org.x.y`), empty otherwise.
    pub package: String,
    /// Java imports as written (`java.util.List`, `org.x.*`, static ones included).
    pub imports: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct SourceFile {
    pub path: PathBuf,
    pub lang: Lang,
    pub lines: u32,
    pub bytes: u64,
    pub error_regions: u32,
    #[serde(skip)]
    pub unit: FileUnit,
    /// Gone from the corpus since the index was built; kept so that ids stay stable.
    #[serde(skip)]
    pub removed: bool,
    /// Which indexed root (project) holds the file: calls resolve within a project only,
    /// so two projects indexed together link exactly as each indexed alone.
    #[serde(skip)]
    pub project: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct Function {
    pub meta: FunctionMeta,
    #[serde(skip)]
    pub entry: NodeIndex,
    #[serde(skip)]
    pub exit: NodeIndex,
    /// Gone from the corpus since the index was built: its nodes are isolated
    /// placeholders, kept so that the ids of every other function and node stay stable.
    #[serde(skip)]
    pub removed: bool,
}
