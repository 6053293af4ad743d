//! The candidate pool: every function a retriever returned, read as one or two fragments
//! (the function, and the function grown into its callees where that aligns much better),
//! each with its [`Signals`].

use super::candidate::{CandSpan, Candidate, Ranks};
use super::fragments::{compact, fragment_spans, subtree_size, Rows};
use crate::search::place::in_tests;
use super::query::Query;
use super::retrieve::{retrieve, Aligned, Forms, Retrieved, MAX_TREE};
use super::signals::Signals;
use super::{HybridOptions, BERYLLIUM, DENSE, LEXICAL};
use crate::features::TextEncoders;
use crate::graph::Lang;
use crate::index::lexical::name_terms;
use crate::index::Index;
use crate::search::SearchError;
use crate::shape::align::{flow_agreement, sequence_agreement, token_agreement, Alignment, Tree};
use crate::shape::store::Shapes;
use crate::shape::{Profile, Shape};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

/// Alignment gain that makes a grown fragment worth offering.
const GROW_GAIN: f32 = 0.08;

/// One reading of a pooled function: its code tree, the alignment with the closer query
/// form, and the signals that read only those two.
struct Variant {
    grown: bool,
    tree: Tree,
    a: Alignment,
    form: u8,
    tokens: (f32, f32),
    flow: f32,
    sequence: f32,
}

/// Every candidate of the pool with its signals (unscored).
pub fn candidates(index: &mut Index, encs: &TextEncoders, q: &Query, opts: &HybridOptions) -> Result<Vec<Candidate>, SearchError> {
    let mut out = pool(index, encs, q, opts)?;
    relative(&mut out);
    Ok(out)
}

/// The pool as the retrievers fill it, before the signals that compare a candidate with
/// the rest of the pool ([`relative`]).
pub fn pool(index: &mut Index, encs: &TextEncoders, q: &Query, opts: &HybridOptions) -> Result<Vec<Candidate>, SearchError> {
    let forms = Forms::new(q);
    let r = retrieve(index, encs, q, &forms, opts)?;
    read_pool(index, q, &forms, r, opts)
}

/// Reads every function the retrievers returned (`r.ranks`) as candidates, in function
/// order; the index's profiles are loaded.
pub(super) fn read_pool(index: &mut Index, q: &Query, forms: &Forms, r: Retrieved, opts: &HybridOptions) -> Result<Vec<Candidate>, SearchError> {
    let Retrieved { ranks, terms, lex, beryl, qvec, mut aligned } = r;
    let t = Instant::now();
    let members: Vec<u32> = ranks.keys().copied().collect();
    let dense = index.function_scores(&qvec, &members);
    log::debug!("hybrid pool dense: {:.1} ms", t.elapsed().as_secs_f64() * 1000.0);
    let index = &*index;
    let mut pool: Vec<(u32, Ranks, Option<Aligned>)> = ranks.into_iter().map(|(f, rk)| (f, rk, aligned.remove(&f))).collect();
    pool.sort_by_key(|p| p.0);
    // Trees, alignments and the signals read off them on every core, then in pool order
    // what reads the index's store.
    let shapes = &index.shapes;
    let scored: Vec<(u32, Ranks, Shape, Vec<Variant>)> = pool
        .into_par_iter()
        .filter_map(|(f, rk, pre)| {
            let shape = shapes.get(f)?;
            let variants = variants(shapes, forms, f, &shape, pre, opts);
            Some((f, rk, shape, variants))
        })
        .collect();
    log::debug!("hybrid pool trees: {:.1} ms", t.elapsed().as_secs_f64() * 1000.0);
    let mut rows = Rows::new(index);
    let profiles = index.profiles();
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
            terms.coverage(terms.name_mask_of(&name_terms(Lang::C, &[], &stem)), q.main)
        };
        let rr = |r: Option<u32>| r.map_or(0.0, |r| 1.0 / (1.0 + r as f32));
        // What every reading of this function shares.
        let base = Signals {
            lex: lex.score[f as usize],
            lex_rr: rr(rk[LEXICAL]),
            name: terms.coverage(lex.name_mask[f as usize], q.main),
            comment_name: terms.coverage(lex.comment_mask[f as usize], q.main),
            dense: dense.get(&f).copied().unwrap_or(0.0),
            dense_rr: rr(rk[DENSE]),
            beryllium: beryl.get(&f).copied().unwrap_or(0.0),
            beryllium_rr: rr(rk[BERYLLIUM]),
            profile: forms.profile_sim(profiles, f),
            file_name,
            string_name: terms.coverage(lex.string_mask[f as usize], q.main),
            ..Signals::default()
        };
        for v in variants {
            let spans = fragment_spans(&mut rows, &|g| index.shapes.get(g), f, &v.tree, &v.a, opts.shrink)?;
            let in_test: Vec<bool> = spans.iter().map(|s| in_tests(&s.path, &index.meta.roots)).collect();
            let signals = read_fragment(base, &v, &p, forms.list[v.form as usize].1, q, &spans, in_test.first() == Some(&true));
            let origins = v.tree.nodes.iter().map(|n| n.origin).collect();
            let copy = v.tree.copy_key();
            let tests = !spans.is_empty() && in_test.iter().all(|&t| t);
            // A test grown into the code it calls: that code is the answer, the test only
            // led to it; unless none of that code is in the query's scope, where the test
            // is what the user asked for.
            let from_test = !tests && in_test.contains(&true) && spans.iter().zip(&in_test).any(|(s, &t)| !t && index.in_scope(s.function));
            let spans = if from_test { spans.into_iter().zip(in_test).filter(|(_, t)| !t).map(|(s, _)| s).collect() } else { spans };
            // Signals read the whole fragment; the reader gets it compact.
            let (spans, apart) = compact(spans);
            let looped = v.form == 1;
            out.push(Candidate { function: f, grown: v.grown, spans, apart, signals, found, ranks: rk, alignment: v.a, looped, origins, copy, copies: Vec::new(), tests, from_test, score: 0.0 });
        }
    }
    log::debug!("hybrid pool: {:.1} ms", t.elapsed().as_secs_f64() * 1000.0);
    Ok(out)
}

/// The function as it is and, where it calls others, grown into its callees (depth ≤ 2)
/// when that aligns clearly better.
fn variants(shapes: &Shapes, forms: &Forms, f: u32, shape: &Shape, pre: Option<Aligned>, opts: &HybridOptions) -> Vec<Variant> {
    let get = |g: u32| shapes.get(g);
    let (t0, a0) = pre.unwrap_or_else(|| {
        let t = Tree::build(f, &get, 0, MAX_TREE);
        let a = forms.align_best(&t);
        (t, a)
    });
    let mut found = vec![(false, t0, a0)];
    if opts.grow && !shape.callees.is_empty() {
        let t2 = Tree::build(f, &get, 2, MAX_TREE);
        let a2 = forms.align_best(&t2);
        if a2.0.score > found[0].2 .0.score + GROW_GAIN {
            found.push((true, t2, a2));
        }
    }
    found
        .into_iter()
        .map(|(grown, tree, (a, form))| {
            let qtree = forms.list[form as usize].0;
            let tokens = token_agreement(qtree, &tree, &a);
            let flow = flow_agreement(qtree, &tree, &a);
            let sequence = sequence_agreement(qtree, &tree);
            Variant { grown, tree, a, form, tokens, flow, sequence }
        })
        .collect()
}

/// The signals of one reading: `base` (the function's) with the alignment's and the
/// fragment's own.
fn read_fragment(base: Signals, v: &Variant, p: &Profile, qprofile: &Profile, q: &Query, spans: &[CandSpan], root_in_test: bool) -> Signals {
    let a = &v.a;
    let region_nodes = match a.region {
        Some(j) => subtree_size(&v.tree, j),
        None => v.tree.nodes.len(),
    };
    // Per file: first and last line, and the lines the spans themselves cover.
    let mut per_file: HashMap<&str, (u32, u32, u32)> = HashMap::new();
    for s in spans {
        let len = s.lines.1.saturating_sub(s.lines.0) + 1;
        let e = per_file.entry(s.path.as_str()).or_insert((s.lines.0, s.lines.1, 0));
        e.0 = e.0.min(s.lines.0);
        e.1 = e.1.max(s.lines.1);
        e.2 += len;
    }
    let extent = per_file.values().map(|&(a, b, _)| b.saturating_sub(a) + 1).max().unwrap_or(1);
    let size = (extent as f32 / q.lines as f32).ln();
    Signals {
        align: a.score,
        depth_match: f32::from(u8::from(p.depth == qprofile.depth)),
        loops_diff: ((p.loops as f32 - qprofile.loops as f32).abs() / (1.0 + qprofile.loops as f32)).min(2.0),
        recursion: f32::from(u8::from(p.recursive == qprofile.recursive)),
        // Agreement on recursion says little when neither recurses (most code), much when
        // both do: on its own so the scorer can weigh the rare case.
        recursion_both: f32::from(u8::from(p.recursive && qprofile.recursive)),
        density: a.pairs.len() as f32 / region_nodes.max(1) as f32,
        size,
        size2: size * size,
        // Pieces far apart in one file (the whole fragment, before `compact` sets them apart).
        spread: per_file.values().map(|&(a, b, c)| ((b.saturating_sub(a) + 1) as f32 / c.max(1) as f32).ln().max(0.0)).fold(0.0, f32::max),
        grown: f32::from(u8::from(v.grown)),
        test_path: f32::from(u8::from(root_in_test)),
        tok_align: v.tokens.0,
        tok_bag: v.tokens.1,
        flow: v.flow,
        tok_seq: v.sequence,
        ..base
    }
}

/// The signals that compare a candidate with the rest of its pool, set once the pool is
/// whole.
pub fn relative(out: &mut [Candidate]) {
    let max_of = |get: fn(&Signals) -> f32, out: &[Candidate]| out.iter().map(|c| get(&c.signals)).fold(f32::MIN, f32::max);
    let (lex_max, dense_max, align_max) = (max_of(|s| s.lex, out), max_of(|s| s.dense, out), max_of(|s| s.align, out));
    for c in out.iter_mut() {
        let s = &mut c.signals;
        s.lex = if lex_max > 0.0 { s.lex / lex_max } else { 0.0 };
        s.dense -= dense_max;
        s.align_rel = s.align - align_max;
    }
    // Where names say nothing (renamed code) the few closest profiles matter more than the
    // profile's value: its rank in the pool says which are closest.
    pool_rank(out, |s| s.profile, |s, v| s.profile_rr = v);
    // Where no candidate's name or comment carries the query's procedure name (renamed or
    // tersely named code), the closest token matches in the pool stand out; elsewhere names
    // do that and this stays 0.
    let unnamed = max_of(|s| s.name, out) <= 0.0 && max_of(|s| s.comment_name, out) <= 0.0;
    if unnamed {
        pool_rank(out, |s| s.tok_align, |s, v| s.tok_align_rr_unnamed = v);
    }
}

/// Sets a signal of every candidate to 1/(1 + rank) of another in the pool (highest first;
/// ties in pool order).
fn pool_rank(out: &mut [Candidate], from: fn(&Signals) -> f32, to: fn(&mut Signals, f32)) {
    let mut order: Vec<usize> = (0..out.len()).collect();
    order.sort_by(|&a, &b| from(&out[b].signals).total_cmp(&from(&out[a].signals)).then(a.cmp(&b)));
    for (r, &i) in order.iter().enumerate() {
        to(&mut out[i].signals, 1.0 / (1.0 + r as f32));
    }
}
