//! Queries against an index: pseudocode (node matching, then grouping into fragments) and
//! natural language (function text vectors, or node matching with `fragments`).

pub mod group;
pub mod hybrid;
pub mod limits;
pub mod place;
pub mod scope;

use crate::features::{Encoder, FeatureError, TextEncoders};
use crate::graph::{Icfg, NodeKind};
use crate::index::graph::Bfs;
use crate::index::{vectors, Index, IndexError};
use crate::model::embed::{embed, IN_DIM};
use crate::pcode::{self, Classifier, PcodeError};
use group::Matched;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::borrow::Borrow;
use std::path::Path;
use std::time::Instant;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum SearchError {
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error(transparent)]
    Pcode(#[from] PcodeError),
    #[error(transparent)]
    Feature(#[from] FeatureError),
    #[error("the query is empty")]
    EmptyQuery,
    #[error(transparent)]
    TooLarge(#[from] limits::TooLarge),
    #[error("hybrid search needs the ranker weights (models/ranker/weights.json, or $BERYL_RANKER): {0}")]
    NoRanker(String),
    #[error(transparent)]
    Ranker(#[from] hybrid::scorer::RankerError),
    /// A `--path`/`--lang` scope that cannot be read or holds nothing.
    #[error("scope: {0}")]
    Scope(String),
    /// A shard or coordinator sent what the other side cannot read.
    #[error("cluster protocol: {0}")]
    Protocol(String),
}

#[derive(Clone, Debug)]
pub struct SearchOptions {
    /// Fragments (or functions) to return.
    pub top: usize,
    /// Source nodes fetched per query node (at most 1/200 of the index, at least 5).
    pub k: usize,
    /// Longest ICFG path (edges) between two nodes of one fragment.
    pub radius: u32,
    /// Nodes one bounded path search may visit.
    pub max_visits: usize,
    /// Most matched source nodes kept for grouping (the most similar ones).
    pub max_matches: usize,
    /// How large a query may be.
    pub limits: limits::QueryLimits,
    /// The files results may come from.
    pub scope: scope::Scope,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions { top: 10, k: 100, radius: 8, max_visits: 4000, max_matches: 3000, limits: limits::QueryLimits::default(), scope: scope::Scope::default() }
    }
}

/// A line of the query and what it was taken as.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct QueryNode {
    pub id: usize,
    pub kind: String,
    pub lines: (u32, u32),
    pub text: String,
}

/// One query node matched to one code node of a fragment.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LineMatch {
    pub query_node: usize,
    pub query_lines: (u32, u32),
    pub query_text: String,
    pub path: String,
    pub lines: (u32, u32),
    pub code: String,
    pub similarity: f32,
}

/// The part of a fragment inside one function.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Span {
    pub path: String,
    /// The function's id in the index.
    #[serde(skip)]
    pub function_id: u32,
    pub function: String,
    pub function_lines: (u32, u32),
    /// First and last line of the matched nodes in this function.
    pub lines: (u32, u32),
    pub nodes: usize,
    /// The file lies in tests, examples or benchmarks below its indexed root
    /// ([`place::in_tests`]).
    #[serde(default)]
    pub test: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Fragment {
    pub rank: usize,
    pub score: f64,
    pub query_nodes_covered: usize,
    pub query_lines_covered: usize,
    pub query_lines_total: usize,
    /// Longest shortest path inside the fragment (0 for one node).
    pub distance: u32,
    pub spans: Vec<Span>,
    /// Called functions the match reaches that lie far from the spans in their file: named
    /// with the fragment, not part of its lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub apart: Vec<Span>,
    /// The same code under other names elsewhere (hybrid search): lower-ranked copies
    /// folded into this fragment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub copies: Vec<Span>,
    pub matches: Vec<LineMatch>,
    /// Why it matched, one signal each (hybrid and the single-signal methods).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Timings {
    pub embed_ms: f64,
    pub knn_ms: f64,
    pub group_ms: f64,
    pub total_ms: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SearchResult {
    /// `pseudocode`, `natural-language` or `natural-language-fragments`.
    pub mode: String,
    /// The p-code that was searched (after conversion of plain pseudocode).
    pub pcode: Option<String>,
    pub converted: bool,
    pub query_nodes: Vec<QueryNode>,
    pub fragments: Vec<Fragment>,
    pub timings: Timings,
    /// Shards of a cluster that did not answer in time: the results are those of the others.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_shards: Vec<String>,
    /// What the query's conversion read otherwise than written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<pcode::Warning>,
}

/// A query as p-code.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct QueryPcode {
    pub pcode: String,
    /// It was plain pseudocode, converted.
    pub converted: bool,
    /// For each p-code line, its line in the query.
    pub line_map: Vec<u32>,
    /// Its procedures carry the names the user wrote; false when statements without a
    /// header were wrapped in one.
    pub named: bool,
    /// What the converter read otherwise than written (lines and columns of the query).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<pcode::Warning>,
}

/// Whether the text is written in the p-language: a line holds a `$ … $` or `@ … @` span.
/// A lone `@` is plain text's (Python's matrix product, a decorator, an annotation).
fn marked(src: &str) -> bool {
    src.lines().any(|l| l.matches('$').count() >= 2 || l.matches('@').count() >= 2)
}

/// Turns query text into p-code: p-code as is, plain pseudocode through the converter.
pub fn to_pcode<C: Borrow<Classifier>>(src: &str, clf: impl FnOnce() -> Result<C, PcodeError>) -> Result<QueryPcode, PcodeError> {
    if src.trim().is_empty() {
        return Err(PcodeError::Syntax(Box::new(pcode::SyntaxError {
            file: String::new(),
            line: 1,
            col: 1,
            line_text: String::new(),
            expected: vec!["a procedure".into()],
            found: "an empty query".into(),
            message: None,
        })));
    }
    let identity = |s: &str| (1..=s.lines().count() as u32).collect::<Vec<_>>();
    match pcode::parse(src) {
        Ok(_) => Ok(QueryPcode { pcode: src.to_string(), converted: false, line_map: identity(src), named: true, warnings: Vec::new() }),
        // Marked text that does not parse is a p-code error worth showing as such.
        Err(e) if marked(src) => Err(e),
        Err(_) => {
            let clf = clf()?;
            let clf: &Classifier = clf.borrow();
            let (conv, named) = match pcode::convert(src, clf) {
                Ok(c) => (c, true),
                // Statements without a procedure header: search them as the body of one.
                Err(e) => {
                    let nonblank: Vec<u32> = src.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()).map(|(i, _)| i as u32 + 1).collect();
                    let body: String = src.lines().filter(|l| !l.trim().is_empty()).map(|l| format!("    {l}\n")).collect();
                    let mut c = pcode::convert(&format!("QUERY()\n{body}"), clf).map_err(|_| e)?;
                    // Line k + 1 of the wrapped text is the k-th non-blank line; the header is the first.
                    let first = nonblank.first().copied().unwrap_or(1);
                    let back = |k: u32| if k <= 1 { first } else { nonblank.get(k as usize - 2).copied().unwrap_or(first) };
                    c.source = c.source.iter().map(|&k| back(k)).collect();
                    // Each body line was indented by four columns.
                    for w in &mut c.warnings {
                        w.line = back(w.line);
                        w.col = w.col.saturating_sub(4).max(1);
                    }
                    (c, false)
                }
            };
            Ok(QueryPcode { pcode: conv.pcode, converted: true, line_map: conv.source, named, warnings: conv.warnings })
        }
    }
}

const KEEP_PER: usize = 200;
const MIN_K: usize = 5;

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// Query nodes with their search vectors.
pub(crate) struct QueryVectors {
    nodes: Vec<QueryNode>,
    rows: Vec<f32>,
}

pub(crate) fn query_vectors(index: &Index, enc: &Encoder, q: &Icfg, line_map: &[u32]) -> Result<QueryVectors, SearchError> {
    query_rows(index.graph_model()?, index.meta.features, index.meta.hidden, enc, q, line_map)
}

/// The query nodes of a query graph and their search vectors, row-major, as an index made
/// with `model` and `features` compares them (before any projection).
pub fn query_node_rows(model: &crate::model::Model, features: crate::index::FeatureSet, hidden: usize, enc: &Encoder, q: &Icfg, line_map: &[u32]) -> Result<(Vec<QueryNode>, Vec<f32>), SearchError> {
    let qv = query_rows(model, features, hidden, enc, q, line_map)?;
    Ok((qv.nodes, qv.rows))
}

fn query_rows(model: &crate::model::Model, features: crate::index::FeatureSet, hidden: usize, enc: &Encoder, q: &Icfg, line_map: &[u32]) -> Result<QueryVectors, SearchError> {
    let rows = embed(model, q, enc)?;
    let width = hidden + IN_DIM;
    let mut nodes = Vec::new();
    let mut out = Vec::new();
    let map = |l: u32| line_map.get(l as usize - 1).copied().unwrap_or(l);
    for n in q.graph.node_indices() {
        let node = &q.graph[n];
        if !vectors::searchable(node.kind) {
            continue;
        }
        let text = if node.kind == NodeKind::Entry { q.functions[node.function as usize].meta.name.clone() } else { node.text.to_string() };
        // ENTRY spans the whole procedure; its own line is the header.
        let last = if node.kind == NodeKind::Entry { node.lines.0 } else { node.lines.1 };
        nodes.push(QueryNode { id: nodes.len(), kind: node.kind.name().into(), lines: (map(node.lines.0.max(1)), map(last.max(1))), text });
        features.search_vector(&rows[n.index() * width..(n.index() + 1) * width], hidden, &mut out);
    }
    Ok(QueryVectors { nodes, rows: out })
}

/// Pseudocode search: p-code (or plain pseudocode, converted) against the node index.
pub fn pseudo<C: Borrow<Classifier>>(
    index: &mut Index,
    encs: &TextEncoders,
    src: &str,
    name: &Path,
    clf: impl FnOnce() -> Result<C, PcodeError>,
    opts: &SearchOptions,
) -> Result<SearchResult, SearchError> {
    let t0 = Instant::now();
    opts.limits.check_text(src)?;
    scope::confine(index, &opts.scope)?;
    let enc = index.statement_encoder(encs)?;
    let QueryPcode { pcode: pc, converted, line_map, warnings, .. } = to_pcode(src, clf).map_err(|e| e.with_file(&name.display().to_string()))?;
    let q = pcode::icfg(&pc, name).map_err(|e| e.with_file(&name.display().to_string()))?;
    opts.limits.check_pcode(&pc, q.graph.node_count())?;
    let qv = query_vectors(index, enc, &q, &line_map)?;
    if qv.nodes.is_empty() {
        return Err(SearchError::EmptyQuery);
    }
    let embed_ms = ms(t0);
    let mut r = fragments(index, qv, opts, "pseudocode", embed_ms, t0)?;
    r.pcode = Some(pc);
    r.converted = converted;
    r.warnings = warnings;
    Ok(r)
}

/// The query node of a natural-language query.
pub fn text_node(query: &str) -> QueryNode {
    QueryNode { id: 0, kind: "text".into(), lines: (1, query.lines().count().max(1) as u32), text: query.to_string() }
}

/// A function found by its text vector.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TextHit {
    pub function: u32,
    pub file: u32,
    pub similarity: f32,
    /// It lies in tests, examples or benchmarks.
    pub tests: bool,
    pub fragment: Fragment,
}

/// The `k` functions whose text vectors are closest to `v`, best first (ties by id).
pub fn text_hits(index: &mut Index, v: &[f32], query: &str, k: usize) -> Result<Vec<TextHit>, SearchError> {
    let hits = index.search_functions(v, k)?;
    let Some(hits) = hits.first() else { return Ok(Vec::new()) };
    let qn = text_node(query);
    let mut out = Vec::new();
    for &(fid, sim) in hits.iter() {
        let f = index.store.function(fid as u32)?;
        let file = index.store.file(f.file)?;
        let tests = place::in_tests(&file.path, &index.meta.roots);
        out.push(TextHit {
            function: fid as u32,
            file: f.file,
            similarity: sim,
            tests,
            fragment: Fragment {
                rank: 0,
                score: sim as f64,
                query_nodes_covered: 1,
                query_lines_covered: 1,
                query_lines_total: 1,
                distance: 0,
                spans: vec![Span { path: file.path.clone(), function_id: fid as u32, function: f.qualified.clone(), function_lines: f.lines, lines: f.lines, nodes: 0, test: tests }],
                apart: Vec::new(),
                copies: Vec::new(),
                matches: vec![LineMatch {
                    query_node: 0,
                    query_lines: qn.lines,
                    query_text: query.to_string(),
                    path: file.path,
                    lines: f.lines,
                    code: f.qualified,
                    similarity: sim,
                }],
                reasons: if tests { vec![place::TESTS_LAST.into()] } else { Vec::new() },
            },
        });
    }
    Ok(out)
}

/// The report of natural-language search from the best hits (corpus-wide): code in tests,
/// examples or benchmarks after the rest, each kind in its order, `top` of them.
pub fn text_result(hits: Vec<TextHit>, query: &str, top: usize, timings: Timings) -> SearchResult {
    let mut frags: Vec<(bool, Fragment)> = hits.into_iter().map(|h| (h.tests, h.fragment)).collect();
    frags.sort_by_key(|(tests, _)| *tests);
    let frags: Vec<Fragment> = frags.into_iter().take(top).enumerate().map(|(rank, (_, f))| Fragment { rank: rank + 1, ..f }).collect();
    SearchResult {
        mode: "natural-language".into(),
        pcode: None,
        converted: false,
        query_nodes: vec![text_node(query)],
        fragments: frags,
        timings,
        missing_shards: Vec::new(),
        warnings: Vec::new(),
    }
}

/// Natural-language search over function text vectors.
pub fn natural(index: &mut Index, encs: &TextEncoders, query: &str, opts: &SearchOptions) -> Result<SearchResult, SearchError> {
    let t0 = Instant::now();
    opts.limits.check_text(query)?;
    if query.trim().is_empty() {
        return Err(SearchError::EmptyQuery);
    }
    scope::confine(index, &opts.scope)?;
    let v = index.function_encoder(encs)?.encode(&[query])?;
    let embed_ms = ms(t0);
    let t1 = Instant::now();
    // Twice the results asked for, so that tests listed after the code leave room for code.
    let frags = text_hits(index, &v[0], query, opts.top.saturating_mul(2))?;
    let knn_ms = ms(t1);
    Ok(text_result(frags, query, opts.top, Timings { embed_ms, knn_ms, group_ms: 0.0, total_ms: ms(t0) }))
}

/// Natural-language search over nodes: each sentence of the query is a query node.
pub fn natural_fragments(index: &mut Index, encs: &TextEncoders, query: &str, opts: &SearchOptions) -> Result<SearchResult, SearchError> {
    let t0 = Instant::now();
    opts.limits.check_text(query)?;
    scope::confine(index, &opts.scope)?;
    let enc = index.statement_encoder(encs)?;
    let sentences: Vec<&str> = query
        .split(['.', ';', '\n'])
        .map(str::trim)
        .filter(|s| s.split_whitespace().count() >= 2)
        .collect();
    let sentences = if sentences.is_empty() { vec![query.trim()] } else { sentences };
    if sentences[0].is_empty() {
        return Err(SearchError::EmptyQuery);
    }
    let vecs = enc.encode(&sentences)?;
    let hidden = index.meta.hidden;
    let fs = index.meta.features;
    let mut rows = Vec::new();
    let mut nodes = Vec::new();
    for (i, (s, v)) in sentences.iter().zip(&vecs).enumerate() {
        // A text-only node: the graph and math blocks are empty.
        let mut row = vec![0f32; hidden + IN_DIM];
        row[hidden + IN_DIM - crate::features::DIM..].copy_from_slice(v);
        fs.search_vector(&row, hidden, &mut rows);
        nodes.push(QueryNode { id: i, kind: "text".into(), lines: (1, 1), text: s.to_string() });
    }
    let embed_ms = ms(t0);
    fragments(index, QueryVectors { nodes, rows }, opts, "natural-language-fragments", embed_ms, t0)
}

/// Per-query-node `k` of node matching on an index (or a sharded corpus) of `nodes`
/// indexed nodes: each query node takes at most 1/200 of the corpus, as on a small index a
/// fixed k=100 would match every loop header and assignment, and generic nodes would cover
/// the query.
pub fn node_k(opts: &SearchOptions, nodes: usize) -> usize {
    opts.k.min((nodes / KEEP_PER).max(MIN_K))
}

/// The matched source nodes of per-query-node hit lists, the most similar first (ties by
/// node id), at most `max_matches`. Hits at or beyond `node_count` are passed over.
pub(crate) fn matched_of(hits: &[Vec<(u64, f32)>], node_count: usize, n_query: usize, max_matches: usize) -> Vec<Matched> {
    let words = n_query.div_ceil(64).max(1);
    let mut by_node: HashMap<u32, Matched> = HashMap::new();
    for (q, list) in hits.iter().enumerate() {
        for &(id, sim) in list {
            let id = id as u32;
            if id as usize >= node_count {
                continue;
            }
            let m = by_node.entry(id).or_insert_with(|| Matched { node: id, covers: vec![0; words], sims: Vec::new() });
            m.covers[q / 64] |= 1 << (q % 64);
            m.sims.push((q as u32, sim));
        }
    }
    let mut matched: Vec<Matched> = by_node.into_values().collect();
    matched.sort_by(|a, b| group::best(b).total_cmp(&group::best(a)).then(a.node.cmp(&b.node)));
    matched.truncate(max_matches);
    matched
}

/// Groups matched nodes into the best `top` candidate fragments (ICFG distances within
/// `opts.radius`).
pub(crate) fn group_matched(index: &Index, matched: &[Matched], n_query: usize, opts: &SearchOptions, top: usize) -> Vec<group::Candidate> {
    let slot: HashMap<u32, usize> = matched.iter().enumerate().map(|(i, m)| (m.node, i)).collect();
    let mut bfs = Bfs::new(&index.graph);
    let mut pairs = Vec::new();
    for (i, m) in matched.iter().enumerate() {
        for (j, d) in bfs.distances(m.node, opts.radius, opts.max_visits, &slot) {
            if j > i {
                pairs.push((i, j, d));
            }
        }
    }
    group::rank(matched, &pairs, n_query, top)
}

pub(crate) fn fragments(index: &mut Index, qv: QueryVectors, opts: &SearchOptions, mode: &str, embed_ms: f64, t0: Instant) -> Result<SearchResult, SearchError> {
    let t1 = Instant::now();
    let k = node_k(opts, index.meta.indexed_nodes);
    let hits = index.search_nodes(&qv.rows, k)?;
    let knn_ms = ms(t1);

    let t2 = Instant::now();
    let nq = qv.nodes.len();
    let matched = matched_of(&hits, index.graph.node_count(), nq, opts.max_matches);
    let cands = group_matched(index, &matched, nq, opts, opts.top);
    let group_ms = ms(t2);

    let total_lines: std::collections::BTreeSet<u32> = qv.nodes.iter().flat_map(|n| n.lines.0..=n.lines.1).collect();
    let mut frags = Vec::new();
    for (rank, c) in cands.iter().enumerate() {
        let mut rows = Vec::new();
        for &mi in &c.members {
            rows.push(index.store.node(matched[mi].node)?);
        }
        // Spans per (file, function), in file then line order.
        let mut per: BTreeMap<(u32, u32), (u32, u32, usize)> = BTreeMap::new();
        for r in &rows {
            let e = per.entry((r.file, r.function)).or_insert((u32::MAX, 0, 0));
            e.0 = e.0.min(r.lines.0);
            e.1 = e.1.max(r.lines.1);
            e.2 += 1;
        }
        let mut spans = Vec::new();
        let mut paths: HashMap<u32, String> = HashMap::new();
        for (&(file, func), &(s, e, count)) in &per {
            let f = index.store.function(func)?;
            let path = match paths.get(&file) {
                Some(p) => p.clone(),
                None => {
                    let p = index.store.file(file)?.path;
                    paths.insert(file, p.clone());
                    p
                }
            };
            let test = place::in_tests(&path, &index.meta.roots);
            spans.push(Span { path, function_id: func, function: f.qualified, function_lines: f.lines, lines: (s, e), nodes: count, test });
        }
        let mut matches = Vec::new();
        let mut covered_lines = std::collections::BTreeSet::new();
        for &q in &c.covered {
            let mut best: Option<(usize, f32)> = None;
            for (k, &mi) in c.members.iter().enumerate() {
                for &(qq, s) in &matched[mi].sims {
                    if qq == q && best.is_none_or(|b| s > b.1) {
                        best = Some((k, s));
                    }
                }
            }
            if let Some((k, s)) = best {
                let qn = &qv.nodes[q as usize];
                covered_lines.extend(qn.lines.0..=qn.lines.1);
                let r = &rows[k];
                matches.push(LineMatch {
                    query_node: q as usize,
                    query_lines: qn.lines,
                    query_text: qn.text.clone(),
                    path: paths.get(&r.file).cloned().unwrap_or_default(),
                    lines: r.lines,
                    code: r.text.clone(),
                    similarity: s,
                });
            }
        }
        matches.sort_by_key(|m| (m.query_lines, m.query_node));
        frags.push(Fragment {
            rank: rank + 1,
            score: c.score,
            query_nodes_covered: c.covered.len(),
            query_lines_covered: covered_lines.len(),
            query_lines_total: total_lines.len(),
            distance: c.distance,
            spans,
            apart: Vec::new(),
            copies: Vec::new(),
            matches,
            reasons: Vec::new(),
        });
    }
    Ok(SearchResult {
        mode: mode.into(),
        pcode: None,
        converted: false,
        query_nodes: qv.nodes,
        fragments: frags,
        timings: Timings { embed_ms, knn_ms, group_ms, total_ms: ms(t0) },
        missing_shards: Vec::new(),
        warnings: Vec::new(),
    })
}
