//! Hybrid pseudocode search: cheap, complementary retrievers fill one candidate pool, each
//! candidate becomes a fragment shaped by a structural alignment of the query into it
//! (shrunk to the loop nest that holds the match, or grown into the functions it calls),
//! and one learned scorer ([`super::ranker`]) orders them.
//!
//! Retrievers, each returning functions:
//! - lexical: BM25F over function names, comments and bodies ([`crate::index::lexical`]),
//!   queried with the pseudocode's words and its procedure names;
//! - dense: the whole query text against the function text vectors (`functions.faiss`);
//! - beryllium: the paper's node matching and grouping ([`super::pseudo`]);
//! - structure: functions whose loop/branch/operator profile is closest to the query's,
//!   re-ranked by tree alignment ([`crate::shape::align`]); the only one that reads no names.

use super::ranker::{Ranker, FEATURES, N_FEATURES};
use super::{fragments, query_vectors, to_pcode, Fragment, LineMatch, QueryNode, SearchError, SearchOptions, SearchResult, Span, Timings};
use crate::features::{TextEncoders, DIM};
use crate::graph::{Icfg, Lang};
use crate::index::lexical::{name_terms, query_terms};
use crate::index::store::FunctionRow;
use crate::index::{vectors, Index, IndexError};
use crate::pcode::{Classifier, PcodeError};
use crate::shape::align::{align, flow_agreement, sequence_agreement, token_agreement, Alignment, Tree};
use crate::shape::{Profile, Shape};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::time::Instant;

/// `beryl search --pseudo --method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
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

/// Functions whose profile is compared by alignment in the structural retriever: three times
/// the retriever's share, as profiles alone rank the implementation poorly.
const STRUCT_PRESELECT: usize = 600;
/// Most nodes of a code tree (callees included).
const MAX_TREE: usize = 1500;
/// Alignment gain that makes a grown fragment worth offering.
const GROW_GAIN: f32 = 0.08;

#[derive(Clone, Debug)]
pub struct HybridOptions {
    /// Which retrievers fill the pool (in [`RETRIEVERS`] order).
    pub retrievers: [bool; 4],
    /// Functions each retriever contributes (200: pools of ~670 candidates held a hit in 0.98
    /// of `bench/algo` rows and 0.82 renamed, against 0.96 and 0.65 with 100; ~20 ms more a query).
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

/// A pseudocode query, analysed once for every retriever.
pub struct Query {
    pub pcode: String,
    pub converted: bool,
    pub icfg: Icfg,
    line_map: Vec<u32>,
    /// One per shape node of every procedure, for reporting matches.
    pub nodes: Vec<QueryNode>,
    node_of: HashMap<(u32, u16), usize>,
    /// The query's words without markup or line numbers.
    pub words: String,
    pub procedures: Vec<String>,
    /// The procedures are named by the user (not wrapped statements).
    pub named: bool,
    /// Index of the main procedure in `procedures`.
    pub main: usize,
    pub shapes: Vec<Shape>,
    /// The main procedure with the procedures it calls hung under their calls.
    pub tree: Tree,
    pub profile: Profile,
    /// The same with tail calls to itself written as loops ([`Shape::tail_call_as_loop`]),
    /// where a procedure of the tree has one: code is as often written that way.
    pub looped: Option<(Tree, Profile)>,
    /// Lines of the query's statements.
    pub lines: u32,
}

/// Pseudocode as plain words: no listing numbers, no `$`/`@` markup, no `▷` comments.
pub fn plain_words(src: &str) -> String {
    src.lines()
        .map(|l| {
            let t = l.trim_start();
            let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let t = if digits > 0 && t[digits..].starts_with(' ') { &t[digits + 1..] } else { l };
            t.replace(['$', '@', '▷'], " ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Query {
    pub fn parse(src: &str, name: &Path, clf: impl FnOnce() -> Result<Classifier, PcodeError>) -> Result<Query, SearchError> {
        let super::QueryPcode { pcode, converted, line_map, named } = to_pcode(src, clf).map_err(|e| e.with_file(&name.display().to_string()))?;
        let icfg = crate::pcode::icfg(&pcode, name).map_err(|e| e.with_file(&name.display().to_string()))?;
        let shapes = Shape::all(&icfg);
        if icfg.functions.is_empty() {
            return Err(SearchError::EmptyQuery);
        }
        let procedures: Vec<String> = icfg.functions.iter().map(|f| f.meta.name.clone()).collect();
        // The main procedure is the one whose tree, with the procedures it calls, is the
        // largest (DIJKSTRA over RELAX; UNION over MAKE-SET); the first on a tie.
        let get = |p: u32| shapes.get(p as usize).cloned();
        let trees: Vec<Tree> = (0..shapes.len() as u32).map(|p| Tree::build(p, &get, QUERY_CALL_DEPTH, QUERY_TREE_MAX)).collect();
        let main = (0..trees.len()).fold(0, |best, p| if trees[p].nodes.len() > trees[best].nodes.len() { p } else { best });
        let tree = trees.into_iter().nth(main).unwrap_or_default();
        let map = |l: u32| line_map.get(l as usize - 1).copied().unwrap_or(l);
        let mut nodes = Vec::new();
        let mut node_of = HashMap::new();
        let mut lines = BTreeSet::new();
        for (p, s) in shapes.iter().enumerate() {
            let entry = icfg.functions[p].entry.index();
            for (k, n) in s.nodes.iter().enumerate() {
                let w = &icfg.graph[petgraph::graph::NodeIndex::new(entry + n.local as usize)];
                let ls = (map(n.lines.0.max(1)), map(n.lines.1.max(1)));
                lines.extend(ls.0..=ls.1);
                node_of.insert((p as u32, k as u16), nodes.len());
                nodes.push(QueryNode { id: nodes.len(), kind: w.kind.name().into(), lines: ls, text: w.text.clone() });
            }
        }
        let profile = profile_of(&shapes);
        let looped = looped_form(&icfg, &shapes, main as u32);
        if nodes.is_empty() {
            return Err(SearchError::EmptyQuery);
        }
        Ok(Query {
            words: plain_words(src),
            pcode,
            converted,
            icfg,
            line_map,
            nodes,
            node_of,
            procedures,
            named,
            main,
            shapes,
            tree,
            profile,
            looped,
            lines: lines.len().max(1) as u32,
        })
    }

    /// The procedure names the user wrote: none for statements without a header, whose
    /// wrapper's name would match functions by accident.
    pub fn names(&self) -> &[String] {
        if self.named {
            &self.procedures
        } else {
            &[]
        }
    }

    /// The form of the query a candidate was aligned with.
    pub fn form_of(&self, c: &Candidate) -> (&Tree, &Profile) {
        match &self.looped {
            Some((t, p)) if c.looped => (t, p),
            _ => (&self.tree, &self.profile),
        }
    }
}

/// A query's tree holds the procedures it calls down to this depth, and at most this many
/// nodes.
const QUERY_CALL_DEPTH: u8 = 2;
const QUERY_TREE_MAX: usize = 500;

/// The summary numbers of a query: all its procedures together.
fn profile_of(shapes: &[Shape]) -> Profile {
    let mut profile = Profile::default();
    for s in shapes {
        let sp = s.profile();
        profile.nodes += sp.nodes;
        profile.loops += sp.loops;
        profile.depth = profile.depth.max(sp.depth);
        profile.branches += sp.branches;
        profile.returns += sp.returns;
        profile.calls += sp.calls;
        for i in 0..7 {
            profile.ops[i] += sp.ops[i];
        }
        profile.sub.add(sp.sub);
        profile.recursive |= sp.recursive;
    }
    profile
}

/// The main tree and profile with every tail-recursive procedure as a loop; `None` when
/// the main tree holds none. Tree nodes keep the origins of the written procedures.
fn looped_form(icfg: &Icfg, shapes: &[Shape], main: u32) -> Option<(Tree, Profile)> {
    let rewritten: Vec<(usize, (Shape, Vec<u16>))> =
        shapes.iter().enumerate().filter_map(|(p, s)| Some((p, s.tail_call_as_loop(&Shape::self_calls(icfg, p as u32))?))).collect();
    if rewritten.is_empty() {
        return None;
    }
    let mut alt = shapes.to_vec();
    let mut origs: HashMap<u32, Vec<u16>> = HashMap::new();
    for (p, (t, orig)) in rewritten {
        alt[p] = t;
        origs.insert(p as u32, orig);
    }
    let get = |p: u32| alt.get(p as usize).cloned();
    let mut tree = Tree::build(main, &get, QUERY_CALL_DEPTH, QUERY_TREE_MAX);
    if !tree.nodes.iter().any(|n| origs.contains_key(&n.origin.0)) {
        return None;
    }
    for n in &mut tree.nodes {
        if let Some(o) = origs.get(&n.origin.0) {
            n.origin.1 = o[n.origin.1 as usize];
        }
    }
    Some((tree, profile_of(&alt)))
}

/// One span of a candidate fragment.
#[derive(Clone, Debug)]
pub struct CandSpan {
    pub function: u32,
    pub path: String,
    pub lines: (u32, u32),
    /// Code nodes of the alignment (its pairs and its region) in this function.
    pub matched: usize,
}

/// A candidate fragment with its signals.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The function it starts from.
    pub function: u32,
    pub grown: bool,
    /// The root function's span first (unless set apart), then callees'.
    pub spans: Vec<CandSpan>,
    /// Callees the alignment reaches that lie far from the rest of the fragment in their
    /// file: cited with it, not spanned by it.
    pub apart: Vec<CandSpan>,
    /// Signals, in [`FEATURES`] order.
    pub x: [f32; N_FEATURES],
    /// Bit i: retriever i returned the function.
    pub found: u8,
    /// Ranks in each retriever (0-based), where it returned the function.
    pub ranks: [Option<u32>; 4],
    pub alignment: Alignment,
    /// The alignment is with the query's looped form ([`Query::looped`]).
    pub looped: bool,
    /// (function, shape node) of each node of the code tree the alignment used.
    origins: Vec<(u32, u16)>,
    /// [`Tree::copy_key`] of its code: equal keys are the same code under other names.
    pub copy: u64,
    /// Where lower-ranked copies of it start ([`rank`] folds them in).
    pub copies: Vec<CandSpan>,
    /// Every span lies in tests, examples or benchmarks ([`is_test_path`]): listed after
    /// the code that implements.
    pub tests: bool,
    /// Grown from a test into the code it calls; the test's spans are left out.
    pub from_test: bool,
    pub score: f32,
}

/// Cached function rows and file paths of one query.
struct Rows<'a> {
    index: &'a Index,
    funcs: HashMap<u32, FunctionRow>,
    paths: HashMap<u32, String>,
}

impl Rows<'_> {
    fn function(&mut self, f: u32) -> Result<&FunctionRow, IndexError> {
        if !self.funcs.contains_key(&f) {
            let r = self.index.store.function(f)?;
            self.funcs.insert(f, r);
        }
        Ok(&self.funcs[&f])
    }

    fn path(&mut self, file: u32) -> Result<String, IndexError> {
        if let Some(p) = self.paths.get(&file) {
            return Ok(p.clone());
        }
        let p = self.index.store.file(file)?.path;
        self.paths.insert(file, p.clone());
        Ok(p)
    }
}

fn top_k(scores: &[(u32, f32)], k: usize) -> Vec<(u32, f32)> {
    let mut v: Vec<(u32, f32)> = scores.to_vec();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(k);
    v
}

/// Last line of each shape node's subtree.
fn subtree_ends(s: &Shape) -> Vec<u32> {
    let mut end: Vec<u32> = s.nodes.iter().map(|n| n.lines.1).collect();
    for k in (0..s.nodes.len()).rev() {
        let p = s.nodes[k].parent;
        if p != crate::shape::TOP {
            end[p as usize] = end[p as usize].max(end[k]);
        }
    }
    end
}

/// The query's function-level text vector: its procedure names as words, then its English.
fn dense_query(index: &Index, encs: &TextEncoders, q: &Query) -> Result<[f32; DIM], SearchError> {
    let names: Vec<String> = q.names().iter().map(|p| crate::index::name_words(p)).collect();
    Ok(index.function_encoder(encs)?.encode(&[format!("{}. {}", names.join(", "), q.words).as_str()])?.remove(0))
}

/// Every candidate of the pool with its signals (unscored).
pub fn candidates(index: &mut Index, encs: &TextEncoders, q: &Query, opts: &HybridOptions) -> Result<Vec<Candidate>, SearchError> {
    let k = opts.per_retriever;
    let t0 = Instant::now();
    let lap = |what: &str, t: &mut Instant| {
        log::debug!("hybrid {what}: {:.1} ms", t.elapsed().as_secs_f64() * 1000.0);
        *t = Instant::now();
    };
    let mut t = t0;
    let mut ranks: HashMap<u32, [Option<u32>; 4]> = HashMap::new();
    let note = |list: &[(u32, f32)], r: usize, ranks: &mut HashMap<u32, [Option<u32>; 4]>| {
        for (i, &(f, _)) in list.iter().enumerate() {
            let e = ranks.entry(f).or_default();
            if e[r].is_none() {
                e[r] = Some(i as u32);
            }
        }
    };

    // Lexical.
    let qt = query_terms(&q.words, q.names());
    let lex = index.lexical.search(&qt.terms);
    if opts.retrievers[LEXICAL] {
        let scored: Vec<(u32, f32)> = lex.score.iter().enumerate().filter(|(_, &s)| s > 0.0).map(|(f, &s)| (f as u32, s)).collect();
        note(&top_k(&scored, k), LEXICAL, &mut ranks);
    }
    lap("lexical", &mut t);
    // Beryllium: coverage of the best fragment that touches each function.
    let mut beryl: HashMap<u32, f32> = HashMap::new();
    if opts.retrievers[BERYLLIUM] {
        let qv = query_vectors(index, index.statement_encoder(encs)?, &q.icfg, &q.line_map)?;
        let total = qv.nodes.len().max(1) as f32;
        if !qv.nodes.is_empty() {
            let bopts = SearchOptions { top: k / 2, ..SearchOptions::default() };
            let r = fragments(index, qv, &bopts, "pseudocode", 0.0, Instant::now())?;
            let mut list = Vec::new();
            for f in &r.fragments {
                for s in &f.spans {
                    let cov = f.query_nodes_covered as f32 / total;
                    let e = beryl.entry(s.function_id).or_insert(0.0);
                    *e = e.max(cov);
                    if !list.iter().any(|&(g, _)| g == s.function_id) {
                        list.push((s.function_id, cov));
                    }
                }
            }
            note(&list, BERYLLIUM, &mut ranks);
        }
    }
    lap("beryllium", &mut t);
    // Dense, after what needs no function encoder: `search` loads it meanwhile.
    let qvec = dense_query(index, encs, q)?;
    if opts.retrievers[DENSE] {
        let hits = vectors::search(&mut index.functions, &qvec, DIM, k)?;
        let list: Vec<(u32, f32)> = hits.first().into_iter().flatten().map(|&(f, s)| (f as u32, s)).collect();
        note(&list, DENSE, &mut ranks);
    }
    lap("dense", &mut t);
    // Structure: profile first, then alignment of the closest.
    // The query as written and, if it has tail calls to itself, with them as loops: each
    // candidate is compared with the form it is closer to.
    let forms: Vec<(&Tree, &Profile, [f32; 18])> = std::iter::once((&q.tree, &q.profile))
        .chain(q.looped.as_ref().map(|(t, p)| (t, p)))
        .map(|(t, p)| {
            let mut v = p.vector();
            vectors::normalize(&mut v);
            (t, p, v)
        })
        .collect();
    index.load_profiles();
    let index: &Index = index;
    let profiles = index.profiles();
    let prof_sim = |f: u32| -> f32 {
        let Some(p) = profiles.get(f as usize) else { return 0.0 };
        forms.iter().map(|(_, _, v)| p.iter().zip(v).map(|(a, b)| a * b).sum::<f32>()).fold(f32::MIN, f32::max)
    };
    let align_best = |t: &Tree| -> (Alignment, u8) {
        let mut best = (align(forms[0].0, t), 0u8);
        for (i, f) in forms.iter().enumerate().skip(1) {
            let a = align(f.0, t);
            if a.score > best.0.score {
                best = (a, i as u8);
            }
        }
        best
    };
    let mut aligned: HashMap<u32, (Tree, (Alignment, u8))> = HashMap::new();
    let shapes = &index.shapes;
    let get = |f: u32| shapes.get(f);
    if opts.retrievers[STRUCTURE] {
        let all: Vec<(u32, f32)> = (0..profiles.len() as u32).map(|f| (f, prof_sim(f))).collect();
        let pre = top_k(&all, STRUCT_PRESELECT);
        let mut scored = Vec::new();
        for &(f, _) in &pre {
            let t = Tree::build(f, &get, 0, MAX_TREE);
            let a = align_best(&t);
            scored.push((f, a.0.score));
            aligned.insert(f, (t, a));
        }
        note(&top_k(&scored, k), STRUCTURE, &mut ranks);
    }

    lap("structure", &mut t);
    // One or two candidates per pooled function: trees, alignments and the signals read
    // off them on every core, then in pool order what reads the index's store.
    struct Variant {
        grown: bool,
        tree: Tree,
        a: Alignment,
        form: u8,
        tokens: (f32, f32),
        flow: f32,
        sequence: f32,
    }
    let mut pool: Vec<(u32, [Option<u32>; 4], Option<(Tree, (Alignment, u8))>)> = ranks.into_iter().map(|(f, rk)| (f, rk, aligned.remove(&f))).collect();
    pool.sort_by_key(|p| p.0);
    let scored: Vec<(u32, [Option<u32>; 4], Shape, Vec<Variant>)> = pool
        .into_par_iter()
        .filter_map(|(f, rk, pre)| {
            let shape = shapes.get(f)?;
            let (t0, a0) = pre.unwrap_or_else(|| {
                let t = Tree::build(f, &get, 0, MAX_TREE);
                let a = align_best(&t);
                (t, a)
            });
            let mut variants = vec![(false, t0, a0)];
            if opts.grow && !shape.callees.is_empty() {
                let t2 = Tree::build(f, &get, 2, MAX_TREE);
                let a2 = align_best(&t2);
                if a2.0.score > variants[0].2.0.score + GROW_GAIN {
                    variants.push((true, t2, a2));
                }
            }
            let variants = variants
                .into_iter()
                .map(|(grown, tree, (a, form))| {
                    let qtree = forms[form as usize].0;
                    let tokens = token_agreement(qtree, &tree, &a);
                    let flow = flow_agreement(qtree, &tree, &a);
                    let sequence = sequence_agreement(qtree, &tree);
                    Variant { grown, tree, a, form, tokens, flow, sequence }
                })
                .collect();
            Some((f, rk, shape, variants))
        })
        .collect();
    let mut rows = Rows { index, funcs: HashMap::new(), paths: HashMap::new() };
    let mut out = Vec::new();
    for (f, rk, shape, variants) in scored {
        let found = (0..4).fold(0u8, |m, r| m | (u8::from(rk[r].is_some()) << r));
        let p = shape.profile();
        // The file's name read as a function's name is, except in an anonymized tree,
        // where file names are the originals.
        let file_name = if index.meta.anonymized {
            0.0
        } else {
            let file = rows.function(f)?.file;
            let path = rows.path(file)?;
            let stem = Path::new(&path).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            qt.coverage(qt.name_mask_of(&name_terms(Lang::C, &[], &stem)), q.main)
        };
        for Variant { grown, tree, a, form, tokens, flow, sequence } in variants {
            let qprofile = forms[form as usize].1;
            let spans = fragment_spans(&mut rows, &get, f, &tree, &a, opts.shrink)?;
            let in_test: Vec<bool> = spans.iter().map(|s| is_test_path(&s.path)).collect();
            let mut x = [0f32; N_FEATURES];
            let rr = |r: Option<u32>| r.map_or(0.0, |r| 1.0 / (1.0 + r as f32));
            x[1] = rr(rk[LEXICAL]);
            x[2] = qt.coverage(lex.name_mask[f as usize], q.main);
            x[3] = qt.coverage(lex.comment_mask[f as usize], q.main);
            x[27] = file_name;
            x[28] = qt.coverage(lex.string_mask[f as usize], q.main);
            x[0] = lex.score[f as usize];
            x[4] = index_cosine(rows.index, f, &qvec);
            x[5] = rr(rk[DENSE]);
            x[6] = beryl.get(&f).copied().unwrap_or(0.0);
            x[7] = rr(rk[BERYLLIUM]);
            x[8] = a.score;
            x[10] = prof_sim(f);
            x[11] = f32::from(u8::from(p.depth == qprofile.depth));
            x[12] = ((p.loops as f32 - qprofile.loops as f32).abs() / (1.0 + qprofile.loops as f32)).min(2.0);
            x[13] = f32::from(u8::from(p.recursive == qprofile.recursive));
            // Agreement on recursion says little when neither recurses (most code), much
            // when both do: on its own so the scorer can weigh the rare case.
            x[25] = f32::from(u8::from(p.recursive && qprofile.recursive));
            let region_nodes = match a.region {
                Some(j) => subtree_size(&tree, j),
                None => tree.nodes.len(),
            };
            x[14] = a.pairs.len() as f32 / region_nodes.max(1) as f32;
            // Per file: first and last line, and the lines the spans themselves cover.
            let mut per_file: HashMap<&str, (u32, u32, u32)> = HashMap::new();
            for s in &spans {
                let len = s.lines.1.saturating_sub(s.lines.0) + 1;
                let e = per_file.entry(s.path.as_str()).or_insert((s.lines.0, s.lines.1, 0));
                e.0 = e.0.min(s.lines.0);
                e.1 = e.1.max(s.lines.1);
                e.2 += len;
            }
            let extent = per_file.values().map(|&(a, b, _)| b.saturating_sub(a) + 1).max().unwrap_or(1);
            x[15] = (extent as f32 / q.lines as f32).ln();
            // Pieces far apart in one file (the whole fragment, before `compact` sets them apart).
            x[22] = per_file.values().map(|&(a, b, c)| ((b.saturating_sub(a) + 1) as f32 / c.max(1) as f32).ln().max(0.0)).fold(0.0, f32::max);
            x[16] = x[15] * x[15];
            x[17] = f32::from(u8::from(grown));
            x[18] = f32::from(u8::from(in_test.first() == Some(&true)));
            (x[19], x[20]) = tokens;
            x[23] = flow;
            x[24] = sequence;
            let origins = tree.nodes.iter().map(|n| n.origin).collect();
            let copy = tree.copy_key();
            let tests = !spans.is_empty() && in_test.iter().all(|&t| t);
            // A test grown into the code it calls: that code is the answer, the test only
            // led to it.
            let from_test = !tests && in_test.contains(&true);
            let spans = if from_test { spans.into_iter().zip(in_test).filter(|(_, t)| !t).map(|(s, _)| s).collect() } else { spans };
            // Signals read the whole fragment; the reader gets it compact.
            let (spans, apart) = compact(spans);
            out.push(Candidate { function: f, grown, spans, apart, x, found, ranks: rk, alignment: a, looped: form == 1, origins, copy, copies: Vec::new(), tests, from_test, score: 0.0 });
        }
    }
    lap("pool", &mut t);
    // Pool-relative signals.
    let max_of = |i: usize, out: &[Candidate]| out.iter().map(|c| c.x[i]).fold(f32::MIN, f32::max);
    let (lex_max, dense_max, align_max) = (max_of(0, &out), max_of(4, &out), max_of(8, &out));
    for c in &mut out {
        c.x[0] = if lex_max > 0.0 { c.x[0] / lex_max } else { 0.0 };
        c.x[4] -= dense_max;
        c.x[9] = c.x[8] - align_max;
    }
    // Rank of the profile in the pool: where names say nothing (renamed code), the few
    // closest profiles matter more than the profile's value (renamed pool MRR 0.206 -> 0.249).
    pool_rank(&mut out, 10, 21);
    // Where no candidate's name or comment carries the query's procedure name (renamed
    // or tersely named code), the closest token matches in the pool stand out; elsewhere
    // names do that and this stays 0 (renamed pool MRR 0.248 -> 0.278, docs/eval/algo.md).
    let unnamed = max_of(2, &out) <= 0.0 && max_of(3, &out) <= 0.0;
    if unnamed {
        pool_rank(&mut out, 19, 26);
    }
    Ok(out)
}

/// Sets feature `to` of every candidate to 1/(1 + rank) of its feature `from` in the pool
/// (highest first; ties in pool order).
fn pool_rank(out: &mut [Candidate], from: usize, to: usize) {
    let mut order: Vec<usize> = (0..out.len()).collect();
    order.sort_by(|&a, &b| out[b].x[from].total_cmp(&out[a].x[from]).then(a.cmp(&b)));
    for (r, &i) in order.iter().enumerate() {
        out[i].x[to] = 1.0 / (1.0 + r as f32);
    }
}

/// Why a result in tests ([`is_test_path`]) comes after the others.
pub const TESTS_LAST: &str = "tests: in tests, examples or benchmarks, so listed after the code that implements";

/// Tests, examples, demos and benchmarks: code that uses an algorithm more often than it
/// implements it. A folder counts by any word of its name (`gnulib-tests`, `plugin.demo`).
pub fn is_test_path(path: &str) -> bool {
    const DIRS: [&str; 13] = ["test", "tests", "testing", "unittest", "unittests", "example", "examples", "demo", "demos", "bench", "benchmark", "benchmarks", "samples"];
    let parts: Vec<&str> = path.split(['/', '\\']).collect();
    let Some((file, dirs)) = parts.split_last() else { return false };
    let stem = file.split('.').next().unwrap_or("");
    dirs.iter().any(|d| d.to_lowercase().split(['-', '_', '.']).any(|w| DIRS.contains(&w)))
        || stem.eq_ignore_ascii_case("test")
        || stem.eq_ignore_ascii_case("tests")
        || ["test_", "Test", "test-"].iter().any(|p| stem.starts_with(p))
        || ["_test", "Test", "Tests", "-test", "_tests"].iter().any(|p| stem.ends_with(p))
}

fn index_cosine(index: &Index, f: u32, q: &[f32]) -> f32 {
    index.function_vector(f).map_or(0.0, |v| v.iter().zip(q).map(|(a, b)| a * b).sum())
}

fn subtree_size(t: &Tree, j: u32) -> usize {
    let mut n = 0;
    let mut stack = vec![j];
    while let Some(x) = stack.pop() {
        n += 1;
        stack.extend(&t.nodes[x as usize].children);
    }
    n
}

/// The fragment an alignment picks out: in the root function the matched lines (with the
/// rest of every matched loop or branch) when the function is much longer than that,
/// else the whole function; in callees the whole callee unless it is long.
fn fragment_spans(rows: &mut Rows, get: &dyn Fn(u32) -> Option<Shape>, f: u32, tree: &Tree, a: &Alignment, shrink: bool) -> Result<Vec<CandSpan>, IndexError> {
    let mut per: Vec<(u32, Vec<u16>)> = vec![(f, Vec::new())];
    let mut add = |o: (u32, u16)| match per.iter_mut().find(|p| p.0 == o.0) {
        Some(p) => p.1.push(o.1),
        None => per.push((o.0, vec![o.1])),
    };
    for &(_, cj, _) in &a.pairs {
        add(tree.nodes[cj as usize].origin);
    }
    if let Some(j) = a.region {
        add(tree.nodes[j as usize].origin);
    }
    let mut out = Vec::new();
    for (fid, ks) in per {
        let row = rows.function(fid)?.clone();
        let path = rows.path(row.file)?;
        let whole = row.lines;
        let len = whole.1.saturating_sub(whole.0) + 1;
        let lines = match get(fid) {
            Some(s) if !ks.is_empty() => {
                let ends = subtree_ends(&s);
                let lo = ks.iter().filter_map(|&k| s.nodes.get(k as usize)).map(|n| n.lines.0).min().unwrap_or(whole.0);
                let hi = ks.iter().filter_map(|&k| ends.get(k as usize)).copied().max().unwrap_or(whole.1);
                let tight = hi.saturating_sub(lo) + 1;
                let long = if fid == f { len > 2 * tight + 20 } else { len > 60 };
                if shrink && long {
                    (lo, hi.max(lo))
                } else {
                    whole
                }
            }
            _ => whole,
        };
        out.push(CandSpan { function: fid, path, lines, matched: ks.len() });
    }
    Ok(out)
}

/// Splits off the spans that would leave a fragment mostly gap in their file. In each file
/// the span holding most of the alignment anchors the fragment; another span there stays
/// only while the file's extent is within three times the anchor (or 30 lines more). A
/// helper defined far from the code that carries the match is then cited beside the
/// fragment rather than making it every line in between. The root's span stays first
/// unless it is the one set apart.
fn compact(spans: Vec<CandSpan>) -> (Vec<CandSpan>, Vec<CandSpan>) {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(spans[i].matched), i));
    let len = |s: &CandSpan| s.lines.1.saturating_sub(s.lines.0) + 1;
    let mut keep = vec![false; spans.len()];
    for &i in &order {
        let s = &spans[i];
        let mut in_file = order.iter().filter(|&&j| keep[j] && spans[j].path == s.path).map(|&j| &spans[j]);
        keep[i] = match in_file.next() {
            None => true,
            Some(anchor) => {
                let (lo, hi) = in_file.fold((anchor.lines.0.min(s.lines.0), anchor.lines.1.max(s.lines.1)), |(lo, hi), k| (lo.min(k.lines.0), hi.max(k.lines.1)));
                hi.saturating_sub(lo) + 1 <= (3 * len(anchor)).max(len(anchor) + 30)
            }
        };
    }
    let (mut kept, mut apart) = (Vec::new(), Vec::new());
    for (s, k) in spans.into_iter().zip(keep) {
        if k {
            kept.push(s);
        } else {
            apart.push(s);
        }
    }
    (kept, apart)
}

/// Share of a fragment's lines shown by better results at which it is left out (a grown
/// fragment's root alone, a helper inside it, the same loop nest reached from another
/// root). All, 3/4 and 1/2 each cost no row of `bench/algo`; 1/2 gained most
/// (docs/eval/algo.md, eighth session of 2026-11-26).
const SHOWN_SHARE: f32 = 0.5;

/// The results listed so far: their keys, to drop `duplicate`s, and the lines they cover.
#[derive(Default)]
pub struct Shown {
    keys: Vec<(Vec<(u32, u32, u32)>, bool)>,
    lines: HashMap<u32, Vec<(u32, u32)>>,
}

impl Shown {
    /// Whether a fragment adds too little to the results above: it duplicates one, or
    /// at least [`SHOWN_SHARE`] of its lines are shown.
    pub fn repeats(&self, keys: &[(u32, u32, u32)], grown: bool) -> bool {
        if self.keys.iter().any(|(k, g)| duplicate(k, *g, keys, grown)) {
            return true;
        }
        let (mut all, mut old) = (0u64, 0u64);
        for &(f, a, b) in keys {
            all += u64::from(b.saturating_sub(a)) + 1;
            let mut cut: Vec<(u32, u32)> = self.lines.get(&f).into_iter().flatten().filter(|&&(c, d)| c <= b && a <= d).map(|&(c, d)| (c.max(a), d.min(b))).collect();
            cut.sort_unstable();
            let mut end = 0u32;
            for (c, d) in cut {
                let from = c.max(end);
                if d >= from {
                    old += u64::from(d - from) + 1;
                    end = d + 1;
                }
            }
        }
        all > 0 && old as f32 >= SHOWN_SHARE * all as f32
    }

    pub fn add(&mut self, keys: Vec<(u32, u32, u32)>, grown: bool) {
        for &(f, a, b) in &keys {
            self.lines.entry(f).or_default().push((a, b));
        }
        self.keys.push((keys, grown));
    }
}

/// Whether a fragment adds nothing to a better one: it starts where that one starts and is
/// of the same kind (grown or not), or it covers the very same lines. `keys` are
/// (function, first line, last line) of each span, the root's first.
fn duplicate(a: &[(u32, u32, u32)], a_grown: bool, b: &[(u32, u32, u32)], b_grown: bool) -> bool {
    let same_start = match (a.first(), b.first()) {
        (Some(s), Some(t)) => a_grown == b_grown && s.0 == t.0 && s.1 <= t.2 && t.1 <= s.2,
        _ => false,
    };
    same_start || (!a.is_empty() && a == b)
}

impl Candidate {
    pub fn keys(&self) -> Vec<(u32, u32, u32)> {
        self.spans.iter().map(|s| (s.function, s.lines.0, s.lines.1)).collect()
    }
}

/// Scores candidates with `ranker`, best first (fragments wholly in tests after all
/// others), dropping each that [`Shown::repeats`] better ones and folding each that is a
/// copy of a better one (the same code under other names, as type-specialized libraries
/// write it) into that one's `copies`.
pub fn rank(cands: &mut Vec<Candidate>, ranker: &Ranker, top: usize) {
    for c in cands.iter_mut() {
        c.score = ranker.score(&c.x);
    }
    cands.sort_by(|a, b| a.tests.cmp(&b.tests).then(b.score.total_cmp(&a.score)).then(a.function.cmp(&b.function)).then(a.grown.cmp(&b.grown)));
    // A grown fragment's root alone or a helper inside it does not follow it; the grown
    // fragment follows its root alone only where its callees hold more lines than the root.
    let mut kept: Vec<Candidate> = Vec::new();
    let mut shown = Shown::default();
    for c in cands.drain(..) {
        let keys = c.keys();
        if shown.repeats(&keys, c.grown) {
            continue;
        }
        if let Some(orig) = kept.iter_mut().find(|k| c.copy != 0 && k.copy == c.copy) {
            orig.copies.extend(c.spans.into_iter().take(1));
            continue;
        }
        // Once full, the rest are read only for copies of what is kept.
        if kept.len() < top {
            shown.add(keys, c.grown);
            kept.push(c);
        }
    }
    *cands = kept;
}

fn describe(c: &Candidate, q: &Query, function: &str) -> Vec<String> {
    let f = |name: &str| c.x[FEATURES.iter().position(|x| *x == name).expect("known feature")];
    let mut r = Vec::new();
    if f("name") > 0.0 {
        r.push(format!("name: {:.0}% of the query's procedure-name words are in `{function}`", 100.0 * f("name")));
    }
    if f("string_name") > 0.0 {
        r.push(format!("strings: {:.0}% of the query's procedure-name words are in its string literals", 100.0 * f("string_name")));
    }
    if f("file_name") > 0.0 {
        r.push(format!("file name: {:.0}% of the query's procedure-name words are in the name of its file", 100.0 * f("file_name")));
    }
    if let Some(k) = c.ranks[LEXICAL] {
        r.push(format!("lexical: BM25F rank {}", k + 1));
    }
    if let Some(k) = c.ranks[DENSE] {
        r.push(format!("dense: text-vector rank {}", k + 1));
    }
    let qn: BTreeSet<u32> = c.alignment.pairs.iter().map(|p| p.0).collect();
    let (qtree, qprofile) = q.form_of(c);
    r.push(format!(
        "structure: {} of {} query statements aligned in order (score {:.2}, {} loop(s) in the query)",
        qn.len(),
        qtree.nodes.len(),
        c.alignment.score,
        qprofile.loops
    ));
    if c.looped {
        r.push("structure: aligned with the query's tail call to itself written as a loop, as iterative code has it".into());
    }
    if f("tok_bag") > 0.0 {
        r.push(format!(
            "tokens: the query's statements are written alike, names aside: {:.0}% along the alignment, {:.0}% anywhere in the fragment, {:.0}% as one run in the query's order",
            100.0 * f("tok_align"),
            100.0 * f("tok_bag"),
            100.0 * f("tok_seq")
        ));
    }
    if f("flow") > 0.0 {
        r.push(format!("data flow: {:.0}% of the query's def-use edges (a statement reading what another wrote) hold between the matched statements", 100.0 * f("flow")));
    }
    if f("beryllium") > 0.0 {
        r.push(format!("beryllium: a node group covers {:.0}% of the query", 100.0 * f("beryllium")));
    }
    if !c.copies.is_empty() {
        r.push(format!("copies: the same code, names aside, in {} more place(s), listed with it", c.copies.len()));
    }
    if c.grown {
        let n = c.spans.len() + c.apart.len() - 1;
        match c.apart.len() {
            0 => r.push(format!("fragment: grown into {n} called function(s)")),
            k => r.push(format!("fragment: grown into {n} called function(s), {k} of them defined far from the rest and listed apart")),
        }
    }
    if c.tests {
        r.push(TESTS_LAST.into());
    }
    if c.from_test {
        r.push("tests: reached from a test that calls it; the test's lines are left out".into());
    }
    r
}

/// Fragments of the report from ranked candidates.
fn to_fragments(index: &Index, q: &Query, cands: &[Candidate]) -> Result<Vec<Fragment>, SearchError> {
    let mut rows = Rows { index, funcs: HashMap::new(), paths: HashMap::new() };
    let total_lines: BTreeSet<u32> = q.nodes.iter().flat_map(|n| n.lines.0..=n.lines.1).collect();
    let mut out = Vec::new();
    for (rank, c) in cands.iter().enumerate() {
        let mut matches = Vec::new();
        let mut covered = BTreeSet::new();
        let mut count: HashMap<u32, usize> = HashMap::new();
        for &(qi, cj, sim) in &c.alignment.pairs {
            let Some(&qk) = q.node_of.get(&q.form_of(c).0.nodes[qi as usize].origin) else { continue };
            let (fid, k) = c.origins[cj as usize];
            let Some(shape) = index.shapes.get(fid) else { continue };
            let Some(n) = shape.nodes.get(k as usize) else { continue };
            let row = rows.function(fid)?.clone();
            let node = index.store.node(row.entry + n.local as u32)?;
            let qn = &q.nodes[qk];
            covered.extend(qn.lines.0..=qn.lines.1);
            *count.entry(fid).or_default() += 1;
            matches.push(LineMatch {
                query_node: qk,
                query_lines: qn.lines,
                query_text: qn.text.clone(),
                path: rows.path(row.file)?,
                lines: node.lines,
                code: node.text,
                similarity: sim,
            });
        }
        matches.sort_by_key(|m| (m.query_lines, m.query_node));
        let mut span = |s: &CandSpan| -> Result<Span, SearchError> {
            let row = rows.function(s.function)?.clone();
            Ok(Span {
                path: s.path.clone(),
                function_id: s.function,
                function: row.qualified.clone(),
                function_lines: row.lines,
                lines: s.lines,
                nodes: count.get(&s.function).copied().unwrap_or(0),
            })
        };
        let spans = c.spans.iter().map(&mut span).collect::<Result<Vec<_>, _>>()?;
        let apart = c.apart.iter().map(&mut span).collect::<Result<Vec<_>, _>>()?;
        let copies = c.copies.iter().map(&mut span).collect::<Result<Vec<_>, _>>()?;
        // The name signal read the root, which may be among the spans set apart.
        let name = rows.function(c.function)?.qualified.clone();
        out.push(Fragment {
            rank: rank + 1,
            score: c.score as f64,
            query_nodes_covered: c.alignment.pairs.iter().map(|p| p.0).collect::<BTreeSet<_>>().len(),
            query_lines_covered: covered.len(),
            query_lines_total: total_lines.len(),
            distance: 0,
            spans,
            apart,
            copies,
            matches,
            reasons: describe(c, q, &name),
        });
    }
    Ok(out)
}

/// Whole functions ranked by one signal (the single-retriever methods).
fn function_fragments(index: &Index, list: &[(u32, f32)], why: &dyn Fn(usize, f32) -> String) -> Result<Vec<Fragment>, SearchError> {
    let mut rows = Rows { index, funcs: HashMap::new(), paths: HashMap::new() };
    let mut out = Vec::new();
    for (rank, &(f, s)) in list.iter().enumerate() {
        let row = rows.function(f)?.clone();
        let path = rows.path(row.file)?;
        out.push(Fragment {
            rank: rank + 1,
            score: s as f64,
            query_nodes_covered: 0,
            query_lines_covered: 0,
            query_lines_total: 0,
            distance: 0,
            spans: vec![Span { path, function_id: f, function: row.qualified, function_lines: row.lines, lines: row.lines, nodes: 0 }],
            apart: Vec::new(),
            copies: Vec::new(),
            matches: Vec::new(),
            reasons: vec![why(rank, s)],
        });
    }
    Ok(out)
}

/// Pseudocode search by `method`. `ranker` is needed by [`Method::Hybrid`].
pub fn search(
    index: &mut Index,
    encs: &TextEncoders,
    src: &str,
    name: &Path,
    clf: impl FnOnce() -> Result<Classifier, PcodeError>,
    opts: &SearchOptions,
    method: Method,
    ranker: Option<&Ranker>,
) -> Result<SearchResult, SearchError> {
    if method == Method::Beryllium {
        return super::pseudo(index, encs, src, name, clf, opts);
    }
    // The function encoder, the slowest to load, loads beside the work that needs none.
    std::thread::scope(|s| {
        if matches!(method, Method::Hybrid | Method::Dense) {
            encs.preload_functions(s);
        }
        let t0 = Instant::now();
        let q = Query::parse(src, name, clf)?;
        let embed_ms = t0.elapsed().as_secs_f64() * 1000.0;
        let t1 = Instant::now();
        let top = opts.top.max(1);
        let fragments = match method {
            Method::Hybrid => {
                let ranker = ranker.ok_or_else(|| SearchError::NoRanker("none given".into()))?;
                let mut cands = candidates(index, encs, &q, &HybridOptions::default())?;
                rank(&mut cands, ranker, top);
                to_fragments(index, &q, &cands)?
            }
            Method::Bm25 => {
                let lex = index.lexical.search(&query_terms(&q.words, q.names()).terms);
                let scored: Vec<(u32, f32)> = lex.score.iter().enumerate().filter(|(_, &s)| s > 0.0).map(|(f, &s)| (f as u32, s)).collect();
                function_fragments(index, &top_k(&scored, top), &|r, s| format!("lexical: BM25F {s:.2}, rank {}", r + 1))?
            }
            Method::Name => {
                let qt = query_terms("", q.names());
                let lex = index.lexical.search(&qt.terms);
                // Name words in the name count fully, in the comment half; shorter functions first.
                let mut scored: Vec<(u32, f32, u32)> = (0..lex.score.len())
                    .filter(|&f| lex.name_mask[f] | lex.comment_mask[f] != 0)
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
                let hits = vectors::search(&mut index.functions, &v, DIM, top)?;
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
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_and_example_paths() {
        assert!(is_test_path("/src/tests/unit/dijkstra.c"));
        assert!(is_test_path("/a/src/test/java/org/FooTest.java"));
        assert!(is_test_path("/a/examples/simple/bfs.c"));
        assert!(!is_test_path("/a/src/paths/dijkstra.c"));
        assert!(!is_test_path("/a/src/main/java/org/Contest.java"));
        assert!(is_test_path("/a/tests/test_heap.c") && is_test_path("/x/heap_test.c"));
        assert!(is_test_path("/grep-3.8/gnulib-tests/macros.h") && is_test_path("/graphviz/plugin.demo/xgtk/callbacks.c"));
        assert!(is_test_path("/libtommath/demo/test.c") && is_test_path("/x/src/Tests.java"));
        assert!(!is_test_path("/a/latest/heap.c") && !is_test_path("/a/contest/heap.c") && !is_test_path("/a/testament.c"));
    }

    fn span(function: u32, path: &str, lines: (u32, u32), matched: usize) -> CandSpan {
        CandSpan { function, path: path.into(), lines, matched }
    }

    #[test]
    fn compact_sets_far_helpers_apart_around_the_span_that_carries_the_match() {
        // A caller with one matched call, its helper 200 lines down holding the loop, and a
        // small helper right below it: the far caller goes, the near helper stays.
        let (kept, apart) = compact(vec![span(1, "a.c", (10, 20), 1), span(2, "a.c", (220, 260), 6), span(3, "a.c", (262, 270), 2)]);
        assert_eq!(kept.iter().map(|s| s.function).collect::<Vec<_>>(), vec![2, 3]);
        assert_eq!(apart.iter().map(|s| s.function).collect::<Vec<_>>(), vec![1]);
        // Adjacent functions stay one fragment; another file anchors its own extent.
        let (kept, apart) = compact(vec![span(1, "a.c", (10, 40), 3), span(2, "a.c", (42, 60), 3), span(3, "b.c", (900, 950), 1)]);
        assert_eq!((kept.len(), apart.len()), (3, 0));
        assert_eq!(kept[0].function, 1, "the root's span stays first");
    }

    #[test]
    fn duplicates_start_alike_or_cover_the_same_lines() {
        let root = [(7, 10, 20)];
        let grown = [(7, 10, 20), (8, 30, 40)];
        assert!(duplicate(&root, false, &[(7, 15, 25)], false), "same start, same kind");
        assert!(!duplicate(&root, false, &grown, true), "the root alone and grown into a callee are two fragments");
        assert!(duplicate(&root, false, &root, true), "a grown fragment reported as its root alone is the root");
        assert!(!duplicate(&root, false, &[(9, 10, 20)], false));
        assert!(!duplicate(&[], false, &[], false));
    }

    #[test]
    fn results_whose_lines_are_mostly_shown_are_left_out() {
        let mut shown = Shown::default();
        shown.add(vec![(7, 10, 20), (8, 30, 40)], true);
        assert!(shown.repeats(&[(7, 10, 20)], false), "a grown fragment's root alone");
        assert!(shown.repeats(&[(8, 30, 40), (7, 12, 14)], true), "its callee grown into part of the root");
        assert!(shown.repeats(&[(7, 5, 20)], false), "11 of 16 lines shown");
        assert!(!shown.repeats(&[(7, 1, 25)], false), "11 of 25 lines shown");
        assert!(!shown.repeats(&[(7, 21, 60)], false), "another loop nest of the same function");
        assert!(!shown.repeats(&[(9, 10, 20)], false), "another function on the same lines");
        assert!(!shown.repeats(&[(8, 35, 40), (9, 1, 30)], true), "new helpers around a shown one");
        assert!(!Shown::default().repeats(&[], false));
    }

    #[test]
    fn plain_words_drop_markup_and_numbers() {
        assert_eq!(plain_words(" 1 FOO(A)\n 2     $x = 1$ @do it@"), "FOO(A)\n     x = 1   do it ");
    }
}
