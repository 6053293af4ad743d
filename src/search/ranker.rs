//! The learned scorer of hybrid search: a linear pairwise ranker (RankNet with a linear
//! score) over the signals of a candidate fragment (retriever scores and ranks,
//! structural alignment, the paper's coverage, size), standardized per feature. It is
//! fitted on pairs (hit, miss) of the same query by logistic regression on their feature
//! differences, each query weighing 1 in all, with Newton's method and a small L2 ridge
//! (`beryl eval fit-ranker`); the weights ship in `models/ranker/`. Pairs beat a pointwise
//! logistic regression on the same features by 0.04–0.05 MRR on `bench/algo`, both
//! cross-validated by algorithm (docs/eval/algo.md).

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Feature names, in the order of a candidate's feature vector.
pub const FEATURES: [&str; 29] = [
    "lex",
    "lex_rr",
    "name",
    "comment_name",
    "dense",
    "dense_rr",
    "beryllium",
    "beryllium_rr",
    "align",
    "align_rel",
    "profile",
    "depth_match",
    "loops_diff",
    "recursion",
    "density",
    "size",
    "size2",
    "grown",
    "test_path",
    "tok_align",
    "tok_bag",
    "profile_rr",
    "spread",
    "flow",
    "tok_seq",
    "recursion_both",
    "tok_align_rr_unnamed",
    "file_name",
    "string_name",
];
pub const N_FEATURES: usize = FEATURES.len();

/// Signals that can be taken out as a whole (ablation): the features of each, and the
/// retriever that belongs to it (see `hybrid::Retriever`).
pub const GROUPS: [(&str, &[&str]); 7] = [
    ("lexical", &["lex", "lex_rr", "name", "comment_name", "file_name"]),
    ("dense", &["dense", "dense_rr"]),
    ("beryllium", &["beryllium", "beryllium_rr"]),
    ("structure", &["align", "align_rel", "profile", "depth_match", "loops_diff", "recursion", "density", "profile_rr", "flow", "recursion_both"]),
    ("fragment", &["size", "size2", "grown", "test_path", "spread"]),
    ("tokens", &["tok_align", "tok_bag", "tok_seq", "tok_align_rr_unnamed"]),
    ("strings", &["string_name"]),
];

#[derive(Debug, Error)]
pub enum RankerError {
    #[error("ranker {path}: {msg}")]
    Bad { path: PathBuf, msg: String },
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Ranker {
    pub features: Vec<String>,
    pub mean: Vec<f32>,
    pub scale: Vec<f32>,
    pub weights: Vec<f32>,
    pub bias: f32,
}

/// One training example: a candidate of one query.
#[derive(Clone, Debug)]
pub struct Example {
    pub query: usize,
    pub x: [f32; N_FEATURES],
    pub hit: bool,
}

impl Ranker {
    /// `models/ranker/weights.json` beside the binary's sources, or `$BERYL_RANKER`.
    pub fn default_path() -> PathBuf {
        std::env::var_os("BERYL_RANKER")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("models/ranker/weights.json"))
    }

    pub fn load(path: &Path) -> Result<Ranker, RankerError> {
        let bad = |msg: String| RankerError::Bad { path: path.to_path_buf(), msg };
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let r: Ranker = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        if r.features != FEATURES {
            return Err(bad(format!("fitted on features {:?}, this beryl computes {:?}; refit it", r.features, FEATURES)));
        }
        if r.mean.len() != N_FEATURES || r.scale.len() != N_FEATURES || r.weights.len() != N_FEATURES {
            return Err(bad("vectors of the wrong length".into()));
        }
        if r.weights.iter().chain(&r.mean).chain(&r.scale).any(|v| !v.is_finite()) || !r.bias.is_finite() {
            return Err(bad("weights that are not finite numbers".into()));
        }
        Ok(r)
    }

    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d)?;
        }
        std::fs::write(path, serde_json::to_string_pretty(self).expect("plain numbers"))
    }

    /// The score of a candidate (higher ranks first; only differences mean anything).
    pub fn score(&self, x: &[f32; N_FEATURES]) -> f32 {
        let mut s = self.bias;
        for i in 0..N_FEATURES {
            s += self.weights[i] * (x[i] - self.mean[i]) / self.scale[i];
        }
        s
    }

    /// Fits on `examples`, using only the features where `use_feature` is true (the
    /// others get weight 0). `l2` is the ridge on standardized weights.
    pub fn fit(examples: &[Example], use_feature: &[bool; N_FEATURES], l2: f64) -> Ranker {
        let n = examples.len().max(1) as f64;
        let mut mean = [0f64; N_FEATURES];
        let mut sq = [0f64; N_FEATURES];
        for e in examples {
            for i in 0..N_FEATURES {
                mean[i] += e.x[i] as f64 / n;
                sq[i] += (e.x[i] as f64).powi(2) / n;
            }
        }
        let scale: Vec<f64> = (0..N_FEATURES).map(|i| (sq[i] - mean[i] * mean[i]).max(0.0).sqrt().max(1e-6)).collect();
        let cols: Vec<usize> = (0..N_FEATURES).filter(|&i| use_feature[i] && scale[i] > 1e-6).collect();
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
        let mut weights = vec![0f32; N_FEATURES];
        for (k, &i) in cols.iter().enumerate() {
            weights[i] = theta[k] as f32;
        }
        Ranker {
            features: FEATURES.iter().map(|s| s.to_string()).collect(),
            mean: mean.iter().map(|&m| m as f32).collect(),
            scale: scale.iter().map(|&s| s as f32).collect(),
            weights,
            bias: 0.0,
        }
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

/// Whether each feature is used when the named groups are taken out.
pub fn mask_without(groups: &[&str]) -> [bool; N_FEATURES] {
    let mut m = [true; N_FEATURES];
    for (g, feats) in GROUPS {
        if groups.contains(&g) {
            for f in feats {
                if let Some(i) = FEATURES.iter().position(|x| x == f) {
                    m[i] = false;
                }
            }
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_the_informative_feature_and_round_trips() {
        // Feature 0 separates hits from misses; feature 1 is noise.
        let mut ex = Vec::new();
        for q in 0..20 {
            for k in 0..30 {
                let hit = k == q % 30;
                let mut x = [0f32; N_FEATURES];
                x[0] = if hit { 1.0 } else { 0.1 * (k % 7) as f32 };
                x[1] = ((q * 31 + k * 17) % 11) as f32;
                ex.push(Example { query: q, x, hit });
            }
        }
        let r = Ranker::fit(&ex, &[true; N_FEATURES], 1e-3);
        assert!(r.weights[0] > 1.0 && r.weights[0].abs() > 5.0 * r.weights[1].abs(), "{:?}", r.weights);
        let mut hit = [0f32; N_FEATURES];
        hit[0] = 1.0;
        assert!(r.score(&hit) > r.score(&[0f32; N_FEATURES]));
        let masked = Ranker::fit(&ex, &mask_without(&["lexical"]), 1e-3);
        assert_eq!(masked.weights[0], 0.0);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w.json");
        r.save(&p).unwrap();
        assert_eq!(Ranker::load(&p).unwrap(), r);
        std::fs::write(&p, "{\"features\": []}").unwrap();
        assert!(Ranker::load(&p).is_err());
    }
}
