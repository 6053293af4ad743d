//! Errors of the benchmark readers and runners.

use beryl::features::FeatureError;
use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum EvalError {
    #[error("reading {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: not valid JSON: {source}")]
    Json { path: PathBuf, source: serde_json::Error },
    /// Valid JSON of the wrong shape (a missing field, a label that is not a number, ...).
    #[error("{path}: {msg}")]
    Format { path: PathBuf, msg: String },
    /// A bad line of a JSON-lines file (1-based).
    #[error("{path}:{line}: {msg}")]
    Line { path: PathBuf, line: usize, msg: String },
    #[error("method `{0}` needs the text encoder, and none was loaded")]
    NeedsEncoder(&'static str),
    #[error("method `{method}` is not available for {bench} (use {supported})")]
    Unsupported { method: &'static str, bench: &'static str, supported: &'static str },
    #[error(transparent)]
    Encoder(#[from] FeatureError),
}
