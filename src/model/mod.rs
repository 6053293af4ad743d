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

pub use gcn::{Gcn, PlainGcn};

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
    #[error("model weights {0}")]
    Weights(String),
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
        Model::weights(dir, Model::manifest(dir, schema, encoder)?)
    }

    /// The manifest of the model in `dir`, refused if it was built for other features or
    /// another encoder. Reading it needs no libtorch.
    pub fn manifest(dir: &Path, schema: u32, encoder: &str) -> Result<Manifest, ModelError> {
        let mpath = dir.join("manifest.json");
        let text = std::fs::read_to_string(&mpath).map_err(|_| ModelError::Missing(dir.into()))?;
        let manifest: Manifest = serde_json::from_str(&text).map_err(|source| ModelError::Manifest { path: mpath.clone(), source })?;
        if manifest.feature_schema != schema {
            return Err(ModelError::Schema { path: dir.into(), found: manifest.feature_schema, expected: schema });
        }
        if manifest.encoder != encoder {
            return Err(ModelError::Encoder { path: dir.into(), found: manifest.encoder.clone(), expected: encoder.into() });
        }
        Ok(manifest)
    }

    fn weights(dir: &Path, manifest: Manifest) -> Result<Model, ModelError> {
        let mut m = Model::new(manifest.in_dim, manifest.hidden, manifest);
        m.vs.load(dir.join("weights.safetensors"))?;
        Ok(m)
    }
}

/// A model whose manifest is read and checked at once and whose weights load later: on a
/// thread once [`LazyModel::start`] is called, or at the first [`LazyModel::get`]. The
/// weights are libtorch's first use in most commands, and loading libtorch takes a
/// quarter of a second of CPU: a search starts it as soon as the index is open and a full
/// build before its parse, so that it runs beside that work, and a small update needs only
/// [`LazyModel::plain`].
pub struct LazyModel {
    dir: PathBuf,
    pub manifest: Manifest,
    loaded: std::sync::OnceLock<Model>,
    plain: std::sync::OnceLock<PlainGcn>,
    pending: std::sync::Mutex<Option<std::thread::JoinHandle<Result<Model, ModelError>>>>,
}

impl LazyModel {
    /// The model in `dir`, its manifest checked as [`Model::load`] checks it.
    pub fn open(dir: &Path, schema: u32, encoder: &str) -> Result<LazyModel, ModelError> {
        let manifest = Model::manifest(dir, schema, encoder)?;
        Ok(LazyModel { dir: dir.into(), manifest, loaded: Default::default(), plain: Default::default(), pending: Default::default() })
    }

    /// Starts loading the weights on a thread, unless they are loaded or loading.
    pub fn start(&self) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if self.loaded.get().is_none() && pending.is_none() {
            let (dir, manifest) = (self.dir.clone(), self.manifest.clone());
            *pending = Some(std::thread::spawn(move || Model::weights(&dir, manifest)));
        }
    }

    /// The model, waiting for a load that was started or loading it here. A failed load
    /// is returned, and the next call tries again.
    pub fn get(&self) -> Result<&Model, ModelError> {
        if let Some(m) = self.loaded.get() {
            return Ok(m);
        }
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = self.loaded.get() {
            return Ok(m);
        }
        let m = match pending.take() {
            Some(h) => h.join().unwrap_or_else(|_| Err(ModelError::Io(std::io::Error::other("the thread loading the model's weights panicked"))))?,
            None => Model::weights(&self.dir, self.manifest.clone())?,
        };
        Ok(self.loaded.get_or_init(|| m))
    }

    /// The weights for products in plain Rust, read without libtorch.
    pub fn plain(&self) -> Result<&PlainGcn, ModelError> {
        if let Some(p) = self.plain.get() {
            return Ok(p);
        }
        let p = PlainGcn::read(&self.dir.join("weights.safetensors"), self.manifest.in_dim as usize, self.manifest.hidden as usize).map_err(ModelError::Weights)?;
        Ok(self.plain.get_or_init(|| p))
    }
}

impl Drop for LazyModel {
    /// Waits for a load still running: a process that exits while a thread runs
    /// libtorch's static initialisers aborts in them.
    fn drop(&mut self) {
        let pending = self.pending.get_mut().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(h) = pending {
            let _ = h.join();
        }
    }
}
