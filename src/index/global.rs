//! The global parts of a corpus indexed as shards: what every shard must share for its
//! scores to be comparable with every other shard's, and equal to one index's.
//!
//! - the projection of node vectors and the FAISS quantizers (scalar ranges, IVF
//!   centroids, PQ codebooks), trained once on a sample of every shard's files
//!   ([`fit`]); each shard adds its vectors to a copy of the trained, empty indexes;
//! - the BM25F statistics (documents, field lengths, document frequencies), summed over
//!   the shards once they are built ([`reduce`]);
//! - the totals a query's parameters depend on (nodes indexed: the per-query-node `k`).
//!
//! With these, a shard's vector and lexical scores are those a single index over the
//! whole corpus built with the same global parts gives: flat layouts compare the same codes,
//! and IVF probes the same lists, since the lists are the coarse quantizer's and not the
//! data's.

use super::lexical::LexStats;
use super::project::Projection;
use super::{io, sha256_hex, vectors, IndexError, IndexOptions, Progress};
use crate::corpus;
use crate::features::TextEncoders;
use crate::model::embed::{embed_with_progress, FEATURE_SCHEMA};
use crate::model::Model;
use faiss::index::IndexImpl;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const GLOBAL_FORMAT: u32 = 1;
const META: &str = "global.json";
const NODES: &str = "nodes.trained.faiss";
const FUNCTIONS: &str = "functions.trained.faiss";
const PCA: &str = "nodes.pca";
const LEXICAL: &str = "lexical.stats";
const SHARDS: &str = "shards.json";

/// What [`fit`] trained, and on what.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GlobalMeta {
    pub format: u32,
    /// sha256 over the trained files: shards built with other parts never mix.
    pub id: String,
    pub node_factory: String,
    pub function_factory: String,
    pub projection: bool,
    pub features: super::FeatureSet,
    pub hidden: usize,
    pub encoder: String,
    pub function_encoder: String,
    pub statement_model: crate::features::TextModel,
    pub function_model: crate::features::TextModel,
    pub model_sha256: String,
    pub corpus_files: usize,
    pub corpus_bytes: u64,
    pub sample_files: usize,
    pub sample_bytes: u64,
    /// Nodes and functions of the whole corpus, estimated from the sample's share of its bytes.
    pub estimated_nodes: usize,
    pub estimated_functions: usize,
}

/// One shard as [`reduce`] found it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ShardTotals {
    /// The shard's directory, canonical.
    pub dir: String,
    /// sha256 of its own BM25F statistics: a shard built or updated since the reduce
    /// has other ones.
    #[serde(default)]
    pub statistics: String,
    pub indexed_nodes: usize,
    pub functions: usize,
    pub lines: u64,
}

/// The shards of a corpus and their sums, written by [`reduce`].
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Totals {
    pub shards: Vec<ShardTotals>,
    pub indexed_nodes: usize,
    pub functions: usize,
    pub lines: u64,
    /// sha256 of `lexical.stats`.
    pub lexical: String,
}

/// The global parts, opened.
pub struct Global {
    pub dir: PathBuf,
    pub meta: GlobalMeta,
    pub projection: Option<Projection>,
}

impl Global {
    pub fn open(dir: &Path) -> Result<Global, IndexError> {
        let p = dir.join(META);
        if !p.is_file() {
            return Err(IndexError::Missing(dir.to_path_buf()));
        }
        let text = std::fs::read_to_string(&p).map_err(io(&p))?;
        let meta: GlobalMeta = serde_json::from_str(&text).map_err(|e| IndexError::Corrupt(format!("{}: {e}", p.display())))?;
        if meta.format != GLOBAL_FORMAT {
            return Err(IndexError::Mismatch(format!("{} has global format {}, this beryl reads {GLOBAL_FORMAT}", dir.display(), meta.format)));
        }
        if id_of(dir)? != meta.id {
            return Err(IndexError::Corrupt(format!("the trained parts in {} differ from the ones global.json records", dir.display())));
        }
        let projection = if meta.projection {
            let b = std::fs::read(dir.join(PCA)).map_err(io(&dir.join(PCA)))?;
            Some(Projection::from_bytes(&b).ok_or_else(|| IndexError::Corrupt(format!("{} is not a projection", dir.join(PCA).display())))?)
        } else {
            None
        };
        Ok(Global { dir: dir.to_path_buf(), meta, projection })
    }

    /// The graph model the shards were built with.
    pub fn model_dir(&self) -> PathBuf {
        self.dir.join("model")
    }

    /// The trained, empty node index.
    pub fn node_index(&self) -> Result<IndexImpl, IndexError> {
        vectors::read(&self.dir.join(NODES), 1)
    }

    /// The trained, empty function index.
    pub fn function_index(&self) -> Result<IndexImpl, IndexError> {
        vectors::read(&self.dir.join(FUNCTIONS), 1)
    }

    /// The corpus's BM25F statistics, once [`reduce`] ran, and the sha256 of their file.
    pub fn lexical(&self) -> Result<(LexStats, String), IndexError> {
        let p = self.dir.join(LEXICAL);
        let b = match std::fs::read(&p) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(IndexError::Missing(p)),
            Err(e) => return Err(IndexError::Io { path: p, error: e }),
        };
        let stats = LexStats::from_bytes(&b).map_err(|e| IndexError::Corrupt(format!("{}: {e}", p.display())))?;
        Ok((stats, sha256_hex(&b)))
    }

    /// The shards and their sums, once [`reduce`] ran.
    pub fn totals(&self) -> Result<Totals, IndexError> {
        let p = self.dir.join(SHARDS);
        let text = match std::fs::read_to_string(&p) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(IndexError::Missing(p)),
            Err(e) => return Err(IndexError::Io { path: p, error: e }),
        };
        serde_json::from_str(&text).map_err(|e| IndexError::Corrupt(format!("{}: {e}", p.display())))
    }

    /// Whether an index was built with other encoders, model or features than these parts.
    pub fn mismatch(&self, opts: &IndexOptions, hidden: usize, enc: &str, fenc: &str, model_sha: &str) -> Option<String> {
        let m = &self.meta;
        if m.features != opts.features || m.hidden != hidden {
            return Some("the global parts were trained with another feature set".into());
        }
        if m.encoder != enc || m.function_encoder != fenc || m.model_sha256 != model_sha {
            return Some("the global parts were trained with another model or text encoder".into());
        }
        if opts.factory.as_ref().is_some_and(|f| *f != m.node_factory) {
            return Some(format!("the global parts lay nodes out as {}, not {}", m.node_factory, opts.factory.as_deref().unwrap_or("")));
        }
        None
    }
}

/// sha256 over the trained files and the graph model, in a fixed order.
fn id_of(dir: &Path) -> Result<String, IndexError> {
    let mut all = Vec::new();
    for name in [NODES, FUNCTIONS, PCA, "model/weights.safetensors"] {
        let p = dir.join(name);
        match std::fs::read(&p) {
            Ok(b) => all.extend_from_slice(sha256_hex(&b).as_bytes()),
            Err(_) if name == PCA => {}
            Err(e) => return Err(IndexError::Corrupt(format!("{}: {e}", p.display()))),
        }
    }
    Ok(sha256_hex(&all))
}

/// Files spread over the whole corpus (every project) holding about `want` bytes: a file is
/// taken whenever the bytes taken so far fall behind `want`'s share of the bytes passed.
fn sample(files: &[PathBuf], want: u64) -> (Vec<PathBuf>, u64, u64) {
    let sizes: Vec<u64> = files.iter().map(|f| std::fs::metadata(f).map_or(0, |m| m.len())).collect();
    let total: u64 = sizes.iter().sum();
    let ratio = want as f64 / total.max(1) as f64;
    let (mut out, mut seen, mut taken) = (Vec::new(), 0u64, 0u64);
    for (f, &s) in files.iter().zip(&sizes) {
        if ratio >= 1.0 || taken as f64 <= ratio * seen as f64 {
            out.push(f.clone());
            taken += s;
        }
        seen += s;
    }
    (out, total, taken)
}

/// Trains the global parts on a sample of about `sample_bytes` of the files under `roots`
/// (all of them, where they are fewer) and writes them to `out`.
pub fn fit(roots: &[PathBuf], out: &Path, opts: &IndexOptions, model_dir: &Path, encs: &TextEncoders, sample_bytes: u64, progress: Progress) -> Result<GlobalMeta, IndexError> {
    let enc = encs.statements()?;
    let fenc = encs.functions()?;
    let model = Model::load(model_dir, FEATURE_SCHEMA, enc.hash())?;
    let model_sha = super::model_sha256(model_dir)?;
    let (files, _) = corpus::walk::discover(roots, &opts.walk);
    if files.is_empty() {
        return Err(IndexError::Empty(roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ")));
    }
    let (picked, corpus_bytes, taken) = sample(&files, sample_bytes);
    progress("parse", 0, 0);
    let c = corpus::load_found(roots, picked.clone(), Vec::new(), &opts.walk, std::time::Instant::now(), &mut |_, _| {});
    let icfg = c.icfg;
    if icfg.files.is_empty() {
        return Err(IndexError::Empty("the sample (every file was skipped)".into()));
    }
    let hidden = model.gcn.hidden as usize;
    let total_files = icfg.files.len();
    let rows = embed_with_progress(&model, &icfg, enc, &mut |d, t| progress("embed", d.min(t), t))?;
    let width = hidden + crate::model::embed::IN_DIM;
    let dim = opts.features.dim(hidden);
    let mut search_rows = Vec::new();
    let mut n_rows = 0usize;
    for n in icfg.graph.node_indices() {
        if vectors::searchable(icfg.graph[n].kind) {
            n_rows += 1;
            opts.features.search_vector(&rows[n.index() * width..(n.index() + 1) * width], hidden, &mut search_rows);
        }
    }
    drop(rows);
    let sources = super::build::read_sources(&icfg, &|_| true);
    let ftexts: Vec<String> = (0..icfg.functions.len() as u32)
        .into_par_iter()
        .map(|f| super::function_text(&icfg, f, &sources[icfg.functions[f as usize].meta.file as usize]))
        .collect();
    let fvecs = super::build::function_vectors(fenc, &ftexts, progress)?;
    let scale = corpus_bytes as f64 / taken.max(1) as f64;
    let estimated_nodes = (n_rows as f64 * scale).round() as usize;
    let estimated_functions = (ftexts.len() as f64 * scale).round() as usize;

    progress("train", 0, 1);
    let node_factory = vectors::factory_for(estimated_nodes, opts.flat_max, opts.factory.as_deref());
    let function_factory = vectors::function_factory(estimated_functions);
    let exact = opts.factory.as_deref() == Some("Flat");
    let projection = (vectors::projects(estimated_nodes) && vectors::projects(n_rows) && !exact).then(|| Projection::fit(&search_rows, dim, vectors::PCA_DIM)).transpose()?;
    std::fs::create_dir_all(out).map_err(io(out))?;
    let tmp = out.join(format!(".tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(io(&tmp))?;
    let nodes = match &projection {
        Some(p) => {
            p.write(&tmp.join(PCA))?;
            vectors::trained_with_ids(&node_factory, p.d_out, &p.apply(&search_rows)?)?
        }
        None => vectors::trained_with_ids(&node_factory, dim, &search_rows)?,
    };
    vectors::write(&nodes, &tmp.join(NODES))?;
    let functions = vectors::trained_with_ids(&function_factory, crate::features::DIM, &fvecs)?;
    vectors::write(&functions, &tmp.join(FUNCTIONS))?;
    // The graph model too: the coordinator embeds queries with it and holds no shard.
    std::fs::create_dir_all(tmp.join("model")).map_err(io(&tmp))?;
    for f in ["weights.safetensors", "manifest.json"] {
        std::fs::copy(model_dir.join(f), tmp.join("model").join(f)).map_err(io(&model_dir.join(f)))?;
    }
    let meta = GlobalMeta {
        format: GLOBAL_FORMAT,
        id: id_of(&tmp)?,
        node_factory,
        function_factory,
        projection: projection.is_some(),
        features: opts.features,
        hidden,
        encoder: enc.hash().to_string(),
        function_encoder: fenc.hash().to_string(),
        statement_model: encs.statements,
        function_model: encs.functions,
        model_sha256: model_sha,
        corpus_files: files.len(),
        corpus_bytes,
        sample_files: total_files,
        sample_bytes: taken,
        estimated_nodes,
        estimated_functions,
    };
    let text = serde_json::to_string_pretty(&meta).map_err(|e| IndexError::Corrupt(e.to_string()))?;
    std::fs::write(tmp.join(META), text).map_err(io(&tmp))?;
    let _ = std::fs::remove_dir_all(out.join("model"));
    std::fs::rename(tmp.join("model"), out.join("model")).map_err(io(out))?;
    // The parts replace older ones file by file, global.json last: a reader sees the old
    // id until the new files are all in place, and then a checksum that holds.
    for name in [PCA, NODES, FUNCTIONS, META] {
        let from = tmp.join(name);
        if from.exists() {
            std::fs::rename(&from, out.join(name)).map_err(io(&from))?;
        } else {
            let _ = std::fs::remove_file(out.join(name));
        }
    }
    for stale in [LEXICAL, SHARDS] {
        let _ = std::fs::remove_file(out.join(stale));
    }
    let _ = std::fs::remove_dir_all(&tmp);
    progress("train", 1, 1);
    Ok(meta)
}

/// Sums the BM25F statistics and totals of the shards at `shards` (each built with the
/// parts at `global`) and writes them beside the parts.
pub fn reduce(global: &Global, shards: &[PathBuf]) -> Result<Totals, IndexError> {
    let mut stats = LexStats::default();
    let mut totals = Totals::default();
    for dir in shards {
        let ix = super::Index::open(dir, None, 1)?;
        if ix.meta.global.as_deref() != Some(global.meta.id.as_str()) {
            return Err(IndexError::Mismatch(format!("{} was not built with the global parts at {}", dir.display(), global.dir.display())));
        }
        let own = ix.lexical.stats();
        stats.add(&own);
        let canonical = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
        totals.shards.push(ShardTotals { dir: canonical.display().to_string(), statistics: sha256_hex(&own.to_bytes()), indexed_nodes: ix.meta.indexed_nodes, functions: ix.meta.functions, lines: ix.meta.lines });
    }
    totals.indexed_nodes = totals.shards.iter().map(|s| s.indexed_nodes).sum();
    totals.functions = totals.shards.iter().map(|s| s.functions).sum();
    totals.lines = totals.shards.iter().map(|s| s.lines).sum();
    let bytes = stats.to_bytes();
    totals.lexical = sha256_hex(&bytes);
    let write = |name: &str, b: &[u8]| -> Result<(), IndexError> {
        let (tmp, to) = (global.dir.join(format!("{name}.tmp-{}", std::process::id())), global.dir.join(name));
        std::fs::write(&tmp, b).map_err(io(&tmp))?;
        std::fs::rename(&tmp, &to).map_err(io(&to))
    };
    write(LEXICAL, &bytes)?;
    write(SHARDS, serde_json::to_string_pretty(&totals).map_err(|e| IndexError::Corrupt(e.to_string()))?.as_bytes())?;
    Ok(totals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_spreads_over_the_files_and_takes_all_when_small() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<PathBuf> = (0..10)
            .map(|i| {
                let p = dir.path().join(format!("f{i}.c"));
                std::fs::write(&p, vec![b'x'; 100]).unwrap();
                p
            })
            .collect();
        let (all, total, taken) = sample(&files, 10_000);
        assert_eq!((all.len(), total, taken), (10, 1000, 1000));
        let (some, _, taken) = sample(&files, 300);
        assert_eq!(some.len(), 3, "{some:?}");
        assert_eq!(taken, 300);
        assert_eq!(some[0], files[0]);
        assert!(some.windows(2).all(|w| w[0] < w[1]));
    }
}
