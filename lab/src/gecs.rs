//! GenCodeSearchNet (StatCodeSearch, CoSQA): one `{"input": "<comment> [CODESPLIT] <code>",
//! "target": 1, …}` object per line. Only matching pairs (`target` 1) are read; other lines
//! are counted and skipped.
//!
//! - **Ranking** (MRR): for each pair, 99 distractor codes drawn uniformly without
//!   replacement from the other pairs of the same file (codes identical to the answer are
//!   never drawn), from one SplitMix64 stream seeded by `seed`; the 100 candidates are
//!   ranked by the method's score, ties in a seeded random order. Methods: `text`, `bm25`
//!   (BM25 indexes every code of the file).
//! - **Matching accuracy** (`text` only): every pair is a positive, and its comment with
//!   another random pair's code a negative (balanced). Pairs are split by a seeded hash
//!   into calibration and test halves; the cosine threshold that is most accurate on the
//!   calibration half is applied to the test half.

use crate::bm25::Bm25;
use crate::clarc::Method;
use crate::rank::{dot, encode_all, order};
use crate::tokenize::tokens;
use crate::EvalError;
use beryl::features::Encoder;
use beryl::model::train::Rng;
use serde::Serialize;
use std::io::{BufRead, BufReader};
use std::path::Path;

pub const SPLIT: &str = "[CODESPLIT]";
/// Candidates per query: the answer and 99 distractors.
pub const CANDIDATES: usize = 100;

#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    pub comment: String,
    pub code: String,
}

/// The matching pairs of a GenCodeSearchNet file, and how many lines were not pairs.
pub fn load(path: &Path) -> Result<(Vec<Pair>, usize), EvalError> {
    let file = std::fs::File::open(path).map_err(|e| EvalError::Io { path: path.into(), source: e })?;
    let mut pairs = Vec::new();
    let mut skipped = 0;
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| EvalError::Io { path: path.into(), source: e })?;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |msg: String| EvalError::Line { path: path.into(), line: i + 1, msg };
        let v: serde_json::Value = serde_json::from_str(&line).map_err(|e| bad(format!("not valid JSON: {e}")))?;
        let input = v.get("input").and_then(|x| x.as_str()).ok_or_else(|| bad("no string field \"input\"".into()))?;
        let target = v.get("target").and_then(|x| x.as_i64()).ok_or_else(|| bad("no integer field \"target\"".into()))?;
        if target != 1 {
            skipped += 1;
            continue;
        }
        let (comment, code) = input.split_once(SPLIT).ok_or_else(|| bad(format!("\"input\" has no {SPLIT}")))?;
        pairs.push(Pair { comment: comment.trim().to_string(), code: code.trim().to_string() });
    }
    Ok((pairs, skipped))
}

#[derive(Clone, Debug, Serialize)]
pub struct GecsScore {
    pub file: String,
    pub method: Method,
    pub pairs: usize,
    /// Candidates per query (fewer than 100 only in tiny files).
    pub candidates: usize,
    /// Mean reciprocal rank in [0, 1], as the paper reports it.
    pub mrr: f64,
    /// Matching accuracy on the test half, in % (`text` only).
    pub accuracy: Option<f64>,
    pub threshold: Option<f32>,
    /// Examples (positives + negatives) in the calibration and test halves.
    pub calibration: usize,
    pub test: usize,
}

pub struct GecsOptions<'a> {
    pub encoder: Option<&'a Encoder>,
    pub seed: u64,
    pub progress: bool,
}

/// Distinct-code distractors for every pair: `per` indices each, drawn uniformly.
fn distractors(pairs: &[Pair], per: usize, rng: &mut Rng) -> Vec<Vec<usize>> {
    let n = pairs.len();
    (0..n)
        .map(|i| {
            let eligible = pairs.iter().filter(|p| p.code != pairs[i].code).count();
            let want = per.min(eligible);
            let mut got: Vec<usize> = Vec::with_capacity(want);
            if want * 2 > eligible {
                // Small file: shuffle all eligible and take a prefix.
                let mut all: Vec<usize> = (0..n).filter(|&j| pairs[j].code != pairs[i].code).collect();
                rng.shuffle(&mut all);
                all.truncate(want);
                return all;
            }
            while got.len() < want {
                let j = rng.below(n);
                if pairs[j].code != pairs[i].code && !got.contains(&j) {
                    got.push(j);
                }
            }
            got
        })
        .collect()
}

/// Scores of candidates `cands` for the comment of pair `i`.
type Scorer<'a> = Box<dyn Fn(usize, &[usize]) -> Vec<f32> + 'a>;
/// (score, is a matching pair) examples of the accuracy protocol.
type Examples = Vec<(f32, bool)>;

/// Runs each of `methods` (`text`, `bm25`) on one file's pairs.
pub fn evaluate(name: &str, pairs: &[Pair], methods: &[Method], opts: &GecsOptions) -> Result<Vec<GecsScore>, EvalError> {
    for &m in methods {
        if !matches!(m, Method::Text | Method::Bm25) {
            return Err(EvalError::Unsupported { method: m.name(), bench: "GenCodeSearchNet", supported: "text or bm25" });
        }
    }
    let mut rng = Rng::new(opts.seed);
    let sets = distractors(pairs, CANDIDATES - 1, &mut rng);
    // Tie order, fixed per query and shared by the methods.
    let ties: Vec<Vec<usize>> = sets
        .iter()
        .map(|d| {
            let mut pos: Vec<usize> = (0..=d.len()).collect();
            rng.shuffle(&mut pos);
            pos
        })
        .collect();
    // Comment and code vectors, encoded once when `text` is asked for.
    let vectors = match methods.contains(&Method::Text) {
        true => {
            let enc = opts.encoder.ok_or(EvalError::NeedsEncoder("text"))?;
            let qs: Vec<&str> = pairs.iter().map(|p| p.comment.as_str()).collect();
            let cs: Vec<&str> = pairs.iter().map(|p| p.code.as_str()).collect();
            let q = encode_all(enc, &qs, &format!("{name}: comments"), opts.progress)?;
            let c = encode_all(enc, &cs, &format!("{name}: code"), opts.progress)?;
            Some((q, c))
        }
        false => None,
    };
    let mut out: Vec<GecsScore> = Vec::new();
    for &m in methods {
        if out.iter().any(|s| s.method == m) {
            continue;
        }
        let score: Scorer = match (m, &vectors) {
            (Method::Text, Some((q, c))) => Box::new(move |i, cands| cands.iter().map(|&j| dot(&q[i], &c[j])).collect()),
            _ => {
                let docs: Vec<Vec<String>> = pairs.iter().map(|p| tokens(&p.code)).collect();
                let idx = Bm25::new(&docs);
                Box::new(move |i, cands| {
                    let all = idx.scores(&tokens(&pairs[i].comment));
                    cands.iter().map(|&j| all[j]).collect()
                })
            }
        };
        let mut rr = 0.0;
        for (i, d) in sets.iter().enumerate() {
            let mut cands = vec![i];
            cands.extend_from_slice(d);
            let s = score(i, &cands);
            let t = &ties[i];
            let rank = order(&s, &|a, b| t[a].cmp(&t[b])).iter().position(|&k| k == 0).unwrap_or(0) + 1;
            rr += 1.0 / rank as f64;
        }
        let mut row = GecsScore {
            file: name.to_string(),
            method: m,
            pairs: pairs.len(),
            candidates: sets.iter().map(|d| d.len() + 1).max().unwrap_or(0),
            mrr: rr / pairs.len().max(1) as f64,
            accuracy: None,
            threshold: None,
            calibration: 0,
            test: 0,
        };
        if m == Method::Text {
            if let Some((q, c)) = &vectors {
                let cos = |i: usize, j: usize| dot(&q[i], &c[j]);
                let acc = matching(pairs, &cos, opts.seed);
                row.accuracy = Some(acc.accuracy);
                row.threshold = Some(acc.threshold);
                row.calibration = acc.calibration;
                row.test = acc.test;
            }
        }
        out.push(row);
    }
    Ok(out)
}

struct Matching {
    accuracy: f64,
    threshold: f32,
    calibration: usize,
    test: usize,
}

/// Balanced matching accuracy with a threshold calibrated on the other half.
fn matching(pairs: &[Pair], cos: &dyn Fn(usize, usize) -> f32, seed: u64) -> Matching {
    // A second stream, so the ranking draws above do not shift these.
    let mut rng = Rng::new(seed ^ 0x6d61_7463_6869_6e67);
    let n = pairs.len();
    let (mut cal, mut test): (Examples, Examples) = (Vec::new(), Vec::new());
    for i in 0..n {
        let half = if Rng::new(seed.wrapping_add(i as u64)).next_u64() & 1 == 0 { &mut cal } else { &mut test };
        half.push((cos(i, i), true));
        if pairs.iter().any(|p| p.code != pairs[i].code) {
            let j = loop {
                let j = rng.below(n);
                if pairs[j].code != pairs[i].code {
                    break j;
                }
            };
            half.push((cos(i, j), false));
        }
    }
    let threshold = best_threshold(&cal);
    let right = test.iter().filter(|&&(s, pos)| (s >= threshold) == pos).count();
    Matching { accuracy: 100.0 * right as f64 / test.len().max(1) as f64, threshold, calibration: cal.len(), test: test.len() }
}

/// The threshold (predict a match when score ≥ t) most accurate on `examples`: midpoints
/// between consecutive distinct scores, and one above all of them.
pub fn best_threshold(examples: &[(f32, bool)]) -> f32 {
    let mut ex = examples.to_vec();
    ex.sort_by(|a, b| a.0.total_cmp(&b.0));
    let positives = ex.iter().filter(|e| e.1).count();
    // Threshold below everything: all predicted positive.
    let mut right = positives;
    let mut best = (right, ex.first().map(|e| e.0 - 1e-3).unwrap_or(0.0));
    for k in 0..ex.len() {
        // Moving the threshold past ex[k] turns it negative.
        right = if ex[k].1 { right - 1 } else { right + 1 };
        let distinct_next = ex.get(k + 1).is_none_or(|n| n.0 > ex[k].0);
        if distinct_next && right > best.0 {
            let t = match ex.get(k + 1) {
                Some(n) => (ex[k].0 + n.0) / 2.0,
                None => ex[k].0 + 1e-3,
            };
            best = (right, t);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `i` spelled in letters (`12` → `wbc`): a unique term the tokenizer keeps whole.
    fn word(i: usize) -> String {
        let digits: String = i.to_string().bytes().map(|d| (b'a' + d - b'0') as char).collect();
        format!("w{digits}")
    }

    fn pairs(n: usize) -> Vec<Pair> {
        (0..n).map(|i| Pair { comment: format!("compute value {}", word(i)), code: format!("{} <- compute(x)", word(i)) }).collect()
    }

    #[test]
    fn reads_pairs_and_reports_bad_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.jsonl");
        std::fs::write(&p, "{\"input\": \"sum a list [CODESPLIT] sum(x)\", \"target\": 1}\n\n{\"input\": \"x [CODESPLIT] y\", \"target\": 0}\n").unwrap();
        let (got, skipped) = load(&p).unwrap();
        assert_eq!(got, vec![Pair { comment: "sum a list".into(), code: "sum(x)".into() }]);
        assert_eq!(skipped, 1);
        std::fs::write(&p, "{\"input\": \"no split\", \"target\": 1}\n").unwrap();
        assert!(matches!(load(&p), Err(EvalError::Line { line: 1, .. })));
        std::fs::write(&p, "{\"input\": \n").unwrap();
        assert!(matches!(load(&p), Err(EvalError::Line { .. })));
        assert!(matches!(load(&dir.path().join("none.jsonl")), Err(EvalError::Io { .. })));
    }

    #[test]
    fn distractors_are_distinct_and_seeded() {
        let ps = pairs(300);
        let a = distractors(&ps, 99, &mut Rng::new(1));
        let b = distractors(&ps, 99, &mut Rng::new(1));
        assert_eq!(a, b);
        for (i, d) in a.iter().enumerate() {
            assert_eq!(d.len(), 99);
            assert!(!d.contains(&i));
            let mut s = d.clone();
            s.sort();
            s.dedup();
            assert_eq!(s.len(), 99);
        }
        // A small file gives every other pair.
        assert!(distractors(&pairs(10), 99, &mut Rng::new(1)).iter().all(|d| d.len() == 9));
    }

    #[test]
    fn bm25_ranks_exact_identifier_first() {
        let ps = pairs(150);
        let opts = GecsOptions { encoder: None, seed: 7, progress: false };
        let s = evaluate("t", &ps, &[Method::Bm25], &opts).unwrap();
        // Each comment shares its unique word only with its own code.
        assert!((s[0].mrr - 1.0).abs() < 1e-12, "{}", s[0].mrr);
        assert_eq!(s[0].candidates, 100);
        assert!(evaluate("t", &ps, &[Method::Beryl], &opts).is_err());
        assert!(matches!(evaluate("t", &ps, &[Method::Text], &opts), Err(EvalError::NeedsEncoder(_))));
    }

    #[test]
    fn threshold_hand_example() {
        // Scores 0.1(−) 0.3(−) 0.5(+) 0.6(−) 0.8(+): t = 0.4 gets 4 of 5 right.
        let ex = [(0.1, false), (0.3, false), (0.5, true), (0.6, false), (0.8, true)];
        assert!((best_threshold(&ex) - 0.4).abs() < 1e-6);
        // All positive: a threshold below everything.
        assert!(best_threshold(&[(0.2, true), (0.4, true)]) < 0.2);
    }
}
