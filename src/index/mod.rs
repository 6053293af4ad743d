//! The on-disk index: node vectors and function text vectors in FAISS, files, functions,
//! nodes and edges in SQLite, the ICFG adjacency for distance queries, and a copy of the
//! model that made the vectors, so a query is embedded exactly as the corpus was.
//!
//! Layout of an index directory (default `.beryl/` in the first indexed path):
//! `current` is a symbolic link to a generation `gen-N/` holding `index.sqlite`,
//! `nodes.faiss`, `functions.faiss`, `graph.bin`, `model/` and `meta.json`. A new index is
//! written to `gen-N.tmp-PID/`, renamed to `gen-N/`, and then `current` is replaced by
//! renaming a new link over it, so readers see the old index or the new one, never a part.

pub mod graph;
pub mod lexical;
pub mod project;
pub mod store;
pub mod vectors;

use crate::corpus::{self, WalkOptions};
use crate::features::{Encoder, FeatureError, TextEncoders, TextModel};
use crate::graph::{Icfg, Lang};
use crate::model::embed::{embed_with_progress, FEATURE_SCHEMA};
use crate::model::{Model, ModelError};
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

/// Version of this directory layout and database schema (11: string literals are a
/// lexical field of their own).
pub const FORMAT: u32 = 11;
/// What a generation holds; one missing means it cannot be reused.
const FILES: [&str; 10] = [
    "index.sqlite",
    "shapes.bin",
    "lexical.bin",
    "nodes.faiss",
    "nodes.ids",
    "functions.faiss",
    "graph.bin",
    "meta.json",
    "model/weights.safetensors",
    "model/manifest.json",
];
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
    #[error("another `beryl index` is writing {0}")]
    Busy(PathBuf),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("FAISS: {0}")]
    Faiss(String),
    #[error("SQLite: {0}")]
    Sqlite(String),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Feature(#[from] FeatureError),
    #[error("no C, C++ or Java source files under {0}")]
    Empty(String),
}

impl IndexError {
    /// Whether the index itself is the problem (missing, damaged or built differently).
    pub fn is_index_fault(&self) -> bool {
        matches!(self, IndexError::Missing(_) | IndexError::Corrupt(_) | IndexError::Mismatch(_))
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> IndexError + '_ {
    move |source| IndexError::Io { path: path.to_path_buf(), source }
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
    pub functions: usize,
    pub nodes: usize,
    pub indexed_nodes: usize,
    pub edges: usize,
    pub skipped: usize,
    pub created_unix: u64,
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
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions { walk: WalkOptions::default(), features: FeatureSet::default(), factory: None, flat_max: 50_000, force: false }
    }
}

/// Where the work of one `index` run went.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BuildReport {
    pub up_to_date: bool,
    pub files: usize,
    pub unchanged_files: usize,
    pub changed_files: usize,
    pub new_files: usize,
    pub removed_files: usize,
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
}

/// Progress of a build: a stage name, units done and the total.
pub type Progress<'a> = &'a mut dyn FnMut(&str, usize, usize);

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// sha256 of a model's weights file: the identity an index records.
pub fn model_sha256(dir: &Path) -> Result<String, IndexError> {
    let p = dir.join("weights.safetensors");
    Ok(sha256_hex(&std::fs::read(&p).map_err(io(&p))?))
}

/// The generation directory `current` points at, if any.
pub fn current_generation(dir: &Path) -> Option<PathBuf> {
    let target = std::fs::read_link(dir.join("current")).ok()?;
    let gen = dir.join(target);
    gen.is_dir().then_some(gen)
}

pub use crate::text::name_words;

/// The comment block that ends right before `start`, if one does.
fn leading_comment(before: &str) -> &str {
    let t = before.trim_end();
    if t.ends_with("*/") {
        if let Some(i) = t.rfind("/*") {
            return &t[i..];
        }
    }
    let mut begin = t.len();
    for line in t.lines().rev() {
        if line.trim_start().starts_with("//") {
            begin -= line.len() + 1;
        } else {
            break;
        }
    }
    t.get(begin.min(t.len())..).unwrap_or("").trim_start()
}

/// The comment right above function `f` (after the previous function of its file).
pub fn function_comment<'a>(icfg: &Icfg, f: u32, src: &'a str) -> &'a str {
    let m = &icfg.functions[f as usize].meta;
    let s = (m.bytes.0 as usize).min(src.len());
    let prev_end = if f > 0 && icfg.functions[f as usize - 1].meta.file == m.file {
        (icfg.functions[f as usize - 1].meta.bytes.1 as usize).min(s)
    } else {
        s.saturating_sub(2000)
    };
    leading_comment(src.get(prev_end..s).unwrap_or(""))
}

/// The prose of a doc comment for the text encoder: no comment markers (`/**`, `*`,
/// `//`), no markup (`<p>`, `{@code x}` → `x`), no tag words (`@param`, `\brief`; the text
/// after them stays: parameter descriptions name what the function works on), no heading
/// lines (`\function name`), at most `PROSE_CHARS`, cut after a sentence where one ends.
/// With markers and markup a long Javadoc filled the encoder's whole window.
pub fn doc_prose(comment: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    'lines: for line in comment.lines() {
        let l = line.trim().trim_start_matches("/**").trim_start_matches("/*!").trim_start_matches("/*").trim_start_matches("///").trim_start_matches("//!").trim_start_matches("//");
        let l = l.trim_end_matches("*/").trim().trim_start_matches('*').trim();
        for w in l.split_whitespace() {
            if let Some(tag) = w.strip_prefix('@').or_else(|| w.strip_prefix('\\')) {
                let tag = tag.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
                match tag {
                    // Headings name what the comment documents: the rest of their line goes.
                    "function" | "fn" | "class" | "struct" | "union" | "enum" | "typedef" | "define" | "var" | "file" | "ingroup"
                    | "addtogroup" | "defgroup" | "name" | "page" | "section" | "subsection" | "namespace" | "interface" => continue 'lines,
                    // Bookkeeping, not prose.
                    "author" | "version" | "since" | "serial" | "serialField" | "serialData" => continue 'lines,
                    // Any other tag word (`@param`, `\brief`, `{@code`) is markup; its text stays.
                    t if !t.is_empty() => continue,
                    _ => {}
                }
            }
            let mut clean = String::with_capacity(w.len());
            let mut in_tag = false;
            for c in w.chars() {
                match c {
                    '<' => in_tag = true,
                    '>' if in_tag => in_tag = false,
                    '{' | '}' if !in_tag => {}
                    _ if !in_tag => clean.push(c),
                    _ => {}
                }
            }
            let clean = clean.trim_start_matches("@code").trim_start_matches("@link").trim_start_matches("@literal");
            if !clean.is_empty() {
                words.push(clean.to_string());
            }
        }
    }
    let mut out = String::new();
    for w in &words {
        if out.len() + w.len() + 1 > PROSE_CHARS {
            // Back to the last sentence end, when there is one.
            if let Some(i) = out.rfind(". ").or_else(|| out.ends_with('.').then(|| out.len() - 1)) {
                out.truncate(i + 1);
            }
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// What the natural-language index reads for a function: its name as words, the prose
/// of the comment above it, then its code, cut to a length the encoder reads in full.
pub fn function_text(icfg: &Icfg, f: u32, src: &str) -> String {
    let m = &icfg.functions[f as usize].meta;
    let (s, e) = (m.bytes.0 as usize, (m.bytes.1 as usize).min(src.len()));
    let comment = doc_prose(function_comment(icfg, f, src));
    let body = src.get(s..e).unwrap_or("");
    let mut t = format!("{}. {} {}", name_words(&m.name), comment, crate::graph::normalize_ws(body));
    if t.len() > FUNCTION_TEXT_CHARS {
        let mut cut = FUNCTION_TEXT_CHARS;
        while !t.is_char_boundary(cut) {
            cut -= 1;
        }
        t.truncate(cut);
    }
    t
}

/// Removes generations other than `keep` and scratch folders of runs that are gone.
fn sweep(dir: &Path, keep: Option<&Path>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("gen-") || Some(p.as_path()) == keep {
            continue;
        }
        if let Some(pid) = name.split(".tmp-").nth(1) {
            // Another live `index` may own it; the lock makes that rare, but check.
            if Path::new("/proc").join(pid).exists() && pid != std::process::id().to_string() {
                continue;
            }
        }
        if let Err(err) = std::fs::remove_dir_all(&p) {
            log::warn!("could not remove old index generation {}: {err}", p.display());
        }
    }
}

/// Builds (or brings up to date) the index at `dir` for the sources under `roots`.
pub fn build(
    roots: &[PathBuf],
    dir: &Path,
    opts: &IndexOptions,
    model_dir: &Path,
    encs: &TextEncoders,
    progress: Progress,
) -> Result<BuildReport, IndexError> {
    let t0 = Instant::now();
    let mut report = BuildReport::default();
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let lock_path = dir.join("lock");
    let lock = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path).map_err(io(&lock_path))?;
    if lock.try_lock().is_err() {
        return Err(IndexError::Busy(dir.to_path_buf()));
    }
    let enc = encs.statements()?;
    let fenc = encs.functions()?;
    let model = Model::load(model_dir, FEATURE_SCHEMA, enc.hash())?;
    let model_sha = model_sha256(model_dir)?;

    progress("parse", 0, 0);
    let corpus = corpus::load(roots, &opts.walk);
    let icfg = corpus.icfg;
    if icfg.files.is_empty() {
        return Err(IndexError::Empty(roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ")));
    }
    for s in &corpus.skipped {
        log::info!("skipped {}: {} ({})", s.path.display(), s.reason.name(), s.detail);
    }
    // Content hashes; the text is kept for the function texts below.
    let sources: Vec<String> = icfg
        .files
        .par_iter()
        .map(|f| std::fs::read(&f.path).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default())
        .collect();
    let hashes: Vec<String> = sources.par_iter().map(|s| sha256_hex(s.as_bytes())).collect();
    report.parse_seconds = t0.elapsed().as_secs_f64();
    report.files = icfg.files.len();
    report.lines = icfg.files.iter().map(|f| f.lines as u64).sum();
    report.source_bytes = icfg.files.iter().map(|f| f.bytes).sum();
    report.nodes = icfg.graph.node_count();
    report.functions = icfg.functions.len();

    let anonymized = !roots.is_empty() && roots.iter().all(|r| crate::anonymize::is_marked(r));
    // Compare with the index in place: by path and content hash.
    let previous = current_generation(dir).and_then(|g| Store::open(&g.join("index.sqlite")).ok().map(|s| (g, s)));
    let mut same_identity = false;
    if let Some((g, store)) = &previous {
        let old: std::collections::HashMap<String, String> =
            store.files()?.into_iter().map(|f| (f.path, f.hash)).collect();
        for (f, h) in icfg.files.iter().zip(&hashes) {
            match old.get(f.path.to_string_lossy().as_ref()) {
                Some(oh) if oh == h => report.unchanged_files += 1,
                Some(_) => report.changed_files += 1,
                None => report.new_files += 1,
            }
        }
        report.removed_files = old.len() - report.unchanged_files - report.changed_files;
        let complete = FILES.iter().all(|f| g.join(f).exists());
        same_identity = complete && read_meta(g).is_ok_and(|m| {
            m.format == FORMAT
                && m.model_sha256 == model_sha
                && m.encoder == enc.hash()
                && m.function_encoder == fenc.hash()
                && m.features == opts.features
                && m.anonymized == anonymized
                && opts.factory.as_ref().is_none_or(|f| *f == m.node_factory)
        });
    } else {
        report.new_files = report.files;
    }
    if same_identity && !opts.force && report.unchanged_files == report.files && report.removed_files == 0 {
        report.up_to_date = true;
        report.total_seconds = t0.elapsed().as_secs_f64();
        return Ok(report);
    }
    drop(previous);

    // Node vectors. Unchanged files cost no encoding: their texts come from the vector cache.
    let t1 = Instant::now();
    let stats = || {
        let (a, b) = (enc.stats(), fenc.stats());
        if std::ptr::eq(enc, fenc) { (a.encoded, a.cache_hits) } else { (a.encoded + b.encoded, a.cache_hits + b.cache_hits) }
    };
    let before = stats();
    let hidden = model.gcn.hidden as usize;
    let file_of_node: Vec<u32> = icfg.graph.node_weights().map(|n| n.file).collect();
    let total_files = icfg.files.len();
    let rows = embed_with_progress(&model, &icfg, enc, &mut |done, total| {
        let files_done = if done >= total { total_files } else { file_of_node.get(done).map_or(total_files, |&f| f as usize) };
        progress("embed", files_done, total_files);
    })?;
    let width = hidden + crate::model::embed::IN_DIM;
    // Shapes read the operator counts the embedding made (ln(1 + count) after the GCN block).
    progress("shapes", 0, icfg.functions.len());
    let ops = |n: petgraph::graph::NodeIndex| {
        let r = &rows[n.index() * width + hidden..n.index() * width + hidden + 7];
        crate::features::OpCounts(std::array::from_fn(|i| (r[i].exp() - 1.0).round().max(0.0) as u32))
    };
    let shapes: Vec<crate::shape::Shape> =
        (0..icfg.functions.len() as u32).into_par_iter().map(|f| crate::shape::Shape::of_function(&icfg, f, &ops)).collect();
    let shape_bytes = crate::shape::store::encode(&shapes);
    drop(shapes);
    let docs = lexical::documents(&icfg, &sources, &|f| {
        function_comment(&icfg, f, &sources[icfg.functions[f as usize].meta.file as usize]).to_string()
    });
    let lexical_bytes = lexical::encode(&docs);
    drop(docs);
    let dim = opts.features.dim(hidden);
    let mut ids = Vec::new();
    let mut search_rows = Vec::new();
    for n in icfg.graph.node_indices() {
        if vectors::searchable(icfg.graph[n].kind) {
            ids.push(n.index() as u64);
            opts.features.search_vector(&rows[n.index() * width..(n.index() + 1) * width], hidden, &mut search_rows);
        }
    }
    drop(rows);
    // Function texts for natural-language search.
    progress("functions", 0, icfg.functions.len());
    let ftexts: Vec<String> = (0..icfg.functions.len() as u32)
        .into_par_iter()
        .map(|f| function_text(&icfg, f, &sources[icfg.functions[f as usize].meta.file as usize]))
        .collect();
    // Large chunks: the encoder sorts each by length, so rows of a batch pad little.
    const FUNCTION_CHUNK: usize = 4096;
    let mut fvecs = Vec::with_capacity(ftexts.len() * crate::features::DIM);
    for (chunk_no, chunk) in ftexts.chunks(FUNCTION_CHUNK).enumerate() {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        for v in fenc.encode(&refs)? {
            fvecs.extend_from_slice(&v);
        }
        progress("functions", (chunk_no * FUNCTION_CHUNK + chunk.len()).min(ftexts.len()), ftexts.len());
    }
    let after = stats();
    report.texts_encoded = after.0 - before.0;
    report.texts_from_cache = after.1 - before.1;
    report.embed_seconds = t1.elapsed().as_secs_f64();

    // Write the new generation aside.
    let t2 = Instant::now();
    progress("write", 0, 1);
    let next = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("gen-")?.split('.').next()?.parse::<u64>().ok())
        .max()
        .map_or(1, |n| n + 1);
    let gen_name = format!("gen-{next:06}");
    let tmp = dir.join(format!("{gen_name}.tmp-{}", std::process::id()));
    std::fs::create_dir_all(tmp.join("model")).map_err(io(&tmp))?;
    let node_factory = vectors::factory_for(ids.len(), opts.flat_max, opts.factory.as_deref());
    let nodes_index = if vectors::projects(ids.len()) {
        let p = Projection::fit(&search_rows, dim, vectors::PCA_DIM)?;
        p.write(&tmp.join("nodes.pca"))?;
        vectors::build(&node_factory, p.d_out, &p.apply(&search_rows)?)?
    } else {
        vectors::build(&node_factory, dim, &search_rows)?
    };
    vectors::write(&nodes_index, &tmp.join("nodes.faiss"))?;
    drop(nodes_index);
    // Vector number → ICFG node, for factories that cannot store ids themselves.
    let ids_path = tmp.join("nodes.ids");
    let id_bytes: Vec<u8> = ids.iter().flat_map(|&i| (i as u32).to_le_bytes()).collect();
    std::fs::write(&ids_path, id_bytes).map_err(io(&ids_path))?;
    let function_factory = vectors::function_factory(ftexts.len());
    let f_index = vectors::build(&function_factory, crate::features::DIM, &fvecs)?;
    vectors::write(&f_index, &tmp.join("functions.faiss"))?;
    for (name, bytes) in [("shapes.bin", &shape_bytes), ("lexical.bin", &lexical_bytes)] {
        let p = tmp.join(name);
        std::fs::write(&p, bytes).map_err(io(&p))?;
    }
    let csr = Csr::from_icfg(&icfg);
    let gpath = tmp.join("graph.bin");
    std::fs::write(&gpath, csr.to_bytes()).map_err(io(&gpath))?;
    for f in ["weights.safetensors", "manifest.json"] {
        let (from, to) = (model_dir.join(f), tmp.join("model").join(f));
        std::fs::copy(&from, &to).map_err(io(&from))?;
    }
    let meta = IndexMeta {
        format: FORMAT,
        beryl: env!("CARGO_PKG_VERSION").to_string(),
        feature_schema: FEATURE_SCHEMA,
        encoder: enc.hash().to_string(),
        statement_model: encs.statements,
        function_encoder: fenc.hash().to_string(),
        function_model: encs.functions,
        model_sha256: model_sha,
        model_lang: model.manifest.lang.clone(),
        hidden,
        features: opts.features,
        node_factory,
        function_factory,
        roots: roots.iter().map(|r| r.display().to_string()).collect(),
        anonymized,
        files: icfg.files.len(),
        lines: report.lines,
        source_bytes: report.source_bytes,
        functions: icfg.functions.len(),
        nodes: icfg.graph.node_count(),
        indexed_nodes: ids.len(),
        edges: icfg.graph.edge_count(),
        skipped: corpus.skipped.len(),
        created_unix: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
    };
    let meta_json = serde_json::to_string_pretty(&meta).map_err(|e| IndexError::Corrupt(e.to_string()))?;
    Store::create(
        &tmp.join("index.sqlite"),
        &icfg,
        &hashes,
        &[("schema", FORMAT.to_string()), ("meta", meta_json.clone())],
    )?;
    let mpath = tmp.join("meta.json");
    std::fs::write(&mpath, meta_json).map_err(io(&mpath))?;
    for entry in std::fs::read_dir(&tmp).map_err(io(&tmp))?.flatten() {
        if let Ok(f) = std::fs::File::open(entry.path()) {
            let _ = f.sync_all();
        }
    }
    // Fault-injection tests kill the process here, with the new generation written aside.
    if let Some(ms) = std::env::var("BERYL_TEST_PAUSE_BEFORE_SWAP_MS").ok().and_then(|v| v.parse::<u64>().ok()) {
        progress("swap", 0, 1);
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    // Swap: the finished folder gets its final name, then `current` moves to it at once.
    let gen = dir.join(&gen_name);
    std::fs::rename(&tmp, &gen).map_err(io(&gen))?;
    let link_tmp = dir.join(format!("current.tmp-{}", std::process::id()));
    let _ = std::fs::remove_file(&link_tmp);
    std::os::unix::fs::symlink(&gen_name, &link_tmp).map_err(io(&link_tmp))?;
    std::fs::rename(&link_tmp, dir.join("current")).map_err(io(dir))?;
    sweep(dir, Some(&gen));
    report.write_seconds = t2.elapsed().as_secs_f64();
    report.index_bytes = dir_bytes(&gen);
    report.total_seconds = t0.elapsed().as_secs_f64();
    progress("done", 1, 1);
    drop(lock);
    Ok(report)
}

fn same_encoder<'e>(level: &str, want: &str, want_model: TextModel, model: TextModel, enc: &'e Encoder) -> Result<&'e Encoder, IndexError> {
    if enc.hash() == want {
        return Ok(enc);
    }
    Err(IndexError::Mismatch(format!(
        "its {level} vectors come from text encoder {} ({}), this search loaded {} ({})",
        want_model.name(),
        &want[..want.len().min(16)],
        model.name(),
        &enc.hash()[..16]
    )))
}

fn dir_bytes(p: &Path) -> u64 {
    let mut total = 0;
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => total += dir_bytes(&e.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

fn read_meta(gen: &Path) -> Result<IndexMeta, IndexError> {
    let p = gen.join("meta.json");
    let text = std::fs::read_to_string(&p).map_err(|e| IndexError::Corrupt(format!("{}: {e}", p.display())))?;
    serde_json::from_str(&text).map_err(|e| IndexError::Corrupt(format!("{}: {e}", p.display())))
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
    pub graph: Csr,
    /// ICFG node of each vector of `nodes`.
    pub node_ids: Vec<u32>,
    pub model: Model,
    /// Every function's nesting tree and what its statements compute.
    pub shapes: crate::shape::store::Shapes,
    /// BM25F over function names, comments and bodies.
    pub lexical: lexical::Lexical,
    /// Unit profile vectors of every function, made on first use.
    profiles: Option<Vec<[f32; 18]>>,
}

impl Index {
    /// Opens the current generation at `dir`, checking that it was built by this format and
    /// feature schema, and (when given) with the model at `model_dir`. Its text encoders are
    /// checked when a search first asks for them (`statement_encoder`, `function_encoder`).
    pub fn open(dir: &Path, model_dir: Option<&Path>, nprobe: usize) -> Result<Index, IndexError> {
        if !dir.exists() {
            return Err(IndexError::Missing(dir.to_path_buf()));
        }
        let gen = current_generation(dir).ok_or_else(|| {
            if dir.join("current").exists() || std::fs::symlink_metadata(dir.join("current")).is_ok() {
                IndexError::Corrupt(format!("{}/current points at no index", dir.display()))
            } else {
                IndexError::Missing(dir.to_path_buf())
            }
        })?;
        let meta = read_meta(&gen)?;
        if meta.format != FORMAT {
            return Err(IndexError::Mismatch(format!("index format {}, this beryl reads {FORMAT}", meta.format)));
        }
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
        let model = Model::load(&own_model, FEATURE_SCHEMA, &meta.encoder).map_err(|e| match e {
            ModelError::Encoder { found, .. } => IndexError::Mismatch(format!(
                "its statement vectors come from text encoder {}, its model was trained on {}",
                &meta.encoder[..meta.encoder.len().min(16)],
                &found[..found.len().min(16)]
            )),
            e => IndexError::Corrupt(e.to_string()),
        })?;
        let store = Store::open(&gen.join("index.sqlite"))?;
        let nodes = vectors::read(&gen.join("nodes.faiss"), nprobe)?;
        let ppath = gen.join("nodes.pca");
        let projection = if ppath.exists() { Some(Projection::read(&ppath)?) } else { None };
        let functions = vectors::read(&gen.join("functions.faiss"), nprobe)?;
        let gpath = gen.join("graph.bin");
        let bytes = std::fs::read(&gpath).map_err(|e| IndexError::Corrupt(format!("{}: {e}", gpath.display())))?;
        let graph = Csr::from_bytes(&bytes).ok_or_else(|| IndexError::Corrupt(format!("{} is not a graph", gpath.display())))?;
        let ipath = gen.join("nodes.ids");
        let ib = std::fs::read(&ipath).map_err(|e| IndexError::Corrupt(format!("{}: {e}", ipath.display())))?;
        let node_ids: Vec<u32> = ib.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        use faiss::Index as _;
        if ib.len() % 4 != 0
            || node_ids.len() != meta.indexed_nodes
            || node_ids.iter().any(|&n| n as usize >= graph.node_count())
            || graph.node_count() != meta.nodes
            || nodes.ntotal() as usize != meta.indexed_nodes
            || functions.ntotal() as usize != meta.functions
            || projection.as_ref().map_or(nodes.d() as usize, |p| p.d_in) != meta.features.dim(meta.hidden)
            || projection.as_ref().is_some_and(|p| p.d_out != nodes.d() as usize)
        {
            return Err(IndexError::Corrupt("graph, vectors and metadata disagree in size".into()));
        }
        let read = |name: &str| {
            let p = gen.join(name);
            std::fs::read(&p).map_err(|e| IndexError::Corrupt(format!("{}: {e}", p.display())))
        };
        let shapes = crate::shape::store::Shapes::from_bytes(read("shapes.bin")?).map_err(IndexError::Corrupt)?;
        let lexical = lexical::Lexical::from_bytes(read("lexical.bin")?).map_err(IndexError::Corrupt)?;
        if shapes.len() != meta.functions || lexical.len() != meta.functions {
            return Err(IndexError::Corrupt("shapes, lexical index and functions disagree in size".into()));
        }
        Ok(Index { dir: gen, meta, store, nodes, projection, functions, graph, node_ids, model, shapes, lexical, profiles: None })
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

    /// The `k` nearest indexed nodes (vector numbers, see `node_ids`) of each search vector.
    pub fn search_nodes(&mut self, rows: &[f32], k: usize) -> Result<Vec<Vec<(u64, f32)>>, IndexError> {
        match &self.projection {
            Some(p) => vectors::search(&mut self.nodes, &p.apply(rows)?, p.d_out, k),
            None => vectors::search(&mut self.nodes, rows, self.meta.features.dim(self.meta.hidden), k),
        }
    }

    /// Every function's [`crate::shape::Profile`] vector, unit length (all zero when
    /// empty); empty until [`Index::load_profiles`] ran.
    pub fn profiles(&self) -> &[[f32; 18]] {
        self.profiles.as_deref().unwrap_or(&[])
    }

    /// Makes the profile vectors once (decoding every shape).
    pub fn load_profiles(&mut self) {
        let shapes = &self.shapes;
        self.profiles.get_or_insert_with(|| {
            (0..shapes.len() as u32)
                .into_par_iter()
                .map(|f| {
                    let mut v = shapes.get(f).map(|s| s.profile().vector()).unwrap_or([0.0; 18]);
                    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                    if n > 0.0 {
                        v.iter_mut().for_each(|x| *x /= n);
                    }
                    v
                })
                .collect()
        });
    }

    /// The stored text vector of function `f` (for scoring candidates no search returned).
    pub fn function_vector(&self, f: u32) -> Option<Vec<f32>> {
        use faiss::Index as _;
        let mut v = vec![0f32; crate::features::DIM];
        self.functions.reconstruct(faiss::Idx::new(f as u64), &mut v).ok()?;
        Some(v)
    }

    pub fn lang_of_file(&self, file: u32) -> Option<Lang> {
        match self.store.file(file).ok()?.lang.as_str() {
            "c" => Some(Lang::C),
            "cpp" => Some(Lang::Cpp),
            "java" => Some(Lang::Java),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_of_names() {
    }

    #[test]
    fn comments_above_functions() {
        assert_eq!(leading_comment("int x;\n/* sorts */\n"), "/* sorts */");
        assert_eq!(leading_comment("x;\n// one\n// two\n"), "// one\n// two");
        assert_eq!(leading_comment("int x;\n"), "");
    }

    #[test]
    fn doc_prose_drops_markers_and_markup() {
        let javadoc = "/**\n * Returns the <em>greatest</em> common divisor of {@code a} and {@code b}.\n *\n * @param a first value\n * @return the gcd\n * @since 1.2\n */";
        assert_eq!(doc_prose(javadoc), "Returns the greatest common divisor of a and b. a first value the gcd");
        let doxygen = "/**\n * \\function graph_bfs\n * \\brief Breadth-first search.\n *\n * \\param graph The graph.\n */";
        assert_eq!(doc_prose(doxygen), "Breadth-first search. graph The graph.");
        assert_eq!(doc_prose("// sorts the array\n// in place"), "sorts the array in place");
        assert_eq!(doc_prose(""), "");
        // Long prose is cut after its last whole sentence within the limit.
        let long = format!("/* {} Second sentence that runs on {} */", "First sentence here.", "and on ".repeat(60));
        assert_eq!(doc_prose(&long), "First sentence here.");
        assert!(doc_prose(&"word ".repeat(100)).len() <= PROSE_CHARS);
    }
}
