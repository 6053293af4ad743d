//! Fragments located in benchmark projects: what every benchmark method returns and the
//! candidate pools store, before any hit rule judges them.

use serde::Serialize;

/// Ranks beyond this count as a miss (">100").
pub const MAX_RANK: usize = 100;

/// One span of a returned fragment, located in a project: `path` relative to its top_dir.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LocSpan {
    pub project: String,
    pub path: String,
    pub lines: (u32, u32),
}
