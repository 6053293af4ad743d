//! A corpus: the source files under some roots, parsed in parallel into one ICFG.

pub mod fetch;
pub mod walk;

use crate::graph::{Icfg, SourceFile};
use crate::lang::{self, ParsedFile};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;
pub use walk::{Excluded, SkipReason, Skipped, Types, WalkError, WalkOptions, WalkRecord, Walked};

pub struct Corpus {
    pub icfg: Icfg,
    pub skipped: Vec<Skipped>,
    pub parse_seconds: f64,
    pub link_seconds: f64,
}

impl Corpus {
    pub fn skipped_by_reason(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for s in &self.skipped {
            *m.entry(s.reason.name().to_string()).or_default() += 1;
        }
        m
    }

    pub fn stats(&self) -> crate::graph::stats::Stats {
        let mut s = crate::graph::stats::Stats::of(&self.icfg);
        s.skipped = self.skipped_by_reason();
        s.parse_seconds = self.parse_seconds;
        s.link_seconds = self.link_seconds;
        s
    }
}

/// Most functions read from one file. Written by hand, even the largest files hold a few
/// thousand (SQLite's 9 MB amalgamation about 2,800); past this a file is generated
/// (tables as code, bindings), and each of its functions costs an encoder call and node
/// vectors: 200,000 one-line functions in 6.5 MB took 15 minutes and 5.2 GB.
pub const MAX_FUNCTIONS_PER_FILE: usize = 10_000;

/// Parses every source file (C, C++, Java, Python, Rust, Go) under `roots` (on rayon's pool) and links the ICFG.
/// Reads and parses `files` in parallel, in their order: a file to add to an ICFG, `None`
/// for a language `opts` leaves out, or why it was skipped.
pub fn parse(files: &[PathBuf], opts: &WalkOptions) -> Vec<Result<Option<(SourceFile, ParsedFile)>, Skipped>> {
    files
        .par_iter()
        .map(|path| {
            let src = walk::read_source(path, opts)?;
            let lang = opts.lang_of(path).ok_or_else(|| Skipped {
                path: path.clone(),
                reason: SkipReason::Unparsable,
                detail: "no language for its extension".into(),
            })?;
            // File ids are assigned by `Icfg::add_file`; 0 is a placeholder.
            let pf = lang::parse_file_as(path, lang, &src, 0).map_err(|e| Skipped {
                path: path.clone(),
                reason: match e {
                    lang::ParseError::TooDeep(_) | lang::ParseError::TooNested(_) => SkipReason::TooDeep,
                    lang::ParseError::UnknownLanguage | lang::ParseError::NoTree => SkipReason::Unparsable,
                },
                detail: e.to_string(),
            })?;
            if !opts.langs.is_empty() && !opts.langs.contains(&pf.lang) {
                return Ok(None);
            }
            if pf.functions.len() > MAX_FUNCTIONS_PER_FILE {
                return Err(Skipped {
                    path: path.clone(),
                    reason: SkipReason::Generated,
                    detail: format!("{} functions in one file; at most {MAX_FUNCTIONS_PER_FILE} are read from one file", pf.functions.len()),
                });
            }
            if pf.error_regions > 0 {
                log::debug!("{}: {} error regions recovered", path.display(), pf.error_regions);
            }
            let file = SourceFile {
                path: path.clone(),
                lang: pf.lang,
                lines: src.lines().count() as u32,
                bytes: src.len() as u64,
                error_regions: pf.error_regions,
                unit: pf.unit.clone(),
                removed: false,
                project: 0,
            };
            Ok(Some((file, pf)))
        })
        .collect()
}

/// Files that cannot be used are skipped with a logged reason; nothing here panics on input.
pub fn load(roots: &[PathBuf], opts: &WalkOptions) -> Corpus {
    let t0 = Instant::now();
    let opts = opts.with_project_config(roots).unwrap_or_else(|e| {
        log::warn!("{e}; read without it");
        opts.clone()
    });
    let (files, skipped) = walk::discover(roots, &opts);
    load_found(roots, files, skipped, &opts, t0, &mut |_, _| {})
}

/// The project of a file: the root it lies under (the longest such root where roots nest).
pub fn project_of(roots: &[PathBuf], path: &std::path::Path) -> u32 {
    roots.iter().enumerate().filter(|(_, r)| path.starts_with(r)).max_by_key(|(_, r)| r.as_os_str().len()).map_or(0, |(i, _)| i as u32)
}

/// Files parsed between two reports of progress: enough to keep every core busy.
const PARSE_CHUNK: usize = 256;

/// As [`load`], for the files (and skips) a [`walk::discover`] found; `t0` is when it
/// began. `progress` hears files parsed and the total.
pub fn load_found(
    roots: &[PathBuf],
    files: Vec<PathBuf>,
    mut skipped: Vec<Skipped>,
    opts: &WalkOptions,
    t0: Instant,
    progress: &mut dyn FnMut(usize, usize),
) -> Corpus {
    let mut icfg = Icfg::default();
    progress(0, files.len());
    for (i, chunk) in files.chunks(PARSE_CHUNK).enumerate() {
        for r in parse(chunk, opts) {
            match r {
                Ok(Some((mut file, pf))) => {
                    file.project = project_of(roots, &file.path);
                    icfg.add_file(file, pf.functions);
                }
                Ok(None) => {}
                Err(s) => skipped.push(s),
            }
        }
        progress((i * PARSE_CHUNK + chunk.len()).min(files.len()), files.len());
    }
    for s in &skipped {
        log::info!("{s}");
    }
    let parse_seconds = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    icfg.link();
    if log::log_enabled!(log::Level::Debug) {
        log::debug!("{}", icfg.heap_report());
    }
    Corpus {
        icfg,
        skipped,
        parse_seconds,
        link_seconds: t1.elapsed().as_secs_f64(),
    }
}
