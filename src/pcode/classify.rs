//! Math vs natural-language classification by label propagation (paper §3.3, after
//! Zhu & Ghahramani 2002).
//!
//! **Points.** Labeled points are lines mined from real code ([`super::mine`]): code
//! lines are *math*, comments *natural language*. The unlabeled points are the
//! instructions of the pseudocode being converted. The model stores only the hashed
//! feature vectors of a seeded sample of mined lines, never their text.
//!
//! **Features** ([`super::features`]): word unigrams, token-shape n-grams, character
//! 3-grams and a few dense statistics. Shapes and operator statistics carry what code
//! and pseudocode math share (`v [ v ] = v + 0`) though their names differ; words carry
//! what comments and textbook prose share (function words, verbs).
//!
//! **Graph.** Every unlabeled point is joined to its `k` nearest neighbours among all
//! points (labeled and unlabeled) by cosine similarity, with RBF weights
//! `exp(-(1 - cos) / sigma)`; unlabeled–unlabeled edges are made symmetric. A kNN graph
//! keeps the propagation local (a dense kernel over thousands of mined lines would let
//! the many far, weakly similar points outvote the few close ones), and the unlabeled
//! edges let the lines of one algorithm pull each other towards the side they share.
//!
//! **Propagation.** Labeled rows are clamped; each unlabeled row repeatedly becomes the
//! weighted mean of its neighbours' label distributions until the largest change is
//! below `tol`. Under clamping, edges between two labeled points never matter, so they
//! are neither stored nor computed.

use super::error::PcodeError;
use super::features::{dot, featurize, to_dense, FeatureParams, Sparse};
use super::mine::{mine_dir, Mined, SourceLang};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LineClass {
    Math,
    Text,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PropagationParams {
    pub k: usize,
    pub sigma: f32,
    pub max_iter: usize,
    pub tol: f32,
}

impl Default for PropagationParams {
    fn default() -> Self {
        PropagationParams {
            k: 12,
            sigma: 0.1,
            max_iter: 1000,
            tol: 1e-6,
        }
    }
}

/// Everything the stored model needs besides its points.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ModelParams {
    pub features: FeatureParams,
    pub propagation: PropagationParams,
}

pub struct Classifier {
    pub params: ModelParams,
    points: Vec<Sparse>,
    labels: Vec<LineClass>,
}

impl Classifier {
    pub fn new(params: ModelParams, points: Vec<Sparse>, labels: Vec<LineClass>) -> Self {
        Classifier {
            params,
            points,
            labels,
        }
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// Labels `items` (instructions of one pseudocode text) by propagating the stored
    /// labels over the graph of stored points plus `items`.
    pub fn classify(&self, items: &[&str]) -> Vec<LineClass> {
        let fp = &self.params.features;
        let pp = &self.params.propagation;
        let dim = 1usize << fp.bits.clamp(8, 16);
        let feats: Vec<Sparse> = items.iter().map(|s| featurize(s, fp)).collect();
        let u = feats.len();
        let l = self.points.len();
        // Neighbour lists of unlabeled points; indices < l are labeled, ≥ l unlabeled.
        let mut nbrs: Vec<Vec<(usize, f32)>> = Vec::with_capacity(u);
        for (a, fa) in feats.iter().enumerate() {
            let dense = to_dense(fa, dim);
            let mut sims: Vec<(usize, f32)> = self
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| (i, dot(p, &dense)))
                .collect();
            sims.extend(
                feats
                    .iter()
                    .enumerate()
                    .filter(|&(b, _)| b != a)
                    .map(|(b, fb)| (l + b, dot(fb, &dense))),
            );
            let k = pp.k.min(sims.len());
            if k > 0 {
                sims.select_nth_unstable_by(k - 1, |x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
                sims.truncate(k);
            }
            let row = sims
                .into_iter()
                .filter(|&(_, s)| s > 0.0)
                .map(|(i, s)| (i, (-(1.0 - s) / pp.sigma.max(1e-6)).exp()))
                .collect();
            nbrs.push(row);
        }
        // Symmetric unlabeled–unlabeled edges.
        let mut sym = nbrs.clone();
        for (a, row) in nbrs.iter().enumerate() {
            for &(j, w) in row {
                if j >= l && !sym[j - l].iter().any(|&(x, _)| x == l + a) {
                    sym[j - l].push((l + a, w));
                }
            }
        }
        let math_of = |c: LineClass| if c == LineClass::Math { 1.0f32 } else { 0.0 };
        // f[a] = probability of math for unlabeled point a; 0.5 = undecided.
        let mut f = vec![0.5f32; u];
        for _ in 0..pp.max_iter {
            let mut change = 0.0f32;
            for a in 0..u {
                let (mut num, mut den) = (0.0f32, 0.0f32);
                for &(j, w) in &sym[a] {
                    let y = if j < l {
                        math_of(self.labels[j])
                    } else {
                        f[j - l]
                    };
                    num += w * y;
                    den += w;
                }
                if den > 0.0 {
                    let v = num / den;
                    change = change.max((v - f[a]).abs());
                    f[a] = v;
                }
            }
            if change < pp.tol {
                break;
            }
        }
        f.iter()
            .zip(items)
            .map(|(&p, s)| {
                if p > 0.5 || (p == 0.5 && has_operator(s)) {
                    LineClass::Math
                } else {
                    LineClass::Text
                }
            })
            .collect()
    }

    /// Writes the model: a small binary file of labeled feature vectors.
    pub fn save(&self, path: &Path) -> Result<(), PcodeError> {
        let mut buf: Vec<u8> = Vec::new();
        buf.extend_from_slice(MAGIC);
        let params =
            serde_json::to_vec(&self.params).map_err(|e| model_err(path, e.to_string()))?;
        buf.extend_from_slice(&(params.len() as u32).to_le_bytes());
        buf.extend_from_slice(&params);
        buf.extend_from_slice(&(self.points.len() as u32).to_le_bytes());
        for (p, &c) in self.points.iter().zip(&self.labels) {
            buf.push(u8::from(c == LineClass::Math));
            buf.extend_from_slice(&(p.len() as u16).to_le_bytes());
            for &(i, v) in p {
                buf.extend_from_slice(&i.to_le_bytes());
                buf.extend_from_slice(&v.to_le_bytes());
            }
        }
        std::fs::write(path, buf).map_err(|error| PcodeError::Io {
            path: path.to_path_buf(),
            error,
        })
    }

    pub fn load(path: &Path) -> Result<Self, PcodeError> {
        let bytes = std::fs::read(path).map_err(|error| PcodeError::Io {
            path: path.to_path_buf(),
            error,
        })?;
        let mut r = Reader {
            b: &bytes,
            at: 0,
            path,
        };
        if r.take(MAGIC.len())? != MAGIC {
            return Err(model_err(path, "not a p-code classifier model".into()));
        }
        let plen = r.u32()? as usize;
        let params: ModelParams =
            serde_json::from_slice(r.take(plen)?).map_err(|e| model_err(path, e.to_string()))?;
        let n = r.u32()? as usize;
        let mut points = Vec::with_capacity(n.min(1 << 20));
        let mut labels = Vec::with_capacity(n.min(1 << 20));
        for _ in 0..n {
            let label = if r.take(1)?[0] == 1 {
                LineClass::Math
            } else {
                LineClass::Text
            };
            let nnz = u16::from_le_bytes(r.array()?) as usize;
            let mut p = Vec::with_capacity(nnz);
            for _ in 0..nnz {
                let i = u16::from_le_bytes(r.array()?);
                let v = f32::from_le_bytes(r.array()?);
                p.push((i, v));
            }
            points.push(p);
            labels.push(label);
        }
        Ok(Classifier {
            params,
            points,
            labels,
        })
    }

    /// The model shipped in `models/`, found relative to the crate root.
    /// `$BERYL_PCODE_MODEL`, else the model shipped in this checkout's `models/`.
    pub fn default_path() -> PathBuf {
        if let Some(p) = std::env::var_os("BERYL_PCODE_MODEL") {
            return PathBuf::from(p);
        }
        crate::repo_path("models/pcode-classifier.bin")
    }
}

const MAGIC: &[u8] = b"BERYL-PCLF-1\n";

fn model_err(path: &Path, reason: String) -> PcodeError {
    PcodeError::Model {
        path: path.to_path_buf(),
        reason,
    }
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
    path: &'a Path,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], PcodeError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or_else(|| model_err(self.path, "truncated file".into()))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], PcodeError> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    fn u32(&mut self) -> Result<u32, PcodeError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
}

fn has_operator(s: &str) -> bool {
    super::features::ascii_ops(s).contains(['=', '+', '-', '*', '/', '<', '>', '['])
}

/// Inputs of `pcode train-classifier`.
#[derive(Clone, Debug)]
pub struct TrainConfig {
    pub c_corpus: PathBuf,
    pub java_corpus: PathBuf,
    /// Sampled lines per language and label.
    pub per_class: usize,
    /// Further mined lines per language and label, disjoint from the sample, used only
    /// to report a held-out accuracy in the manifest.
    pub holdout: usize,
    pub seed: u64,
    pub params: ModelParams,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            c_corpus: PathBuf::new(),
            java_corpus: PathBuf::new(),
            per_class: 900,
            holdout: 150,
            seed: 20261121,
            params: ModelParams {
                features: FeatureParams::default(),
                propagation: PropagationParams::default(),
            },
        }
    }
}

/// The manifest written next to the model.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TrainReport {
    pub model_file: String,
    pub corpora: Vec<CorpusCount>,
    pub points: usize,
    pub seed: u64,
    pub per_class: usize,
    pub params: ModelParams,
    /// Accuracy on held-out mined lines (labels from the mining rule, not from people).
    pub holdout_accuracy: f64,
    pub holdout_points: usize,
    pub method: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CorpusCount {
    pub lang: SourceLang,
    /// The corpus directory's name, e.g. `name-1.2+ds` (a Debian source package).
    pub name: String,
    pub files: usize,
    pub mined_code_lines: usize,
    pub mined_comment_lines: usize,
    pub sampled_code_lines: usize,
    pub sampled_comment_lines: usize,
}

/// Mines both corpora, samples with a fixed seed, and builds the classifier.
pub fn train(cfg: &TrainConfig) -> Result<(Classifier, TrainReport), PcodeError> {
    let mut points = Vec::new();
    let mut labels = Vec::new();
    let mut held: Vec<(String, LineClass)> = Vec::new();
    let mut corpora = Vec::new();
    let mut rng = SplitMix(cfg.seed);
    for (lang, dir) in [
        (SourceLang::C, &cfg.c_corpus),
        (SourceLang::Java, &cfg.java_corpus),
    ] {
        let Mined {
            files,
            comments,
            code,
        } = mine_dir(dir, lang)?;
        let code = dedup(code);
        let comments = dedup(comments);
        let (code_s, code_h) = sample(&code, cfg.per_class, cfg.holdout, &mut rng);
        let (com_s, com_h) = sample(&comments, cfg.per_class, cfg.holdout, &mut rng);
        corpora.push(CorpusCount {
            lang,
            name: dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            files,
            mined_code_lines: code.len(),
            mined_comment_lines: comments.len(),
            sampled_code_lines: code_s.len(),
            sampled_comment_lines: com_s.len(),
        });
        for (lines, class) in [(code_s, LineClass::Math), (com_s, LineClass::Text)] {
            for s in lines {
                points.push(featurize(&s, &cfg.params.features));
                labels.push(class);
            }
        }
        held.extend(code_h.into_iter().map(|s| (s, LineClass::Math)));
        held.extend(com_h.into_iter().map(|s| (s, LineClass::Text)));
    }
    let clf = Classifier::new(cfg.params.clone(), points, labels);
    // Held-out lines are classified one at a time, like a single-line query.
    let correct = held
        .iter()
        .filter(|(s, c)| clf.classify(&[s.as_str()])[0] == *c)
        .count();
    let report = TrainReport {
        model_file: String::new(),
        corpora,
        points: clf.len(),
        seed: cfg.seed,
        per_class: cfg.per_class,
        params: cfg.params.clone(),
        holdout_accuracy: if held.is_empty() { 0.0 } else { correct as f64 / held.len() as f64 },
        holdout_points: held.len(),
        method: "label propagation (Zhu & Ghahramani 2002) with hard clamping over a kNN graph, RBF weights on cosine distance; labeled = code lines (math) and comments (natural language) mined from the corpora".into(),
    };
    Ok((clf, report))
}

fn dedup(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v.dedup();
    v
}

/// A seeded shuffle split into a sample of `n` and a disjoint hold-out of `h`.
fn sample(lines: &[String], n: usize, h: usize, rng: &mut SplitMix) -> (Vec<String>, Vec<String>) {
    let mut idx: Vec<usize> = (0..lines.len()).collect();
    for i in (1..idx.len()).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        idx.swap(i, j);
    }
    let take = n.min(idx.len());
    let s = idx[..take].iter().map(|&i| lines[i].clone()).collect();
    let hold = idx[take..]
        .iter()
        .take(h)
        .map(|&i| lines[i].clone())
        .collect();
    (s, hold)
}

/// SplitMix64: tiny, seedable and stable across platforms and crate versions.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}
