//! Means per scope and method over a run's rows.

#[allow(unused_imports)]
use super::*;

/// F-rank and overlap rank of one row for one method.
pub(crate) type RankPair = (Option<usize>, Option<usize>);

/// MRR and hit@k per scope (each language present, then `all`) and method. Rows of one
/// algorithm are averaged first (in `one`: over the projects that implement it), then
/// the algorithms, as the paper does.
pub fn summarize(rows: &[Row], methods: &[Method]) -> Vec<Summary> {
    let mut scopes: Vec<String> = Vec::new();
    for l in LANGUAGE_CLASSES.iter().copied().chain(["mixed"]) {
        if rows.iter().any(|r| r.language == l) {
            scopes.push(l.to_string());
        }
    }
    if scopes.len() != 1 {
        scopes.push("all".into());
    }
    let mut out = Vec::new();
    for scope in &scopes {
        let in_scope: Vec<&Row> = rows.iter().filter(|r| scope == "all" || &r.language == scope).collect();
        for (mi, &m) in methods.iter().enumerate() {
            // (F-rank, overlap rank) of each row, by algorithm.
            let mut per: BTreeMap<&str, Vec<RankPair>> = BTreeMap::new();
            for r in &in_scope {
                let get = |v: &[Option<usize>]| v.get(mi).copied().flatten();
                per.entry(&r.algorithm).or_default().push((get(&r.ranks), get(&r.overlap_ranks)));
            }
            let mean_of = |f: &dyn Fn(RankPair) -> f64| -> f64 {
                if per.is_empty() {
                    return 0.0;
                }
                per.values().map(|v| v.iter().map(|&r| f(r)).sum::<f64>() / v.len() as f64).sum::<f64>() / per.len() as f64
            };
            let mean = |f: &dyn Fn(Option<usize>) -> f64| mean_of(&|r| f(r.0));
            out.push(Summary {
                scope: scope.clone(),
                method: m,
                algorithms: per.len(),
                rows: in_scope.len(),
                mrr: mean(&reciprocal),
                hit1: mean(&|r| hit_at(r, 1)),
                hit10: mean(&|r| hit_at(r, 10)),
                hit25: mean(&|r| hit_at(r, 25)),
                mrr_overlap: mean_of(&|r| reciprocal(r.1)),
            });
        }
    }
    out
}
