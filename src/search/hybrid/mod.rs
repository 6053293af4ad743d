//! Hybrid pseudocode search: four retrievers fill a pool of candidate functions
//! ([`retrieve`]), each is read as one or two fragments with named [`signals`]
//! ([`candidates`]), a learned [`scorer`] ranks them, near-duplicates and copies are folded
//! ([`copies`]), and each result is explained ([`explain`]) and laid out as a report
//! fragment ([`fragments`]). The other `--method`s are single retrievers or the paper's
//! pipeline, for comparison.

pub mod candidate;
pub mod candidates;
pub mod copies;
pub mod explain;
pub mod fragments;
pub mod query;
pub mod retrieve;
pub mod scorer;
pub mod shard;
pub mod signals;

pub use candidate::{CandSpan, Candidate};
pub use candidates::candidates;
pub use copies::{rank, Shown};
pub use query::{plain_words, Query};
pub use scorer::Ranker;
pub use signals::{Signals, N_SIGNALS};

use crate::features::TextEncoders;
use crate::index::lexical::query_terms;
use crate::index::Index;
use crate::pcode::{Classifier, PcodeError};
use crate::search::{SearchError, SearchOptions, SearchResult, Timings};
use fragments::{function_fragments, to_fragments};
use retrieve::{dense_query, lexical_hits, top_k};
use serde::{Deserialize, Serialize};
use std::borrow::Borrow;
use std::path::Path;
use std::time::Instant;

/// `beryl search --pseudo --method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Every retriever, structural alignment and the learned scorer.
    Hybrid,
    /// The paper's pipeline: node matching, grouping, γ = covered nodes + 1/distance.
    Beryllium,
    /// BM25F over function names, comments and bodies.
    Bm25,
    /// The query's procedure names against function names (then comments).
    Name,
    /// The whole query against function text vectors.
    Dense,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Hybrid => "hybrid",
            Method::Beryllium => "beryllium",
            Method::Bm25 => "bm25",
            Method::Name => "name",
            Method::Dense => "dense",
        }
    }
}

/// The first-stage retrievers, as bits of [`Candidate::found`].
pub const RETRIEVERS: [&str; 4] = ["lexical", "dense", "beryllium", "structure"];
const LEXICAL: usize = 0;
const DENSE: usize = 1;
const BERYLLIUM: usize = 2;
const STRUCTURE: usize = 3;

#[derive(Clone, Debug)]
pub struct HybridOptions {
    /// Which retrievers fill the pool (in [`RETRIEVERS`] order).
    pub retrievers: [bool; 4],
    /// Functions each retriever contributes: the pool must be wide enough to hold the
    /// implementation when names say nothing (renamed code), and each pooled function costs
    /// an alignment.
    pub per_retriever: usize,
    /// Offer fragments grown into callees (depth ≤ 2).
    pub grow: bool,
    /// Shrink a long function to the region holding the match.
    pub shrink: bool,
}

impl Default for HybridOptions {
    fn default() -> Self {
        HybridOptions { retrievers: [true; 4], per_retriever: 200, grow: true, shrink: true }
    }
}

/// What follows the pool, on one index or over the merged pools of shards: the signals
/// that compare a candidate with the rest of the pool, the scorer, and the folding of
/// repeats and copies. `cands` holds the whole pool in function order.
pub fn after_pool(cands: &mut Vec<Candidate>, ranker: &Ranker, top: usize) {
    candidates::relative(cands);
    rank(cands, ranker, top);
}

/// Pseudocode search by `method`. `ranker` is needed by [`Method::Hybrid`].
pub fn search<C: Borrow<Classifier>>(
    index: &mut Index,
    encs: &TextEncoders,
    src: &str,
    name: &Path,
    clf: impl FnOnce() -> Result<C, PcodeError>,
    opts: &SearchOptions,
    method: Method,
    ranker: Option<&Ranker>,
) -> Result<SearchResult, SearchError> {
    if method == Method::Beryllium {
        return crate::search::pseudo(index, encs, src, name, clf, opts);
    }
    opts.limits.check_text(src)?;
    crate::search::scope::confine(index, &opts.scope)?;
    // The function encoder, the slowest to load, loads beside the work that needs none.
    std::thread::scope(|s| {
        if matches!(method, Method::Hybrid | Method::Dense) {
            encs.preload_functions(s);
        }
        let t0 = Instant::now();
        let q = Query::parse(src, name, clf)?;
        opts.limits.check_pcode(&q.pcode, q.icfg.graph.node_count())?;
        let embed_ms = t0.elapsed().as_secs_f64() * 1000.0;
        let t1 = Instant::now();
        let top = opts.top.max(1);
        let fragments = match method {
            Method::Hybrid => {
                let ranker = ranker.ok_or_else(|| SearchError::NoRanker("none given".into()))?;
                let mut cands = candidates::pool(index, encs, &q, &HybridOptions::default())?;
                after_pool(&mut cands, ranker, top);
                to_fragments(index, &q, &cands)?
            }
            Method::Bm25 => {
                let lex = index.lexical.search(&query_terms(&q.words, q.names()).terms);
                function_fragments(index, &top_k(&lexical_hits(index, &lex), top), &|r, s| format!("lexical: BM25F {s:.2}, rank {}", r + 1))?
            }
            Method::Name => {
                let qt = query_terms("", q.names());
                let lex = index.lexical.search(&qt.terms);
                // Name words in the name count fully, in the comment half; shorter functions first.
                let mut scored: Vec<(u32, f32, u32)> = (0..lex.score.len())
                    .filter(|&f| lex.name_mask[f] | lex.comment_mask[f] != 0 && index.in_scope(f as u32))
                    .map(|f| {
                        let len = index.shapes.get(f as u32).map_or(u32::MAX, |s| s.lines.1.saturating_sub(s.lines.0));
                        (f as u32, qt.coverage(lex.name_mask[f], q.main) + 0.5 * qt.coverage(lex.comment_mask[f], q.main), len)
                    })
                    .collect();
                scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)).then(a.0.cmp(&b.0)));
                let list: Vec<(u32, f32)> = scored.into_iter().take(top).map(|(f, s, _)| (f, s)).collect();
                function_fragments(index, &list, &|_, s| format!("name: procedure-name words matched, score {s:.2}"))?
            }
            Method::Dense => {
                let v = dense_query(index, encs, &q)?;
                let hits = index.search_functions(&v, top)?;
                let list: Vec<(u32, f32)> = hits.first().into_iter().flatten().map(|&(f, s)| (f as u32, s)).collect();
                function_fragments(index, &list, &|_, s| format!("dense: cosine {s:.2} to the function's text vector"))?
            }
            Method::Beryllium => unreachable!("handled above"),
        };
        Ok(SearchResult {
            mode: format!("pseudocode-{}", method.name()),
            pcode: Some(q.pcode.clone()),
            converted: q.converted,
            query_nodes: q.nodes.clone(),
            fragments,
            timings: Timings { embed_ms, knn_ms: t1.elapsed().as_secs_f64() * 1000.0, group_ms: 0.0, total_ms: t0.elapsed().as_secs_f64() * 1000.0 },
            missing_shards: Vec::new(),
            warnings: q.warnings.clone(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_drop_markup_and_numbers() {
        assert_eq!(plain_words(" 1 FOO(A)\n 2     $x = 1$ @do it@"), "FOO(A)\n     x = 1   do it ");
    }
}
