//! Pieces every runner shares: encoding many texts with a progress bar, per-query score
//! normalization and fusion, and turning scores into a ranking.

use crate::EvalError;
use beryl::features::{Encoder, TextVec};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::cmp::Ordering;

/// A progress bar on stderr, or a hidden one (tests, `--json` runs that want silence).
pub fn bar(len: usize, msg: &str, show: bool) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(Some(len as u64), if show { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() });
    if let Ok(style) = ProgressStyle::with_template("{msg:32} [{bar:30}] {pos}/{len} texts {per_sec} eta {eta}") {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(msg.to_string());
    pb
}

/// Texts per encoder call: small enough for a live progress bar, large enough that the
/// encoder still batches texts of similar length.
const CHUNK: usize = 256;

/// Unit vectors of `texts`, in order. Texts are sorted by length before chunking so each
/// chunk's batches carry little padding; cached texts cost nothing.
pub fn encode_all(enc: &Encoder, texts: &[&str], msg: &str, show: bool) -> Result<Vec<TextVec>, EvalError> {
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_by_key(|&i| texts[i].len());
    let pb = bar(texts.len(), msg, show);
    let mut out = vec![[0f32; beryl::features::DIM]; texts.len()];
    for chunk in order.chunks(CHUNK) {
        let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
        let vecs = enc.encode(&batch)?;
        for (&i, v) in chunk.iter().zip(vecs) {
            out[i] = v;
        }
        pb.inc(chunk.len() as u64);
    }
    pb.finish_and_clear();
    Ok(out)
}

/// Dot product: the cosine of two unit vectors.
pub fn dot(a: &TextVec, b: &TextVec) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Standardizes one query's scores over its candidates (mean 0, deviation 1), so signals
/// of different scales can be added. A constant signal becomes all zeros.
pub fn zscore(scores: &[f32]) -> Vec<f32> {
    let n = scores.len().max(1) as f32;
    let mean = scores.iter().sum::<f32>() / n;
    let var = scores.iter().map(|s| (s - mean) * (s - mean)).sum::<f32>() / n;
    let sd = var.sqrt();
    if sd < 1e-9 {
        return vec![0.0; scores.len()];
    }
    scores.iter().map(|s| (s - mean) / sd).collect()
}

/// Weighted sum of z-scored signals over the same candidates.
pub fn zfuse(signals: &[(&[f32], f32)]) -> Vec<f32> {
    let n = signals.first().map(|(s, _)| s.len()).unwrap_or(0);
    let mut out = vec![0f32; n];
    for (s, w) in signals {
        for (o, z) in out.iter_mut().zip(zscore(s)) {
            *o += w * z;
        }
    }
    out
}

/// The RRF constant of Cormack et al. (2009); large k flattens the head of each list.
pub const RRF_K: f32 = 60.0;

/// Reciprocal-rank fusion: Σ w / (k + rank) over the signals, rank 1-based, ties broken
/// by `tie` as in [`order`].
pub fn rrf(signals: &[(&[f32], f32)], tie: &dyn Fn(usize, usize) -> Ordering) -> Vec<f32> {
    let n = signals.first().map(|(s, _)| s.len()).unwrap_or(0);
    let mut out = vec![0f32; n];
    for (s, w) in signals {
        for (rank, i) in order(s, tie).into_iter().enumerate() {
            out[i] += w / (RRF_K + (rank + 1) as f32);
        }
    }
    out
}

/// Candidate indices by descending score (NaN last); equal scores fall back to `tie`, so
/// the order never depends on the file's candidate order.
pub fn order(scores: &[f32], tie: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    // NaN sorts last and -0.0 equals 0.0, so the comparison is a total order.
    let key: Vec<f32> = scores.iter().map(|&s| if s.is_nan() { f32::NEG_INFINITY } else { s + 0.0 }).collect();
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    idx.sort_by(|&a, &b| key[b].total_cmp(&key[a]).then_with(|| tie(a, b)));
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zscore_and_constant() {
        let z = zscore(&[1.0, 2.0, 3.0]);
        assert!((z[0] + 1.2247449).abs() < 1e-5 && z[1].abs() < 1e-6 && (z[2] - 1.2247449).abs() < 1e-5);
        assert_eq!(zscore(&[5.0, 5.0]), vec![0.0, 0.0]);
    }

    #[test]
    fn order_breaks_ties_by_key() {
        let by_index = |a: usize, b: usize| b.cmp(&a); // later index first
        assert_eq!(order(&[0.5, 0.9, 0.5, f32::NAN], &by_index), vec![1, 2, 0, 3]);
    }

    #[test]
    fn rrf_hand_computed() {
        // a ranks b, c, a; b ranks a, b, c (k = 60):
        // a: 1/63 + 1/61, b: 1/61 + 1/62, c: 1/62 + 1/63 → b > a > c.
        let s1 = [0.1, 0.9, 0.5];
        let s2 = [0.9, 0.5, 0.1];
        let tie = |a: usize, b: usize| a.cmp(&b);
        let f = rrf(&[(&s1, 1.0), (&s2, 1.0)], &tie);
        assert!((f[0] - (1.0 / 63.0 + 1.0 / 61.0)).abs() < 1e-7);
        assert_eq!(order(&f, &tie), vec![1, 0, 2]);
    }
}
