//! `beryl eval …`: benchmark runners.

use anyhow::{Context, Result};
use beryl_lab::clarc::{self, ClarcFile, FileScore, Method, RunOptions};
use beryl_lab::gecs::{self, GecsOptions, GecsScore};
use beryl_lab::Metrics;
use crate::args::TextModelArg;
use beryl::features::{CacheAt, Encoder, TextModel};
use clap::Subcommand;

pub mod algo;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Subcommand)]
pub enum EvalCmd {
    /// CLARC: English queries against C/C++ (or assembly, Wasm) candidates; NDCG@10, MRR,
    /// MAP, Recall@1/5/10/20 per file and method, then means per group and setting.
    Clarc(ClarcArgs),
    /// GenCodeSearchNet (StatCodeSearch, CoSQA): MRR over 100 candidates per query and
    /// balanced matching accuracy.
    Gecs(GecsArgs),
    /// Algorithm-location benchmark (Beryllium Tables 1–5): pseudocode queries against
    /// real projects; F-rank per algorithm, MRR and hit@1/10/25 per method.
    Algo(algo::AlgoArgs),
    /// Fit the hybrid search scorer on candidate pools of `eval algo --pools-out`
    /// (writes models/ranker/weights.json and manifest.json).
    FitRanker(algo::FitArgs),
}

#[derive(clap::Args)]
pub struct EncoderArgs {
    /// libtorch threads for the text encoder (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Folder with the encoder files (default $BERYL_ENCODER_DIR or /opt/beryl/encoder).
    #[arg(long)]
    encoder_dir: Option<PathBuf>,
    /// Do not read or extend the persistent text-vector cache.
    #[arg(long)]
    no_cache: bool,
    /// Text encoder: `code` (all-MiniLM-L6-v2 with the code-search adapters of
    /// models/code-encoder merged in; the default function encoder of an index), `minilm`
    /// (as installed) or `static` (token vectors of models/static).
    #[arg(long, value_enum, default_value_t = TextModelArg::Code)]
    text_model: TextModelArg,
}

#[derive(clap::Args)]
pub struct ClarcArgs {
    /// CLARC .json files, or directories of them.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Ranking methods, repeated or comma-separated (default: all).
    #[arg(long = "method", value_enum, value_delimiter = ',')]
    methods: Vec<Method>,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    encoder: EncoderArgs,
}

#[derive(clap::Args)]
pub struct GecsArgs {
    /// GenCodeSearchNet .jsonl files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// `text` and/or `bm25` (default both); accuracy is reported for `text`.
    #[arg(long = "method", value_enum, value_delimiter = ',')]
    methods: Vec<Method>,
    /// Seed of the distractor draws, tie order and calibration split.
    #[arg(long, default_value_t = 20240601)]
    seed: u64,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    encoder: EncoderArgs,
}

pub fn run(cmd: EvalCmd) -> Result<()> {
    match cmd {
        EvalCmd::Clarc(a) => run_clarc(a),
        EvalCmd::Gecs(a) => run_gecs(a),
        EvalCmd::Algo(a) => algo::run(a),
        EvalCmd::FitRanker(a) => algo::fit(a),
    }
}

fn load_encoder(a: &EncoderArgs) -> Result<Encoder> {
    let dir = a.encoder_dir.clone().unwrap_or_else(Encoder::default_dir);
    let threads = a.threads.or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()));
    let cache = if a.no_cache { CacheAt::None } else { CacheAt::Default };
    let model = TextModel::from(a.text_model);
    model.load_from(&dir, threads, &cache).with_context(|| format!("loading the {} text encoder from {}", model.name(), dir.display()))
}

fn run_clarc(a: ClarcArgs) -> Result<()> {
    let methods = if a.methods.is_empty() { Method::ALL.to_vec() } else { a.methods.clone() };
    let files = clarc::expand(&a.paths).context("listing CLARC files")?;
    anyhow::ensure!(!files.is_empty(), "no .json files in {}", a.paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "));
    let enc = match methods.iter().any(|m| *m != Method::Bm25) {
        true => Some(load_encoder(&a.encoder)?),
        false => None,
    };
    let opts = RunOptions { encoder: enc.as_ref(), progress: !a.json };
    let mut all: Vec<FileScore> = Vec::new();
    for path in &files {
        let t0 = Instant::now();
        let file = ClarcFile::load(path).with_context(|| format!("reading CLARC file {}", path.display()))?;
        let scores = clarc::evaluate(&file, &methods, &opts).with_context(|| format!("evaluating {}", path.display()))?;
        eprintln!("{}: {} queries, {} candidates, {:.1} s", file.name, file.queries.len(), file.pool.len(), t0.elapsed().as_secs_f64());
        if !a.json {
            print_file(&file, &scores);
        }
        all.extend(scores);
    }
    let summary = summarize(&all, &methods);
    if a.json {
        let out = serde_json::json!({ "files": all, "summary": summary });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print_summary(&all, &summary, &methods);
    }
    Ok(())
}

fn header(first: &str, width: usize) -> String {
    let mut s = format!("{first:<width$}");
    for n in Metrics::NAMES {
        s.push_str(&format!(" {n:>7}"));
    }
    s
}

fn row(first: &str, width: usize, m: &Metrics) -> String {
    let mut s = format!("{first:<width$}");
    for v in m.values() {
        s.push_str(&format!(" {v:>7.2}"));
    }
    s
}

fn print_file(file: &ClarcFile, scores: &[FileScore]) {
    let q = scores.first().map(|s| s.queries).unwrap_or(0);
    println!("{}  ({q} queries, {} candidates)", file.name, file.pool.len());
    println!("  {}", header("method", 8));
    for s in scores {
        println!("  {}", row(s.method.name(), 8, &s.metrics));
    }
    println!();
}

#[derive(serde::Serialize)]
struct SummaryRow {
    setting: String,
    method: Method,
    files: usize,
    /// Mean of the files' metrics (one vote per file).
    metrics: Metrics,
}

/// Settings in the paper's order, then any others.
fn setting_rank(s: &str) -> usize {
    ["original", "neutralized", "randomized", "asm_short", "asm_long", "wasm"].iter().position(|x| *x == s).unwrap_or(99)
}

fn summarize(all: &[FileScore], methods: &[Method]) -> Vec<SummaryRow> {
    let mut settings: Vec<&str> = all.iter().map(|s| s.setting.as_str()).collect();
    settings.sort_by_key(|s| (setting_rank(s), s.to_string()));
    settings.dedup();
    let mut out = Vec::new();
    for setting in settings {
        for &m in methods {
            let rows: Vec<Metrics> = all.iter().filter(|s| s.setting == setting && s.method == m).map(|s| s.metrics).collect();
            if !rows.is_empty() && !out.iter().any(|r: &SummaryRow| r.setting == setting && r.method == m) {
                out.push(SummaryRow { setting: setting.to_string(), method: m, files: rows.len(), metrics: Metrics::average(&rows) });
            }
        }
    }
    out
}

fn print_summary(all: &[FileScore], summary: &[SummaryRow], methods: &[Method]) {
    println!("Summary: mean over the files of each setting (one vote per file)");
    println!("  {}", header("setting / method", 26));
    for r in summary {
        println!("  {}", row(&format!("{} / {} ({})", r.setting, r.method.name(), r.files), 26, &r.metrics));
    }
    println!();
    // NDCG@10 grid: group × method rows, setting columns.
    let mut settings: Vec<&str> = all.iter().map(|s| s.setting.as_str()).collect();
    settings.sort_by_key(|s| (setting_rank(s), s.to_string()));
    settings.dedup();
    let mut groups: Vec<&str> = all.iter().map(|s| s.group.as_str()).collect();
    groups.sort();
    groups.dedup();
    println!("NDCG@10 by group and setting");
    let mut h = format!("  {:<22}", "group / method");
    for s in &settings {
        h.push_str(&format!(" {s:>11}"));
    }
    println!("{h}");
    let mut methods = methods.to_vec();
    methods.dedup();
    for g in &groups {
        for m in &methods {
            let cells: BTreeMap<&str, f64> =
                all.iter().filter(|s| s.group == *g && s.method == *m).map(|s| (s.setting.as_str(), s.metrics.ndcg10)).collect();
            if cells.is_empty() {
                continue;
            }
            let mut line = format!("  {:<22}", format!("{g} / {}", m.name()));
            for s in &settings {
                match cells.get(s) {
                    Some(v) => line.push_str(&format!(" {v:>11.2}")),
                    None => line.push_str(&format!(" {:>11}", "-")),
                }
            }
            println!("{line}");
        }
    }
}

fn run_gecs(a: GecsArgs) -> Result<()> {
    let methods = if a.methods.is_empty() { vec![Method::Text, Method::Bm25] } else { a.methods.clone() };
    let enc = match methods.contains(&Method::Text) {
        true => Some(load_encoder(&a.encoder)?),
        false => None,
    };
    let opts = GecsOptions { encoder: enc.as_ref(), seed: a.seed, progress: !a.json };
    let mut all: Vec<GecsScore> = Vec::new();
    for path in &a.files {
        let t0 = Instant::now();
        let (pairs, skipped) = gecs::load(path).with_context(|| format!("reading GenCodeSearchNet file {}", path.display()))?;
        anyhow::ensure!(!pairs.is_empty(), "{}: no matching pairs (target 1)", path.display());
        let name = stem(path);
        let scores = gecs::evaluate(&name, &pairs, &methods, &opts).with_context(|| format!("evaluating {}", path.display()))?;
        eprintln!("{name}: {} pairs ({skipped} non-matching lines skipped), {:.1} s", pairs.len(), t0.elapsed().as_secs_f64());
        all.extend(scores);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({ "seed": a.seed, "results": all }))?);
        return Ok(());
    }
    println!("{:<24} {:<6} {:>6} {:>6} {:>8} {:>11} {:>10} {:>11}", "file", "method", "pairs", "cands", "MRR", "accuracy %", "threshold", "cal/test");
    for s in &all {
        let (acc, thr, split) = match (s.accuracy, s.threshold) {
            (Some(a), Some(t)) => (format!("{a:.2}"), format!("{t:.4}"), format!("{}/{}", s.calibration, s.test)),
            _ => ("-".into(), "-".into(), "-".into()),
        };
        println!("{:<24} {:<6} {:>6} {:>6} {:>8.4} {:>11} {:>10} {:>11}", s.file, s.method.name(), s.pairs, s.candidates, s.mrr, acc, thr, split);
    }
    println!("MRR: the answer among {} candidates (99 distractors drawn with seed {}). Accuracy: balanced", gecs::CANDIDATES, a.seed);
    println!("matching pairs and random mismatches, cosine threshold fitted on the calibration half.");
    Ok(())
}

fn stem(p: &Path) -> String {
    p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| p.display().to_string())
}
