//! `beryl index`: build or update an index of source trees.

use crate::args::{check_paths, default_model, EncoderArgs};
use anyhow::{Context, Result};
use beryl::corpus::WalkOptions;
use beryl::features::TextEncoders;
use beryl::index::{self, FeatureSet, IndexOptions};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct IndexArgs {
    /// Files or directories to index.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Index directory (default: `.beryl` in the first path).
    #[arg(long)]
    index: Option<PathBuf>,
    /// Model directory (default: $BERYL_MODEL, else the model trained on the statement
    /// encoder's vectors: models/default for static, models/minilm for MiniLM).
    #[arg(long)]
    model: Option<PathBuf>,
    #[command(flatten)]
    encoders: EncoderArgs,
    /// Ingredients of node vectors: any of text, graph, math.
    #[arg(long, default_value = "text,graph,math")]
    features: String,
    /// FAISS factory string for the node index, over vectors projected to 128 dimensions
    /// (default: `SQ8`, every vector compared, up to --flat-max nodes; `IVF…,PQ32np` above).
    #[arg(long)]
    faiss: Option<String>,
    /// Largest node index where every vector is compared.
    #[arg(long, default_value_t = 50_000)]
    flat_max: usize,
    /// Rebuild even when no file changed.
    #[arg(long)]
    force: bool,
    /// Read files that .gitignore and .ignore exclude (`.berylignore` files still apply).
    #[arg(long)]
    no_ignore: bool,
    /// Leave out files and folders matching GLOB (gitignore syntax, relative to each root:
    /// `vendor/`, `*.pb.c`, `**/testdata/**`; `!GLOB` brings files back). Repeatable. For
    /// lasting rules write them in a `.berylignore` file (or `exclude` in `.beryl.toml`).
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Read files ending in .EXT as LANG (c, cpp or java), as ripgrep's --type-add:
    /// `--type-add pmt:c`. Repeatable; also `type-add = [...]` in the root's `.beryl.toml`.
    #[arg(long, value_name = "EXT:LANG")]
    type_add: Vec<String>,
    /// Skip files larger than this many bytes.
    #[arg(long, default_value_t = 1 << 20)]
    max_file_size: u64,
    /// Peak memory the build aims to stay under: `3G`, `1500M`, `2GiB` (powers of 1024).
    /// Smaller budgets make smaller batches, never a different index; the graphs of the
    /// whole corpus are still held at once, and a warning says when they leave too little.
    #[arg(long, value_name = "SIZE", default_value = "3G", value_parser = parse_size)]
    memory: u64,
    /// libtorch threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Print the build report as JSON.
    #[arg(long)]
    json: bool,
    /// No progress and no summary (errors and --json still print).
    #[arg(long, short)]
    quiet: bool,
    /// Build one shard of a larger corpus with the global parts at DIR (`beryl cluster
    /// global`): its scores are then comparable with the other shards'.
    #[arg(long, value_name = "DIR")]
    global: Option<PathBuf>,
}

/// What a build needs, from the arguments.
pub struct Prepared {
    pub dir: PathBuf,
    pub opts: IndexOptions,
    pub encs: TextEncoders,
    pub model: PathBuf,
}

impl IndexArgs {
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    pub fn prepare(&self) -> Result<Prepared> {
        let a = self;
        check_paths(&a.paths)?;
        let dir = a.index.clone().unwrap_or_else(|| {
            let first = &a.paths[0];
            if first.is_dir() { first.join(".beryl") } else { first.parent().unwrap_or(Path::new(".")).join(".beryl") }
        });
        let features = FeatureSet::parse(&a.features).map_err(anyhow::Error::msg)?;
        let opts = IndexOptions {
            walk: WalkOptions { max_bytes: a.max_file_size, respect_ignore: !a.no_ignore, ..WalkOptions::default() }.with_rules(&a.exclude, &a.type_add)?,
            features,
            factory: a.faiss.clone(),
            flat_max: a.flat_max,
            force: a.force,
            global: a.global.clone(),
            batches: index::Batches::for_memory(a.memory),
            memory: a.memory,
            // Benchmarks compare the two ways of writing an update on one index.
            patch_from: std::env::var("BERYL_PATCH_FROM").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(index::PATCH_FROM),
            check_update: std::env::var_os("BERYL_CHECK_UPDATE").is_some(),
        };
        let encs = a.encoders.load(a.threads);
        let model = a.model.clone().unwrap_or_else(|| default_model(a.encoders.statements.into()));
        Ok(Prepared { dir, opts, encs, model })
    }
}

/// A size in bytes: a number with an optional K, M, G or T (powers of 1024; `iB` or `B`
/// after it allowed).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let body = lower.strip_suffix("ib").or_else(|| lower.strip_suffix('b')).unwrap_or(&lower);
    let (num, shift) = match body.chars().last() {
        Some('k') => (&body[..body.len() - 1], 10),
        Some('m') => (&body[..body.len() - 1], 20),
        Some('g') => (&body[..body.len() - 1], 30),
        Some('t') => (&body[..body.len() - 1], 40),
        _ => (body, 0),
    };
    let v: f64 = num.trim().parse().map_err(|_| format!("{t:?} is not a size (write 3G, 1500M or 2GiB)"))?;
    let bytes = v * (1u64 << shift) as f64;
    if !(bytes.is_finite() && bytes >= (64u64 << 20) as f64) {
        return Err(format!("{t:?}: a build needs at least 64M"));
    }
    Ok(bytes as u64)
}

impl IndexArgs {
    pub fn quiet(&self) -> bool {
        self.quiet
    }
}

pub fn run(a: IndexArgs) -> Result<()> {
    let Prepared { dir, opts, encs, model } = a.prepare()?;
    let mut shown = crate::progress::Progress::new("beryl index", a.quiet);
    let r = index::build(&a.paths, &dir, &opts, &model, &encs, &mut |s, done, total| shown.update(s, done, total))
        .with_context(|| format!("indexing into {}", dir.display()))?;
    shown.finish();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else if !a.quiet {
        println!("{}", outcome(&dir, &r));
        print!("{}", walk_lines(&r));
    }
    Ok(())
}

/// One line of what a build did: up to date, updated, or indexed (with why anew).
pub fn outcome(dir: &Path, r: &index::BuildReport) -> String {
    if r.up_to_date {
        format!("{}: up to date ({} files unchanged, {:.2} s){}", dir.display(), r.files, r.total_seconds, skipped(&r.skipped))
    } else if r.updated {
        format!(
            "{}: updated in {:.2} s: {} files ({} unchanged, {} changed, {} new, {} removed), {} functions parsed, {} node vectors recomputed{}",
            dir.display(),
            r.total_seconds,
            r.files,
            r.unchanged_files,
            r.changed_files,
            r.new_files,
            r.removed_files,
            r.recomputed_functions,
            r.recomputed_nodes,
            skipped(&r.skipped)
        )
    } else {
        format!(
            "{}: {} files, {} lines, {} functions, {} nodes indexed in {:.1} s ({:.0} lines/s); index {:.1} MB = {:.2} × source{}{}",
            dir.display(),
            r.files,
            r.lines,
            r.functions,
            r.nodes,
            r.total_seconds,
            r.lines as f64 / r.total_seconds.max(1e-9),
            r.index_bytes as f64 / 1e6,
            r.index_bytes as f64 / r.source_bytes.max(1) as f64,
            skipped(&r.skipped),
            r.full_reason.as_ref().map(|w| format!("; indexed anew: {w}")).unwrap_or_default()
        )
    }
}

/// What the exclusion rules left out and which extensions were not read, a line each (or
/// nothing).
pub fn walk_lines(r: &index::BuildReport) -> String {
    let mut out = String::new();
    if !r.excluded.is_empty() {
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        let parts: Vec<String> = r
            .excluded
            .iter()
            .map(|e| {
                let mut what = Vec::new();
                if e.folders > 0 {
                    what.push(plural(e.folders, "folder"));
                }
                if e.files > 0 || e.folders == 0 {
                    what.push(plural(e.files, "file"));
                }
                format!("{} ({})", e.rule, what.join(", "))
            })
            .collect();
        out.push_str(&format!("excluded: {}\n", parts.join("; ")));
    }
    if !r.unread.is_empty() {
        let mut by: Vec<(&String, &usize)> = r.unread.iter().collect();
        by.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        const SHOWN: usize = 8;
        let mut parts: Vec<String> = by.iter().take(SHOWN).map(|(e, n)| format!(".{e} {n}")).collect();
        if by.len() > SHOWN {
            parts.push(format!("{} more extensions", by.len() - SHOWN));
        }
        out.push_str(&format!("not read: {} (to read an extension as a language beryl reads: --type-add EXT:c|cpp|java|python|rust|go)\n", parts.join(", ")));
    }
    out
}

/// `; N files skipped (reason n, …)`, or nothing; `RUST_LOG=info` names the files.
fn skipped(by_reason: &std::collections::BTreeMap<String, usize>) -> String {
    if by_reason.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = by_reason.iter().map(|(r, n)| format!("{r} {n}")).collect();
    let n: usize = by_reason.values().sum();
    format!("; {n} file{} skipped ({})", if n == 1 { "" } else { "s" }, parts.join(", "))
}

/// One line of what a build found: files by change, lines, functions, nodes, skips.
pub fn summary(dir: &Path, r: &index::BuildReport) -> String {
    format!(
        "{}: {} files ({} unchanged, {} changed, {} new, {} removed), {} lines, {} functions, {} nodes{}",
        dir.display(),
        r.files,
        r.unchanged_files,
        r.changed_files,
        r.new_files,
        r.removed_files,
        r.lines,
        r.functions,
        r.nodes,
        skipped(&r.skipped)
    )
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_read_in_powers_of_1024() {
        assert_eq!(parse_size("3G"), Ok(3 << 30));
        assert_eq!(parse_size("3GiB"), Ok(3 << 30));
        assert_eq!(parse_size("1500m"), Ok(1500 << 20));
        assert_eq!(parse_size("1.5GB"), Ok(3 << 29));
        assert_eq!(parse_size(&(1u64 << 30).to_string()), Ok(1 << 30));
        assert!(parse_size("lots").unwrap_err().contains("not a size"));
        assert!(parse_size("10M").unwrap_err().contains("at least 64M"));
        assert!(parse_size("-1G").is_err());
    }
}
