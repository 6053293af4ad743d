//! Building an index, or bringing one up to date: parse, vectors (reusing cached ones),
//! FAISS, SQLite, BM25F and shapes written to a new generation, which then replaces the
//! current one in one rename.

#[allow(unused_imports)]
use super::*;
use super::spill::{Every, Spill};
use super::update;

/// Removes generations other than `keep` that no reader has open, and what earlier runs
/// left aside (scratch generations and links of runs that were killed). The caller holds
/// the writer lock, so no other run is writing: whatever is aside is a dead run's, even
/// where its process id now names another process. A generation a reader pins stays for a
/// later build to remove. Links are removed themselves, never followed.
pub(super) fn sweep(dir: &Path, keep: Option<&Path>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let own = format!(".tmp-{}", std::process::id());
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("current.tmp-") && !name.ends_with(&own) {
            let _ = std::fs::remove_file(&p);
            continue;
        }
        if !name.starts_with("gen-") || Some(p.as_path()) == keep || name.ends_with(&own) {
            continue;
        }
        // Held until the folder is gone, so no reader can pin it half removed.
        let mut _held = None;
        if name.contains(".tmp-") {
            log::info!("removing {}, left by a run that did not finish", p.display());
        } else {
            match lock::unpinned(&p) {
                Ok(Some(held)) => _held = held,
                Ok(None) => {
                    log::info!("kept old index generation {}: a search has it open", p.display());
                    continue;
                }
                Err(err) => {
                    log::warn!("kept old index generation {}: {err}", p.display());
                    continue;
                }
            }
        }
        if let Err(err) = std::fs::remove_dir_all(&p) {
            log::warn!("could not remove old index generation {}: {err}", p.display());
        }
    }
}

/// Refuses to replace an index of a newer format: this beryl cannot know what it holds.
fn refuse_newer(dir: &Path) -> Result<(), IndexError> {
    match current_generation(dir).and_then(|g| format_of(&g)) {
        Some(found) if found > FORMAT as u64 => Err(IndexError::Newer { dir: dir.to_path_buf(), found }),
        _ => Ok(()),
    }
}

/// Builds (or brings up to date) the index at `dir` for the sources under `roots`. An index
/// in place built the same way is updated for the files that changed (see `update`);
/// otherwise, or when an update would touch too much of it, the index is built anew.
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
    // Roots are recorded absolute and canonical, with every file path under them: the
    // index then means the same files whatever folder it is later read from.
    let roots: Vec<PathBuf> = roots.iter().map(|r| r.canonicalize().map_err(io(r))).collect::<Result<_, _>>()?;
    let roots = &roots[..];
    // The inputs first: a run that cannot succeed creates nothing.
    lock::check_layout(dir)?;
    refuse_newer(dir)?;
    // A large index's ICFG is read beside the models' loading, the walk and the
    // comparison, which an update of it would otherwise wait for.
    let mut early = (!opts.force).then(|| update::Early::start(dir, opts)).flatten();
    let lap = |what: &str| log::debug!("index {what}: {:.1} ms", t0.elapsed().as_secs_f64() * 1000.0);
    let enc = encs.statements()?;
    lap("statement encoder");
    let fenc = encs.functions()?;
    lap("function encoder");
    // The weights load later (see `LazyModel`): an update needs them last.
    let model = crate::model::LazyModel::open(model_dir, FEATURE_SCHEMA, enc.hash())?;
    let model_sha = model_sha256(model_dir)?;
    lap("model");
    // The roots' project files join the command line's rules; the index records the
    // command line's alone (`meta.walk`) and reads the files afresh each time.
    let opts = &IndexOptions { walk: opts.walk.with_project_config(roots)?, ..opts.clone() };
    let walked = corpus::walk::walk(roots, &opts.walk);
    let (files, walk_skipped) = (walked.files, walked.skipped);
    report.excluded = walked.excluded;
    report.unread = walked.unread;
    lap("walk");
    let empty_roots = || roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ");
    if files.is_empty() {
        let mut by: Vec<(&String, &usize)> = report.unread.iter().collect();
        by.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let seen: Vec<String> = by.iter().take(5).map(|(e, n)| format!(".{e} {n}")).collect();
        let hint = if seen.is_empty() {
            String::new()
        } else {
            format!(" (found {}; --type-add EXT:c|cpp|java reads an extension as one of them)", seen.join(", "))
        };
        return Err(IndexError::Empty(format!("{}{hint}", empty_roots())));
    }
    // From here on a failure (or panic) removes what this run made; see `Claim`.
    let claim = lock::Claim::take(dir)?;
    // Checked again under the lock: a newer beryl may have written since.
    refuse_newer(dir)?;
    sweep(dir, current_generation(dir).as_deref());
    let anonymized = !roots.is_empty() && roots.iter().all(|r| crate::anonymize::is_marked(r));
    let global = opts.global.as_deref().map(super::global::Global::open).transpose()?;
    if let Some(why) = global.as_ref().and_then(|g| g.mismatch(opts, model.manifest.hidden as usize, enc.hash(), fenc.hash(), &model_sha)) {
        return Err(IndexError::Mismatch(why));
    }
    let identity = Identity { model_sha: &model_sha, enc: enc.hash(), fenc: fenc.hash(), opts, anonymized, global: global.as_ref().map(|g| g.meta.id.clone()) };

    // Compare with the index in place, by path and content hash.
    let previous = current_generation(dir)
        .filter(|g| identity.mismatch(g, false).is_none())
        .and_then(|g| {
            let mut v = super::verified::Verified::load(&g);
            let store = read_meta(&g).and_then(|m| open_store(&g, &m, &mut v)).ok();
            v.save();
            store.map(|s| (g, s))
        });
    if let Some((gen, store)) = previous.filter(|_| !opts.force) {
        lap("identity");
        let diff = update::Diff::of(&store, &files, &|p| opts.walk.lang_of(p))?;
        drop(store);
        lap("diff");
        report.unchanged_files = diff.unchanged;
        report.changed_files = diff.changed.len();
        report.new_files = diff.added.len();
        report.removed_files = diff.removed.len();
        report.read_files = diff.read;
        let intact = || read_meta(&gen).is_ok_and(|m| checksums_hold(&gen, &m));
        if diff.is_empty() && intact() {
            report.up_to_date = true;
            report.files = diff.unchanged - diff.still_skipped.len();
            report.total_seconds = t0.elapsed().as_secs_f64();
            claim.keep();
            return Ok(report);
        }
        let ctx = update::Context { dir, gen: &gen, model_dir, model: &model, enc, fenc, opts, walk_skipped: &walk_skipped, roots };
        let outcome = if diff.is_empty() {
            Ok(update::Outcome::Declined("the index in place is damaged".into()))
        } else {
            update::run(&ctx, diff, early.take(), &mut report, t0, progress)
        };
        match outcome {
            Ok(update::Outcome::Done) => {
                report.total_seconds = t0.elapsed().as_secs_f64();
                progress("done", 1, 1);
                claim.keep();
                return Ok(report);
            }
            Ok(update::Outcome::Declined(why)) => {
                log::info!("indexing anew: {why}");
                report.full_reason = Some(why);
            }
            // A damaged file found while updating: the full build replaces the whole index.
            Err(e @ IndexError::Corrupt(_)) => {
                log::info!("indexing anew: {e}");
                report.full_reason = Some(format!("the index in place is damaged ({e})"));
            }
            Err(e) => return Err(e),
        }
    } else if let Some(g) = current_generation(dir) {
        report.full_reason = Some(if opts.force {
            "--force".to_string()
        } else {
            identity.mismatch(&g, true).unwrap_or_else(|| "the index in place cannot be read".into())
        });
    }
    if let Some(e) = early.take() {
        e.finish();
    }
    let inputs = Inputs { roots, dir, opts, model_dir, model: &model, encs, identity: &identity, global: global.as_ref() };
    let report = full(&inputs, files, walk_skipped, report, t0, progress)?;
    claim.keep();
    Ok(report)
}/// What makes two builds comparable: an index made otherwise cannot be updated.
pub(super) struct Identity<'a> {
    pub model_sha: &'a str,
    pub enc: &'a str,
    pub fenc: &'a str,
    pub opts: &'a IndexOptions,
    pub anonymized: bool,
    /// Id of the global parts built with.
    pub global: Option<String>,
}

impl Identity<'_> {
    /// Why generation `g` cannot be updated in place; `None` when it can. Its checksums
    /// are verified only with `verify`: an update verifies each file as it reads it.
    fn mismatch(&self, g: &Path, verify: bool) -> Option<String> {
        if let Some(missing) = FILES.iter().find(|f| !g.join(f).exists()) {
            return Some(format!("the index in place lacks {missing}"));
        }
        let m = match read_meta(g) {
            Ok(m) => m,
            Err(e) => return Some(e.to_string()),
        };
        if m.format != FORMAT {
            return Some(format!("the index in place has format {}, this beryl writes {FORMAT}", m.format));
        }
        let same = m.model_sha256 == self.model_sha
            && m.encoder == self.enc
            && m.function_encoder == self.fenc
            && m.features == self.opts.features
            && m.anonymized == self.anonymized
            && self.opts.factory.as_ref().is_none_or(|f| *f == m.node_factory);
        if !same {
            return Some("the index in place was built with another model, encoder, feature set or layout".into());
        }
        if m.global != self.global {
            return Some("the index in place was built with other global parts (or none)".into());
        }
        if m.roots.len() > 1 && !m.linked_by_project {
            return Some("the index in place linked calls across its roots".into());
        }
        if let Some(why) = roots_unusable(&m) {
            return Some(why);
        }
        // A damaged index is never kept: its error message sends the user here.
        (verify && !checksums_hold(g, &m)).then(|| "the index in place is damaged".into())
    }
}

/// What a full build reads besides the files.
pub(super) struct Inputs<'a> {
    pub roots: &'a [PathBuf],
    pub dir: &'a Path,
    pub opts: &'a IndexOptions,
    pub model_dir: &'a Path,
    pub model: &'a crate::model::LazyModel,
    pub encs: &'a TextEncoders,
    pub identity: &'a Identity<'a>,
    pub global: Option<&'a super::global::Global>,
}

/// Encoder counters (texts encoded, texts from the cache) of both encoders.
pub(super) fn encoder_stats(enc: &crate::features::Encoder, fenc: &crate::features::Encoder) -> (u64, u64) {
    let (a, b) = (enc.stats(), fenc.stats());
    if std::ptr::eq(enc, fenc) { (a.encoded, a.cache_hits) } else { (a.encoded + b.encoded, a.cache_hits + b.cache_hits) }
}

/// Function texts of `functions` encoded a large chunk at a time (the encoder sorts each by
/// length, so rows of a batch pad little), row-major.
pub(super) fn function_vectors(fenc: &crate::features::Encoder, texts: &[String], progress: Progress) -> Result<Vec<f32>, IndexError> {
    let mut fvecs = Vec::with_capacity(texts.len() * crate::features::DIM);
    let size = Batches::default().functions;
    for (chunk_no, chunk) in texts.chunks(size).enumerate() {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        for v in fenc.encode_few(&refs)? {
            fvecs.extend_from_slice(&v);
        }
        progress("functions", (chunk_no * size + chunk.len()).min(texts.len()), texts.len());
    }
    Ok(fvecs)
}

/// Adds row-major `rows` to `index` under the next of `ids`, from `*at` on.
fn add_block(index: &mut faiss::index::IndexImpl, rows: &[f32], ids: &[u64], at: &mut usize) -> Result<(), IndexError> {
    let n = rows.len() / (faiss::Index::d(index) as usize).max(1);
    let Some(these) = ids.get(*at..*at + n) else {
        return Err(IndexError::Corrupt(format!("{} vectors for {} ids", *at + n, ids.len())));
    };
    vectors::add(index, rows, these)?;
    *at += n;
    Ok(())
}

/// The file text of every file of `icfg` (empty for removed or unreadable ones).
pub(super) fn read_sources(icfg: &Icfg, which: &(dyn Fn(usize) -> bool + Sync)) -> Vec<String> {
    icfg.files
        .par_iter()
        .enumerate()
        .map(|(i, f)| {
            if f.removed || !which(i) {
                return String::new();
            }
            read_text(&f.path)
        })
        .collect()
}

/// The text of one file, as every stage reads it: lossy UTF-8 (empty if it cannot be read).
fn read_text(path: &Path) -> String {
    std::fs::read(path).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default()
}

/// The texts of a few files at a time, read again where a full build needs them (function
/// texts, BM25F documents): a corpus's sources are not held whole. A file whose text no
/// longer has the hash of its first read reads as empty, since its functions' spans point
/// into the old text; the database keeps the old hash, so the next update reads it again.
struct Sources<'a> {
    icfg: &'a Icfg,
    hashes: &'a [String],
    /// One slot a file; only the held files' are filled.
    texts: Vec<String>,
    held: std::ops::Range<usize>,
}

impl<'a> Sources<'a> {
    fn new(icfg: &'a Icfg, hashes: &'a [String]) -> Sources<'a> {
        Sources { icfg, hashes, texts: vec![String::new(); icfg.files.len()], held: 0..0 }
    }

    /// Holds the texts of the files of functions `fns`, and of no other file; returns every
    /// file's slot.
    fn hold(&mut self, fns: std::ops::Range<u32>) -> &[String] {
        for t in &mut self.texts[self.held.clone()] {
            *t = String::new();
        }
        let file = |f: u32| self.icfg.functions[f as usize].meta.file as usize;
        let lo = fns.clone().map(file).min().unwrap_or(0);
        let hi = fns.map(file).max().map_or(lo, |h| h + 1);
        let (files, hashes) = (&self.icfg.files, self.hashes);
        self.texts[lo..hi].par_iter_mut().enumerate().for_each(|(i, slot)| {
            let f = &files[lo + i];
            if f.removed {
                return;
            }
            let text = read_text(&f.path);
            if sha256_hex(text.as_bytes()) == hashes[lo + i] {
                *slot = text;
            } else {
                log::warn!("{} changed while it was indexed: its functions get no text until the next update", f.path.display());
            }
        });
        self.held = lo..hi;
        &self.texts
    }
}

/// The files a run skipped, as the database records them: path, content hash, reason.
pub(super) fn skipped_rows(skipped: &[corpus::walk::Skipped]) -> Vec<(String, String, String)> {
    skipped
        .par_iter()
        .map(|s| {
            let hash = std::fs::read(&s.path).map(|b| sha256_hex(String::from_utf8_lossy(&b).as_bytes())).unwrap_or_default();
            (s.path.to_string_lossy().into_owned(), hash, s.reason.name().to_string())
        })
        .collect()
}

fn full(
    inp: &Inputs,
    files: Vec<PathBuf>,
    walk_skipped: Vec<corpus::walk::Skipped>,
    mut report: BuildReport,
    t0: Instant,
    progress: Progress,
) -> Result<BuildReport, IndexError> {
    let (opts, encs) = (inp.opts, inp.encs);
    // The weights load while the files are parsed.
    inp.model.start();
    let (enc, fenc) = (encs.statements()?, encs.functions()?);
    // Before any file is read: the stamps' reference time.
    let began = std::time::SystemTime::now();
    let corpus = corpus::load_found(inp.roots, files, walk_skipped, &opts.walk, t0, &mut |d, t| progress("parse", d, t));
    report.skipped = corpus.skipped_by_reason();
    let icfg = corpus.icfg;
    if icfg.files.is_empty() {
        let reasons: Vec<String> = report.skipped.iter().map(|(r, n)| format!("{r} {n}")).collect();
        let roots = inp.roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ");
        return Err(IndexError::Empty(format!("{roots} (skipped: {})", reasons.join(", "))));
    }
    let held = resident_bytes();
    over_budget(opts.memory, held);
    // Content hashes; the texts are read again a chunk at a time (see `Sources`).
    let hashes: Vec<String> = icfg.files.par_iter().map(|f| sha256_hex(read_text(&f.path).as_bytes())).collect();
    report.parse_seconds = t0.elapsed().as_secs_f64();
    report.files = icfg.files.len();
    report.lines = icfg.files.iter().map(|f| f.lines as u64).sum();
    report.source_bytes = icfg.files.iter().map(|f| f.bytes).sum();
    report.nodes = icfg.graph.node_count();
    report.functions = icfg.functions.len();
    report.recomputed_nodes = report.nodes;
    if report.unchanged_files + report.changed_files + report.removed_files == 0 {
        report.new_files = report.files;
    }

    // Node vectors: the GCN over each file's graph (see `embed_nodes`), a batch of nodes at
    // a time, each batch's rows turned into search rows at once: the full rows (GCN output
    // and input features, 3.7 KB a node) and the GCN's layers are never held for the whole
    // corpus. A batch computes what the whole graph would: `embed_nodes` reads the
    // neighbourhoods it needs, whichever batch they fall in.
    let t1 = Instant::now();
    let before = encoder_stats(enc, fenc);
    let model = inp.model.get()?;
    let hidden = model.gcn.hidden as usize;
    let width = hidden + crate::model::embed::IN_DIM;
    let total_files = icfg.files.len();
    let csr = Csr::within_files(&icfg);
    let dim = opts.features.dim(hidden);
    // `Flat` named by the user means exact search: full vectors, compared one by one.
    let exact = opts.factory.as_deref() == Some("Flat");
    let searchable = icfg.graph.node_weights().filter(|n| vectors::searchable(n.kind)).count();
    let projected = inp.global.map_or(vectors::projects(searchable) && !exact, |g| g.projection.is_some());
    // Projected rows are read twice (a sample to fit the projection, then all of them to
    // project): they wait on disk, a seventh of them comes back.
    let mut spill = if projected { Some(Spill::new(inp.dir, dim, Every::nth(super::project::sample_step(searchable)))?) } else { None };
    let mut ids = Vec::with_capacity(searchable);
    let mut search_rows = Vec::new();
    let all: Vec<u32> = (0..icfg.graph.node_count() as u32).collect();
    for batch in all.chunks(node_batch(opts, held)) {
        let rows = crate::model::embed::embed_nodes(model, &icfg, &csr, enc, batch, &mut |_, _| {})?;
        for (i, &n) in batch.iter().enumerate() {
            if vectors::searchable(icfg.graph[petgraph::graph::NodeIndex::new(n as usize)].kind) {
                ids.push(n as u64);
                opts.features.search_vector(&rows[i * width..(i + 1) * width], hidden, &mut search_rows);
            }
        }
        if let Some(s) = spill.as_mut() {
            s.push(&search_rows)?;
            search_rows.clear();
        }
        let last = batch.last().map_or(0, |&n| icfg.graph[petgraph::graph::NodeIndex::new(n as usize)].file as usize + 1);
        progress("embed", if batch.last() == all.last() { total_files } else { last.min(total_files) }, total_files);
    }
    drop(csr);
    give_back_freed_memory();
    // Function texts for natural-language search, made and encoded a chunk at a time; the
    // vectors wait on disk until the function index is trained on their sample.
    let n_functions = icfg.functions.len();
    let function_factory = inp.global.map_or_else(|| vectors::function_factory(n_functions), |g| g.meta.function_factory.clone());
    let every = if inp.global.is_some() { Every::NONE } else { vectors::training_rows(&function_factory, n_functions) };
    let mut fspill = Spill::new(inp.dir, crate::features::DIM, every)?;
    progress("functions", 0, n_functions);
    let chunk = opts.batches.functions.max(1);
    let mut sources = Sources::new(&icfg, &hashes);
    for start in (0..n_functions as u32).step_by(chunk) {
        let end = (start + chunk as u32).min(n_functions as u32);
        let texts_of = sources.hold(start..end);
        let texts: Vec<String> =
            (start..end).into_par_iter().map(|f| function_text(&icfg, f, &texts_of[icfg.functions[f as usize].meta.file as usize])).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        for v in fenc.encode_few(&refs)? {
            fspill.push(&v)?;
        }
        progress("functions", end as usize, n_functions);
    }
    drop(sources);
    give_back_freed_memory();
    let after = encoder_stats(enc, fenc);
    report.texts_encoded = after.0 - before.0;
    report.texts_from_cache = after.1 - before.1;
    report.embed_seconds = t1.elapsed().as_secs_f64();

    // Write the new generation aside, then swap it in.
    let t2 = Instant::now();
    progress("write", 0, 1);
    let node_factory = inp.global.map_or_else(|| vectors::factory_for(ids.len(), opts.flat_max, opts.factory.as_deref()), |g| g.meta.node_factory.clone());
    let skipped = skipped_rows(&corpus.skipped);
    // Looked at after the reads: only files that had settled before them get a stamp.
    let stamps: Vec<(String, super::stamps::Stamp)> = icfg
        .files
        .par_iter()
        .map(|f| f.path.to_string_lossy().into_owned())
        .zip(hashes.par_iter().cloned())
        .chain(skipped.par_iter().map(|s| (s.0.clone(), s.1.clone())))
        .filter_map(|(p, h)| super::stamps::Stamp::observe(Path::new(&p), &h, began).map(|s| (p, s)))
        .collect();
    let (n_files, n_nodes, n_edges) = (icfg.files.len(), icfg.graph.node_count(), icfg.graph.edge_count());
    // Moved into the write stage, which drops it once nothing left to write needs it.
    let mut graphs = Some(icfg);
    let gen = commit(inp.dir, inp.model_dir, progress, |tmp| {
        let icfg = graphs.take().expect("the graphs, once");
        // First what is made from the graphs: shapes, BM25F, `graph.bin`, `icfg.bin` and the
        // database's rows; then the graphs go, and the vector indexes are made from the
        // spilled rows without them beneath.
        let ops = |n: petgraph::graph::NodeIndex| crate::model::embed::op_counts(&icfg.graph[n]);
        let path = tmp.join("shapes.bin");
        let mut shapes = crate::shape::store::FileWriter::create(&path, n_functions).map_err(io(&path))?;
        for start in (0..n_functions as u32).step_by(chunk) {
            let end = (start + chunk as u32).min(n_functions as u32);
            let some: Vec<crate::shape::Shape> = (start..end).into_par_iter().map(|f| crate::shape::Shape::of_function(&icfg, f, &ops)).collect();
            shapes.add(&some).map_err(io(&path))?;
        }
        shapes.finish().map_err(io(&path))?;
        // BM25F a chunk of functions at a time (see `lexical::Builder`).
        let mut lex = lexical::Builder::default();
        let mut sources = Sources::new(&icfg, &hashes);
        for start in (0..n_functions as u32).step_by(chunk) {
            let end = (start + chunk as u32).min(n_functions as u32);
            let texts_of = sources.hold(start..end);
            let comment = |f: u32| function_comment(&icfg, f, &texts_of[icfg.functions[f as usize].meta.file as usize]).to_string();
            lex.add(&lexical::documents_of(&icfg, start..end, texts_of, &comment));
        }
        drop(sources);
        let path = tmp.join("lexical.bin");
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).map_err(io(&path))?);
        lex.write_to(&mut out).and_then(|()| std::io::Write::flush(&mut out)).map_err(io(&path))?;
        drop(out);
        // BM25F's postings are gone: their memory goes back before the adjacency is made.
        give_back_freed_memory();
        write_graph_parts(tmp, &Csr::from_icfg(&icfg), &icfg)?;
        // The meta row is written once the files it sums are (`Store::set_meta` below).
        Store::create(&tmp.join(DATABASE), &icfg, &hashes, &skipped, &stamps, &[])?;
        drop(icfg);
        give_back_freed_memory();
        // Node vectors: the projection (the corpus's, or fitted on the spill's sample as
        // `Projection::fit` samples) applied block by block as it applies to the whole; FAISS
        // trained on the rows `vectors::training_rows` picks and filled a block at a time,
        // which gives the index a build over all rows at once gives.
        let nodes_index = match (inp.global, spill.take()) {
            // A shard: the corpus's projection and trained quantizers, this shard's vectors.
            (Some(g), spill) => {
                let mut ix = g.node_index()?;
                match (&g.projection, spill) {
                    (Some(p), Some(mut spill)) => {
                        p.write(&tmp.join("nodes.pca"))?;
                        let mut at = 0;
                        spill.blocks(opts.batches.rows, &mut |b| add_block(&mut ix, &p.apply(b)?, &ids, &mut at))?;
                    }
                    _ => vectors::add(&mut ix, &search_rows, &ids)?,
                }
                ix
            }
            (None, Some(mut spill)) => {
                let p = Projection::fit_sample(&spill.sample()?, dim, vectors::PCA_DIM)?;
                p.write(&tmp.join("nodes.pca"))?;
                let mut projected = Spill::new(inp.dir, p.d_out, vectors::training_rows(&node_factory, ids.len()))?;
                spill.blocks(opts.batches.rows, &mut |b| projected.push(&p.apply(b)?))?;
                drop(spill);
                let mut ix = vectors::trained_with_ids(&node_factory, p.d_out, &projected.sample()?)?;
                let mut at = 0;
                projected.blocks(opts.batches.rows, &mut |b| add_block(&mut ix, b, &ids, &mut at))?;
                ix
            }
            (None, None) => vectors::build_with_ids(&node_factory, dim, &search_rows, &ids)?,
        };
        vectors::write(&nodes_index, &tmp.join("nodes.faiss"))?;
        drop(nodes_index);
        let function_ids: Vec<u64> = (0..n_functions as u64).collect();
        let mut f_index = match inp.global {
            Some(g) => g.function_index()?,
            None => vectors::trained_with_ids(&function_factory, crate::features::DIM, &fspill.sample()?)?,
        };
        let mut at = 0;
        fspill.blocks(chunk, &mut |b| add_block(&mut f_index, b, &function_ids, &mut at))?;
        vectors::write(&f_index, &tmp.join("functions.faiss"))?;
        drop(f_index);
        Ok(IndexMeta {
            format: FORMAT,
            beryl: env!("CARGO_PKG_VERSION").to_string(),
            feature_schema: FEATURE_SCHEMA,
            encoder: enc.hash().to_string(),
            statement_model: encs.statements,
            function_encoder: fenc.hash().to_string(),
            function_model: encs.functions,
            model_sha256: inp.identity.model_sha.to_string(),
            model_lang: model.manifest.lang.clone(),
            hidden,
            features: opts.features,
            node_factory: node_factory.clone(),
            function_factory: function_factory.clone(),
            roots: inp.roots.iter().map(|r| r.display().to_string()).collect(),
            anonymized: inp.identity.anonymized,
            files: n_files,
            lines: report.lines,
            source_bytes: report.source_bytes,
            functions: n_functions,
            function_slots: n_functions,
            nodes: n_nodes,
            indexed_nodes: ids.len(),
            edges: n_edges,
            skipped: corpus.skipped.len(),
            created_unix: 0,
            linked_by_project: true,
            global: inp.identity.global.clone(),
            checksums: Default::default(),
            walk: opts.walk.record(),
        })
    }, |db, meta_json| Store::set_meta(db, &[("schema", FORMAT.to_string()), ("meta", meta_json.to_string())]))?;
    report.write_seconds = t2.elapsed().as_secs_f64();
    report.index_bytes = dir_bytes(&gen);
    report.total_seconds = t0.elapsed().as_secs_f64();
    if let Some(peak) = resident_bytes_at("VmHWM:").filter(|&p| p > opts.memory) {
        log::warn!("this build peaked at {:.2} GiB, over --memory {:.2} GiB", gib(peak), gib(opts.memory));
    }
    progress("done", 1, 1);
    Ok(report)
}

/// Hands memory freed by the allocator back to the system. glibc keeps what a program
/// frees for its own reuse, and the graphs are many small blocks: without this the
/// resident size stays at its height after the graphs are dropped, and what comes next
/// (FAISS's lists, allocated by C++) is counted on top.
pub(super) fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory; it takes no pointer.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The GCN's batch: the one configured, or a smaller one when the graphs leave less room
/// under the budget than it needs (about 12 KB a node at its peak; half the room at most,
/// the allocator's slack and the rows' ids taking their share).
fn node_batch(opts: &IndexOptions, held: Option<u64>) -> usize {
    let room = held.map_or(u64::MAX, |h| opts.memory.saturating_sub(h));
    let fits = usize::try_from(room / 2 / (12 << 10)).unwrap_or(usize::MAX);
    opts.batches.nodes.min(fits).max(1024)
}

/// Says so when the graphs just parsed (`held`) leave too little of the memory budget for
/// the stages after them: a build holds a corpus's graphs whole until its vectors are
/// made, so on a large enough corpus no batch size keeps it under the budget.
fn over_budget(budget: u64, held: Option<u64>) {
    let Some(held) = held else { return };
    // The least the stages after the parse add while the graphs are held (the GCN at its
    // smallest batch, BM25F's postings, the graph's adjacency), measured on the whole
    // Linux tree: about a sixth of the default budget.
    if held + budget.min(super::DEFAULT_MEMORY) / 6 > budget {
        log::warn!(
            "the corpus's graphs take {:.2} GiB once parsed, and the build holds them whole: it will need more than --memory {:.2} GiB",
            gib(held),
            gib(budget)
        );
    }
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

/// This process's resident memory (Linux; `None` elsewhere).
pub(crate) fn resident_bytes() -> Option<u64> {
    resident_bytes_at("VmRSS:")
}

/// A size line of `/proc/self/status` (`VmRSS:` now, `VmHWM:` the peak so far), in bytes.
pub(crate) fn resident_bytes_at(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = status.lines().find_map(|l| l.strip_prefix(key))?.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb * 1024)
}

/// Writes the files every generation holds beside its vectors and database.
pub(super) fn write_parts(tmp: &Path, shapes: &[u8], lexical: &[u8], csr: &Csr, icfg: &Icfg) -> Result<(), IndexError> {
    write_file(tmp, "shapes.bin", shapes)?;
    write_file(tmp, "lexical.bin", lexical)?;
    write_graph_parts(tmp, csr, icfg)
}

/// Writes the adjacency and the ICFG.
fn write_graph_parts(tmp: &Path, csr: &Csr, icfg: &Icfg) -> Result<(), IndexError> {
    let p = tmp.join("graph.bin");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&p).map_err(io(&p))?);
    csr.write_to(&mut out).and_then(|()| std::io::Write::flush(&mut out)).map_err(io(&p))?;
    let p = tmp.join("icfg.bin");
    super::icfg_file::write(icfg, &p).map_err(io(&p))
}

fn write_file(tmp: &Path, name: &str, bytes: &[u8]) -> Result<(), IndexError> {
    let p = tmp.join(name);
    std::fs::write(&p, bytes).map_err(io(&p))
}

/// Writes a generation aside and swaps it in: `files(tmp)` writes the checksummed files
/// and says what the generation holds; `database(path, meta json)` writes its database.
/// Returns the generation's folder.
pub(super) fn commit(
    dir: &Path,
    model_dir: &Path,
    progress: Progress,
    files: impl FnOnce(&Path) -> Result<IndexMeta, IndexError>,
    database: impl FnOnce(&Path, &str) -> Result<(), IndexError>,
) -> Result<PathBuf, IndexError> {
    let next = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("gen-")?.split('.').next()?.parse::<u64>().ok())
        .max()
        .map_or(1, |n| n + 1);
    let gen_name = format!("gen-{next:06}");
    let tmp = dir.join(format!("{gen_name}.tmp-{}", std::process::id()));
    // A folder of this run's own that an update gave up on (a link is removed itself).
    let _ = std::fs::remove_dir_all(&tmp);
    // Made here, not found: what is written below lands in this run's own folders.
    std::fs::create_dir(&tmp).map_err(io(&tmp))?;
    std::fs::create_dir(tmp.join("model")).map_err(io(&tmp))?;
    // Readers pin the generation by this file (see `lock`); it exists before anyone can.
    let readers = tmp.join(lock::READERS);
    std::fs::write(&readers, b"").map_err(io(&readers))?;
    let mut meta = files(&tmp)?;
    for f in ["weights.safetensors", "manifest.json"] {
        let (from, to) = (model_dir.join(f), tmp.join("model").join(f));
        std::fs::copy(&from, &to).map_err(io(&from))?;
    }
    // Files linked from an older generation come with their sums.
    let unsummed: Vec<&str> = CHECKSUMMED.iter().copied().filter(|n| !meta.checksums.contains_key(*n)).collect();
    let sums: Vec<Result<Option<(String, String)>, IndexError>> = unsummed
        .par_iter()
        .map(|name| {
            let p = tmp.join(name);
            match checksum_file(&p) {
                Ok(sum) => Ok(Some((name.to_string(), sum))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && OPTIONAL.contains(name) => Ok(None),
                Err(e) => Err(IndexError::Io { path: p, error: e }),
            }
        })
        .collect();
    for s in sums {
        meta.checksums.extend(s?);
    }
    meta.created_unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let meta_json = serde_json::to_string_pretty(&meta).map_err(|e| IndexError::Corrupt(e.to_string()))?;
    let db = tmp.join(DATABASE);
    database(&db, &meta_json)?;
    // The database holds `meta.json` as written so far; its own sum completes the file.
    meta.checksums.insert(DATABASE.to_string(), checksum_file(&db).map_err(io(&db))?);
    let meta_json = serde_json::to_string_pretty(&meta).map_err(|e| IndexError::Corrupt(e.to_string()))?;
    let mpath = tmp.join("meta.json");
    std::fs::write(&mpath, meta_json).map_err(io(&mpath))?;
    // Summed as they were written: readers need not read them again to trust them.
    let mut seen = super::verified::Verified::empty(&tmp);
    for (name, sum) in &meta.checksums {
        seen.note(name, sum);
    }
    seen.save();
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
    // Sweeping an older generation moved the change time of the files this one links.
    let mut seen = super::verified::Verified::load(&gen);
    for name in meta.checksums.keys() {
        seen.relinked(name);
    }
    seen.save();
    Ok(gen)
}

pub(super) fn same_encoder<'e>(level: &str, want: &str, want_model: TextModel, model: TextModel, enc: &'e Encoder) -> Result<&'e Encoder, IndexError> {
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

pub(super) fn dir_bytes(p: &Path) -> u64 {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_graph_networks_batch_fits_the_room_the_graphs_leave() {
        let opts = IndexOptions::default();
        // Unknown resident size, or room to spare: the batch configured.
        assert_eq!(node_batch(&opts, None), opts.batches.nodes);
        assert_eq!(node_batch(&opts, Some(1 << 30)), opts.batches.nodes);
        // 0.5 GiB left of 3 GiB: half of it at 12 KB a node.
        assert_eq!(node_batch(&opts, Some(5 << 29)), (1 << 29) / 2 / (12 << 10));
        // Nothing left: the smallest batch, never none.
        assert_eq!(node_batch(&opts, Some(4 << 30)), 1024);
        assert!(resident_bytes().is_some_and(|b| b > 1 << 20), "a running test holds more than a megabyte");
        let now = resident_bytes();
        assert!(resident_bytes_at("VmHWM:") >= now, "the peak is at least what was held a moment before");
    }
}
