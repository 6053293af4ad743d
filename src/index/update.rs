//! Bringing an index up to date for the files that changed, at a cost in proportion to the
//! change: only changed and added files are parsed; only calls whose candidates changed are
//! resolved again; only nodes within the GCN's receptive field (two edges) of a changed
//! node get new vectors; FAISS, BM25F, shapes and the database change by id. Ids of
//! removed functions and nodes stay empty, so no other id moves; when too much of the index
//! would change, or too many ids are empty, the caller builds anew instead.
//!
//! What comes out equals a full build of the same tree, up to the numbering and to what a
//! full build fits to its data: the projection and the quantizers keep the first build's fit.

use super::build::{commit, encoder_stats, function_vectors, read_sources, skipped_rows, write_parts};
use super::patch::{self, Patch};
use super::store::Store;
use super::*;
use crate::corpus::walk::Skipped;
use crate::graph::csr::HUB_CALLERS;
use crate::graph::{Csr, Icfg, Rows};
use crate::model::embed::{embed_nodes_with, op_counts, Weights, IN_DIM};
use crate::shape::Shape;
use petgraph::graph::NodeIndex;
use std::collections::{HashMap, HashSet};

/// Above this share of the source bytes changed, a full build costs about what an update
/// does, and refits what an update keeps (projection, quantizers).
const MAX_CHANGED_BYTES: f64 = 0.2;
/// Above this share of live nodes needing new vectors, likewise.
const MAX_RECOMPUTED_NODES: f64 = 0.25;
/// Above this share of function ids left empty by removals, a full build compacts them.
const MAX_EMPTY_SLOTS: f64 = 0.25;
/// Above this share of the base's nodes removed or added by a patch, the index is built
/// anew: each search pays for the patch's flat vectors and its rows.
const MAX_PATCHED_NODES: f64 = 0.1;
/// Below this many nodes (indexed or left empty) an index is always updated: a full build
/// would take about a second, and the shares above say little.
const SMALL_NODES: usize = 20_000;
/// Most nodes whose vectors an update computes with plain-Rust products (their GCN reads
/// a few times as many): about as long as loading libtorch, which more would outlast.
const PLAIN_NODES: usize = 2_048;

/// How the files found differ from those indexed.
#[derive(Debug, Default)]
pub struct Diff {
    pub changed: Vec<PathBuf>,
    pub added: Vec<PathBuf>,
    pub removed: Vec<String>,
    pub unchanged: usize,
    /// Content hash of each file changed or added.
    pub hashes: HashMap<PathBuf, String>,
    /// Files skipped before that are still there, unchanged: (path, hash, reason).
    pub still_skipped: Vec<(String, String, String)>,
    /// The stamps of the files found that the index does not hold as they are, for the
    /// next comparison ([`super::stamps`]), and the paths whose stamps go.
    pub stamps: Vec<(String, super::stamps::Stamp)>,
    pub stamps_gone: Vec<String>,
    /// Files whose content was read to compare; the others looked as stamped.
    pub read: usize,
}

impl Diff {
    /// Compares `files` (a walk's) with the files `store` records, indexed or skipped, by
    /// path and content hash (over the text as a build reads it).
    /// `lang` gives the language each file's extension maps to now: a file whose mapping
    /// changed (`--type-add`) is read again though its bytes are the same.
    pub fn of(store: &Store, files: &[PathBuf], lang: &dyn Fn(&Path) -> Option<Lang>) -> Result<Diff, IndexError> {
        // Path → (hash, language read as); what is left once the walk's files are taken
        // out is gone.
        let mut indexed = store.file_hashes()?;
        let skipped = store.skipped()?;
        let mut known = store.stamps()?;
        let h = super::stamps::hash_files(files, &known);
        // Only the stamps that differ are written: the tree's tens of thousands rarely do.
        let mut stamps = Vec::new();
        for (p, s) in h.stamps {
            if known.remove(&p).as_ref() != Some(&s) {
                stamps.push((p, s));
            }
        }
        let stamps_gone = known.into_keys().collect();
        let mut d = Diff { stamps, stamps_gone, read: h.read, ..Diff::default() };
        for (p, hash) in files.iter().zip(h.hashes) {
            let key = p.to_string_lossy();
            match (indexed.remove(key.as_ref()), skipped.get(key.as_ref())) {
                (Some((old, read)), _) if old == hash && lang(p).is_some_and(|l| crate::lang::reads_as(p, l, &read)) => d.unchanged += 1,
                (Some(_), _) => {
                    d.changed.push(p.clone());
                    d.hashes.insert(p.clone(), hash);
                }
                (None, Some((old, reason))) if *old == hash && !hash.is_empty() => {
                    d.unchanged += 1;
                    d.still_skipped.push((key.into_owned(), hash, reason.clone()));
                }
                (None, _) => {
                    d.added.push(p.clone());
                    d.hashes.insert(p.clone(), hash);
                }
            }
        }
        d.removed = indexed.into_keys().collect();
        d.changed.sort();
        d.added.sort();
        d.removed.sort();
        Ok(d)
    }

    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.added.is_empty() && self.removed.is_empty()
    }
}

pub(super) struct Context<'a> {
    pub dir: &'a Path,
    pub gen: &'a Path,
    pub model_dir: &'a Path,
    pub model: &'a crate::model::LazyModel,
    pub enc: &'a crate::features::Encoder,
    pub fenc: &'a crate::features::Encoder,
    pub opts: &'a IndexOptions,
    pub walk_skipped: &'a [Skipped],
    /// The roots indexed: calls resolve within the project (root) of their file.
    pub roots: &'a [PathBuf],
}

/// Whether an update of the index `meta` describes writes a patch over its files in place
/// (when the index is large, or is patched already), or writes every file anew.
fn patches(meta: &IndexMeta, opts: &IndexOptions) -> bool {
    meta.checksums.contains_key(patch::FILE) || meta.indexed_nodes >= opts.patch_from
}

/// The ICFG of a large index, read on a thread of its own while the tree is walked and
/// compared with the index: an update needs it, and reading it is a large share of the
/// update.
pub(super) struct Early {
    gen: PathBuf,
    reading: std::thread::JoinHandle<Result<(Icfg, super::icfg_file::Parts), String>>,
}

impl Early {
    /// Starts reading the ICFG of the generation in use at `dir`, when an update of it
    /// would patch it (no lock is needed: a generation's files never change, and one is
    /// swept only once another is in use, which [`Early::take`] tells).
    pub fn start(dir: &Path, opts: &IndexOptions) -> Option<Early> {
        use std::sync::atomic::{AtomicBool, Ordering};
        // One reading at a time: one thrown away by a run that found nothing changed may
        // still be going when a watcher's next run starts, and two would hold two ICFGs.
        static READING: AtomicBool = AtomicBool::new(false);
        struct Done;
        impl Drop for Done {
            fn drop(&mut self) {
                READING.store(false, Ordering::Release);
            }
        }
        let gen = current_generation(dir)?;
        let meta = read_meta(&gen).ok().filter(|m| m.format == FORMAT && patches(m, opts))?;
        drop(meta);
        if READING.swap(true, Ordering::AcqRel) {
            return None;
        }
        let done = Done;
        let path = gen.join("icfg.bin");
        let reading = std::thread::Builder::new()
            .name("icfg".into())
            .spawn(move || {
                let _done = done;
                // Below the walk, which has most of its work on one thread: where nothing
                // changed, the reading is thrown away, and must not have slowed the walk.
                #[cfg(target_os = "linux")]
                // SAFETY: sets this thread's own scheduling priority (and that of the
                // threads it starts); no memory is touched.
                unsafe {
                    libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 10);
                }
                let t = std::time::Instant::now();
                let read = super::icfg_file::read_parts(&path);
                log::debug!("update early read: {:.1} ms", t.elapsed().as_secs_f64() * 1000.0);
                read
            })
            .ok()?;
        Some(Early { gen, reading })
    }

    /// What was read, if it was read from `gen`.
    fn take(self, gen: &Path) -> Option<Result<(Icfg, super::icfg_file::Parts), String>> {
        (self.gen == gen).then(|| self.reading.join().unwrap_or_else(|_| Err("icfg.bin: the reading thread failed".into())))
    }

    /// Waits for the reading to end and drops what it read: the memory a full build's
    /// budget counts on.
    pub fn finish(self) {
        let _ = self.reading.join();
    }
}

/// The database of the generation in use, copied on a thread of its own while the update
/// waits for its ICFG: the new generation's database starts as this copy (tens of
/// megabytes on a large tree, which the kernel copies page by page).
struct DbCopy {
    /// A scratch folder in the index directory, named as a generation being written, so
    /// that a run that fails cleans it up and one that is killed leaves it to the next.
    dir: PathBuf,
    copying: Option<std::thread::JoinHandle<std::io::Result<PathBuf>>>,
}

impl DbCopy {
    fn start(index_dir: &Path, from: PathBuf) -> DbCopy {
        let dir = index_dir.join(format!("{}.tmp-{}", super::lock::COPY_SCRATCH, std::process::id()));
        let scratch = dir.clone();
        let copying = std::thread::Builder::new()
            .name("db-copy".into())
            .spawn(move || {
                let _ = std::fs::remove_dir_all(&scratch);
                std::fs::create_dir(&scratch)?;
                let to = scratch.join(DATABASE);
                std::fs::copy(&from, &to)?;
                Ok(to)
            })
            .ok();
        DbCopy { dir, copying }
    }

    /// Puts a copy of `from` at `to`: the early one, moved, or where it failed, a new one.
    fn place(&mut self, from: &Path, to: &Path) -> std::io::Result<()> {
        if let Some(Ok(Ok(early))) = self.copying.take().map(|h| h.join()) {
            if std::fs::rename(&early, to).is_ok() {
                let _ = std::fs::remove_dir(&self.dir);
                return Ok(());
            }
        }
        std::fs::copy(from, to).map(|_| ())
    }
}

impl Drop for DbCopy {
    fn drop(&mut self) {
        if let Some(h) = self.copying.take() {
            let _ = h.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub(super) enum Outcome {
    Done,
    /// The update would cost about as much as a full build: why.
    Declined(String),
}

fn corrupt(e: String) -> IndexError {
    IndexError::Corrupt(e)
}

/// Finds `gen`'s file `name` whole, as [`check`] does, keeping the record of what was found.
fn check_file(gen: &Path, name: &str, meta: &IndexMeta) -> Result<(), IndexError> {
    let mut seen = super::verified::Verified::load(gen);
    check(&mut seen, name, meta)?;
    seen.save();
    Ok(())
}

/// Updates the index at `ctx.gen` for `diff` into a new generation.
/// `early`: the ICFG read while the tree was walked, if it was.
pub(super) fn run(ctx: &Context, diff: Diff, early: Option<Early>, report: &mut BuildReport, t0: Instant, progress: Progress) -> Result<Outcome, IndexError> {
    let gen = ctx.gen;
    let mut t = Instant::now();
    let mut lap = |what: &str| {
        if log::log_enabled!(log::Level::Debug) {
            let mb = |b: Option<u64>| b.map_or(0, |b| b >> 20);
            let (now, peak) = (mb(super::build::resident_bytes()), mb(super::build::resident_bytes_at("VmHWM:")));
            log::debug!("update {what}: {:.1} ms (resident {now} MiB, peak {peak} MiB)", t.elapsed().as_secs_f64() * 1000.0);
        }
        t = Instant::now();
    };
    let old_meta = read_meta(gen)?;
    let new_bytes: u64 = diff.changed.iter().chain(&diff.added).filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum();
    let touched = new_bytes;
    if old_meta.indexed_nodes > SMALL_NODES && touched as f64 > MAX_CHANGED_BYTES * old_meta.source_bytes as f64 {
        let share = 100.0 * touched as f64 / old_meta.source_bytes.max(1) as f64;
        return Ok(Outcome::Declined(format!("the changed files hold {share:.0}% of the source")));
    }
    progress("parse", 0, 0);
    let mut db_copy = DbCopy::start(ctx.dir, gen.join(DATABASE));
    // The ICFG, its file first found whole (read again only where its record no longer
    // holds), then decoded without statement texts.
    let path = gen.join("icfg.bin");
    // Written as a patch over the files in place when the index is large (or is patched
    // already); as every file anew when it is small (or below, when the patch has grown to
    // where a search would pay for it, as a full build).
    let patching = patches(&old_meta, ctx.opts);
    check_file(gen, "icfg.bin", &old_meta)?;
    // What does not need the ICFG first, while an early reading of it may still be going:
    // the changed and added files parsed, and the calls section (see below).
    let mut to_parse: Vec<PathBuf> = diff.changed.iter().chain(&diff.added).cloned().collect();
    to_parse.sort();
    let parsed = crate::corpus::parse(&to_parse, &ctx.opts.walk);
    let calls = match patching {
        true => Some(super::icfg_file::calls_section(&path).map_err(corrupt)?),
        false => None,
    };
    // A patching update reads each node without its calls and edges, then gives them to
    // the nodes of the files it reaches; one that writes every file anew reads it whole.
    let early = early.and_then(|e| e.take(gen));
    let (mut icfg, mut parts) = match patching {
        true => early.unwrap_or_else(|| super::icfg_file::read_parts(&path)).map(|(i, p)| (i, Some(p))).map_err(corrupt)?,
        false => (super::icfg_file::read(&path).map_err(corrupt)?, None),
    };
    // The edges are first needed after the patch is applied and the calls are scanned.
    if let Some(p) = &mut parts {
        p.read_edges();
    }
    // A patched generation's ICFG is its base's with the patch's change applied.
    let old_patch = match old_meta.checksums.contains_key(patch::FILE) {
        true => Some(Patch::from_bytes(&read_checked(gen, patch::FILE, &old_meta)?).map_err(corrupt)?),
        false => None,
    };
    // The base: the generation last written whole, which a patch is over.
    let base_files = icfg.files.len();
    let base = (icfg.graph.node_count(), icfg.functions.len());
    let mut resolved: HashSet<(u32, u32)> = HashSet::new();
    if let Some(p) = &old_patch {
        if (p.base_nodes, p.base_functions) != (base.0 as u64, base.1 as u64) {
            return Err(corrupt(format!("{} is not over the ICFG of its generation", patch::FILE)));
        }
        resolved = super::icfg_file::apply_delta(&mut icfg, &p.icfg).map_err(corrupt)?;
    }
    for f in &mut icfg.files {
        f.project = crate::corpus::project_of(ctx.roots, &f.path);
    }
    let (old_files, old_fns, old_nodes) = (icfg.files.len() as u32, icfg.functions.len() as u32, icfg.graph.node_count());
    lap("decode");
    // The adjacency before the change, mapped: the rows an update replaces are compared
    // with it, and a patch's rows are laid over it.
    let old_graph = {
        check_file(gen, "graph.bin", &old_meta)?;
        let g = Csr::mapped(crate::mapped::Bytes::map_sparse(&gen.join("graph.bin")).map_err(|e| corrupt(format!("graph.bin: {e}")))?)
            .ok_or_else(|| corrupt("graph.bin is not a graph".into()))?;
        match &old_patch {
            Some(p) => g.with_overlay(&p.graph).ok_or_else(|| corrupt(format!("{}'s graph rows are not well formed", patch::FILE)))?,
            None => g,
        }
    };
    if old_graph.node_count() != old_nodes {
        return Err(corrupt(format!("graph.bin holds {} nodes, the ICFG {old_nodes}", old_graph.node_count())));
    }
    lap("old graph");

    // Out: every function of a changed or removed file.
    let by_path: HashMap<String, u32> =
        icfg.files.iter().enumerate().filter(|(_, f)| !f.removed).map(|(i, f)| (f.path.to_string_lossy().into_owned(), i as u32)).collect();
    let gone_files: Vec<u32> = diff.changed.iter().map(|p| p.to_string_lossy().into_owned()).chain(diff.removed.iter().cloned()).filter_map(|p| by_path.get(&p).copied()).collect();
    let gone_set: HashSet<u32> = gone_files.iter().copied().collect();
    let removed_fns: Vec<u32> = (0..old_fns).filter(|&f| !icfg.functions[f as usize].removed && gone_set.contains(&icfg.functions[f as usize].meta.file)).collect();
    let mut changed_names: HashSet<String> = HashSet::new();
    let mut removed_nodes: Vec<u64> = Vec::new();
    for &f in &removed_fns {
        changed_names.insert(icfg.functions[f as usize].meta.name.clone());
        removed_nodes.extend(icfg.function_nodes(f).map(|n| n as u64));
        icfg.remove_function(f);
    }
    for &f in &gone_files {
        icfg.files[f as usize].removed = true;
    }

    // In: the changed and added files.
    let mut skipped: Vec<Skipped> = ctx.walk_skipped.to_vec();
    let mut new_hashes = Vec::new();
    for (path, r) in to_parse.iter().zip(parsed) {
        match r {
            Ok(Some((mut file, pf))) => {
                file.project = crate::corpus::project_of(ctx.roots, &file.path);
                let id = icfg.add_file(file, pf.functions);
                new_hashes.push((id, diff.hashes.get(path).cloned().unwrap_or_default()));
            }
            Ok(None) => {}
            Err(s) => {
                log::info!("{s}");
                skipped.push(s);
            }
        }
    }
    let new_fns = old_fns..icfg.functions.len() as u32;
    lap("parse");
    for f in new_fns.clone() {
        changed_names.insert(icfg.functions[f as usize].meta.name.clone());
    }
    let slots = icfg.functions.len();
    let empty = icfg.functions.iter().filter(|f| f.removed).count();
    let empty_nodes: usize = (0..slots as u32).filter(|&f| icfg.functions[f as usize].removed).map(|f| icfg.function_nodes(f).len()).sum();
    if empty as f64 > MAX_EMPTY_SLOTS * slots as f64 && empty_nodes > SMALL_NODES {
        return Ok(Outcome::Declined(format!("{empty} of {slots} function ids are empty: compacting")));
    }

    // Calls: the new files' own, and every other whose name a removed or added function has.
    if let (Some(p), Some(calls)) = (&mut parts, calls) {
        // Calls and edges where the change reaches: the calls of functions calling a
        // changed name (and Java's `this(...)`, which names the caller's class), and the
        // edges of their files and of the files changed.
        // Millions of call names are compared: those of a length no changed name has are
        // passed over without hashing.
        let lengths = changed_names.iter().map(|n| n.len()).chain(["this".len()]).fold(0u64, |m, l| m | 1 << l.min(63));
        let wanted = |name: &[u8]| lengths & (1 << name.len().min(63)) != 0 && (name == b"this" || std::str::from_utf8(name).is_ok_and(|n| changed_names.contains(n)));
        let callers = p.calls_named(&calls, &mut icfg, &wanted).map_err(corrupt)?;
        // 142 MB on the Linux tree, unmapped beside the work that follows.
        std::thread::spawn(move || drop(calls));
        let files: Vec<u32> = callers.iter().map(|&f| icfg.functions[f as usize].meta.file).chain(gone_files.iter().copied()).collect();
        p.add_edges(&mut icfg, files).map_err(corrupt)?;
        lap("calls and edges");
    }
    let mut old_targets: HashMap<(usize, u32), (u32, Vec<u32>)> = HashMap::new();
    for c in &icfg.calls {
        let node = &icfg.graph[c.node];
        if let Some(call) = node.calls.get(c.call as usize) {
            // A call looks up its own name, but for Java's `this(...)` (the caller's class).
            if call.name != "this" && !changed_names.contains(call.name.as_str()) {
                continue;
            }
            let caller = &icfg.functions[node.function as usize];
            if changed_names.contains(Icfg::callee_name(caller, call)) {
                old_targets.insert((c.node.index(), c.call), (node.function, c.targets.to_vec()));
            }
        }
    }
    let mut site_nodes: Vec<usize> = old_targets.keys().map(|k| k.0).collect();
    site_nodes.sort_unstable();
    site_nodes.dedup();
    let nodes_iter = site_nodes.iter().map(|&n| NodeIndex::new(n)).chain((old_nodes..icfg.graph.node_count()).map(NodeIndex::new));
    let sites = icfg.resolve_calls(nodes_iter, &|caller, call| caller.meta.file >= old_files || changed_names.contains(Icfg::callee_name(caller, call)));
    resolved.extend(sites.iter().filter(|s| s.node.index() < base.0).map(|s| (s.node.index() as u32, s.call)));
    // Shapes name their callees: a caller whose targets changed gets a new shape.
    let mut reshaped: HashSet<u32> = HashSet::new();
    for s in &sites {
        if let Some((f, old)) = old_targets.get(&(s.node.index(), s.call)) {
            if old[..] != s.targets[..] {
                reshaped.insert(*f);
            }
        }
    }
    lap("resolve");
    // The graph's edge count moves by the call and return edges of the nodes whose sites
    // change (those re-resolved, those of removed functions) and of their successors, and
    // by the intraprocedural edges of the functions removed and added.
    let mut touched: Vec<NodeIndex> = sites.iter().map(|s| s.node).chain(removed_nodes.iter().map(|&n| NodeIndex::new(n as usize))).collect();
    touched.sort_unstable();
    touched.dedup();
    let mut next: Vec<NodeIndex> = touched.iter().flat_map(|&n| icfg.successors_within(n)).collect();
    next.sort_unstable();
    next.dedup();
    let out_edges = |n: usize| icfg.successors_within(NodeIndex::new(n)).count() as i64;
    let intra: i64 = (old_nodes..icfg.graph.node_count()).map(out_edges).sum::<i64>() - removed_nodes.iter().map(|&n| out_edges(n as usize)).sum::<i64>();
    let was_live = |f: u32| f < old_fns && (!icfg.functions[f as usize].removed || removed_fns.binary_search(&f).is_ok());
    let before = icfg.call_edges_of(&touched, &next, &was_live) as i64;
    // New sites stand in for old ones; the graph keeps its intraprocedural edges alone, and
    // rows read call and return edges from the sites.
    let new_sites: Vec<crate::graph::CallSite> = sites.clone();
    let replaced = icfg.replace_sites(sites, &removed_fns);
    let after = icfg.call_edges_of(&touched, &next, &|f| !icfg.functions[f as usize].removed) as i64;
    let edge_count = usize::try_from(old_meta.edges as i64 + intra + after - before).map_err(|_| corrupt("meta.json's edge count is below what the update removes".into()))?;
    let mut rows = Rows::new(&icfg);
    if ctx.opts.check_update && parts.is_none() && rows.edge_count() != edge_count {
        return Err(corrupt(format!("update self-check: {} edges counted whole, {edge_count} by the change", rows.edge_count())));
    }
    lap("relink");

    // Rows that can differ from the old graph's: those of a node a dropped or new site's
    // edges join, of nodes new or removed and their old neighbours, and of every node
    // joined to a callee that became a hub or stopped being one (the adjacency leaves out
    // a hub's call and return edges).
    let n_nodes = icfg.graph.node_count();
    let live_fn = |f: u32| !icfg.functions[f as usize].removed;
    let mut row_ids: Vec<u32> = (old_nodes as u32..n_nodes as u32).collect();
    for s in replaced.dropped.iter().chain(&new_sites) {
        if !live_fn(icfg.graph[s.node].function) {
            continue;
        }
        row_ids.push(s.node.index() as u32);
        let after: Vec<u32> = icfg.successors_within(s.node).map(|a| a.index() as u32).collect();
        for &t in s.targets.iter().filter(|&&t| live_fn(t)) {
            let f = &icfg.functions[t as usize];
            row_ids.extend([f.entry.index() as u32, f.exit.index() as u32]);
            row_ids.extend(&after);
        }
    }
    for &r in &removed_nodes {
        row_ids.push(r as u32);
        row_ids.extend(old_graph.neighbors(r as u32));
    }
    // The rows below read the edges of the files `Rows::files_read` names: a partial
    // ICFG gains them first.
    let hubs: Vec<u32> = replaced.callees.iter().filter(|&&(f, before)| (before > HUB_CALLERS) != (rows.callers(f) > HUB_CALLERS)).map(|&(f, _)| f).collect();
    if let Some(p) = &mut parts {
        let mut files = Vec::new();
        for &f in &hubs {
            let func = &icfg.functions[f as usize];
            rows.files_read(func.entry.index() as u32, &mut files);
            rows.files_read(func.exit.index() as u32, &mut files);
            files.extend(rows.naming(f).map(|c| icfg.graph[c.node].file));
        }
        let naming = rows.release();
        p.add_edges(&mut icfg, files).map_err(corrupt)?;
        rows = Rows::resume(&icfg, naming);
    }
    for &f in &hubs {
        {
            let func = &icfg.functions[f as usize];
            row_ids.extend([func.entry.index() as u32, func.exit.index() as u32]);
            row_ids.extend(rows.row(func.entry.index() as u32, false));
            row_ids.extend(rows.row(func.exit.index() as u32, false));
            // The hub's edges, which its rows leave out once it is one.
            for c in rows.naming(f) {
                row_ids.push(c.node.index() as u32);
                row_ids.extend(icfg.successors_within(c.node).map(|a| a.index() as u32));
            }
        }
    }
    row_ids.sort_unstable();
    row_ids.dedup();
    if let Some(p) = &mut parts {
        let mut files = Vec::new();
        for &n in &row_ids {
            rows.files_read(n, &mut files);
        }
        let naming = rows.release();
        p.add_edges(&mut icfg, files).map_err(corrupt)?;
        rows = Rows::resume(&icfg, naming);
    }
    let new_rows: Vec<(u32, Vec<u32>)> = row_ids.iter().map(|&n| (n, rows.row(n, false))).collect();
    // The GCN's graph (see `Csr::within_files`) over every node of the files those rows
    // are in: it has no edge between files, so a node's receptive field stays in its file.
    let files: HashSet<u32> = row_ids.iter().map(|&n| icfg.graph[NodeIndex::new(n as usize)].file).collect();
    let mut file_nodes: Vec<u32> = (0..icfg.functions.len() as u32)
        .filter(|&f| !icfg.functions[f as usize].removed && files.contains(&icfg.functions[f as usize].meta.file))
        .flat_map(|f| icfg.function_nodes(f).map(|n| n as u32))
        .collect();
    file_nodes.sort_unstable();
    let gcn_rows: Vec<(u32, Vec<u32>)> = file_nodes.iter().map(|&n| (n, rows.row(n, true))).collect();
    if ctx.opts.check_update {
        if let Some(p) = &mut parts {
            // The rows read with every file's edges must be those read with the files'
            // the change reaches; and the edge count as counted whole.
            let naming = rows.release();
            p.add_all_edges(&mut icfg).map_err(corrupt)?;
            rows = Rows::resume(&icfg, naming);
            for (rows_read, same_file) in [(&new_rows, false), (&gcn_rows, true)] {
                for (n, row) in rows_read {
                    let whole = rows.row(*n, same_file);
                    if whole != *row {
                        return Err(corrupt(format!("update self-check: row {n} read from the files reached is {row:?}, from every file {whole:?}")));
                    }
                }
            }
            if rows.edge_count() != edge_count {
                return Err(corrupt(format!("update self-check: {} edges counted whole, {edge_count} by the change", rows.edge_count())));
            }
        }
    }
    drop(rows);
    // Every node the vectors and shapes below read is in these files (a node's receptive
    // field is within its file, and a caller whose targets changed has a site among the
    // rows above): their statement texts, which `icfg.bin` leaves out, from the database.
    let from_file: Vec<u32> = file_nodes.iter().copied().filter(|&n| (n as usize) < base.0).collect();
    Store::open(&gen.join("index.sqlite"))?.fill_texts(&mut icfg, &from_file)?;
    let gcn = Csr::from_rows(n_nodes, &gcn_rows);
    drop(gcn_rows);
    if ctx.opts.check_update {
        check_rows(&icfg, &old_graph, &new_rows, &gcn, &file_nodes)?;
    }
    lap("adjacency");

    // Vectors: nodes within two edges of a node that is new or whose neighbours changed.
    let live = |n: u32| !icfg.functions[icfg.graph[NodeIndex::new(n as usize)].function as usize].removed;
    let same_file_row = |n: u32| -> Vec<u32> {
        let file = icfg.graph[NodeIndex::new(n as usize)].file;
        old_graph.neighbors(n).iter().copied().filter(|&m| icfg.graph[NodeIndex::new(m as usize)].file == file).collect()
    };
    let mut dirty: Vec<u32> = (old_nodes as u32..n_nodes as u32).collect();
    dirty.extend(row_ids.iter().copied().filter(|&n| (n as usize) < old_nodes && live(n) && gcn.neighbors(n) != same_file_row(n)));
    let mut reach = vec![false; n_nodes];
    let mut frontier = dirty;
    let mut affected: Vec<u32> = Vec::new();
    for n in &frontier {
        reach[*n as usize] = true;
    }
    affected.extend(&frontier);
    for _ in 0..2 {
        let mut next = Vec::new();
        for &n in &frontier {
            for &m in gcn.neighbors(n) {
                if !std::mem::replace(&mut reach[m as usize], true) {
                    next.push(m);
                }
            }
        }
        affected.extend(&next);
        frontier = next;
    }
    drop(reach);
    affected.retain(|&n| live(n));
    affected.sort_unstable();
    // A function's nodes are one range: the live nodes are the live functions' ranges.
    let live_nodes: usize = (0..icfg.functions.len() as u32).filter(|&f| !icfg.functions[f as usize].removed).map(|f| icfg.function_nodes(f).len()).sum();
    if affected.len() as f64 > MAX_RECOMPUTED_NODES * live_nodes as f64 && live_nodes > SMALL_NODES {
        return Ok(Outcome::Declined(format!("the change reaches {} of {live_nodes} nodes", affected.len())));
    }
    report.parse_seconds = t0.elapsed().as_secs_f64();
    lap("affected");

    let t1 = Instant::now();
    let before = encoder_stats(ctx.enc, ctx.fenc);
    // A small change's products run in plain Rust: loading libtorch for them would take
    // more CPU than the rest of the update after the ICFG is read.
    let plain = affected.len() <= PLAIN_NODES;
    let weights = match plain {
        true => Weights::Plain(ctx.model.plain()?),
        false => Weights::Torch(ctx.model.get()?),
    };
    let hidden = weights.hidden();
    let width = hidden + IN_DIM;
    let rows = embed_nodes_with(weights, &icfg, &gcn, ctx.enc, &affected, &mut |d, t| progress("nodes", d, t))?;
    let mut add_ids = Vec::new();
    let mut search_rows = Vec::new();
    for (i, &n) in affected.iter().enumerate() {
        if vectors::searchable(icfg.graph[NodeIndex::new(n as usize)].kind) {
            add_ids.push(n as u64);
            ctx.opts.features.search_vector(&rows[i * width..(i + 1) * width], hidden, &mut search_rows);
        }
    }
    lap("embed");
    drop(rows);
    let mut drop_ids: Vec<u64> = affected.iter().filter(|&&n| (n as usize) < old_nodes).map(|&n| n as u64).collect();
    drop_ids.extend(&removed_nodes);
    let mut dead_nodes: Vec<u32> = old_patch.as_ref().map(|p| p.dead_nodes.clone()).unwrap_or_default();
    let mut dead_functions: Vec<u32> = old_patch.as_ref().map(|p| p.dead_functions.clone()).unwrap_or_default();
    if patching {
        dead_nodes.extend(drop_ids.iter().filter(|&&n| (n as usize) < base.0).map(|&n| n as u32));
        dead_nodes.sort_unstable();
        dead_nodes.dedup();
        dead_functions.extend(removed_fns.iter().filter(|&&f| (f as usize) < base.1));
        dead_functions.sort_unstable();
        dead_functions.dedup();
        let past = icfg.graph.node_count() - base.0;
        if old_patch.is_some() && base.0 > SMALL_NODES && (dead_nodes.len() + past) as f64 > MAX_PATCHED_NODES * base.0 as f64 {
            return Ok(Outcome::Declined(format!("the patch over the last full build would reach {} of its {} nodes", dead_nodes.len() + past, base.0)));
        }
    }

    // Shapes, BM25F documents and function texts of the new functions; new shapes of callers.
    let new_files = old_files as usize;
    let sources = read_sources(&icfg, &|i| i >= new_files);
    let ops = |n: NodeIndex| op_counts(&icfg.graph[n]);
    let added_shapes: Vec<Shape> = new_fns.clone().into_par_iter().map(|f| Shape::of_function(&icfg, f, &ops)).collect();
    let replaced: HashMap<u32, Shape> =
        reshaped.par_iter().filter(|&&f| !icfg.functions[f as usize].removed).map(|&f| (f, Shape::of_function(&icfg, f, &ops))).collect();
    log::debug!("update: {} new shapes of callers", replaced.len());
    let shape_bytes = if patching {
        use crate::shape::store::{patch_bytes, patch_records, record_bytes, removed_record};
        let mut records = match &old_patch {
            Some(p) => patch_records(&p.shapes).map_err(corrupt)?,
            None => Default::default(),
        };
        for &f in &removed_fns {
            records.insert(f, removed_record());
        }
        for (&f, s) in &replaced {
            records.insert(f, record_bytes(s));
        }
        for (i, s) in added_shapes.iter().enumerate() {
            records.insert(new_fns.start + i as u32, record_bytes(s));
        }
        patch_bytes(icfg.functions.len(), &records)
    } else {
        let old_shapes = crate::shape::store::Shapes::from_bytes(read_checked(gen, "shapes.bin", &old_meta)?).map_err(corrupt)?;
        crate::shape::store::update(&old_shapes, &removed_fns, &replaced, &added_shapes)
    };
    let comment = |f: u32| function_comment(&icfg, f, &sources[icfg.functions[f as usize].meta.file as usize]).to_string();
    lap("shapes");
    let docs = lexical::documents_of(&icfg, new_fns.clone(), &sources, &comment);
    let lexical_bytes = if patching {
        // The patch's own index holds the slots past the base; the base's removed slots
        // are listed.
        let added = match &old_patch {
            Some(p) => lexical::patch_parts(&p.lexical).map_err(corrupt)?.2,
            None => lexical::Lexical::from_bytes(lexical::encode(&[])).map_err(corrupt)?,
        };
        let gone: Vec<u32> = removed_fns.iter().filter(|&&f| f as usize >= base.1).map(|&f| f - base.1 as u32).collect();
        lexical::patch_bytes(base.1, &dead_functions, &lexical::update(&added, &gone, &docs))
    } else {
        let old_lex = lexical::Lexical::from_bytes(read_checked(gen, "lexical.bin", &old_meta)?).map_err(corrupt)?;
        lexical::update(&old_lex, &removed_fns, &docs)
    };
    lap("lexical");
    let ftexts: Vec<String> = new_fns.clone().into_par_iter().map(|f| function_text(&icfg, f, &sources[icfg.functions[f as usize].meta.file as usize])).collect();
    let fvecs = function_vectors(ctx.fenc, &ftexts, progress)?;
    let after = encoder_stats(ctx.enc, ctx.fenc);
    lap("functions");
    report.texts_encoded = after.0 - before.0;
    report.texts_from_cache = after.1 - before.1;
    report.embed_seconds = t1.elapsed().as_secs_f64();

    let t2 = Instant::now();
    progress("write", 0, 1);
    if !patching {
        // Written whole: `graph.bin` from every call and return edge.
        icfg.relink(Vec::new());
        if ctx.opts.check_update && icfg.graph.edge_count() != edge_count {
            return Err(corrupt(format!("update self-check: {} edges relinked, {edge_count} counted", icfg.graph.edge_count())));
        }
    }
    let live_files: Vec<&crate::graph::SourceFile> = icfg.files.iter().filter(|f| !f.removed).collect();
    let indexed_nodes: usize = (0..icfg.functions.len() as u32)
        .filter(|&f| !icfg.functions[f as usize].removed)
        .map(|f| icfg.function_nodes(f).filter(|&n| vectors::searchable(icfg.graph[NodeIndex::new(n)].kind)).count())
        .sum();
    if ctx.opts.check_update {
        // The counts by function ranges against counts node by node.
        let live = |n: usize| !icfg.functions[icfg.graph[NodeIndex::new(n)].function as usize].removed;
        let by_node = (0..icfg.graph.node_count()).filter(|&n| live(n)).count();
        let indexed = (0..icfg.graph.node_count()).filter(|&n| live(n) && vectors::searchable(icfg.graph[NodeIndex::new(n)].kind)).count();
        if (by_node, indexed) != (live_nodes, indexed_nodes) {
            return Err(corrupt(format!("update self-check: {by_node} live and {indexed} indexed nodes node by node, {live_nodes} and {indexed_nodes} by function")));
        }
    }
    let live_functions = icfg.functions.iter().filter(|f| !f.removed).count();
    let mut skipped_rows_all = skipped_rows(&skipped);
    skipped_rows_all.extend(diff.still_skipped.iter().cloned());
    let meta = IndexMeta {
        files: live_files.len(),
        lines: live_files.iter().map(|f| f.lines as u64).sum(),
        source_bytes: live_files.iter().map(|f| f.bytes).sum(),
        functions: live_functions,
        function_slots: icfg.functions.len(),
        nodes: icfg.graph.node_count(),
        indexed_nodes,
        edges: edge_count,
        skipped: skipped_rows_all.len(),
        checksums: Default::default(),
        walk: ctx.opts.walk.record(),
        format: FORMAT,
        ..old_meta.clone()
    };
    let old_db = gen.join("index.sqlite");
    lap("rows");
    let file_rows: Vec<(u32, &str)> = new_hashes.iter().map(|(i, h)| (*i, h.as_str())).collect();
    let fn_ids: Vec<u64> = new_fns.clone().map(u64::from).collect();
    let removed_fn_ids: Vec<u64> = removed_fns.iter().map(|&f| f as u64).collect();
    // Search rows through the index's projection, by the same products as the vectors.
    let project = |p: &Projection| if plain { Ok(p.apply_plain(&search_rows)) } else { p.apply(&search_rows) };
    let new_gen = commit(ctx.dir, ctx.model_dir, progress, |tmp| {
        // The nodes' database of the last full build, which no update writes (new nodes
        // go to the main database's own table), linked with the sum it was written with.
        let mut meta = meta;
        check_file(gen, store::NODES, &old_meta)?;
        patch::link(gen, tmp, store::NODES)?;
        let sum = old_meta.checksums.get(store::NODES).ok_or_else(|| corrupt(format!("meta.json records no checksum of {}", store::NODES)))?;
        meta.checksums.insert(store::NODES.to_string(), sum.clone());
        if patching {
            // The base's files, linked with the sums they were written with; each found
            // whole first (read again only where its record no longer holds), since the
            // new generation will trust it as the old one did.
            let mut seen = super::verified::Verified::load(gen);
            for name in patch::LINKED {
                if gen.join(name).exists() {
                    check(&mut seen, name, &old_meta)?;
                }
            }
            if old_patch.is_some() {
                check(&mut seen, patch::NODES_DELTA, &old_meta)?;
                check(&mut seen, patch::FUNCTIONS_DELTA, &old_meta)?;
            }
            seen.save();
            for name in patch::LINKED {
                if patch::link(gen, tmp, name)? {
                    let sum = old_meta.checksums.get(name).ok_or_else(|| corrupt(format!("meta.json records no checksum of {name}")))?;
                    meta.checksums.insert(name.to_string(), sum.clone());
                }
            }
            let projection = match old_meta.checksums.contains_key("nodes.pca") {
                true => Some(Projection::from_bytes(&read_checked(gen, "nodes.pca", &old_meta)?).ok_or_else(|| corrupt("nodes.pca is not a projection".into()))?),
                false => None,
            };
            let rows = match &projection {
                Some(p) => project(p)?,
                None => search_rows.clone(),
            };
            let dim = projection.as_ref().map_or(ctx.opts.features.dim(hidden), |p| p.d_out);
            let delta = |name: &str, dim: usize, drop: &[u64], rows: &[f32], ids: &[u64]| -> Result<(), IndexError> {
                let mut ix = match &old_patch {
                    Some(_) => vectors::read(&gen.join(name), 1)?,
                    None => vectors::build_with_ids("Flat", dim, &[], &[])?,
                };
                vectors::remove(&mut ix, drop)?;
                vectors::add(&mut ix, rows, ids)?;
                vectors::write(&ix, &tmp.join(name))
            };
            delta(patch::NODES_DELTA, dim, &drop_ids, &rows, &add_ids)?;
            // Function vectors as the base's layout holds them (quantized, most often), so a
            // patched index scores functions as one updated whole would; the base's codes are
            // mapped, not read.
            let base_functions = vectors::read_mapped(&gen.join("functions.faiss"), 1)?;
            let coded = vectors::through_codec(&base_functions, &fvecs, crate::features::DIM);
            drop(base_functions);
            delta(patch::FUNCTIONS_DELTA, crate::features::DIM, &removed_fn_ids, coded.as_deref().unwrap_or(&fvecs), &fn_ids)?;
            let (base_node_vectors, base_function_vectors) = match &old_patch {
                Some(p) => (p.base_node_vectors, p.base_function_vectors),
                None => (old_meta.indexed_nodes as u64, old_meta.functions as u64),
            };
            let p = Patch {
                base_nodes: base.0 as u64,
                base_functions: base.1 as u64,
                base_node_vectors,
                base_function_vectors,
                dead_nodes: std::mem::take(&mut dead_nodes),
                dead_functions: std::mem::take(&mut dead_functions),
                graph: old_graph.overlay_updated(n_nodes, &new_rows),
                shapes: shape_bytes,
                lexical: lexical_bytes,
                icfg: super::icfg_file::delta(&icfg, (base_files, base.1, base.0), &resolved),
            };
            let path = tmp.join(patch::FILE);
            std::fs::write(&path, p.to_bytes()).map_err(io(&path))?;
            return Ok(meta);
        }
        let mut nodes = vectors::read(&gen.join("nodes.faiss"), 1)?;
        read_checked(gen, "nodes.faiss", &old_meta)?;
        vectors::remove(&mut nodes, &drop_ids)?;
        if old_meta.checksums.contains_key("nodes.pca") {
            let b = read_checked(gen, "nodes.pca", &old_meta)?;
            let p = Projection::from_bytes(&b).ok_or_else(|| corrupt("nodes.pca is not a projection".into()))?;
            vectors::add(&mut nodes, &project(&p)?, &add_ids)?;
            std::fs::write(tmp.join("nodes.pca"), &b).map_err(io(tmp))?;
        } else {
            vectors::add(&mut nodes, &search_rows, &add_ids)?;
        }
        vectors::write(&nodes, &tmp.join("nodes.faiss"))?;
        drop(nodes);
        read_checked(gen, "functions.faiss", &old_meta)?;
        let mut functions = vectors::read(&gen.join("functions.faiss"), 1)?;
        vectors::remove(&mut functions, &removed_fn_ids)?;
        vectors::add(&mut functions, &fvecs, &fn_ids)?;
        vectors::write(&functions, &tmp.join("functions.faiss"))?;
        write_parts(tmp, &shape_bytes, &lexical_bytes, &Csr::from_icfg(&icfg), &icfg)?;
        Ok(meta)
    }, |db, meta_json| {
        db_copy.place(&old_db, db).map_err(io(&old_db))?;
        Store::update(
            db,
            &icfg,
            &gone_files,
            &removed_fns,
            &file_rows,
            new_fns.clone(),
            &skipped_rows_all,
            (&diff.stamps_gone, &diff.stamps),
            &[("schema", FORMAT.to_string()), ("meta", meta_json.to_string())],
        )
    })?;
    report.updated = true;
    lap("commit");
    report.files = live_files.len();
    report.lines = live_files.iter().map(|f| f.lines as u64).sum();
    report.source_bytes = live_files.iter().map(|f| f.bytes).sum();
    report.nodes = live_nodes;
    report.functions = live_functions;
    report.recomputed_nodes = affected.len();
    report.recomputed_functions = new_fns.len();
    report.skipped = skipped_rows_all.iter().fold(Default::default(), |mut m, (_, _, r)| {
        *m.entry(r.clone()).or_insert(0) += 1;
        m
    });
    report.write_seconds = t2.elapsed().as_secs_f64();
    report.index_bytes = super::build::dir_bytes(&new_gen);
    // Millions of nodes, call references and sites, freed beside what comes next (a
    // command that ends here does not wait for it; a watcher's next update finds it done).
    drop(live_files);
    std::thread::spawn(move || drop((icfg, parts)));
    Ok(Outcome::Done)
}

/// The update's rows against a rebuilt adjacency (`BERYL_CHECK_UPDATE`, set by the tests):
/// the old graph with `new_rows` laid over it must read as [`Csr::from_icfg`] does, and
/// the GCN's rows of `file_nodes` as [`Csr::within_files`]'s.
fn check_rows(icfg: &Icfg, old_graph: &Csr, new_rows: &[(u32, Vec<u32>)], gcn: &Csr, file_nodes: &[u32]) -> Result<(), IndexError> {
    let n = icfg.graph.node_count();
    let patched = old_graph.clone().with_overlay(&old_graph.overlay_updated(n, new_rows)).ok_or_else(|| corrupt("update self-check: overlay not well formed".into()))?;
    let live = |i: u32| !icfg.functions[icfg.graph[NodeIndex::new(i as usize)].function as usize].removed;
    let mut edges = super::store::edge_rows(icfg);
    edges.extend(super::icfg_file::call_edge_rows(icfg));
    edges.retain(|&(a, b, _)| live(a) && live(b));
    edges.sort_unstable();
    edges.dedup();
    let kinds: Vec<(u32, u32, crate::graph::EdgeKind)> = edges.into_iter().map(|(a, b, k)| (a, b, crate::graph::EdgeKind::ALL[k as usize])).collect();
    let (full, within) = (Csr::from_edges(icfg, &kinds, false), Csr::from_edges(icfg, &kinds, true));
    if let Some(m) = (0..n as u32).find(|&m| patched.neighbors(m) != full.neighbors(m)) {
        return Err(corrupt(format!("update self-check: row {m} is {:?}, rebuilt {:?}", patched.neighbors(m), full.neighbors(m))));
    }
    if let Some(&m) = file_nodes.iter().find(|&&m| gcn.neighbors(m) != within.neighbors(m)) {
        return Err(corrupt(format!("update self-check: GCN row {m} is {:?}, rebuilt {:?}", gcn.neighbors(m), within.neighbors(m))));
    }
    Ok(())
}
