//! A patched generation: what an update changed, written beside links to the files of the
//! last generation written whole (its base), instead of those files written again.
//!
//! Rewriting every file of a large index costs in proportion to the index (2 GB for the
//! Linux tree), whatever the change. A patched generation holds hard links to the base's
//! vector indexes, adjacency, shapes, BM25F index and ICFG, and beside them:
//! - `patch.bin`: the base's node and function ids whose vectors no longer hold, the rows
//!   of the adjacency that changed or were added, the shapes of functions changed or
//!   added, the BM25F documents added (with the base's removed ones), and the ICFG's
//!   change (files, functions and nodes appended, ids removed, call sites resolved anew);
//! - `nodes.delta.faiss`, `functions.delta.faiss`: the vectors computed since the base,
//!   by id, in flat indexes of the same space.
//!
//! An update of a patched generation writes a new patch over the same base, holding what
//! the old one held and the new change. A reader sees one index: the base's answers less
//! what the patch removed, with the patch's added.

use super::{io, IndexError};
use std::path::Path;

pub const FILE: &str = "patch.bin";
pub const NODES_DELTA: &str = "nodes.delta.faiss";
pub const FUNCTIONS_DELTA: &str = "functions.delta.faiss";
/// The base's files a patched generation links rather than writes.
pub const LINKED: [&str; 7] = ["nodes.faiss", "nodes.pca", "functions.faiss", "graph.bin", "shapes.bin", "lexical.bin", "icfg.bin"];

const MAGIC: &[u8; 8] = b"BRYPATC1";
const SECTIONS: usize = 6;

/// The parts of `patch.bin`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Patch {
    /// Nodes and functions of the base, and the vectors its two indexes hold.
    pub base_nodes: u64,
    pub base_functions: u64,
    pub base_node_vectors: u64,
    pub base_function_vectors: u64,
    /// Base node ids whose vectors the base index holds but no longer stand (ascending).
    pub dead_nodes: Vec<u32>,
    /// Base function ids removed (ascending).
    pub dead_functions: Vec<u32>,
    /// [`crate::graph::Csr::overlay_of`]'s bytes.
    pub graph: Vec<u8>,
    /// [`crate::shape::store::patch_bytes`]'s bytes.
    pub shapes: Vec<u8>,
    /// [`super::lexical::patch_bytes`]'s bytes.
    pub lexical: Vec<u8>,
    /// [`super::icfg_file::delta`]'s bytes.
    pub icfg: Vec<u8>,
}

fn words(ids: &[u32]) -> Vec<u8> {
    ids.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn ids_of(b: &[u8]) -> Result<Vec<u32>, String> {
    if b.len() % 4 != 0 {
        return Err("patch.bin: a list of ids is cut".into());
    }
    let v: Vec<u32> = b.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    if !v.windows(2).all(|w| w[0] < w[1]) {
        return Err("patch.bin: ids out of order".into());
    }
    Ok(v)
}

impl Patch {
    pub fn to_bytes(&self) -> Vec<u8> {
        let parts: [Vec<u8>; SECTIONS] =
            [words(&self.dead_nodes), words(&self.dead_functions), self.graph.clone(), self.shapes.clone(), self.lexical.clone(), self.icfg.clone()];
        let head = 8 + 8 * 4 + 16 * SECTIONS;
        let mut out = Vec::with_capacity(head + parts.iter().map(Vec::len).sum::<usize>());
        out.extend(MAGIC);
        for v in [self.base_nodes, self.base_functions, self.base_node_vectors, self.base_function_vectors] {
            out.extend(v.to_le_bytes());
        }
        let mut at = head;
        for p in &parts {
            out.extend((at as u64).to_le_bytes());
            out.extend((p.len() as u64).to_le_bytes());
            at += p.len();
        }
        for p in &parts {
            out.extend(p);
        }
        out
    }

    pub fn from_bytes(b: &[u8]) -> Result<Patch, String> {
        let head = 8 + 8 * 4 + 16 * SECTIONS;
        if b.len() < head || &b[..8] != MAGIC {
            return Err("patch.bin is not a patch".into());
        }
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let mut parts: Vec<&[u8]> = Vec::with_capacity(SECTIONS);
        for s in 0..SECTIONS {
            let (at, len) = (u64_at(40 + 16 * s) as usize, u64_at(48 + 16 * s) as usize);
            parts.push(at.checked_add(len).and_then(|end| b.get(at..end)).ok_or("patch.bin: a section is out of bounds")?);
        }
        Ok(Patch {
            base_nodes: u64_at(8),
            base_functions: u64_at(16),
            base_node_vectors: u64_at(24),
            base_function_vectors: u64_at(32),
            dead_nodes: ids_of(parts[0])?,
            dead_functions: ids_of(parts[1])?,
            graph: parts[2].to_vec(),
            shapes: parts[3].to_vec(),
            lexical: parts[4].to_vec(),
            icfg: parts[5].to_vec(),
        })
    }
}

/// Bits set for the ids below `n` not in `dead` (ascending): what a search of the base's
/// index may return.
pub fn alive_bits(n: usize, dead: &[u32]) -> Vec<u8> {
    let mut bits = vec![0xffu8; n.div_ceil(8)];
    if n % 8 != 0 {
        if let Some(last) = bits.last_mut() {
            *last = (1u8 << (n % 8)) - 1;
        }
    }
    for &d in dead {
        if let Some(b) = bits.get_mut(d as usize / 8) {
            *b &= !(1 << (d % 8));
        }
    }
    bits
}

/// Links the base's file `name` of generation `from` into `to`, where it is (both folders
/// are in one index folder, so on one file system); copies it where the file system
/// takes no links. `false` when the base has no such file.
pub fn link(from: &Path, to: &Path, name: &str) -> Result<bool, IndexError> {
    let src = from.join(name);
    if !src.exists() {
        return Ok(false);
    }
    let dst = to.join(name);
    if let Err(e) = std::fs::hard_link(&src, &dst) {
        log::debug!("{}: not linked ({e}): copied", dst.display());
        std::fs::copy(&src, &dst).map_err(io(&dst))?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_reads_back_and_damage_is_refused() {
        let p = Patch {
            base_nodes: 10,
            base_functions: 3,
            base_node_vectors: 7,
            base_function_vectors: 3,
            dead_nodes: vec![1, 4, 9],
            dead_functions: vec![2],
            graph: b"graph".to_vec(),
            shapes: b"shapes!".to_vec(),
            lexical: vec![],
            icfg: b"icfg".to_vec(),
        };
        let b = p.to_bytes();
        assert_eq!(Patch::from_bytes(&b).unwrap(), p);
        assert!(Patch::from_bytes(&b[..b.len() - 1]).is_err());
        assert!(Patch::from_bytes(&b[..20]).is_err());
        let mut bad = b.clone();
        // The dead nodes out of order.
        let at = 8 + 32 + 16 * SECTIONS;
        bad[at..at + 4].copy_from_slice(&5u32.to_le_bytes());
        assert!(Patch::from_bytes(&bad).is_err());
        assert_eq!(alive_bits(10, &[1, 4, 9]), vec![0b1110_1101, 0b0000_0001]);
        assert_eq!(alive_bits(16, &[]), vec![0xff, 0xff]);
    }
}
