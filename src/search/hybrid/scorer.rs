//! The learned scorer of hybrid search: a linear pairwise ranker (RankNet with a linear
//! score) over a candidate's [`Signals`], standardized per signal. Pairs of a hit and a
//! miss of the same query train it (the lab's `fit_ranker`); the weights ship in
//! `models/ranker/`, and a weights file must name the signals this build computes, in
//! [`Signals::NAMES`] order.

use super::signals::{Signals, N_SIGNALS};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

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

impl Ranker {
    /// `models/ranker/weights.json` of the source checkout, or `$BERYL_RANKER`.
    pub fn default_path() -> PathBuf {
        std::env::var_os("BERYL_RANKER")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| crate::repo_path("models/ranker/weights.json"))
    }

    pub fn load(path: &Path) -> Result<Ranker, RankerError> {
        let bad = |msg: String| RankerError::Bad { path: path.to_path_buf(), msg };
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let r: Ranker = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        if r.features != Signals::NAMES {
            return Err(bad(format!("fitted on signals {:?}, this beryl computes {:?}; refit it", r.features, Signals::NAMES)));
        }
        if r.mean.len() != N_SIGNALS || r.scale.len() != N_SIGNALS || r.weights.len() != N_SIGNALS {
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
    pub fn score(&self, s: &Signals) -> f32 {
        self.score_array(&s.to_array())
    }

    /// The same over signals in [`Signals::NAMES`] order.
    pub fn score_array(&self, x: &[f32; N_SIGNALS]) -> f32 {
        let mut s = self.bias;
        for i in 0..N_SIGNALS {
            s += self.weights[i] * (x[i] - self.mean[i]) / self.scale[i];
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_only_weights_for_these_signals() {
        let r = Ranker { features: Signals::NAMES.iter().map(|s| s.to_string()).collect(), mean: vec![0.0; N_SIGNALS], scale: vec![1.0; N_SIGNALS], weights: vec![0.5; N_SIGNALS], bias: 0.0 };
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w.json");
        r.save(&p).unwrap();
        assert_eq!(Ranker::load(&p).unwrap(), r);
        let mut other = r.clone();
        other.features.swap(0, 1);
        other.save(&p).unwrap();
        assert!(Ranker::load(&p).unwrap_err().to_string().contains("refit"));
        std::fs::write(&p, "{\"features\": []}").unwrap();
        assert!(Ranker::load(&p).is_err());
        let s = Signals { lex: 1.0, ..Signals::default() };
        assert_eq!(r.score(&s), 0.5);
    }

    #[test]
    fn the_shipped_weights_name_these_signals() {
        Ranker::load(&Ranker::default_path()).expect("models/ranker/weights.json matches Signals::NAMES");
    }
}
