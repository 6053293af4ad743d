//! `beryl train`: corpora → subgraphs with initial features → trained autoencoder on disk.

use super::embed::{train_graphs, IN_DIM, PART_NODES};
use super::partition::{partition, Part};
use super::train::{train, EpochStats, TrainConfig, TrainGraph};
use super::{CorpusInfo, Manifest, Model, ModelError};
use crate::corpus::{load, WalkOptions};
use crate::features::{Encoder, FeatureError};
use std::path::PathBuf;
use std::time::Instant;
use thiserror::Error;

/// Width of both GCN layers (paper §4.2).
pub const HIDDEN: i64 = 512;

#[derive(Debug, Error)]
pub enum FitError {
    #[error("{0}")]
    Features(#[from] FeatureError),
    #[error("{0}")]
    Model(#[from] ModelError),
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
    #[error("corpus {0} has no functions to train on")]
    Empty(PathBuf),
}

pub struct FitConfig {
    pub corpora: Vec<PathBuf>,
    pub walk: WalkOptions,
    /// Language label recorded in the manifest (`c`, `cpp`, `java`, `mixed`).
    pub lang: String,
    /// At most this many nodes from each corpus: whole subgraphs, spread evenly over it.
    pub max_nodes: usize,
    pub train: TrainConfig,
}

/// Evenly spaced subgraphs holding at most `budget` nodes together.
fn sample(parts: Vec<Part>, budget: usize) -> Vec<Part> {
    let total: usize = parts.iter().map(|p| p.nodes.len()).sum();
    if total <= budget {
        return parts;
    }
    let keep = (parts.len() * budget / total.max(1)).max(1);
    let step = parts.len() as f64 / keep as f64;
    let mut out = Vec::new();
    let mut used = 0;
    let mut parts: Vec<Option<Part>> = parts.into_iter().map(Some).collect();
    for i in 0..keep {
        let idx = (i as f64 * step) as usize;
        if let Some(p) = parts.get_mut(idx).and_then(Option::take) {
            if used + p.nodes.len() > budget && !out.is_empty() {
                break;
            }
            used += p.nodes.len();
            out.push(p);
        }
    }
    out
}

/// Loads each corpus, encodes the sampled subgraphs (reporting `(done, total)` parts to
/// `on_part`), trains, and returns the model with its manifest filled in.
pub fn fit(
    cfg: &FitConfig,
    enc: &Encoder,
    mut on_part: impl FnMut(usize, usize),
    on_epoch: impl FnMut(&EpochStats),
) -> Result<Model, FitError> {
    let t0 = Instant::now();
    let mut graphs: Vec<TrainGraph> = Vec::new();
    let mut infos = Vec::new();
    for root in &cfg.corpora {
        let c = load(std::slice::from_ref(root), &cfg.walk);
        if c.icfg.functions.is_empty() {
            return Err(FitError::Empty(root.clone()));
        }
        let parts = sample(partition(&c.icfg, PART_NODES), cfg.max_nodes);
        let n = parts.len();
        let mut gs = Vec::with_capacity(n);
        for (i, p) in parts.iter().enumerate() {
            gs.extend(train_graphs(&c.icfg, std::slice::from_ref(p), enc)?);
            on_part(i + 1, n);
        }
        let s = c.stats();
        infos.push(CorpusInfo {
            path: root.display().to_string(),
            files: s.files,
            lines: s.lines,
            nodes: parts.iter().map(|p| p.nodes.len()).sum(),
            edges: parts.iter().map(|p| p.edges.len()).sum(),
        });
        graphs.extend(gs);
    }
    let mut manifest = Manifest::untrained(enc.hash(), IN_DIM as i64, HIDDEN, cfg.train.seed, &cfg.lang);
    manifest.corpora = infos;
    tch::manual_seed(cfg.train.seed as i64);
    let mut model = Model::new(IN_DIM as i64, HIDDEN, manifest);
    let xs: Vec<&tch::Tensor> = graphs.iter().map(|g| &g.x).collect();
    model.gcn.fit_standardization(&xs);
    let report = train(&mut model.vs, &model.gcn, &graphs, &cfg.train, on_epoch)?;
    let m = &mut model.manifest;
    m.epochs = report.epochs.len();
    m.best_epoch = report.best_epoch;
    m.val_auc = report.best_val_auc;
    m.train_edges = report.train_edges;
    m.val_edges = report.val_edges;
    m.train_seconds = t0.elapsed().as_secs_f64();
    Ok(model)
}
