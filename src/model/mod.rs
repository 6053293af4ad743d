//! The GCN graph autoencoder: model, training, and its files on disk
//! (`weights.safetensors` + `manifest.json` in one directory).

pub mod embed;
pub mod fit;
pub mod gcn;
pub mod partition;
pub mod train;

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use tch::{nn, Device};
use thiserror::Error;

pub use gcn::Gcn;

#[derive(Debug, Error)]
pub enum ModelError {
    #[error("model directory {0}: no manifest.json (train one with `beryl train`)")]
    Missing(PathBuf),
    #[error("model manifest {path}: {source}")]
    Manifest { path: PathBuf, source: serde_json::Error },
    #[error("model {path} was trained for feature schema {found}, this beryl uses {expected}; retrain it")]
    Schema { path: PathBuf, found: u32, expected: u32 },
    #[error("model {path} was trained with encoder {found}, the installed encoder is {expected}; retrain it")]
    Encoder { path: PathBuf, found: String, expected: String },
    #[error("model weights: {0}")]
    Torch(#[from] tch::TchError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CorpusInfo {
    pub path: String,
    pub files: usize,
    pub lines: u64,
    pub nodes: usize,
    pub edges: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub feature_schema: u32,
    pub encoder: String,
    pub in_dim: i64,
    pub hidden: i64,
    pub seed: u64,
    pub lang: String,
    pub corpora: Vec<CorpusInfo>,
    pub epochs: usize,
    pub best_epoch: usize,
    pub val_auc: f64,
    pub train_edges: usize,
    pub val_edges: usize,
    pub train_seconds: f64,
}

impl Manifest {
    /// The manifest of a model not trained yet; training fills in the rest.
    pub fn untrained(encoder: &str, in_dim: i64, hidden: i64, seed: u64, lang: &str) -> Manifest {
        Manifest {
            feature_schema: embed::FEATURE_SCHEMA,
            encoder: encoder.to_string(),
            in_dim,
            hidden,
            seed,
            lang: lang.to_string(),
            corpora: Vec::new(),
            epochs: 0,
            best_epoch: 0,
            val_auc: 0.0,
            train_edges: 0,
            val_edges: 0,
            train_seconds: 0.0,
        }
    }
}

/// A trained model ready to embed graphs.
pub struct Model {
    pub vs: nn::VarStore,
    pub gcn: Gcn,
    pub manifest: Manifest,
}

impl Model {
    pub fn new(in_dim: i64, hidden: i64, manifest: Manifest) -> Model {
        let vs = nn::VarStore::new(Device::Cpu);
        let gcn = Gcn::new(&vs.root(), in_dim, hidden);
        Model { vs, gcn, manifest }
    }

    pub fn save(&self, dir: &Path) -> Result<(), ModelError> {
        std::fs::create_dir_all(dir)?;
        self.vs.save(dir.join("weights.safetensors"))?;
        let json = serde_json::to_string_pretty(&self.manifest).map_err(|source| ModelError::Manifest { path: dir.into(), source })?;
        std::fs::write(dir.join("manifest.json"), json)?;
        Ok(())
    }

    /// Loads a model, refusing one built for other features or another encoder.
    pub fn load(dir: &Path, schema: u32, encoder: &str) -> Result<Model, ModelError> {
        let mpath = dir.join("manifest.json");
        let text = std::fs::read_to_string(&mpath).map_err(|_| ModelError::Missing(dir.into()))?;
        let manifest: Manifest = serde_json::from_str(&text).map_err(|source| ModelError::Manifest { path: mpath.clone(), source })?;
        if manifest.feature_schema != schema {
            return Err(ModelError::Schema { path: dir.into(), found: manifest.feature_schema, expected: schema });
        }
        if manifest.encoder != encoder {
            return Err(ModelError::Encoder { path: dir.into(), found: manifest.encoder.clone(), expected: encoder.into() });
        }
        let mut m = Model::new(manifest.in_dim, manifest.hidden, manifest);
        m.vs.load(dir.join("weights.safetensors"))?;
        Ok(m)
    }
}
