//! A shard server: one index, opened once, answering the coordinator's requests.

use super::protocol::{Keyed, Kept, Reply, Request, ShardInfo};
use super::ClusterError;
use crate::index::global::Global;
use crate::index::Index;
use crate::search::hybrid::candidate::{CandSpan, Candidate, Ranks};
use crate::search::hybrid::shard::{self as step, Light, ShardQuery};
use crate::search::hybrid::Signals;
use crate::search::hybrid::N_SIGNALS;
use crate::search::{text_hits, SearchError};
use std::collections::VecDeque;
use std::path::Path;

/// Pools kept for the render step: a query's step 3 and step 4 reach the same replica
/// unless it failed in between, and then the pool is read again.
const POOLS_KEPT: usize = 8;

pub struct ShardServer {
    index: Index,
    info: ShardInfo,
    /// File of each function id.
    fn_file: Vec<u32>,
    /// ENTRY node of each function id, ascending (a function's nodes follow its entry).
    entries: Vec<u32>,
    pools: VecDeque<(u64, Vec<Candidate>)>,
}

impl ShardServer {
    /// Opens the shard index at `dir`, built with the global parts at `global`, and scores
    /// with the corpus-wide BM25F statistics found there.
    pub fn open(dir: &Path, global: &Path, nprobe: usize) -> Result<ShardServer, ClusterError> {
        let g = Global::open(global)?;
        let mut index = Index::open(dir, None, nprobe)?;
        index.model.start();
        if index.meta.global.as_deref() != Some(g.meta.id.as_str()) {
            return Err(ClusterError::Setup(format!("{} was not built with the global parts at {} (`beryl index --global`)", dir.display(), global.display())));
        }
        let no_reduce = |e: crate::index::IndexError| match e {
            crate::index::IndexError::Missing(_) => ClusterError::Setup(format!("{} holds no shard statistics yet: run `beryl cluster reduce`", global.display())),
            e => ClusterError::Index(e),
        };
        let totals = g.totals().map_err(no_reduce)?;
        let (stats, lexical_sha) = g.lexical().map_err(no_reduce)?;
        let mut fn_file = Vec::with_capacity(index.meta.function_slots);
        let mut entries = Vec::with_capacity(index.meta.function_slots);
        for f in 0..index.meta.function_slots.max(index.meta.functions) as u32 {
            match index.store.function(f) {
                Ok(r) => {
                    fn_file.push(r.file);
                    entries.push(r.entry);
                }
                // An id an update emptied: no node or hit points at it.
                Err(_) => {
                    fn_file.push(u32::MAX);
                    entries.push(entries.last().copied().unwrap_or(0));
                }
            }
        }
        let files = index.store.files()?;
        let mut paths = vec![String::new(); files.iter().map(|f| f.id as usize + 1).max().unwrap_or(0)];
        for f in files {
            paths[f.id as usize] = f.path;
        }
        // Statistics summed without this shard, or before it was built again, would score
        // it otherwise than one index.
        let ours = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        match totals.shards.iter().find(|s| Path::new(&s.dir) == ours) {
            None => return Err(ClusterError::Setup(format!("{} is not among the shards the statistics at {} were summed over: run `beryl cluster reduce` with it", dir.display(), global.display()))),
            Some(t) if t.statistics != crate::index::sha256_hex(&index.lexical.stats().to_bytes()) => {
                return Err(ClusterError::Setup(format!("{} changed since the statistics at {} were summed: run `beryl cluster reduce` again", dir.display(), global.display())))
            }
            Some(_) => {}
        }
        index.lexical.use_global(stats);
        let info = ShardInfo {
            index: dir.display().to_string(),
            global: g.meta.id.clone(),
            lexical: lexical_sha,
            indexed_nodes: index.meta.indexed_nodes,
            functions: index.meta.functions,
            lines: index.meta.lines,
            roots: index.meta.roots.clone(),
            files: paths,
        };
        Ok(ShardServer { index, info, fn_file, entries, pools: VecDeque::new() })
    }

    pub fn info(&self) -> &ShardInfo {
        &self.info
    }

    fn file_of_function(&self, f: u32) -> u32 {
        self.fn_file.get(f as usize).copied().unwrap_or(u32::MAX)
    }

    fn file_of_node(&self, n: u32) -> u32 {
        let f = self.entries.partition_point(|&e| e <= n).saturating_sub(1);
        self.file_of_function(f as u32)
    }

    /// Answers one request; failures become [`Reply::Error`].
    pub fn handle(&mut self, req: Request) -> Reply {
        match self.answer(req) {
            Ok(r) => r,
            Err(e) => Reply::Error { message: e.to_string() },
        }
    }

    fn answer(&mut self, req: Request) -> Result<Reply, SearchError> {
        Ok(match req {
            Request::Info => Reply::Info(self.info.clone()),
            Request::Lists { query, node_rows, node_k, .. } => {
                let q = query.query()?;
                let l = step::lists(&mut self.index, &query, &q, &node_rows, node_k)?;
                let by_fn = |v: Vec<(u32, f32)>| -> Vec<Keyed> { v.into_iter().map(|(f, s)| (f, s, self.file_of_function(f))).collect() };
                Reply::Lists {
                    lexical: by_fn(l.lexical),
                    dense: by_fn(l.dense),
                    nodes: l.nodes.into_iter().map(|v| v.into_iter().map(|(n, s)| (n, s, self.file_of_node(n))).collect()).collect(),
                    profile: by_fn(l.profile),
                }
            }
            Request::Groups { query, matched, n_query, top, structure, .. } => {
                let q = query.query()?;
                let groups = step::groups(&self.index, &matched, n_query, top)?;
                let aligned = step::align(&mut self.index, &q, &structure);
                Reply::Groups { groups, aligned }
            }
            Request::Pool { qid, query, ranks, beryllium } => {
                let cands = self.pool(qid, &query, &ranks, &beryllium)?;
                Reply::Pool { candidates: cands.iter().map(|c| Light::of(c, self.file_of_function(c.function))).collect() }
            }
            Request::Render { qid, query, ranks, beryllium, keep, spans } => {
                let q = query.query()?;
                let kept = match self.pools.iter().find(|(id, _)| *id == qid) {
                    Some((_, cands)) => kept(cands, &keep)?,
                    // Another replica read the pool: only the kept functions are read again.
                    None => {
                        let only: Vec<(u32, Ranks)> = ranks.iter().filter(|(f, _)| keep.iter().any(|k| k.function == *f)).copied().collect();
                        let cands = step::pool(&mut self.index, &query, &q, &only, &beryllium)?;
                        kept_by_function(&cands, &keep)?
                    }
                };
                let fragments = step::render(&self.index, &q, &kept)?;
                let spans = spans.iter().map(|s| step::span(&self.index, s)).collect::<Result<Vec<_>, _>>()?;
                Reply::Render { fragments, spans }
            }
            Request::Text { query, vec, k } => Reply::Text { hits: text_hits(&mut self.index, &vec, &query, k)? },
        })
    }

    /// The pool of query `qid` on this shard: kept from step 3, or read again.
    fn pool(&mut self, qid: u64, query: &ShardQuery, ranks: &[(u32, Ranks)], beryllium: &[(u32, f32)]) -> Result<Vec<Candidate>, SearchError> {
        if let Some((_, c)) = self.pools.iter().find(|(id, _)| *id == qid) {
            return Ok(c.clone());
        }
        let q = query.query()?;
        let cands = step::pool(&mut self.index, query, &q, ranks, beryllium)?;
        if self.pools.len() >= POOLS_KEPT {
            self.pools.pop_front();
        }
        self.pools.push_back((qid, cands.clone()));
        Ok(cands)
    }
}

/// The kept candidates, found by function and reading (grown or not) in a pool read anew.
fn kept_by_function(cands: &[Candidate], keep: &[Kept]) -> Result<Vec<Candidate>, SearchError> {
    let by_place: Vec<Candidate> = keep
        .iter()
        .map(|k| cands.iter().find(|c| c.function == k.function && c.grown == k.grown).cloned().ok_or_else(|| SearchError::Protocol(format!("function {} is not in this shard's pool", k.function))))
        .collect::<Result<_, _>>()?;
    let renumbered: Vec<Kept> = keep.iter().enumerate().map(|(i, k)| Kept { index: i, ..k.clone() }).collect();
    kept(&by_place, &renumbered)
}

/// The kept candidates with the coordinator's signals and scores.
fn kept(cands: &[Candidate], keep: &[Kept]) -> Result<Vec<Candidate>, SearchError> {
    keep.iter()
        .map(|k| {
            let mut c = cands.get(k.index).cloned().ok_or_else(|| SearchError::Protocol(format!("no candidate {} in this shard's pool", k.index)))?;
            let x: [f32; N_SIGNALS] = k.signals.as_slice().try_into().map_err(|_| SearchError::Protocol("signals of another length".into()))?;
            c.signals = Signals::from_array(&x);
            c.score = k.score;
            // The reasons count the copies; the coordinator puts in their spans.
            c.copies = vec![c.spans.first().cloned().unwrap_or_else(|| CandSpan { function: c.function, path: String::new(), lines: (0, 0), matched: 0 }); k.copies];
            Ok(c)
        })
        .collect()
}
