//! Candidate pools of the hybrid method and the learned scorer's evaluation: every
//! query's candidates with their signals and hit labels, ranked by a scorer fitted with
//! folds split by algorithm, so that every figure is for algorithms the scorer never saw.

use crate::located::{LocSpan, MAX_RANK};
use beryl::search::hybrid::Shown;
use crate::fit::{fit_ranker, Example};
use beryl::search::hybrid::signals::{mask_without, GROUPS, N_SIGNALS as N_FEATURES};
use beryl::search::hybrid::Ranker;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A candidate as the benchmark sees it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PoolCand {
    pub x: Vec<f32>,
    /// Bit i: retriever i of `hybrid::RETRIEVERS` found it.
    pub found: u8,
    /// (function id, first line, last line) of each span, for overlap removal.
    pub keys: Vec<(u32, u32, u32)>,
    #[serde(skip)]
    pub spans: Vec<LocSpan>,
    pub hit: bool,
    /// Touches an entry, whatever its size.
    pub touches: bool,
    /// `Candidate::copy`: equal nonzero keys are the same code under other names.
    #[serde(default)]
    pub copy: u64,
    /// `Candidate::tests`: wholly in tests, listed after the rest.
    #[serde(default)]
    pub tests: bool,
}

/// The candidates of one query (algorithm × index group).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Pool {
    pub algorithm: String,
    pub group: String,
    pub setting: String,
    pub cands: Vec<PoolCand>,
}

/// A variant of the hybrid method: everything, or one signal taken out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    /// The group of `signals::GROUPS` taken out, if any.
    pub without: Option<&'static str>,
}

impl Variant {
    pub fn all() -> Vec<Variant> {
        std::iter::once(Variant { without: None }).chain(GROUPS.iter().map(|g| Variant { without: Some(g.0) })).collect()
    }

    pub fn name(&self) -> String {
        match self.without {
            None => "hybrid".into(),
            Some(g) => format!("-{g}"),
        }
    }

    /// The retriever bit this variant drops (the signal's own retriever).
    fn dropped_bit(&self) -> Option<u8> {
        let r = beryl::search::hybrid::RETRIEVERS;
        self.without.and_then(|g| r.iter().position(|x| *x == g)).map(|i| 1u8 << i)
    }

    fn keeps(&self, c: &PoolCand) -> bool {
        match self.dropped_bit() {
            Some(b) => c.found & !b != 0,
            None => true,
        }
    }

    fn mask(&self) -> [bool; N_FEATURES] {
        match self.without {
            Some(g) => mask_without(&[g]),
            None => [true; N_FEATURES],
        }
    }
}

pub const L2: f64 = 1e-3;
/// Position of the `grown` feature.
const GROWN: usize = 17;

fn examples(pools: &[&Pool], v: Variant) -> Vec<Example> {
    let mut out = Vec::new();
    for (q, p) in pools.iter().enumerate() {
        for c in p.cands.iter().filter(|c| v.keeps(c)) {
            let mut x = [0f32; N_FEATURES];
            for (i, val) in c.x.iter().take(N_FEATURES).enumerate() {
                x[i] = *val;
            }
            out.push(Example { query: q, x, hit: c.hit });
        }
    }
    out
}

/// Fits a scorer on every candidate of `pools`.
pub fn fit(pools: &[&Pool], v: Variant) -> Ranker {
    fit_ranker(&examples(pools, v), &v.mask(), L2)
}

/// Candidate indices in ranked order, leaving out each that [`Shown::repeats`] better ones.
/// A copy of a better one is folded into it as `hybrid::rank` does: the group keeps the
/// better one's place and stands for all its copies, so it is listed by the first copy
/// that hits, if one does.
pub fn order(p: &Pool, v: Variant, r: &Ranker) -> Vec<usize> {
    let mut scored: Vec<(f32, usize)> = p
        .cands
        .iter()
        .enumerate()
        .filter(|(_, c)| v.keeps(c))
        .map(|(i, c)| {
            let mut x = [0f32; N_FEATURES];
            for (k, val) in c.x.iter().take(N_FEATURES).enumerate() {
                x[k] = *val;
            }
            (r.score_array(&x), i)
        })
        .collect();
    scored.sort_by(|a, b| p.cands[a.1].tests.cmp(&p.cands[b.1].tests).then(b.0.total_cmp(&a.0)).then(a.1.cmp(&b.1)));
    let (mut kept, mut shown): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
    let mut above = Shown::default();
    let grown = |i: usize| p.cands[i].x.get(GROWN).is_some_and(|g| *g != 0.0);
    for (_, i) in scored {
        if above.repeats(&p.cands[i].keys, grown(i)) {
            continue;
        }
        let c = &p.cands[i];
        if let Some(g) = kept.iter().position(|&k| c.copy != 0 && p.cands[k].copy == c.copy) {
            if c.hit && !p.cands[shown[g]].hit {
                shown[g] = i;
            }
            continue;
        }
        if kept.len() < MAX_RANK {
            above.add(c.keys.clone(), grown(i));
            kept.push(i);
            shown.push(i);
        }
    }
    shown
}

/// Folds of algorithms: sorted names dealt round-robin into `k` folds.
pub fn folds(pools: &[Pool], k: usize) -> Vec<BTreeSet<String>> {
    let algos: BTreeSet<&str> = pools.iter().map(|p| p.algorithm.as_str()).collect();
    let k = k.clamp(1, algos.len().max(1));
    let mut out = vec![BTreeSet::new(); k];
    for (i, a) in algos.into_iter().enumerate() {
        out[i % k].insert(a.to_string());
    }
    out
}

/// Ranked candidate indices of every pool under `v`: with `fixed`, that scorer; else
/// cross-validated over `folds` (each fold ranked by a scorer fitted on the others, and on
/// the pools of `extra` whose algorithm is not in the fold either: another setting's run).
pub fn cross_validated(pools: &[Pool], extra: &[Pool], v: Variant, folds: &[BTreeSet<String>], fixed: Option<&Ranker>) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); pools.len()];
    if let Some(r) = fixed {
        for (i, p) in pools.iter().enumerate() {
            out[i] = order(p, v, r);
        }
        return out;
    }
    for fold in folds {
        let train: Vec<&Pool> = pools.iter().chain(extra).filter(|p| !fold.contains(&p.algorithm)).collect();
        let r = fit(&train, v);
        for (i, p) in pools.iter().enumerate() {
            if fold.contains(&p.algorithm) {
                out[i] = order(p, v, &r);
            }
        }
    }
    out
}

/// Mean reciprocal rank of the first hit over queries, averaged per algorithm first
/// (a quick figure for the manifest; `beryl eval algo` reports the full tables).
pub fn mrr(pools: &[Pool], ranked: &[Vec<usize>]) -> f64 {
    mrr_where(pools, ranked, |_| true)
}

/// [`mrr`] over the pools that `keep` accepts (one setting's, say).
pub fn mrr_where(pools: &[Pool], ranked: &[Vec<usize>], keep: impl Fn(&Pool) -> bool) -> f64 {
    let mut per: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (p, r) in pools.iter().zip(ranked).filter(|(p, _)| keep(p)) {
        let rr = r.iter().position(|&i| p.cands[i].hit).map_or(0.0, |k| 1.0 / (k + 1) as f64);
        per.entry(&p.algorithm).or_default().push(rr);
    }
    if per.is_empty() {
        return 0.0;
    }
    per.values().map(|v| v.iter().sum::<f64>() / v.len() as f64).sum::<f64>() / per.len() as f64
}

pub fn write_pools(path: &Path, pools: &[Pool]) -> std::io::Result<()> {
    let mut s = String::new();
    for p in pools {
        s.push_str(&serde_json::to_string(p).expect("plain data"));
        s.push('\n');
    }
    std::fs::write(path, s)
}

pub fn read_pools(path: &Path) -> Result<Vec<Pool>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(x0: f32, hit: bool, f: u32) -> PoolCand {
        let mut x = vec![0f32; N_FEATURES];
        x[0] = x0;
        x[8] = (f % 3) as f32;
        PoolCand { x, found: 1, keys: vec![(f, 1, 10)], spans: Vec::new(), hit, touches: hit, copy: 0, tests: false }
    }

    #[test]
    fn cross_validation_never_trains_on_the_fold() {
        // Algorithm "b" has hits that feature 0 ranks first; "a" the opposite. A scorer
        // fitted on "a" alone must rank "b" badly: the fold never saw "b".
        let mk = |alg: &str, good_high: bool| Pool {
            algorithm: alg.into(),
            group: "g".into(),
            setting: "one".into(),
            cands: (0..20).map(|i| cand(if (i == 0) == good_high { 1.0 } else { 0.0 }, i == 0, i)).collect(),
        };
        let pools = vec![mk("a", false), mk("a", false), mk("b", true)];
        let f = folds(&pools, 2);
        assert_eq!(f.len(), 2);
        let ranked = cross_validated(&pools, &[], Variant { without: None }, &f, None);
        let first_hit = |i: usize| ranked[i].iter().position(|&k| pools[i].cands[k].hit).unwrap();
        assert!(first_hit(2) > 0, "fold b was ranked by a scorer that saw b");
        // Pools of another run teach the fold only about other algorithms: renamed "b"
        // pools given as extra training data must not reach fold "b".
        let extra = vec![Pool { setting: "one-renamed".into(), ..mk("b", true) }];
        let with_extra = cross_validated(&pools, &extra, Variant { without: None }, &f, None);
        let first = |r: &[Vec<usize>], i: usize| r[i].iter().position(|&k| pools[i].cands[k].hit).unwrap();
        assert_eq!(first(&with_extra, 2), first(&ranked, 2), "fold b saw b through the extra pools");
        // An extra "a" pool of the opposite kind does reach fold "b".
        let extra_a = vec![Pool { algorithm: "a".into(), ..mk("b", true) }; 4];
        assert_eq!(first(&cross_validated(&pools, &extra_a, Variant { without: None }, &f, None), 2), 0);
        // Fitted on everything, "b" would do better than under cross-validation.
        assert_eq!(order(&pools[0], Variant { without: None }, &fit(&[&pools[0], &pools[1]], Variant { without: None }))[0], 0);
    }

    #[test]
    fn overlapping_candidates_are_dropped() {
        let p = Pool {
            algorithm: "a".into(),
            group: "g".into(),
            setting: "one".into(),
            cands: vec![cand(1.0, true, 1), cand(0.9, false, 1), cand(0.5, false, 2)],
        };
        let r = fit(&[&p], Variant { without: None });
        assert_eq!(order(&p, Variant { without: None }, &r), vec![0, 2]);
        let v = Variant { without: Some("lexical") };
        assert!(order(&p, v, &r).is_empty(), "every candidate came from the lexical retriever only");
        assert_eq!(Variant::all().len(), 8);
    }

    #[test]
    fn copies_keep_the_best_place_and_hit_when_any_copy_does() {
        let copy = |x0: f32, hit: bool, f: u32, key: u64| PoolCand { copy: key, ..cand(x0, hit, f) };
        let p = Pool {
            algorithm: "a".into(),
            group: "g".into(),
            setting: "one".into(),
            cands: vec![copy(1.0, false, 1, 7), copy(0.9, false, 2, 0), copy(0.8, false, 3, 7), copy(0.7, true, 4, 7), copy(0.6, false, 5, 9)],
        };
        // Scored by feature 0 alone, so the order is that of x0.
        let mut weights = vec![0f32; N_FEATURES];
        weights[0] = 1.0;
        let r = Ranker {
            features: beryl::search::hybrid::Signals::NAMES.iter().map(|f| f.to_string()).collect(),
            mean: vec![0.0; N_FEATURES],
            scale: vec![1.0; N_FEATURES],
            weights,
            bias: 0.0,
        };
        let o = order(&p, Variant { without: None }, &r);
        // 1, 3 and 4 are one group at 1's place, shown by 4, the copy that hits.
        assert_eq!(o, vec![3, 1, 4], "{o:?}");
        // Key 0 is no key: two candidates without one are never copies.
        let none = Pool { cands: vec![copy(1.0, false, 1, 0), copy(0.9, true, 2, 0)], ..p.clone() };
        assert_eq!(order(&none, Variant { without: None }, &r), vec![0, 1]);
        // Fragments wholly in tests follow every other one, whatever their scores.
        let test = |x0: f32, f: u32| PoolCand { tests: true, ..cand(x0, false, f) };
        let mixed = Pool { cands: vec![test(1.0, 1), copy(0.5, true, 2, 0), test(0.9, 3), copy(0.1, false, 4, 0)], ..p.clone() };
        assert_eq!(order(&mixed, Variant { without: None }, &r), vec![1, 3, 0, 2]);
    }
}
