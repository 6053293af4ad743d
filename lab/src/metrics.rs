//! Per-query ranking metrics, as CLARC and BEIR (pytrec_eval) define them.
//!
//! - **NDCG@10**: gain = the label itself (BEIR/pytrec_eval convention, not `2^rel - 1`),
//!   discount `log2(rank + 1)`; the ideal ranking orders every judged label > 0
//!   descending (2, then 1), so a relevant candidate missing from the ranking lowers it.
//! - **MRR**: `1 / rank` of the first candidate whose label is at least `mrr_grade`
//!   (the highest grade of the file's qrel: label 2 in graded CLARC files, where
//!   helper functions with label 1 do not count; the single positive label elsewhere).
//!   No cut-off: the pools are a few hundred candidates.
//! - **MAP**: average precision over the whole ranking; relevant = label > 0, divided by
//!   the number of relevant candidates in the qrel.
//! - **Recall@k** (1, 5, 10, 20): relevant candidates (label > 0) in the top k over all
//!   relevant candidates.
//!
//! Per-query values are fractions; [`Metrics::mean`] averages and scales by 100.

use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::hash::Hash;

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Metrics {
    pub ndcg10: f64,
    pub mrr: f64,
    pub map: f64,
    pub r1: f64,
    pub r5: f64,
    pub r10: f64,
    pub r20: f64,
}

impl Metrics {
    pub const NAMES: [&'static str; 7] = ["NDCG@10", "MRR", "MAP", "R@1", "R@5", "R@10", "R@20"];

    pub fn values(&self) -> [f64; 7] {
        [self.ndcg10, self.mrr, self.map, self.r1, self.r5, self.r10, self.r20]
    }

    fn from_values(v: [f64; 7]) -> Metrics {
        Metrics { ndcg10: v[0], mrr: v[1], map: v[2], r1: v[3], r5: v[4], r10: v[5], r20: v[6] }
    }

    /// Mean of per-query metrics, × 100. Empty input gives zeros.
    pub fn mean(all: &[Metrics]) -> Metrics {
        let mut acc = [0f64; 7];
        for m in all {
            for (a, v) in acc.iter_mut().zip(m.values()) {
                *a += v;
            }
        }
        let n = all.len().max(1) as f64;
        Metrics::from_values(acc.map(|a| 100.0 * a / n))
    }

    /// Plain average of already-averaged rows (for summary tables: one vote per file).
    pub fn average(rows: &[Metrics]) -> Metrics {
        let mut acc = [0f64; 7];
        for m in rows {
            for (a, v) in acc.iter_mut().zip(m.values()) {
                *a += v;
            }
        }
        let n = rows.len().max(1) as f64;
        Metrics::from_values(acc.map(|a| a / n))
    }
}

/// The metrics of one query. `ranking` lists candidate ids best first (a repeated id
/// counts at its first position only); `rels` maps ids to labels, absent ids being 0.
/// `None` when no label is > 0: such a query has nothing to find and is left out of means.
pub fn query_metrics<T: Eq + Hash>(ranking: &[T], rels: &HashMap<T, u32>, mrr_grade: u32) -> Option<Metrics> {
    let mut positive: Vec<u32> = rels.values().copied().filter(|&r| r > 0).collect();
    if positive.is_empty() {
        return None;
    }
    let n_rel = positive.len() as f64;
    positive.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = positive.iter().take(10).enumerate().map(|(i, &r)| r as f64 / discount(i)).sum();

    let mut seen: HashSet<&T> = HashSet::new();
    let (mut dcg, mut mrr, mut ap_sum) = (0.0, 0.0, 0.0);
    let mut found = 0usize;
    let mut found_at = [0usize; 4]; // relevant found within the top 1, 5, 10, 20
    let mut rank = 0usize; // 0-based position among distinct ids
    for id in ranking {
        if !seen.insert(id) {
            continue;
        }
        let rel = rels.get(id).copied().unwrap_or(0);
        if rel > 0 {
            found += 1;
            ap_sum += found as f64 / (rank + 1) as f64;
            if rank < 10 {
                dcg += rel as f64 / discount(rank);
            }
            for (slot, k) in found_at.iter_mut().zip([1, 5, 10, 20]) {
                if rank < k {
                    *slot += 1;
                }
            }
            if mrr == 0.0 && rel >= mrr_grade {
                mrr = 1.0 / (rank + 1) as f64;
            }
        }
        rank += 1;
    }
    let r = found_at.map(|f| f as f64 / n_rel);
    Some(Metrics { ndcg10: dcg / idcg, mrr, map: ap_sum / n_rel, r1: r[0], r5: r[1], r10: r[2], r20: r[3] })
}

/// `log2(rank + 1)` for a 0-based position.
fn discount(pos: usize) -> f64 {
    ((pos + 2) as f64).log2()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rels(pairs: &[(&'static str, u32)]) -> HashMap<&'static str, u32> {
        pairs.iter().copied().collect()
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }

    #[test]
    fn graded_query() {
        // a: primary (2), b: helper (1). Ranking x, b, a, y.
        // DCG  = 0/log2 2 + 1/log2 3 + 2/log2 4 = 0.63092975 + 1 = 1.63092975
        // IDCG = 2/log2 2 + 1/log2 3            = 2.63092975
        // NDCG = 0.61990623; MRR counts label 2 only: a at rank 3 → 1/3;
        // AP = (1/2 + 2/3) / 2 = 0.58333333; R@1 = 0, R@5 = R@10 = R@20 = 2/2.
        let m = query_metrics(&["x", "b", "a", "y"], &rels(&[("a", 2), ("b", 1)]), 2).unwrap();
        close(m.ndcg10, 0.6199062332840657);
        close(m.mrr, 1.0 / 3.0);
        close(m.map, 0.5833333333333333);
        close(m.r1, 0.0);
        close(m.r5, 1.0);
        close(m.r10, 1.0);
        close(m.r20, 1.0);
        // With grade 1 the helper at rank 2 would count: 1/2.
        close(query_metrics(&["x", "b", "a", "y"], &rels(&[("a", 2), ("b", 1)]), 1).unwrap().mrr, 0.5);
    }

    #[test]
    fn graded_helper_first_recall_at_one() {
        // Ranking b, a: DCG = 1/1 + 2/log2 3 = 2.26185951; IDCG = 2.63092975 → 0.85971870.
        // MRR (label 2) = 1/2; AP = (1/1 + 2/2)/2 = 1; R@1 = 1/2 (one of two relevant).
        let m = query_metrics(&["b", "a"], &rels(&[("a", 2), ("b", 1)]), 2).unwrap();
        close(m.ndcg10, (1.0 + 2.0 / 3f64.log2()) / (2.0 + 1.0 / 3f64.log2()));
        close(m.ndcg10, 0.8597186998521972);
        close(m.mrr, 0.5);
        close(m.map, 1.0);
        close(m.r1, 0.5);
    }

    #[test]
    fn binary_query() {
        // One relevant (label 1) at rank 3: DCG = 1/log2 4 = 0.5, IDCG = 1 → NDCG 0.5;
        // MRR = AP = 1/3; R@1 = 0, R@5 = 1.
        let m = query_metrics(&["x", "y", "a", "z"], &rels(&[("a", 1), ("x", 0)]), 1).unwrap();
        close(m.ndcg10, 0.5);
        close(m.mrr, 1.0 / 3.0);
        close(m.map, 1.0 / 3.0);
        assert_eq!((m.r1, m.r5, m.r10, m.r20), (0.0, 1.0, 1.0, 1.0));
    }

    #[test]
    fn deep_missing_and_repeated() {
        // Relevant at rank 12: outside the NDCG@10 and R@10 window, inside R@20.
        let ranking: Vec<String> = (1..=15).map(|i| if i == 12 { "a".into() } else { format!("n{i}") }).collect();
        let r: HashMap<String, u32> = [("a".to_string(), 2)].into_iter().collect();
        let m = query_metrics(&ranking, &r, 2).unwrap();
        close(m.ndcg10, 0.0);
        close(m.mrr, 1.0 / 12.0);
        close(m.map, 1.0 / 12.0);
        assert_eq!((m.r10, m.r20), (0.0, 1.0));
        // Not ranked at all: everything 0.
        let m = query_metrics(&["x", "y"], &rels(&[("a", 2)]), 2).unwrap();
        assert_eq!(m, Metrics::default());
        // A repeated id keeps its first rank: a at rank 2, not 3.
        let m = query_metrics(&["x", "x", "a"], &rels(&[("a", 2)]), 2).unwrap();
        close(m.mrr, 0.5);
        // No relevant candidate: no metrics.
        assert!(query_metrics(&["x"], &rels(&[("x", 0)]), 2).is_none());
    }

    #[test]
    fn two_relevant_binary_map() {
        // Relevant at ranks 1 and 4 of 2 relevant: AP = (1/1 + 2/4)/2 = 0.75;
        // DCG = 1 + 1/log2 5 = 1.43067656, IDCG = 1 + 1/log2 3 = 1.63092975 → 0.87721532.
        let m = query_metrics(&["a", "x", "y", "b"], &rels(&[("a", 1), ("b", 1)]), 1).unwrap();
        close(m.map, 0.75);
        close(m.ndcg10, (1.0 + 1.0 / 5f64.log2()) / (1.0 + 1.0 / 3f64.log2()));
        close(m.ndcg10, 0.8772153153380493);
        close(m.r1, 0.5);
        close(m.mrr, 1.0);
    }

    #[test]
    fn mean_scales_by_100() {
        let a = query_metrics(&["a"], &rels(&[("a", 1)]), 1).unwrap();
        let b = query_metrics(&["x", "a"], &rels(&[("a", 1)]), 1).unwrap();
        // MRR (1 + 1/2)/2 = 0.75 → 75; R@1 (1 + 0)/2 → 50.
        let m = Metrics::mean(&[a, b]);
        close(m.mrr, 75.0);
        close(m.r1, 50.0);
        close(m.r5, 100.0);
        assert_eq!(Metrics::mean(&[]), Metrics::default());
    }
}
