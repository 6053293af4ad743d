//! `beryl watch`: keeps an index in step with its source trees. Changes are collected until
//! the trees are quiet for a moment, then the index is updated (see `beryl index`) and one
//! line says what changed. Each update swaps in a whole generation, so a search never sees
//! half of one, and Ctrl-C or a kill at any moment leaves the last one searchable.

use crate::index::{IndexArgs, Prepared};
use anyhow::{Context, Result};
use beryl::index::{self, BuildReport};
use notify::{RecursiveMode, Watcher};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct WatchArgs {
    #[command(flatten)]
    index: IndexArgs,
    /// Quiet time after the last change before the index is updated, in milliseconds.
    #[arg(long, default_value_t = 200)]
    debounce_ms: u64,
}

/// Whether a change at `path` can matter to the index: a file read as C, C++ or Java, a
/// file of exclusion rules or a project's `.beryl.toml`, outside the index folder. Ignored
/// files pass here; the update's walk leaves them out.
fn relevant(path: &Path, index_dir: &Path, walk: &beryl::corpus::WalkOptions) -> bool {
    use beryl::corpus::walk::{CONFIG, IGNORE_FILE};
    let rules = path.file_name().is_some_and(|n| n == IGNORE_FILE || n == CONFIG || n == ".gitignore" || n == ".ignore");
    !path.starts_with(index_dir) && (rules || walk.lang_of(path).is_some())
}

/// One line for an update: when, what changed, what it cost.
fn line(r: &BuildReport) -> String {
    let when = clock();
    let how = if r.updated {
        format!("updated: {} nodes recomputed", r.recomputed_nodes)
    } else {
        format!("indexed anew ({}): {} nodes", r.full_reason.as_deref().unwrap_or("no index yet"), r.nodes)
    };
    format!(
        "{when} {} changed, {} new, {} removed files; {how}; {} files, {} functions; {:.2} s",
        r.changed_files, r.new_files, r.removed_files, r.files, r.functions, r.total_seconds
    )
}

/// `HH:MM:SS` UTC, from the system clock.
fn clock() -> String {
    let s = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    format!("{:02}:{:02}:{:02}", s / 3600 % 24, s / 60 % 60, s % 60)
}

pub fn run(a: WatchArgs) -> Result<()> {
    let Prepared { dir, opts, encs, model } = a.index.prepare()?;
    let roots: Vec<PathBuf> = a.index.paths().to_vec();
    // The index folder may not exist yet; compare against where it will be.
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| std::env::current_dir().map(|c| c.join(p)).unwrap_or(p.to_path_buf()));
    let index_dir = abs(&dir);
    // The extensions read, `.beryl.toml` included; read again after each update, as the
    // update itself reads it.
    let abs_roots: Vec<PathBuf> = roots.iter().map(|r| abs(r)).collect();
    let mut walk = opts.walk.with_project_config(&abs_roots)?;
    let build = |force: bool, progress: beryl::index::Progress| -> Result<BuildReport> {
        let o = beryl::index::IndexOptions { force, ..opts.clone() };
        index::build(&roots, &dir, &o, &model, &encs, progress).with_context(|| format!("indexing into {}", dir.display()))
    };

    let (tx, rx) = mpsc::channel::<notify::Result<notify::Event>>();
    let mut watcher = notify::recommended_watcher(move |e| {
        let _ = tx.send(e);
    })
    .context("starting the file watcher")?;
    for r in &roots {
        watcher.watch(r, RecursiveMode::Recursive).with_context(|| format!("watching {}", r.display()))?;
    }
    // A watch ends with the folder it watches: each root's parent is watched too, so a
    // root removed and made again (a checkout, a restore) is watched again.
    let root_paths = abs_roots.clone();
    // Which folder each watch is on: events about a root name come for every visit of
    // it, and only a new folder there needs a new watch.
    // With its birth time where the file system records one: a folder removed and made
    // again at once often gets the inode number it had.
    let identity = |p: &Path| std::fs::metadata(p).ok().filter(|m| m.is_dir()).map(|m| (m.dev(), m.ino(), m.created().ok()));
    let mut watched: Vec<Option<(u64, u64, Option<std::time::SystemTime>)>> = root_paths.iter().map(|r| identity(r)).collect();
    for r in &root_paths {
        if let Some(parent) = r.parent().filter(|_| r.is_dir()) {
            if let Err(e) = watcher.watch(parent, RecursiveMode::NonRecursive) {
                log::warn!("watching {}: {e}; a root removed and made again will not be seen", parent.display());
            }
        }
    }
    // Watching first, then indexing: a change made meanwhile is seen by the next update.
    // The first build can take minutes: it shows its progress; updates print a line each.
    let mut shown = crate::progress::Progress::new("beryl watch", a.index.quiet());
    let r = build(opts.force, &mut |s, d, t| shown.update(s, d, t))?;
    shown.finish();
    if r.up_to_date {
        println!("{} {}: up to date, {} files; watching", clock(), dir.display(), r.files);
    } else {
        println!("{}; watching", line(&r));
    }
    let quiet = Duration::from_millis(a.debounce_ms);
    loop {
        // Wait for a change that matters, then for the trees to be quiet.
        let mut pending = false;
        let mut last = Instant::now();
        loop {
            let wait = if pending { quiet.saturating_sub(last.elapsed()) } else { Duration::from_secs(3600) };
            match rx.recv_timeout(wait) {
                Ok(Ok(ev)) => {
                    let paths: Vec<PathBuf> = ev.paths.iter().map(|p| abs(p)).collect();
                    for ((r, given), seen) in root_paths.iter().zip(&roots).zip(watched.iter_mut()) {
                        let now = if paths.contains(r) { identity(r) } else { None };
                        if now.is_some() && now != *seen {
                            // Made again: its old watch died with it.
                            *seen = now;
                            let _ = watcher.unwatch(given);
                            match watcher.watch(given, RecursiveMode::Recursive) {
                                Ok(()) => log::info!("{} appeared again: watching it", r.display()),
                                Err(e) => log::warn!("watching {} again: {e}", r.display()),
                            }
                            pending = true;
                            last = Instant::now();
                        }
                    }
                    if paths.iter().any(|p| relevant(p, &index_dir, &walk)) {
                        pending = true;
                        last = Instant::now();
                    }
                }
                Ok(Err(e)) => log::warn!("file watcher: {e}"),
                Err(mpsc::RecvTimeoutError::Timeout) if pending => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
            }
        }
        match opts.walk.with_project_config(&abs_roots) {
            Ok(w) => walk = w,
            Err(e) => log::warn!("{e}; watching the extensions read before"),
        }
        match build(false, &mut |_, _, _| {}) {
            Ok(r) if r.up_to_date => {}
            Ok(r) => println!("{}", line(&r)),
            // A failed update leaves the last index in place: say so and keep watching.
            Err(e) => eprintln!("{} update failed, the index in place is kept: {e:#}", clock()),
        }
    }
}
