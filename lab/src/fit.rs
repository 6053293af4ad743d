//! Fitting the hybrid search's scorer: logistic regression on the signal differences of
//! (hit, miss) pairs of the same query, each query weighing 1 in all, by Newton's method
//! with a small L2 ridge on standardized weights. Pairs beat a pointwise logistic
//! regression on the same signals (docs/eval/algo.md).

use beryl::search::hybrid::scorer::Ranker;
use beryl::search::hybrid::signals::{Signals, N_SIGNALS};

/// One training example: a candidate of one query.
#[derive(Clone, Debug)]
pub struct Example {
    pub query: usize,
    pub x: [f32; N_SIGNALS],
    pub hit: bool,
}

/// Fits on `examples`, using only the signals where `use_feature` is true (the others get
/// weight 0). `l2` is the ridge on standardized weights.
pub fn fit_ranker(examples: &[Example], use_feature: &[bool; N_SIGNALS], l2: f64) -> Ranker {
    let n = examples.len().max(1) as f64;
    let mut mean = [0f64; N_SIGNALS];
    let mut sq = [0f64; N_SIGNALS];
    for e in examples {
        for i in 0..N_SIGNALS {
            mean[i] += e.x[i] as f64 / n;
            sq[i] += (e.x[i] as f64).powi(2) / n;
        }
    }
    let scale: Vec<f64> = (0..N_SIGNALS).map(|i| (sq[i] - mean[i] * mean[i]).max(0.0).sqrt().max(1e-6)).collect();
    let cols: Vec<usize> = (0..N_SIGNALS).filter(|&i| use_feature[i] && scale[i] > 1e-6).collect();
    let d = cols.len();
    let z = |e: &Example| -> Vec<f64> { cols.iter().map(|&i| (e.x[i] as f64 - mean[i]) / scale[i]).collect() };
    // Feature differences of every (hit, miss) pair of a query; a query weighs 1.
    let mut by_query: std::collections::BTreeMap<usize, (Vec<Vec<f64>>, Vec<Vec<f64>>)> = Default::default();
    for e in examples {
        let q = by_query.entry(e.query).or_default();
        if e.hit {
            q.0.push(z(e));
        } else {
            q.1.push(z(e));
        }
    }
    let mut pairs: Vec<(Vec<f64>, f64)> = Vec::new();
    for (pos, neg) in by_query.values() {
        if pos.is_empty() || neg.is_empty() {
            continue;
        }
        let w = 1.0 / (pos.len() * neg.len()) as f64;
        for p in pos {
            for q in neg {
                pairs.push((p.iter().zip(q).map(|(a, b)| a - b).collect(), w));
            }
        }
    }
    let mut theta = vec![0f64; d];
    for _ in 0..50 {
        let mut g = vec![0f64; d];
        let mut h = vec![0f64; d * d];
        for (dz, w) in &pairs {
            let t: f64 = dz.iter().zip(&theta).map(|(a, b)| a * b).sum();
            let p = 1.0 / (1.0 + (-t).exp());
            let r = w * (p - 1.0);
            let c = w * (p * (1.0 - p)).max(1e-12);
            for a in 0..d {
                g[a] += r * dz[a];
                for b in 0..=a {
                    h[a * d + b] += c * dz[a] * dz[b];
                }
            }
        }
        for a in 0..d {
            for b in 0..a {
                h[b * d + a] = h[a * d + b];
            }
            g[a] += l2 * theta[a];
            h[a * d + a] += l2;
        }
        let step = solve(&mut h, &mut g, d);
        let mut moved = 0f64;
        for a in 0..d {
            theta[a] -= step[a];
            moved = moved.max(step[a].abs());
        }
        if moved < 1e-7 {
            break;
        }
    }
    let mut weights = vec![0f32; N_SIGNALS];
    for (k, &i) in cols.iter().enumerate() {
        weights[i] = theta[k] as f32;
    }
    Ranker {
        features: Signals::NAMES.iter().map(|s| s.to_string()).collect(),
        mean: mean.iter().map(|&m| m as f32).collect(),
        scale: scale.iter().map(|&s| s as f32).collect(),
        weights,
        bias: 0.0,
    }
}

/// Solves `h x = g` (symmetric positive definite, `d × d`) by Gaussian elimination with
/// partial pivoting; `h` and `g` are overwritten.
fn solve(h: &mut [f64], g: &mut [f64], d: usize) -> Vec<f64> {
    for col in 0..d {
        let piv = (col..d).max_by(|&a, &b| h[a * d + col].abs().total_cmp(&h[b * d + col].abs())).unwrap_or(col);
        if h[piv * d + col].abs() < 1e-12 {
            continue;
        }
        if piv != col {
            for k in 0..d {
                h.swap(piv * d + k, col * d + k);
            }
            g.swap(piv, col);
        }
        for r in col + 1..d {
            let f = h[r * d + col] / h[col * d + col];
            if f != 0.0 {
                for k in col..d {
                    h[r * d + k] -= f * h[col * d + k];
                }
                g[r] -= f * g[col];
            }
        }
    }
    let mut x = vec![0f64; d];
    for r in (0..d).rev() {
        if h[r * d + r].abs() < 1e-12 {
            continue;
        }
        let s: f64 = (r + 1..d).map(|k| h[r * d + k] * x[k]).sum();
        x[r] = (g[r] - s) / h[r * d + r];
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use beryl::search::hybrid::signals::mask_without;

    #[test]
    fn learns_the_informative_feature_and_round_trips() {
        // Feature 0 separates hits from misses; feature 1 is noise.
        let mut ex = Vec::new();
        for q in 0..20 {
            for k in 0..30 {
                let hit = k == q % 30;
                let mut x = [0f32; N_SIGNALS];
                x[0] = if hit { 1.0 } else { 0.1 * (k % 7) as f32 };
                x[1] = ((q * 31 + k * 17) % 11) as f32;
                ex.push(Example { query: q, x, hit });
            }
        }
        let r = fit_ranker(&ex, &[true; N_SIGNALS], 1e-3);
        assert!(r.weights[0] > 1.0 && r.weights[0].abs() > 5.0 * r.weights[1].abs(), "{:?}", r.weights);
        let mut hit = [0f32; N_SIGNALS];
        hit[0] = 1.0;
        assert!(r.score_array(&hit) > r.score_array(&[0f32; N_SIGNALS]));
        let masked = fit_ranker(&ex, &mask_without(&["lexical"]), 1e-3);
        assert_eq!(masked.weights[0], 0.0);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w.json");
        r.save(&p).unwrap();
        assert_eq!(Ranker::load(&p).unwrap(), r);
        std::fs::write(&p, "{\"features\": []}").unwrap();
        assert!(Ranker::load(&p).is_err());
    }
}
