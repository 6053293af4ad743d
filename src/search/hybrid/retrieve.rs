//! The four first-stage retrievers of hybrid search. Each returns its best functions; the
//! pool is their union, so a function any one of them finds gets a full reading. Their
//! side results (lexical masks, coverages, the query vector, alignments already made) are
//! kept for the signals.

use super::candidate::Ranks;
use super::query::Query;
use super::{HybridOptions, BERYLLIUM, DENSE, LEXICAL, STRUCTURE};
use crate::features::{TextEncoders, DIM};
use crate::index::lexical::{query_terms, LexScores, QueryTerms};
use crate::index::{vectors, Index};
use crate::search::{fragments, query_vectors, SearchError, SearchOptions};
use crate::shape::align::{align, Alignment, Tree};
use crate::shape::Profile;
use rayon::prelude::*;
use std::collections::HashMap;
use std::time::Instant;

/// Functions whose profile is compared by alignment in the structural retriever: three times
/// the retriever's share, as profiles alone rank the implementation poorly.
pub const STRUCT_PRESELECT: usize = 600;
/// Most nodes of a code tree (callees included).
pub(super) const MAX_TREE: usize = 1500;

/// A code tree with its best alignment and the query form it was aligned with.
pub(super) type Aligned = (Tree, (Alignment, u8));

/// What the retrievers found.
pub(super) struct Retrieved {
    pub ranks: HashMap<u32, Ranks>,
    pub terms: QueryTerms,
    pub lex: LexScores,
    /// Coverage of the best Beryllium fragment that touches each function.
    pub beryl: HashMap<u32, f32>,
    /// The query's function-level text vector.
    pub qvec: [f32; DIM],
    /// Alignments the structural retriever made, reused by the pool.
    pub aligned: HashMap<u32, Aligned>,
}

/// The query as written and, if it has tail calls to itself, with them as loops: each
/// candidate is compared with the form it is closer to.
pub(super) struct Forms<'q> {
    pub list: Vec<(&'q Tree, &'q Profile, [f32; 18])>,
}

impl<'q> Forms<'q> {
    pub fn new(q: &'q Query) -> Forms<'q> {
        let list = std::iter::once((&q.tree, &q.profile))
            .chain(q.looped.as_ref().map(|(t, p)| (t, p)))
            .map(|(t, p)| {
                let mut v = p.vector();
                vectors::normalize(&mut v);
                (t, p, v)
            })
            .collect();
        Forms { list }
    }

    /// Cosine of a function's profile with the closer form's.
    pub fn profile_sim(&self, profiles: &[[f32; 18]], f: u32) -> f32 {
        let Some(p) = profiles.get(f as usize) else { return 0.0 };
        self.list.iter().map(|(_, _, v)| p.iter().zip(v).map(|(a, b)| a * b).sum::<f32>()).fold(f32::MIN, f32::max)
    }

    /// The best alignment of a code tree with either form, and which form.
    pub fn align_best(&self, t: &Tree) -> (Alignment, u8) {
        let mut best = (align(self.list[0].0, t), 0u8);
        for (i, f) in self.list.iter().enumerate().skip(1) {
            let a = align(f.0, t);
            if a.score > best.0.score {
                best = (a, i as u8);
            }
        }
        best
    }
}

/// The `k` best of `scores`, best first, equal scores by id. The `k` are selected before
/// they are sorted: over every function of a large corpus, sorting all of them would cost
/// more than the search.
pub(super) fn top_k(scores: &[(u32, f32)], k: usize) -> Vec<(u32, f32)> {
    if k == 0 {
        return Vec::new();
    }
    let order = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    let mut v: Vec<(u32, f32)> = scores.to_vec();
    if k < v.len() {
        v.select_nth_unstable_by(k - 1, order);
        v.truncate(k);
    }
    v.sort_by(order);
    v
}

/// Functions with a positive BM25F score, inside the index's scope.
pub(super) fn lexical_hits(index: &Index, lex: &LexScores) -> Vec<(u32, f32)> {
    lex.score.iter().enumerate().filter(|(f, &s)| s > 0.0 && index.in_scope(*f as u32)).map(|(f, &s)| (f as u32, s)).collect()
}

/// The query's function-level text vector: its procedure names as words, then its English.
pub(super) fn dense_query(index: &Index, encs: &TextEncoders, q: &Query) -> Result<[f32; DIM], SearchError> {
    let names: Vec<String> = q.names().iter().map(|p| crate::text::name_words(p)).collect();
    Ok(index.function_encoder(encs)?.encode(&[format!("{}. {}", names.join(", "), q.words).as_str()])?.remove(0))
}

/// The `k` functions whose text vectors are closest to `qvec`, best first (ties by id).
pub(super) fn dense_hits(index: &mut Index, qvec: &[f32; DIM], k: usize) -> Result<Vec<(u32, f32)>, SearchError> {
    let hits = index.search_functions(qvec, k)?;
    Ok(hits.first().map(|h| h.iter().map(|&(f, s)| (f as u32, s)).collect()).unwrap_or_default())
}

/// Records each function's rank in retriever `r` (its first, where it comes twice).
pub(super) fn note(list: &[(u32, f32)], r: usize, ranks: &mut HashMap<u32, Ranks>) {
    for (i, &(f, _)) in list.iter().enumerate() {
        let e = ranks.entry(f).or_default();
        if e[r].is_none() {
            e[r] = Some(i as u32);
        }
    }
}

fn lap(what: &str, t: &mut Instant) {
    log::debug!("hybrid {what}: {:.1} ms", t.elapsed().as_secs_f64() * 1000.0);
    *t = Instant::now();
}

/// Runs the retrievers that `opts` turns on; the index's function profiles are loaded.
pub(super) fn retrieve(index: &mut Index, encs: &TextEncoders, q: &Query, forms: &Forms, opts: &HybridOptions) -> Result<Retrieved, SearchError> {
    let k = opts.per_retriever;
    let mut t = Instant::now();
    let mut ranks: HashMap<u32, Ranks> = HashMap::new();

    let terms = query_terms(&q.words, q.names());
    let lex = index.lexical.search(&terms.terms);
    if opts.retrievers[LEXICAL] {
        note(&top_k(&lexical_hits(index, &lex), k), LEXICAL, &mut ranks);
    }
    lap("lexical", &mut t);

    let mut beryl: HashMap<u32, f32> = HashMap::new();
    if opts.retrievers[BERYLLIUM] {
        let list = beryllium(index, encs, q, k, &mut beryl)?;
        note(&list, BERYLLIUM, &mut ranks);
    }
    lap("beryllium", &mut t);

    // Dense, after what needs no function encoder: `search` loads it meanwhile.
    let qvec = dense_query(index, encs, q)?;
    if opts.retrievers[DENSE] {
        let list = dense_hits(index, &qvec, k)?;
        note(&list, DENSE, &mut ranks);
    }
    lap("dense", &mut t);

    index.load_profiles();
    lap("profiles", &mut t);
    let mut aligned = HashMap::new();
    if opts.retrievers[STRUCTURE] {
        let scored = structure(index, forms, &mut aligned);
        note(&top_k(&scored, k), STRUCTURE, &mut ranks);
    }
    lap("structure", &mut t);
    Ok(Retrieved { ranks, terms, lex, beryl, qvec, aligned })
}

/// The paper's node matching and grouping: each function touched by one of the best
/// `k / 2` fragments, with the query share that fragment covers (the best, where several).
fn beryllium(index: &mut Index, encs: &TextEncoders, q: &Query, k: usize, cover: &mut HashMap<u32, f32>) -> Result<Vec<(u32, f32)>, SearchError> {
    let qv = query_vectors(index, index.statement_encoder(encs)?, &q.icfg, &q.line_map)?;
    let total = qv.nodes.len().max(1) as f32;
    let mut list = Vec::new();
    if qv.nodes.is_empty() {
        return Ok(list);
    }
    let bopts = SearchOptions { top: k / 2, ..SearchOptions::default() };
    let r = fragments(index, qv, &bopts, "pseudocode", 0.0, Instant::now())?;
    for f in &r.fragments {
        for s in &f.spans {
            let cov = f.query_nodes_covered as f32 / total;
            let e = cover.entry(s.function_id).or_insert(0.0);
            *e = e.max(cov);
            if !list.iter().any(|&(g, _)| g == s.function_id) {
                list.push((s.function_id, cov));
            }
        }
    }
    Ok(list)
}

/// Structure: every function's profile against the query's, then the closest aligned.
pub(super) fn structure_preselect(index: &Index, forms: &Forms) -> Vec<(u32, f32)> {
    use crate::index::subset::get;
    let (profiles, live) = (index.profiles(), index.live_functions());
    let scope = index.subset().map(|s| &s.functions[..]);
    let all: Vec<(u32, f32)> = (0..profiles.len() as u32)
        .into_par_iter()
        .filter(|&f| get(live, f as usize) && scope.is_none_or(|bits| get(bits, f as usize)))
        .map(|f| (f, forms.profile_sim(profiles, f)))
        .collect();
    top_k(&all, STRUCT_PRESELECT)
}

/// Aligns each function of `pre` with the query's closer form, on every core.
pub(super) fn align_each(index: &Index, forms: &Forms, pre: &[(u32, f32)], aligned: &mut HashMap<u32, Aligned>) -> Vec<(u32, f32)> {
    let shapes = &index.shapes;
    let get = |f: u32| shapes.get(f);
    let done: Vec<(u32, Tree, (Alignment, u8))> = pre
        .par_iter()
        .map(|&(f, _)| {
            let t = Tree::build(f, &get, 0, MAX_TREE);
            let a = forms.align_best(&t);
            (f, t, a)
        })
        .collect();
    let mut scored = Vec::with_capacity(done.len());
    for (f, t, a) in done {
        scored.push((f, a.0.score));
        aligned.insert(f, (t, a));
    }
    scored
}

fn structure(index: &Index, forms: &Forms, aligned: &mut HashMap<u32, Aligned>) -> Vec<(u32, f32)> {
    let t = Instant::now();
    let pre = structure_preselect(index, forms);
    log::debug!("hybrid preselect: {:.1} ms", t.elapsed().as_secs_f64() * 1000.0);
    align_each(index, forms, &pre, aligned)
}

#[cfg(test)]
mod tests {
    use super::top_k;

    #[test]
    fn top_k_is_the_head_of_the_full_order() {
        // Scores with many ties, so that ids decide among equals.
        let mut x = 0x9e37_79b9u32;
        let scores: Vec<(u32, f32)> = (0..5000u32)
            .map(|f| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                (f, (x % 97) as f32 / 7.0)
            })
            .collect();
        let mut all = scores.clone();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for k in [0, 1, 10, 333, 4999, 5000, 9000] {
            assert_eq!(top_k(&scores, k), all[..k.min(all.len())].to_vec(), "k = {k}");
        }
    }
}
