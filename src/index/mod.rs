//! The on-disk index: node vectors and function text vectors in FAISS, files, functions,
//! nodes and edges in SQLite, the ICFG adjacency for distance queries, and a copy of the
//! model that made the vectors, so a query is embedded exactly as the corpus was.
//!
//! Layout of an index directory (default `.beryl/` in the first indexed path):
//! `current` is a symbolic link to a generation `gen-N/` holding `index.sqlite`,
//! `nodes.faiss`, `functions.faiss`, `graph.bin`, `model/` and `meta.json`. A new index is
//! written to `gen-N.tmp-PID/`, renamed to `gen-N/`, and then `current` is replaced by
//! renaming a new link over it, so readers see the old index or the new one, never a part.
//! A reader pins its generation for as long as it has it open (see [`lock`]), and every
//! file of a generation is checked before it answers: each file against the BLAKE3 sum
//! `meta.json` records (read once, then trusted while unwritten: see `verified.rs`), and
//! `meta.json` against the copy the database holds (so an edit to either is noticed). The
//! large files are mapped, not read: a query pays for the pages it touches.

/// The ICFG adjacency, kept under its old path.
pub mod graph {
    pub use crate::graph::csr::*;
}
pub mod global;
pub mod lexical;
pub mod project;
mod spill;
mod stamps;
pub mod store;
pub mod subset;
pub mod vectors;

mod build;
mod changes;
mod function_text;
pub mod icfg_file;
mod lock;
pub mod patch;
mod update;
mod verified;

pub use build::build;
pub use changes::{changes, Changes};
use build::same_encoder;
pub use function_text::{doc_prose, function_comment, function_text};

use crate::corpus::{self, WalkOptions};
use crate::features::{Encoder, FeatureError, TextEncoders, TextModel};
use crate::graph::{Icfg, Lang};
use crate::model::embed::FEATURE_SCHEMA;
use crate::model::ModelError;
use faiss::index::IndexImpl;
use graph::Csr;
use project::Projection;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Instant;
use store::Store;
use thiserror::Error;
pub use vectors::FeatureSet;

/// Version of this directory layout and database schema (19: `icfg.bin` in sections of
/// columns, without statement texts; 18: patched generations; 17: no `nodes.ids`, whose
/// ids the node index holds; 16: absolute, canonical roots and file paths; every file
/// checksummed, the database and `meta.json` included).
pub const FORMAT: u32 = 19;
/// The oldest format a search reads: 17 and 18 differ from 19 only in `icfg.bin`, which
/// only an update reads (an update of one indexes anew).
const OLDEST_READ: u32 = 17;

/// Whether this beryl searches generations of `format`.
fn readable(format: u32) -> bool {
    (OLDEST_READ..=FORMAT).contains(&format)
}
/// What a generation holds; one missing means it cannot be reused.
const FILES: [&str; 12] = [
    "icfg.bin",
    "index.sqlite",
    store::NODES,
    "shapes.bin",
    "lexical.bin",
    "nodes.faiss",
    "functions.faiss",
    "graph.bin",
    "meta.json",
    "model/weights.safetensors",
    "model/manifest.json",
    lock::READERS,
];
/// Files checked against their sum in `meta.json` before they are believed (a flipped byte
/// in a vector would otherwise go unnoticed); `nodes.pca` when present.
const CHECKSUMMED: [&str; 11] = [
    "nodes.faiss",
    "nodes.pca",
    "functions.faiss",
    "graph.bin",
    "shapes.bin",
    "lexical.bin",
    "icfg.bin",
    store::NODES,
    patch::FILE,
    patch::NODES_DELTA,
    patch::FUNCTIONS_DELTA,
];
/// Of [`CHECKSUMMED`], those a generation may lack: a projection where vectors are not
/// projected, a patch's files where the generation was written whole, and the nodes'
/// database where it is of format 18 or older (which held them in the main one).
const OPTIONAL: [&str; 5] = ["nodes.pca", patch::FILE, patch::NODES_DELTA, patch::FUNCTIONS_DELTA, store::NODES];
/// The database, read a page at a time: SQLite checks its own structure but not its
/// values, so a flipped bit in a name or path would answer wrongly. Its sum is taken after
/// it is written, so the copy of `meta.json` it holds lacks this one entry.
const DATABASE: &str = "index.sqlite";
/// Longest function text (in characters) given to the encoder for natural-language search.
const FUNCTION_TEXT_CHARS: usize = 448;
/// Longest comment prose in a function text.
const PROSE_CHARS: usize = 360;

#[derive(Debug, Error)]
pub enum IndexError {
    #[error("no index at {0} (build one with `beryl index PATH`)")]
    Missing(PathBuf),
    #[error("the index is damaged: {0}; rebuild it with `beryl index`")]
    Corrupt(String),
    #[error("the index does not match: {0}; rebuild it with `beryl index`")]
    Mismatch(String),
    #[error("another `beryl index`{} is writing {}: wait for it to end", holder.map(|p| format!(" (process {p})")).unwrap_or_default(), dir.display())]
    Busy { dir: PathBuf, holder: Option<u32> },
    #[error(
        "{} holds an index of format {found}, newer than this beryl's format {FORMAT}; `beryl index` leaves it as it \
         is, even with --force: use a newer beryl, or remove it (rm -r {}) and index again",
        dir.display(),
        dir.display()
    )]
    Newer { dir: PathBuf, found: u64 },
    #[error("{path}: {error}")]
    Io { path: PathBuf, error: std::io::Error },
    #[error("FAISS: {0}")]
    Faiss(String),
    #[error("SQLite: {0}")]
    Sqlite(String),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Feature(#[from] FeatureError),
    #[error("no C, C++, Java, Python, Rust or Go source files under {0}")]
    Empty(String),
    #[error(transparent)]
    Walk(#[from] corpus::WalkError),
    #[error(
        "{} holds {entry:?}, which beryl did not write there ({why}); beryl writes an index only into an empty \
         folder or one of its own indexes: choose another --index, or move that entry away",
        dir.display()
    )]
    Foreign { dir: PathBuf, entry: String, why: String },
}

impl IndexError {
    /// Whether the index itself is the problem (missing, damaged or built differently).
    pub fn is_index_fault(&self) -> bool {
        matches!(self, IndexError::Missing(_) | IndexError::Corrupt(_) | IndexError::Mismatch(_) | IndexError::Newer { .. })
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> IndexError + '_ {
    move |error| IndexError::Io { path: path.to_path_buf(), error }
}

/// What an index records about itself (`meta.json`, also in the database's meta table).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IndexMeta {
    pub format: u32,
    pub beryl: String,
    pub feature_schema: u32,
    /// Hash of the statement encoder (the graph model's text inputs).
    pub encoder: String,
    pub statement_model: TextModel,
    /// Hash of the encoder of `functions.faiss`.
    pub function_encoder: String,
    pub function_model: TextModel,
    pub model_sha256: String,
    pub model_lang: String,
    pub hidden: usize,
    pub features: FeatureSet,
    pub node_factory: String,
    pub function_factory: String,
    pub roots: Vec<String>,
    /// Every root is an anonymized tree ([`crate::anonymize::MARKER`]): its file names are
    /// the originals and say nothing about its code.
    #[serde(default)]
    pub anonymized: bool,
    pub files: usize,
    pub lines: u64,
    pub source_bytes: u64,
    /// Functions indexed.
    pub functions: usize,
    /// Function ids in use: updates leave the ids of removed functions empty (and the
    /// nodes of removed functions in `nodes`) so that no other id moves.
    #[serde(default)]
    pub function_slots: usize,
    pub nodes: usize,
    pub indexed_nodes: usize,
    pub edges: usize,
    pub skipped: usize,
    pub created_unix: u64,
    /// Calls resolve within the root (project) of their file. Without it an index of
    /// several roots may link calls across them, and is rebuilt rather than updated.
    #[serde(default)]
    pub linked_by_project: bool,
    /// Id of the global parts ([`global`]) the index was built with, as a shard of a larger
    /// corpus.
    #[serde(default)]
    pub global: Option<String>,
    /// sha256 of each file of [`CHECKSUMMED`] the generation holds.
    #[serde(default)]
    pub checksums: std::collections::BTreeMap<String, String>,
    /// The command line's walk rules the index was built with (`--exclude`,
    /// `--type-add`, …): what checks it for changes later walks as the build did.
    #[serde(default, skip_serializing_if = "corpus::WalkRecord::is_default")]
    pub walk: corpus::WalkRecord,
}

#[derive(Clone, Debug)]
pub struct IndexOptions {
    pub walk: WalkOptions,
    pub features: FeatureSet,
    /// FAISS factory string for the node index; `None` picks by size.
    pub factory: Option<String>,
    /// Largest node count still searched exactly (flat index).
    pub flat_max: usize,
    /// Rebuild even when no file changed.
    pub force: bool,
    /// Global parts to build with, as one shard of a larger corpus ([`global`]).
    pub global: Option<PathBuf>,
    /// How much a full build handles at once.
    pub batches: Batches,
    /// The peak resident memory a build aims to stay under, in bytes (`--memory`); the
    /// batches are sized for it by [`Batches::for_memory`].
    pub memory: u64,
    /// Indexed nodes from which an update writes a patch over the files in place rather
    /// than writing them again ([`patch`]).
    /// Each update also rebuilds the whole adjacency and compares the rows it wrote with
    /// it (and the statement texts it read from the database with `icfg.bin`'s), failing as
    /// a damaged index would where they differ: slow, for tests and suspect updates.
    pub check_update: bool,
    pub patch_from: usize,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            walk: WalkOptions::default(),
            features: FeatureSet::default(),
            factory: None,
            flat_max: 50_000,
            force: false,
            global: None,
            batches: Batches::default(),
            memory: DEFAULT_MEMORY,
            patch_from: PATCH_FROM,
            check_update: false,
        }
    }
}

/// Indexed nodes from which updates patch: below, writing every file again takes well
/// under a second, and a generation written whole is what searches read fastest.
pub const PATCH_FROM: usize = 500_000;

/// The default of `--memory`: 3 GiB.
pub const DEFAULT_MEMORY: u64 = 3 << 30;

/// How much a full build handles at once: what it holds besides the corpus's graphs grows
/// with these, not with the corpus. Any sizes give the same index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batches {
    /// Nodes through the GCN: about 12 KB each at the peak (input rows, two layers, output).
    pub nodes: usize,
    /// Functions through the function encoder and into BM25F: the encoder sorts a batch by
    /// length, so large batches pad little.
    pub functions: usize,
    /// Spilled rows read back at once, to be projected or added to FAISS: about 8 KB each
    /// (a search row, its projection, libtorch's copy).
    pub rows: usize,
}

impl Default for Batches {
    fn default() -> Self {
        Batches::for_memory(DEFAULT_MEMORY)
    }
}

impl Batches {
    /// Batches for a build meant to stay under `bytes`: the GCN's batch takes about an
    /// eighth of it, a block of rows a sixth, and neither more than at the default budget,
    /// past which larger batches were no faster.
    pub fn for_memory(bytes: u64) -> Batches {
        let share = |part: u64, each: u64, min: usize, max: usize| ((bytes / part / each) as usize).clamp(min, max);
        Batches {
            nodes: share(8, 12 << 10, 1024, 32_768),
            functions: ((4096 * bytes / DEFAULT_MEMORY) as usize).clamp(256, 4096),
            rows: share(6, 8 << 10, 4096, 65_536),
        }
    }
}

/// Where the work of one `index` run went.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BuildReport {
    pub up_to_date: bool,
    /// The index in place was updated for the changed files only.
    pub updated: bool,
    /// Why an index in place was not updated but built anew.
    pub full_reason: Option<String>,
    /// Nodes whose vectors were computed (all, in a full build).
    pub recomputed_nodes: usize,
    /// Functions parsed and encoded (all, in a full build).
    pub recomputed_functions: usize,
    pub files: usize,
    pub unchanged_files: usize,
    pub changed_files: usize,
    pub new_files: usize,
    pub removed_files: usize,
    /// Files read to compare with the index in place; the others' size, times and inode
    /// were as when last hashed.
    pub read_files: usize,
    pub lines: u64,
    pub nodes: usize,
    pub functions: usize,
    pub texts_encoded: u64,
    pub texts_from_cache: u64,
    pub parse_seconds: f64,
    pub embed_seconds: f64,
    pub write_seconds: f64,
    pub total_seconds: f64,
    pub index_bytes: u64,
    pub source_bytes: u64,
    /// Files not indexed, by reason (`too_large`, `binary`, `too_deep`, …).
    pub skipped: std::collections::BTreeMap<String, usize>,
    /// What each exclusion rule (`--exclude`, `.beryl.toml`, `.berylignore`) left out.
    pub excluded: Vec<corpus::Excluded>,
    /// Files found of extensions no language is read for: extension → count.
    pub unread: std::collections::BTreeMap<String, usize>,
}

/// Progress of a build: a stage name, units done and the total.
pub type Progress<'a> = &'a mut dyn FnMut(&str, usize, usize);

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// sha256 of a model's weights file: the identity an index records.
pub fn model_sha256(dir: &Path) -> Result<String, IndexError> {
    let p = dir.join("weights.safetensors");
    Ok(sha256_hex(&std::fs::read(&p).map_err(io(&p))?))
}

/// The walk rules the index at `dir` was built with (none when there is none): an update
/// that names no rules of its own (the MCP `index` tool) keeps them.
pub fn recorded_walk(dir: &Path) -> WalkOptions {
    current_generation(dir)
        .and_then(|g| read_meta(&g).ok())
        .and_then(|m| WalkOptions::from_record(&m.walk).ok())
        .unwrap_or_default()
}

/// The generation directory `current` points at, if any: a `gen-N` folder of `dir`
/// itself, never a link elsewhere.
pub fn current_generation(dir: &Path) -> Option<PathBuf> {
    let target = std::fs::read_link(dir.join("current")).ok()?;
    let name = target.to_str().filter(|t| lock::is_generation_name(t))?;
    let gen = dir.join(name);
    std::fs::symlink_metadata(&gen).is_ok_and(|m| m.is_dir()).then_some(gen)
}

/// The checksum a generation records of a file's bytes (BLAKE3, hex).
pub fn checksum(bytes: &[u8]) -> String {
    let mut h = blake3::Hasher::new();
    // Over a few MB the tree hash spreads across cores.
    if bytes.len() > 1 << 22 {
        h.update_rayon(bytes);
    } else {
        h.update(bytes);
    }
    h.finalize().to_hex().to_string()
}

/// [`checksum`] of a file, read a few megabytes at a time: a generation's files can be far
/// larger than what a build or an open may hold (a map would count them in its memory).
fn checksum_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut h = blake3::Hasher::new();
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 8 << 20];
    loop {
        let mut got = 0;
        // Whole buffers where the file has them, so the tree hash spreads across cores.
        while got < buf.len() {
            match file.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if got == 0 {
            break;
        }
        if got > 1 << 22 {
            h.update_rayon(&buf[..got]);
        } else {
            h.update(&buf[..got]);
        }
    }
    Ok(h.finalize().to_hex().to_string())
}

pub use crate::text::name_words;

/// The format the `meta.json` of generation `gen` states, read alone: a newer format's
/// other fields may not parse. `None` without a readable one.
fn format_of(gen: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(gen.join("meta.json")).ok()?;
    serde_json::from_str::<serde_json::Value>(&text).ok()?.get("format")?.as_u64()
}

/// Whether every file of `gen` is the one `meta` records: the checksummed files, the
/// database, and `meta.json` itself. A file checked before and not written since is not
/// read again (see `verified`).
fn checksums_hold(gen: &Path, meta: &IndexMeta) -> bool {
    let mut v = verified::Verified::load(gen);
    let whole = CHECKSUMMED.iter().all(|n| (OPTIONAL.contains(n) && !meta.checksums.contains_key(*n)) || check(&mut v, n, meta).is_ok())
        && open_store(gen, meta, &mut v).is_ok();
    v.save();
    whole
}

/// Checks `name` against the sum `meta` records, unless `v` knows it whole.
fn check(v: &mut verified::Verified, name: &str, meta: &IndexMeta) -> Result<(), IndexError> {
    let want = meta.checksums.get(name).ok_or_else(|| IndexError::Corrupt(format!("meta.json records no checksum of {name}")))?;
    v.check(name, want).map_err(IndexError::Corrupt)
}

/// `gen/name`, checked as [`check`] does, then mapped.
fn map_checked(gen: &Path, name: &str, meta: &IndexMeta, v: &mut verified::Verified) -> Result<crate::mapped::Bytes, IndexError> {
    check(v, name, meta)?;
    let p = gen.join(name);
    crate::mapped::Bytes::map(&p).map_err(|e| IndexError::Corrupt(format!("{}: {e}", p.display())))
}

/// The database of `gen`, once its bytes are the ones `meta` records and the `meta.json`
/// it holds is `meta` (less the database's own sum).
fn open_store(gen: &Path, meta: &IndexMeta, v: &mut verified::Verified) -> Result<Store, IndexError> {
    let p = gen.join(DATABASE);
    check(v, DATABASE, meta)?;
    // The nodes' database goes with the main one from format 19 on (an older generation
    // has neither the file nor its sum).
    if meta.format >= 19 || meta.checksums.contains_key(store::NODES) {
        check(v, store::NODES, meta)?;
    }
    let store = Store::open(&p)?;
    let held = store.meta("meta").map_err(|e| IndexError::Corrupt(format!("{}: {e}", p.display())))?;
    let held: Option<serde_json::Value> = held.and_then(|h| serde_json::from_str(&h).ok());
    let mut ours = serde_json::to_value(meta).map_err(|e| IndexError::Corrupt(e.to_string()))?;
    if let Some(c) = ours.get_mut("checksums").and_then(|c| c.as_object_mut()) {
        c.remove(DATABASE);
    }
    if held.as_ref() != Some(&ours) {
        return Err(IndexError::Corrupt(format!("{}/meta.json differs from the copy its database holds", gen.display())));
    }
    Ok(store)
}

/// Checks every file of the current generation at `dir` as opening and `up to date` do
/// (the checksummed files, the database, `meta.json` against its copy), reading every
/// byte even of files `verified.json` knows whole: `beryl verify`.
pub fn verify(dir: &Path) -> Result<(), IndexError> {
    let (gen, _pin) = lock::pin_current(dir)?;
    let meta = read_meta(&gen)?;
    // Every byte, whatever `verified.json` says; the record is brought up to what is found.
    let mut v = verified::Verified::every_byte(&gen);
    let found = CHECKSUMMED
        .iter()
        .filter(|n| !OPTIONAL.contains(*n) || meta.checksums.contains_key(**n))
        .try_for_each(|n| check(&mut v, n, &meta))
        .and_then(|()| open_store(&gen, &meta, &mut v).map(drop));
    v.save();
    found
}

/// Why `meta`'s roots cannot be trusted to resolve files, if they cannot: every root is
/// recorded absolute and canonical when the index is built.
fn roots_unusable(meta: &IndexMeta) -> Option<String> {
    let bad = meta.roots.iter().find(|r| {
        let p = Path::new(r.as_str());
        !p.is_absolute() || p.components().any(|c| matches!(c, std::path::Component::ParentDir | std::path::Component::CurDir))
    })?;
    Some(format!("its root {bad:?} is not an absolute path (an index of an older beryl); rebuild it with `beryl index`"))
}

/// The bytes of `gen/name`, if they are the ones `meta` records.
fn read_checked(gen: &Path, name: &str, meta: &IndexMeta) -> Result<Vec<u8>, IndexError> {
    let p = gen.join(name);
    let bytes = std::fs::read(&p).map_err(|e| IndexError::Corrupt(format!("{}: {e}", p.display())))?;
    let want = meta.checksums.get(name).ok_or_else(|| IndexError::Corrupt(format!("meta.json records no checksum of {name}")))?;
    if checksum(&bytes) != *want {
        return Err(IndexError::Corrupt(format!("{} differs from the checksum meta.json records", p.display())));
    }
    Ok(bytes)
}

fn read_meta(gen: &Path) -> Result<IndexMeta, IndexError> {
    let p = gen.join("meta.json");
    let text = std::fs::read_to_string(&p).map_err(|e| IndexError::Corrupt(format!("{}: {e}", p.display())))?;
    serde_json::from_str(&text).map_err(|e| IndexError::Corrupt(format!("{}: {e}", p.display())))
}

/// The vectors a patched generation holds beside its base's ([`patch`]).
struct Delta {
    nodes: IndexImpl,
    functions: IndexImpl,
    /// Ids a search of the base's indexes may return: those the patch did not remove.
    nodes_alive: Vec<u8>,
    functions_alive: Vec<u8>,
    /// How many ids each base index holds that the patch removed, at most.
    nodes_dead: usize,
    functions_dead: usize,
    base_functions: usize,
}

/// Removed ids a search of a base index passes over by asking for that many more hits and
/// dropping them, rather than by testing every code it scans against a selector (which
/// doubled the time of a node search); past this, the selector is cheaper.
const DEAD_BY_WIDENING: usize = 1024;

/// `a` with the bits of `b` cleared where `b` has none (ids past `b`'s end are cleared).
fn both(a: Option<&[u8]>, b: &[u8]) -> Vec<u8> {
    match a {
        None => b.to_vec(),
        Some(a) => b.iter().enumerate().map(|(i, &x)| x & a.get(i).copied().unwrap_or(0)).collect(),
    }
}

/// A search of a base index and of the vectors a patch added, merged as one index's.
fn search_both(
    base: &mut IndexImpl,
    delta: Option<(&mut IndexImpl, &[u8], usize)>,
    rows: &[f32],
    dim: usize,
    k: usize,
    allowed: Option<&[u8]>,
) -> Result<Vec<Vec<(u64, f32)>>, IndexError> {
    let Some((added, alive, dead)) = delta else { return vectors::search_in(base, rows, dim, k, allowed) };
    let mut hits = if allowed.is_none() && dead <= DEAD_BY_WIDENING {
        let mut hits = vectors::search_in(base, rows, dim, k + dead, None)?;
        for h in &mut hits {
            h.retain(|&(id, _)| alive.get(id as usize / 8).is_some_and(|b| b >> (id % 8) & 1 == 1));
            h.truncate(k);
        }
        hits
    } else {
        vectors::search_in(base, rows, dim, k, Some(&both(allowed, alive)))?
    };
    let more = vectors::search_in(added, rows, dim, k, allowed)?;
    for (h, m) in hits.iter_mut().zip(more) {
        h.extend(m);
        vectors::canonical(h);
        h.truncate(k);
    }
    Ok(hits)
}

/// An opened index, ready for queries.
pub struct Index {
    pub dir: PathBuf,
    pub meta: IndexMeta,
    pub store: Store,
    nodes: IndexImpl,
    /// Applied to search vectors before `nodes` sees them, when the index was projected.
    projection: Option<Projection>,
    pub functions: IndexImpl,
    /// What an update added over the vector indexes, when the generation is patched.
    delta: Option<Delta>,
    pub graph: Csr,
    /// The graph model; its weights load at the first query that embeds, or on a thread
    /// once a caller that will query calls `model.start()`.
    pub model: crate::model::LazyModel,
    /// Every function's nesting tree and what its statements compute.
    pub shapes: crate::shape::store::Shapes,
    /// BM25F over function names, comments and bodies.
    pub lexical: lexical::Lexical,
    /// Unit profile vectors of every function, made on first use.
    profiles: Option<Vec<[f32; 18]>>,
    /// Which function slots are live, made with the profiles.
    live: Vec<u8>,
    /// What queries are confined to (`--path`, `--lang`); `None`: the whole index.
    subset: Option<subset::Subset>,
    /// The shared lock that keeps `dir` from being swept while this is open.
    _pin: Option<std::fs::File>,
}

impl Index {
    /// Opens the current generation at `dir`, checking that it was built by this format and
    /// feature schema, and (when given) with the model at `model_dir`. Its text encoders are
    /// checked when a search first asks for them (`statement_encoder`, `function_encoder`).
    pub fn open(dir: &Path, model_dir: Option<&Path>, nprobe: usize) -> Result<Index, IndexError> {
        if !dir.exists() {
            return Err(IndexError::Missing(dir.to_path_buf()));
        }
        // Pinned before anything is read: a build may replace `current` meanwhile, but
        // the generation read stays whole until this Index is dropped.
        let (gen, pin) = lock::pin_current(dir)?;
        if let Some(found) = format_of(&gen).filter(|&f| f > FORMAT as u64) {
            return Err(IndexError::Newer { dir: dir.to_path_buf(), found });
        }
        let meta = read_meta(&gen)?;
        if !readable(meta.format) {
            return Err(IndexError::Mismatch(format!("index format {}, this beryl reads {OLDEST_READ} to {FORMAT}", meta.format)));
        }
        if let Some(why) = roots_unusable(&meta) {
            return Err(IndexError::Mismatch(why));
        }
        if pin.is_none() {
            return Err(IndexError::Corrupt(format!("{} is missing", gen.join(lock::READERS).display())));
        }
        // Whole before anything in it is believed: each file checked against its sum, or
        // known checked and not written since (`verified`), then mapped, not read.
        let t0 = Instant::now();
        let mut v = verified::Verified::load(&gen);
        let store = open_store(&gen, &meta, &mut v)?;
        if meta.feature_schema != FEATURE_SCHEMA {
            return Err(IndexError::Mismatch(format!(
                "feature schema {}, this beryl uses {FEATURE_SCHEMA}",
                meta.feature_schema
            )));
        }
        let own_model = gen.join("model");
        let sha = model_sha256(&own_model).map_err(|e| IndexError::Corrupt(e.to_string()))?;
        if sha != meta.model_sha256 {
            return Err(IndexError::Corrupt("the model copy in the index differs from the one recorded".into()));
        }
        if let Some(m) = model_dir {
            let want = model_sha256(m)?;
            if want != meta.model_sha256 {
                return Err(IndexError::Mismatch(format!(
                    "built with model {} (sha256 {}), not {}",
                    meta.model_lang,
                    &meta.model_sha256[..16],
                    m.display()
                )));
            }
        }
        let model = crate::model::LazyModel::open(&own_model, FEATURE_SCHEMA, &meta.encoder).map_err(|e| match e {
            ModelError::Encoder { found, .. } => IndexError::Mismatch(format!(
                "its statement vectors come from text encoder {}, its model was trained on {}",
                &meta.encoder[..meta.encoder.len().min(16)],
                &found[..found.len().min(16)]
            )),
            e => IndexError::Corrupt(e.to_string()),
        })?;
        let lap = |what: &str| log::debug!("open {what}: {:.1} ms", t0.elapsed().as_secs_f64() * 1000.0);
        lap("database and model");
        // FAISS reads its files itself, mapping what it can, once they are known whole.
        check(&mut v, "nodes.faiss", &meta)?;
        let nodes = vectors::read_mapped(&gen.join("nodes.faiss"), nprobe)?;
        lap("node vectors");
        let projection = if meta.checksums.contains_key("nodes.pca") {
            let b = read_checked(&gen, "nodes.pca", &meta)?;
            Some(Projection::from_bytes(&b).ok_or_else(|| IndexError::Corrupt(format!("{}/nodes.pca is not a projection", gen.display())))?)
        } else {
            None
        };
        check(&mut v, "functions.faiss", &meta)?;
        let functions = vectors::read_mapped(&gen.join("functions.faiss"), vectors::function_probes(&meta.function_factory, nprobe))?;
        let patch = match meta.checksums.contains_key(patch::FILE) {
            true => Some(patch::Patch::from_bytes(&read_checked(&gen, patch::FILE, &meta)?).map_err(IndexError::Corrupt)?),
            false => None,
        };
        use faiss::Index as _;
        let delta = match &patch {
            Some(p) => {
                check(&mut v, patch::NODES_DELTA, &meta)?;
                check(&mut v, patch::FUNCTIONS_DELTA, &meta)?;
                let d = Delta {
                    nodes: vectors::read(&gen.join(patch::NODES_DELTA), 1)?,
                    functions: vectors::read(&gen.join(patch::FUNCTIONS_DELTA), 1)?,
                    nodes_alive: patch::alive_bits(p.base_nodes as usize, &p.dead_nodes),
                    functions_alive: patch::alive_bits(p.base_functions as usize, &p.dead_functions),
                    nodes_dead: p.dead_nodes.len(),
                    functions_dead: p.dead_functions.len(),
                    base_functions: p.base_functions as usize,
                };
                if nodes.ntotal() != p.base_node_vectors
                    || functions.ntotal() != p.base_function_vectors
                    || d.nodes.d() != nodes.d()
                    || d.functions.d() != functions.d()
                {
                    return Err(IndexError::Corrupt("the patch is not over these vector indexes".into()));
                }
                Some(d)
            }
            None => None,
        };
        lap("vectors");
        let mut graph = Csr::mapped(map_checked(&gen, "graph.bin", &meta, &mut v)?).ok_or_else(|| IndexError::Corrupt(format!("{}/graph.bin is not a graph", gen.display())))?;
        if let Some(p) = &patch {
            graph = graph.with_overlay(&p.graph).ok_or_else(|| IndexError::Corrupt(format!("{}/{}: its graph rows are damaged", gen.display(), patch::FILE)))?;
        }
        lap("graph");
        let (node_vectors, function_vectors) = match &delta {
            // A patch's counts are checked where they are read: what the base holds
            // less what the patch removed is not known without reading the base's ids.
            Some(_) => (meta.indexed_nodes, meta.functions),
            None => (nodes.ntotal() as usize, functions.ntotal() as usize),
        };
        if graph.node_count() != meta.nodes
            || meta.indexed_nodes > meta.nodes
            || node_vectors != meta.indexed_nodes
            || function_vectors != meta.functions
            || meta.functions > meta.function_slots
            || projection.as_ref().map_or(nodes.d() as usize, |p| p.d_in) != meta.features.dim(meta.hidden)
            || projection.as_ref().is_some_and(|p| p.d_out != nodes.d() as usize)
        {
            return Err(IndexError::Corrupt("graph, vectors and metadata disagree in size".into()));
        }
        let mut shapes = crate::shape::store::Shapes::mapped(map_checked(&gen, "shapes.bin", &meta, &mut v)?).map_err(IndexError::Corrupt)?;
        let mut lexical = lexical::Lexical::from_bytes(map_checked(&gen, "lexical.bin", &meta, &mut v)?).map_err(IndexError::Corrupt)?;
        if let Some(p) = &patch {
            shapes = shapes.with_patch(&p.shapes).map_err(IndexError::Corrupt)?;
            lexical = lexical.with_patch(&p.lexical).map_err(IndexError::Corrupt)?;
        }
        if shapes.len() != meta.function_slots || lexical.len() != meta.function_slots {
            return Err(IndexError::Corrupt("shapes, lexical index and functions disagree in size".into()));
        }
        lap("shapes and lexical");
        v.save();
        Ok(Index { dir: gen, meta, store, nodes, projection, functions, delta, graph, model, shapes, lexical, profiles: None, live: Vec::new(), subset: None, _pin: pin })
    }

    /// The graph model's weights, loaded here unless a thread already is loading them.
    /// Weights that do not load are a damaged index, as a damaged manifest is at open.
    pub fn graph_model(&self) -> Result<&crate::model::Model, IndexError> {
        self.model.get().map_err(|e| IndexError::Corrupt(e.to_string()))
    }

    /// Encoders of the models this index was built with, loaded on first use, no cache.
    pub fn encoders(&self, threads: Option<usize>) -> TextEncoders {
        TextEncoders::new(self.meta.statement_model, self.meta.function_model, threads, crate::features::CacheAt::None)
    }

    /// The statement encoder from `encs`, if it is the one this index was built with.
    pub fn statement_encoder<'e>(&self, encs: &'e TextEncoders) -> Result<&'e Encoder, IndexError> {
        same_encoder("statement", &self.meta.encoder, self.meta.statement_model, encs.statements, encs.statements()?)
    }

    /// The function encoder from `encs`, if it is the one this index was built with.
    pub fn function_encoder<'e>(&self, encs: &'e TextEncoders) -> Result<&'e Encoder, IndexError> {
        same_encoder("function", &self.meta.function_encoder, self.meta.function_model, encs.functions, encs.functions()?)
    }

    /// The `k` nearest indexed nodes (ICFG node ids) of each search vector, inside the
    /// subset queries are confined to.
    pub fn search_nodes(&mut self, rows: &[f32], k: usize) -> Result<Vec<Vec<(u64, f32)>>, IndexError> {
        let allowed = self.subset.as_ref().map(|s| &s.nodes[..]);
        let delta = self.delta.as_mut().map(|d| (&mut d.nodes, &d.nodes_alive[..], d.nodes_dead));
        match &self.projection {
            Some(p) => search_both(&mut self.nodes, delta, &p.apply(rows)?, p.d_out, k, allowed),
            None => search_both(&mut self.nodes, delta, rows, self.meta.features.dim(self.meta.hidden), k, allowed),
        }
    }

    /// As [`Index::search_nodes`], for rows already projected as the index projects them
    /// (a coordinator projects a query once for every shard).
    pub fn search_projected_nodes(&mut self, rows: &[f32], k: usize) -> Result<Vec<Vec<(u64, f32)>>, IndexError> {
        let dim = self.projection.as_ref().map_or(self.meta.features.dim(self.meta.hidden), |p| p.d_out);
        let delta = self.delta.as_mut().map(|d| (&mut d.nodes, &d.nodes_alive[..], d.nodes_dead));
        search_both(&mut self.nodes, delta, rows, dim, k, self.subset.as_ref().map(|s| &s.nodes[..]))
    }

    /// The `k` functions whose text vectors are nearest to each row, inside the subset.
    pub fn search_functions(&mut self, rows: &[f32], k: usize) -> Result<Vec<Vec<(u64, f32)>>, IndexError> {
        let delta = self.delta.as_mut().map(|d| (&mut d.functions, &d.functions_alive[..], d.functions_dead));
        search_both(&mut self.functions, delta, rows, crate::features::DIM, k, self.subset.as_ref().map(|s| &s.functions[..]))
    }

    /// Confines later queries to `subset` (`None`: the whole index).
    pub fn confine(&mut self, subset: Option<subset::Subset>) {
        self.subset = subset;
    }

    /// The subset queries are confined to, if any.
    pub fn subset(&self) -> Option<&subset::Subset> {
        self.subset.as_ref()
    }

    /// Whether function `f` may be returned (always, unless confined).
    pub fn in_scope(&self, f: u32) -> bool {
        self.subset.as_ref().is_none_or(|s| subset::get(&s.functions, f as usize))
    }

    /// Every function's [`crate::shape::Profile`] vector, unit length (all zero when
    /// empty); empty until [`Index::load_profiles`] ran.
    pub fn profiles(&self) -> &[[f32; 18]] {
        self.profiles.as_deref().unwrap_or(&[])
    }

    /// Reads the profile vectors once (off `shapes.bin`'s profile table), and notes which
    /// slots hold a live function, so that a scan of every function need not read the
    /// shapes again.
    pub fn load_profiles(&mut self) {
        if self.profiles.is_some() {
            return;
        }
        let (rows, live) = self.shapes.profile_rows();
        self.live = live;
        self.profiles = Some(rows);
    }

    /// Bit `f` set: slot `f` holds a live function whose shape reads (empty until
    /// [`Index::load_profiles`] ran).
    pub fn live_functions(&self) -> &[u8] {
        &self.live
    }

    /// The stored text vector of function `f` (for scoring candidates no search returned).
    pub fn function_vector(&self, f: u32) -> Option<Vec<f32>> {
        use faiss::Index as _;
        let mut v = vec![0f32; crate::features::DIM];
        if let Some(d) = &self.delta {
            if d.functions.reconstruct(faiss::Idx::new(f as u64), &mut v).is_ok() {
                return Some(v);
            }
            if f as usize >= d.base_functions || d.functions_alive.get(f as usize / 8).is_none_or(|b| b >> (f % 8) & 1 == 0) {
                return None;
            }
        }
        self.functions.reconstruct(faiss::Idx::new(f as u64), &mut v).ok()?;
        Some(v)
    }

    /// Inner products of `q` with the stored text vectors of functions `fs` (those it holds).
    pub fn function_scores(&mut self, q: &[f32], fs: &[u32]) -> std::collections::HashMap<u32, f32> {
        let dot = |v: &[f32]| v.iter().zip(q).map(|(a, b)| a * b).sum::<f32>();
        let mut out = std::collections::HashMap::new();
        let mut base: Vec<u32> = fs.to_vec();
        if let Some(d) = &self.delta {
            use faiss::Index as _;
            // What the patch added is read from its own index; the rest from the base's,
            // where the patch did not remove it.
            let mut v = vec![0f32; crate::features::DIM];
            base.clear();
            for &f in fs {
                if d.functions.reconstruct(faiss::Idx::new(f as u64), &mut v).is_ok() {
                    out.insert(f, dot(&v));
                } else if (f as usize) < d.base_functions && d.functions_alive.get(f as usize / 8).is_some_and(|b| b >> (f % 8) & 1 == 1) {
                    base.push(f);
                }
            }
        }
        let ids: Vec<u64> = base.iter().map(|&f| u64::from(f)).collect();
        match vectors::scores_of(&mut self.functions, q, &ids) {
            Ok(Some(hits)) => {
                out.extend(hits.into_iter().map(|(f, s)| (f as u32, s)));
                return out;
            }
            Ok(None) => {}
            Err(e) => log::warn!("function vectors not scored by the index ({e}): reading them one by one"),
        }
        out.extend(base.iter().filter_map(|&f| Some((f, dot(&self.function_vector(f)?)))));
        out
    }

    /// The walk its build made (its recorded rules and its roots' `.beryl.toml`).
    pub fn walk_options(&self) -> Result<WalkOptions, IndexError> {
        let roots: Vec<PathBuf> = self.meta.roots.iter().map(PathBuf::from).collect();
        Ok(WalkOptions::from_record(&self.meta.walk)?.with_project_config(&roots)?)
    }

    pub fn lang_of_file(&self, file: u32) -> Option<Lang> {
        Lang::named(&self.store.file(file).ok()?.lang)
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;

    #[test]
    fn batches_shrink_with_the_budget_and_stop_at_the_default() {
        assert_eq!(Batches::default(), Batches { nodes: 32_768, functions: 4096, rows: 65_536 });
        assert_eq!(Batches::for_memory(64 << 30), Batches::default());
        let small = Batches::for_memory(512 << 20);
        assert!(small.nodes < 8_000 && small.functions < 1_000 && small.rows < 12_000, "{small:?}");
        assert_eq!(Batches::for_memory(64 << 20), Batches { nodes: 1024, functions: 256, rows: 4096 });
    }
}
