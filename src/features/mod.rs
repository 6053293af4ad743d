//! Node features that do not depend on the graph: math-operator counts ([`math`]) and the
//! text vector of a node's code or English ([`encoder`], all-MiniLM-L6-v2 on libtorch).
//! The graph model (`src/model`) concatenates them with a node-kind one-hot.

pub(crate) mod bert;
mod cache;
pub mod encoder;
pub mod math;
pub mod static_vec;
pub mod wordpiece;
pub mod words;
pub mod text_models;

pub use encoder::{Encoder, EncoderIdentity, EncoderOptions, EncoderStats, Precision, TextVec, DIM};
pub use text_models::{CacheAt, TextEncoders, TextModel};
pub use math::{count_pcode, count_source, count_tree, Family, OpCounts};

use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum FeatureError {
    #[error("encoder file {path} is missing; run scripts/setup.sh to install all-MiniLM-L6-v2 (or point BERYL_ENCODER_DIR / --encoder-dir at a folder with model.safetensors, tokenizer.json, config.json)")]
    Missing { path: PathBuf },
    // Not a `source`: the message names the cause, so a chain of contexts prints it once.
    #[error("reading {path}: {error}")]
    Io { path: PathBuf, error: std::io::Error },
    #[error("encoder config {path}: {msg}")]
    Config { path: PathBuf, msg: String },
    #[error("encoder weights {path}: {msg}")]
    Weights { path: PathBuf, msg: String },
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
}
