//! Hybrid search split at the shard boundary: what runs where a shard's index is open, in
//! the order a coordinator asks for it (see `crate::cluster`). Each step is the step of
//! [`super::search`] on one index, restricted to what the coordinator's global view
//! selected; results carry local ids, which the coordinator orders across shards.
//!
//! 1. [`lists`]: each retriever's best on this shard (lexical, dense, each query node's
//!    nearest code nodes, the structural preselection by profile);
//! 2. [`groups`] and [`align`]: the paper's grouping of the globally best node matches
//!    that lie here (groups never cross projects, so never shards), and the alignment of
//!    the globally preselected functions that lie here;
//! 3. [`pool`]: the candidates of the global pool that lie here, with their signals;
//! 4. [`render`]: the report of the candidates the coordinator kept.

use super::candidate::{CandSpan, Candidate, Ranks};
use super::candidates::read_pool;
use super::fragments::{to_fragments, Rows};
use super::query::Query;
use super::retrieve::{align_each, dense_hits, lexical_hits, structure_preselect, top_k, Forms, Retrieved};
use super::signals::{Signals, N_SIGNALS};
use super::HybridOptions;
use crate::features::DIM;
use crate::index::lexical::query_terms;
use crate::index::Index;
use crate::search::group::Matched;
use crate::search::{group_matched, Fragment, QueryPcode, SearchError, SearchOptions, Span};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// A pseudocode query as shards receive it: converted to p-code once and encoded once, by
/// the coordinator.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShardQuery {
    pub pcode: QueryPcode,
    /// The words of the text the user wrote.
    pub words: String,
    pub name: String,
    /// The query's function-level text vector.
    #[serde(with = "crate::cluster::floats")]
    pub qvec: Vec<f32>,
    /// Functions each retriever contributes (see [`HybridOptions::per_retriever`]).
    pub per_retriever: usize,
}

impl ShardQuery {
    pub fn query(&self) -> Result<Query, SearchError> {
        Query::from_pcode(self.pcode.clone(), self.words.clone(), Path::new(&self.name))
    }

    fn qvec(&self) -> Result<[f32; DIM], SearchError> {
        self.qvec.as_slice().try_into().map_err(|_| SearchError::Protocol(format!("a query vector of {} values, not {DIM}", self.qvec.len())))
    }
}

/// Each retriever's best on one shard, by local id, best first (ties by id).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Lists {
    pub lexical: Vec<(u32, f32)>,
    pub dense: Vec<(u32, f32)>,
    /// Per query node: its nearest code nodes and their similarity.
    pub nodes: Vec<Vec<(u32, f32)>>,
    /// The structural retriever's preselection: profile similarity.
    pub profile: Vec<(u32, f32)>,
}

/// Step 1. `node_rows` are the query nodes' search vectors (row-major), projected as the
/// shard's nodes are, `node_k` the corpus-wide per-node `k`.
pub fn lists(index: &mut Index, sq: &ShardQuery, q: &Query, node_rows: &[f32], node_k: usize) -> Result<Lists, SearchError> {
    let k = sq.per_retriever;
    let terms = query_terms(&q.words, q.names());
    let lex = index.lexical.search(&terms.terms);
    let lexical = top_k(&lexical_hits(index, &lex), k);
    let dense = dense_hits(index, &sq.qvec()?, k)?;
    let nodes = if node_rows.is_empty() {
        Vec::new()
    } else {
        let count = index.graph.node_count();
        index
            .search_projected_nodes(node_rows, node_k)?
            .into_iter()
            .map(|l| l.into_iter().filter(|&(id, _)| (id as usize) < count).map(|(id, s)| (id as u32, s)).collect())
            .collect()
    };
    index.load_profiles();
    let profile = structure_preselect(index, &Forms::new(q));
    Ok(Lists { lexical, dense, nodes, profile })
}

/// A matched code node as the coordinator selected it, with its place in the corpus-wide
/// matched list (which orders groups that tie).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MatchedNode {
    pub node: u32,
    pub covers: Vec<u64>,
    pub sims: Vec<(u32, f32)>,
    pub place: usize,
}

/// A group of matched nodes (a fragment of the paper's pipeline).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Group {
    pub score: f64,
    pub similarity: f64,
    /// [`crate::search::group::Candidate::tie`], with places in the corpus-wide list.
    pub tie: (u8, usize, usize),
    pub covered: usize,
    /// Functions it spans, in (file, function) order.
    pub functions: Vec<u32>,
}

/// Step 2a: the best `top` groups of the matched nodes that lie on this shard.
pub fn groups(index: &Index, matched: &[MatchedNode], n_query: usize, top: usize) -> Result<Vec<Group>, SearchError> {
    let local: Vec<Matched> = matched.iter().map(|m| Matched { node: m.node, covers: m.covers.clone(), sims: m.sims.clone() }).collect();
    let cands = group_matched(index, &local, n_query, &SearchOptions::default(), top);
    let mut out = Vec::with_capacity(cands.len());
    for c in cands {
        let mut per: BTreeSet<(u32, u32)> = BTreeSet::new();
        for &mi in &c.members {
            let r = index.store.node(local[mi].node)?;
            per.insert((r.file, r.function));
        }
        // Places in this shard's list become places in the corpus-wide list.
        let tie = (c.tie.0, matched[c.tie.1].place, c.tie.2);
        out.push(Group { score: c.score, similarity: c.similarity, tie, covered: c.covered.len(), functions: per.iter().map(|k| k.1).collect() });
    }
    Ok(out)
}

/// Step 2b: alignment scores of `functions` (the structural preselection on this shard).
pub fn align(index: &mut Index, q: &Query, functions: &[u32]) -> Vec<(u32, f32)> {
    index.load_profiles();
    let pre: Vec<(u32, f32)> = functions.iter().map(|&f| (f, 0.0)).collect();
    align_each(index, &Forms::new(q), &pre, &mut HashMap::new())
}

/// Step 3: the candidates of the functions of the global pool that lie here, given their
/// ranks in each corpus-wide retriever list and their Beryllium coverage; in function
/// order, without the pool-relative signals.
pub fn pool(index: &mut Index, sq: &ShardQuery, q: &Query, ranks: &[(u32, Ranks)], beryllium: &[(u32, f32)]) -> Result<Vec<Candidate>, SearchError> {
    index.load_profiles();
    let terms = query_terms(&q.words, q.names());
    let lex = index.lexical.search(&terms.terms);
    let r = Retrieved {
        ranks: ranks.iter().copied().collect(),
        terms,
        lex,
        beryl: beryllium.iter().copied().collect(),
        qvec: sq.qvec()?,
        aligned: HashMap::new(),
    };
    read_pool(index, q, &Forms::new(q), r, &HybridOptions { per_retriever: sq.per_retriever, ..HybridOptions::default() })
}

/// A candidate as it travels to the coordinator: what ranking reads, by local ids.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Light {
    pub function: u32,
    /// File of `function`, for the corpus-wide order of functions.
    pub file: u32,
    pub grown: bool,
    pub spans: Vec<CandSpan>,
    pub apart: Vec<CandSpan>,
    pub signals: Vec<f32>,
    pub found: u8,
    pub ranks: Ranks,
    pub looped: bool,
    pub copy: u64,
    pub tests: bool,
    pub from_test: bool,
}

impl Light {
    pub fn of(c: &Candidate, file: u32) -> Light {
        Light {
            function: c.function,
            file,
            grown: c.grown,
            spans: c.spans.clone(),
            apart: c.apart.clone(),
            signals: c.signals.to_array().to_vec(),
            found: c.found,
            ranks: c.ranks,
            looped: c.looped,
            copy: c.copy,
            tests: c.tests,
            from_test: c.from_test,
        }
    }

    /// The candidate for ranking, its functions renumbered by `id` (corpus-wide ids);
    /// what only rendering reads (the alignment) stays on the shard.
    pub fn candidate(&self, id: &dyn Fn(u32) -> u32) -> Result<Candidate, SearchError> {
        let x: [f32; N_SIGNALS] = self.signals.as_slice().try_into().map_err(|_| SearchError::Protocol(format!("{} signals, not {N_SIGNALS}", self.signals.len())))?;
        let span = |s: &CandSpan| CandSpan { function: id(s.function), ..s.clone() };
        Ok(Candidate {
            function: id(self.function),
            grown: self.grown,
            spans: self.spans.iter().map(span).collect(),
            apart: self.apart.iter().map(span).collect(),
            signals: Signals::from_array(&x),
            found: self.found,
            ranks: self.ranks,
            alignment: Default::default(),
            looped: self.looped,
            origins: Vec::new(),
            copy: self.copy,
            copies: Vec::new(),
            tests: self.tests,
            from_test: self.from_test,
            score: 0.0,
        })
    }
}

/// Step 4: the report of `cands` (with the coordinator's final signals and scores), copies
/// left to the coordinator.
pub fn render(index: &Index, q: &Query, cands: &[Candidate]) -> Result<Vec<Fragment>, SearchError> {
    to_fragments(index, q, cands)
}

/// A span of a copy, as the report shows it.
pub fn span(index: &Index, s: &CandSpan) -> Result<Span, SearchError> {
    let mut rows = Rows::new(index);
    let row = rows.function(s.function)?.clone();
    Ok(Span { path: s.path.clone(), function_id: s.function, function: row.qualified, function_lines: row.lines, lines: s.lines, nodes: 0, test: crate::search::place::in_tests(&s.path, &index.meta.roots) })
}
