//! `beryl anonymize …`: consistent identifier rewriting.

use anyhow::{bail, Context, Result};
use beryl::anonymize::{anonymize_sources, Category, Mode, Rewritten};
use beryl::corpus::walk::{discover, read_source};
use beryl::corpus::WalkOptions;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Copy, Clone, clap::ValueEnum)]
pub enum ModeArg {
    /// func_0, var_0, class_0 (types), ns_0, MACRO_0
    Neutral,
    /// seeded random 8-character names
    Random,
}

#[derive(clap::Args)]
pub struct AnonymizeArgs {
    /// Files or directories; all files share one mapping.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = ModeArg::Neutral)]
    mode: ModeArg,
    /// Seed of random mode.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Write each file under DIR at its path relative to its input root, and DIR/mapping.json.
    /// Without it, a single file is printed on stdout.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Keep comments (they are removed by default, since they name things).
    #[arg(long)]
    keep_comments: bool,
    /// Read files that .gitignore and .ignore exclude.
    #[arg(long)]
    no_ignore: bool,
    /// Skip files larger than this many bytes.
    #[arg(long, default_value_t = 1 << 20)]
    max_file_size: u64,
}

pub fn run(args: AnonymizeArgs) -> Result<()> {
    let t0 = Instant::now();
    let opts = WalkOptions {
        max_bytes: args.max_file_size,
        respect_ignore: !args.no_ignore,
        ..WalkOptions::default()
    };
    // Walk each root on its own to know what output paths are relative to.
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    let mut rel_paths: Vec<PathBuf> = Vec::new();
    let mut skipped = 0usize;
    let several_roots = args.paths.len() > 1;
    for root in &args.paths {
        if !root.exists() {
            bail!("{}: no such file or directory", root.display());
        }
        let (found, skips) = discover(std::slice::from_ref(root), &opts);
        for s in skips {
            log::info!("{s}");
            skipped += 1;
        }
        for path in found {
            match read_source(&path, &opts) {
                Ok(src) => {
                    rel_paths.push(relative(root, &path, several_roots));
                    files.push((path, src));
                }
                Err(s) => {
                    log::info!("{s}");
                    skipped += 1;
                }
            }
        }
    }
    if files.is_empty() {
        bail!("no C, C++, Java, Python, Rust or Go files to anonymize");
    }
    if args.out.is_none() && files.len() > 1 {
        bail!("{} files found: give --out DIR to write them", files.len());
    }
    let mode = match args.mode {
        ModeArg::Neutral => Mode::Neutral,
        ModeArg::Random => Mode::Random,
    };
    let result = anonymize_sources(&files, mode, args.seed, args.keep_comments)?;

    let Some(out) = args.out else {
        std::io::stdout().write_all(result.files[0].text.as_bytes())?;
        return Ok(());
    };
    let mut written = std::collections::HashSet::new();
    for (f, rel) in result.files.iter().zip(&rel_paths) {
        let dest = out.join(rel);
        if !written.insert(dest.clone()) {
            bail!("two inputs map to {}", dest.display());
        }
        if let Some(dir) = dest.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        std::fs::write(&dest, &f.text).with_context(|| format!("writing {}", dest.display()))?;
    }
    let mapping = serde_json::json!({
        "mode": mode,
        "seed": args.seed,
        "keep_comments": args.keep_comments,
        "names": result.mapping,
    });
    beryl::anonymize::mark(&out).with_context(|| format!("writing {}", out.join(beryl::anonymize::MARKER).display()))?;
    let mapping_path = out.join("mapping.json");
    std::fs::write(&mapping_path, serde_json::to_string_pretty(&mapping)?)
        .with_context(|| format!("writing {}", mapping_path.display()))?;

    let sum = |f: fn(&beryl::anonymize::AnonymizedFile) -> u64| result.files.iter().map(f).sum::<u64>();
    let by_cat: BTreeMap<&str, usize> = Category::ALL
        .iter()
        .map(|c| (c.prefix(), result.mapping.0.get(c).map_or(0, BTreeMap::len)))
        .collect();
    eprintln!(
        "anonymized {} files ({} skipped) in {:.2} s: {} names renamed {:?}, {} tokens renamed, {} left by the qualified-name rule, {} left near syntax errors",
        result.files.len(),
        skipped,
        t0.elapsed().as_secs_f64(),
        result.mapping.len(),
        by_cat,
        sum(|f| f.renamed as u64),
        sum(|f| f.kept_by_context as u64),
        sum(|f| f.kept_near_errors as u64),
    );
    let partial = |r: Rewritten| result.files.iter().filter(|f| f.rewritten == r).count();
    eprintln!(
        "syntax error regions (tree-sitter ERROR/MISSING nodes): {} before, {} after; files rewritten only outside ERROR nodes: {}, outside items with errors: {}, away from them: {}, left as they were: {}",
        sum(|f| f.errors_before as u64),
        sum(|f| f.errors_after as u64),
        partial(Rewritten::OutsideErrorNodes),
        partial(Rewritten::OutsideErroneousItems),
        partial(Rewritten::AwayFromErroneousItems),
        partial(Rewritten::Untouched),
    );
    for f in result.files.iter().filter(|f| f.errors_after != f.errors_before) {
        log::debug!(
            "{}: {} error regions, {} before ({:?})",
            f.path.display(),
            f.errors_after,
            f.errors_before,
            f.rewritten
        );
    }
    for f in result.files.iter().filter(|f| f.rewritten == Rewritten::Untouched) {
        log::warn!(
            "{}: left unchanged: every rewrite parsed with more syntax errors than its {}",
            f.path.display(),
            f.errors_before
        );
    }
    eprintln!("wrote {} and {}", out.display(), mapping_path.display());
    Ok(())
}

/// Where a file goes under --out: its path inside its root, under the root's own name when
/// several roots are given; a root that is a file keeps its file name.
fn relative(root: &Path, path: &Path, several_roots: bool) -> PathBuf {
    if root.is_file() {
        return PathBuf::from(path.file_name().unwrap_or(path.as_os_str()));
    }
    let rel = path.strip_prefix(root).unwrap_or(path);
    if several_roots {
        let name = root
            .canonicalize()
            .ok()
            .and_then(|c| c.file_name().map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("root"));
        name.join(rel)
    } else {
        rel.to_path_buf()
    }
}
