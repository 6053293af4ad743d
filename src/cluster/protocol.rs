//! What a coordinator and a shard say to each other: one JSON object per line each way.
//! Requests carry everything a step needs, so any replica of a shard can answer any step
//! of any query (a shard keeps only a cache of its last pools).

use crate::search::hybrid::candidate::{CandSpan, Ranks};
use crate::search::hybrid::shard::{Group, Light, MatchedNode, ShardQuery};
use crate::search::{Fragment, Span, TextHit};
use serde::{Deserialize, Serialize};

/// A hit of a shard's list: local id, score, and the local id of its file (which orders
/// equal scores across shards as one index orders them).
pub type Keyed = (u32, f32, u32);

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// What the shard holds.
    Info,
    /// Step 1 of pseudocode search: each retriever's best.
    Lists {
        qid: u64,
        query: ShardQuery,
        #[serde(with = "super::floats")]
        node_rows: Vec<f32>,
        node_k: usize,
    },
    /// Step 2: group the matched nodes that lie here; align the preselected functions.
    Groups { qid: u64, query: ShardQuery, matched: Vec<MatchedNode>, n_query: usize, top: usize, structure: Vec<u32> },
    /// Step 3: read the pool's functions that lie here as candidates.
    Pool { qid: u64, query: ShardQuery, ranks: Vec<(u32, Ranks)>, beryllium: Vec<(u32, f32)> },
    /// Step 4: the report of the kept candidates (by their place in step 3's answer, with
    /// their final signals and scores) and of copies' spans.
    Render { qid: u64, query: ShardQuery, ranks: Vec<(u32, Ranks)>, beryllium: Vec<(u32, f32)>, keep: Vec<Kept>, spans: Vec<CandSpan> },
    /// Natural-language search: the `k` functions closest to a text vector.
    Text {
        query: String,
        #[serde(with = "super::floats")]
        vec: Vec<f32>,
        k: usize,
    },
}

/// A candidate the coordinator kept.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Kept {
    /// Its place in the shard's answer to step 3 …
    pub index: usize,
    /// … and which it is, for a replica that did not answer step 3.
    pub function: u32,
    pub grown: bool,
    pub signals: Vec<f32>,
    pub score: f32,
    /// Copies folded into it (their spans come from their own shards).
    pub copies: usize,
}

/// What a shard holds, sent once when the coordinator starts.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShardInfo {
    pub index: String,
    /// Id of the global parts the shard was built with.
    pub global: String,
    /// sha256 of the BM25F statistics it scores with.
    pub lexical: String,
    pub indexed_nodes: usize,
    pub functions: usize,
    pub lines: u64,
    pub roots: Vec<String>,
    /// Path of each file id.
    pub files: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    Info(ShardInfo),
    Lists { lexical: Vec<Keyed>, dense: Vec<Keyed>, nodes: Vec<Vec<Keyed>>, profile: Vec<Keyed> },
    Groups { groups: Vec<Group>, aligned: Vec<(u32, f32)> },
    Pool { candidates: Vec<Light> },
    Render { fragments: Vec<Fragment>, spans: Vec<Span> },
    Text { hits: Vec<TextHit> },
    Error { message: String },
}

impl Reply {
    /// The request this reply answers (`error` for an error).
    pub fn name(&self) -> &'static str {
        match self {
            Reply::Info(_) => "info",
            Reply::Lists { .. } => "lists",
            Reply::Groups { .. } => "groups",
            Reply::Pool { .. } => "pool",
            Reply::Render { .. } => "render",
            Reply::Text { .. } => "text",
            Reply::Error { .. } => "error",
        }
    }
}

impl Request {
    pub fn name(&self) -> &'static str {
        match self {
            Request::Info => "info",
            Request::Lists { .. } => "lists",
            Request::Groups { .. } => "groups",
            Request::Pool { .. } => "pool",
            Request::Render { .. } => "render",
            Request::Text { .. } => "text",
        }
    }
}
