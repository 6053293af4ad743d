//! What changed in an index's source trees since it was built: files whose content hash
//! differs, files the walk finds that the index lacks, and indexed files that are gone.
//! The same comparison a rebuild starts with, without building anything.

use super::{sha256_hex, Index, IndexError};
use crate::corpus::walk::{discover, read_source};
use crate::corpus::WalkOptions;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
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

/// Walks the index's roots with `opts` (as a build would) and compares each file's content
/// hash with the one indexed.
pub fn changes(index: &Index, opts: &WalkOptions) -> Result<Changes, IndexError> {
    let indexed: HashMap<String, String> = index.store.files()?.into_iter().map(|f| (f.path, f.hash)).collect();
    let roots: Vec<PathBuf> = index.meta.roots.iter().map(PathBuf::from).collect();
    let (files, _) = discover(&roots, opts);
    // A file the build would skip (binary, generated, undecodable) is not expected in the
    // index; the hash is the build's, over the bytes as read.
    let hashed: Vec<(String, Option<String>)> = files
        .par_iter()
        .filter(|p| read_source(p, opts).is_ok())
        .map(|p| (p.to_string_lossy().into_owned(), std::fs::read(p).ok().map(|b| sha256_hex(String::from_utf8_lossy(&b).as_bytes()))))
        .collect();
    let mut out = Changes::default();
    let mut seen = HashSet::new();
    for (path, hash) in hashed {
        match (indexed.get(&path), hash) {
            (Some(old), Some(new)) if *old == new => {}
            (Some(_), _) => out.changed.push(path.clone()),
            (None, _) => out.added.push(path.clone()),
        }
        seen.insert(path);
    }
    out.removed = indexed.into_keys().filter(|p| !seen.contains(p)).collect();
    out.removed.sort();
    Ok(out)
}
