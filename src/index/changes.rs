//! What changed in an index's source trees since it was built: files whose content hash
//! differs, files the walk finds that the index lacks, and indexed files that are gone.
//! The same comparison an update starts with, without building anything.

use super::update::Diff;
use super::{Index, IndexError};
use crate::corpus::walk::discover;
use crate::corpus::WalkOptions;
use serde::Serialize;
use std::path::PathBuf;

#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Changes {
    pub changed: Vec<String>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

impl Changes {
    pub fn total(&self) -> usize {
        self.changed.len() + self.added.len() + self.removed.len()
    }
}

/// Walks the index's roots with `opts` and their `.beryl.toml` (as a build would; see
/// [`Index::walk_options`] for the build's own) and compares each file's content hash with
/// the one indexed; a file the build skipped counts as unchanged while its content is.
pub fn changes(index: &Index, opts: &WalkOptions) -> Result<Changes, IndexError> {
    let roots: Vec<PathBuf> = index.meta.roots.iter().map(PathBuf::from).collect();
    let opts = opts.with_project_config(&roots)?;
    let (files, _) = discover(&roots, &opts);
    let d = Diff::of(&index.store, &files, &|p| opts.lang_of(p))?;
    let s = |v: Vec<PathBuf>| v.into_iter().map(|p| p.to_string_lossy().into_owned()).collect();
    Ok(Changes { changed: s(d.changed), added: s(d.added), removed: d.removed })
}
