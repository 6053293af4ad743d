//! A corpus indexed as shards and searched as one: shard servers ([`shard`]) answer the
//! steps of a search for their part of the corpus, and a coordinator ([`coordinator`])
//! merges them into the results one index of the whole corpus gives. What travels between
//! them is [`protocol`]; how it travels (a process's pipes, Ray Serve) is the caller's.
//!
//! Shards hold whole projects (calls resolve within a project, so no ICFG edge crosses a
//! shard) and are built with the global parts of [`crate::index::global`].

pub mod coordinator;
pub mod floats;
pub mod protocol;
pub mod shard;

pub use coordinator::{Coordinator, Fanout, Local};
pub use shard::ShardServer;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum ClusterError {
    #[error("{0}")]
    Setup(String),
    #[error(transparent)]
    Index(#[from] crate::index::IndexError),
    #[error(transparent)]
    Search(#[from] crate::search::SearchError),
}

/// Where each project goes: shard `hash(project name) mod shards`, so that a project keeps
/// its shard as others come and go (FNV-1a of the name, stable across builds and machines).
pub fn shard_of(project: &str, shards: usize) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in project.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h % shards.max(1) as u64) as usize
}

/// Shards for a corpus of `lines` lines, each about `per_shard` lines.
pub fn shard_count(lines: u64, per_shard: u64) -> usize {
    lines.div_ceil(per_shard.max(1)).max(1) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projects_keep_their_shard_and_spread() {
        assert_eq!(shard_of("zlib", 3), shard_of("zlib", 3));
        let names: Vec<String> = (0..300).map(|i| format!("project-{i}")).collect();
        let mut counts = [0usize; 3];
        for n in &names {
            counts[shard_of(n, 3)] += 1;
        }
        assert!(counts.iter().all(|&c| c > 70), "{counts:?}");
        assert_eq!(shard_count(2_850_000, 750_000), 4);
        assert_eq!(shard_count(0, 750_000), 1);
    }
}
