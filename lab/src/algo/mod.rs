//! The algorithm-location benchmark (Beryllium, Tables 1–5): pseudocode queries against
//! real projects, scored by the rank of the first fragment that lies on a known
//! implementation (`bench/algo/truth.json`, rules in `docs/design/benchmarks.md`).
//!
//! Every method yields a ranked list of fragments, each a set of line spans in files, and
//! every list is judged by the same hit rule ([`is_hit`]): the embedding methods return
//! `search::pseudo` fragments from indexes built with different feature switches, the
//! function-level baselines (BM25, name search) return whole functions.

mod baselines;
mod copies;
mod hits;
mod run;
mod settings;
mod summary;
mod truth;

pub use baselines::*;
pub use copies::*;
pub use hits::*;
pub use run::*;
pub use settings::*;
pub use summary::*;
pub use truth::*;
pub use crate::located::{LocSpan, MAX_RANK};

use beryl::corpus::{self, WalkOptions};
use crate::pool::{self, Pool, PoolCand, Variant};
use crate::{bm25::Bm25, tokenize};
use beryl::features::TextEncoders;
use beryl::index::{self, FeatureSet, Index, IndexError, IndexOptions};
use beryl::pcode::Classifier;
use beryl::search::hybrid::{self, HybridOptions, Query};
use beryl::search::hybrid::Ranker;
use beryl::text::{split, Split};
use beryl::search::{self, SearchError, SearchOptions};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;
use thiserror::Error;


#[derive(Debug, Error)]
pub enum AlgoError {
    // Causes are part of the message and not `source` fields, so a printed error chain
    // does not repeat them.
    #[error("reading {path}: {error}")]
    Io { path: PathBuf, error: std::io::Error },
    #[error("{path}: not a ground-truth file: {error}")]
    Json { path: PathBuf, error: serde_json::Error },
    #[error("{path}: {msg}")]
    Truth { path: PathBuf, msg: String },
    #[error("project {project}: no corpus at {path} (fetch it with `beryl corpus fetch {package}`)")]
    MissingCorpus { project: String, package: String, path: PathBuf },
    #[error("unknown project {name:?}; the ground truth lists {known}")]
    UnknownProject { name: String, known: String },
    #[error("no query for {algorithm}: {path} does not exist")]
    MissingQuery { algorithm: String, path: PathBuf },
    #[error("method `{0}` needs the text encoder and a model")]
    NeedsEncoder(&'static str),
    #[error("nothing to evaluate: no ground-truth entries in the selected projects")]
    NoEntries,
    #[error("index {dir}: {error}")]
    Index { dir: PathBuf, error: IndexError },
    #[error("reading functions from {path}: {msg}")]
    Functions { path: PathBuf, msg: String },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> AlgoError + '_ {
    move |error| AlgoError::Io { path: path.to_path_buf(), error }
}

fn json(path: &Path) -> impl FnOnce(serde_json::Error) -> AlgoError + '_ {
    move |error| AlgoError::Json { path: path.to_path_buf(), error }
}

