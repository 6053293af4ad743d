//! `beryl pcode …`: check, convert and graph pseudocode; train the line classifier.

use crate::args::read_query;
use anyhow::{Context, Result};
use beryl::pcode::{self, Classifier};
use beryl::search::limits::QueryLimits;
use clap::{Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum PcodeCmd {
    /// Parse a p-code file (`-`: standard input) and report syntax errors.
    Check { file: PathBuf },
    /// Convert plain pseudocode (a file, or `-` for standard input) to p-code, printed on stdout.
    Convert {
        file: PathBuf,
        /// Classifier model (default: models/pcode-classifier.bin, or $BERYL_PCODE_MODEL).
        #[arg(long)]
        model: Option<PathBuf>,
    },
    /// Print the graphs of a p-code file.
    Graph {
        file: PathBuf,
        #[arg(long, value_enum, default_value_t = PcodeFormat::Dot)]
        format: PcodeFormat,
    },
    /// Rebuild the math / natural-language classifier from C and Java sources
    /// (scripts/train-classifier.sh fetches the corpora the shipped model used).
    TrainClassifier {
        #[arg(long)]
        c_corpus: PathBuf,
        #[arg(long)]
        java_corpus: PathBuf,
        #[arg(long, default_value = "models/pcode-classifier.bin")]
        out: PathBuf,
        #[arg(long, default_value_t = 20261121)]
        seed: u64,
        /// Sampled lines per language and label.
        #[arg(long, default_value_t = 900)]
        per_class: usize,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum PcodeFormat {
    Dot,
    Json,
}

pub fn run(cmd: PcodeCmd) -> Result<()> {
    let with_file = |e: pcode::PcodeError, f: &std::path::Path| anyhow::anyhow!("{}", e.with_file(&f.display().to_string()));
    match cmd {
        PcodeCmd::Check { file } => {
            let src = read_query(&file, &QueryLimits::default())?;
            let procs = pcode::graphs(&src, 0).map_err(|e| with_file(e, &file))?;
            let names: Vec<&str> = procs.iter().map(|p| p.meta.name.as_str()).collect();
            println!("{}: ok ({} procedures: {})", file.display(), procs.len(), names.join(", "));
        }
        PcodeCmd::Convert { file, model } => {
            let path = model.unwrap_or_else(Classifier::default_path);
            let clf = Classifier::load(&path).with_context(|| format!("loading classifier {}", path.display()))?;
            let src = read_query(&file, &QueryLimits::default())?;
            // As a search reads it: statements without a procedure header are the body of one.
            let q = beryl::search::to_pcode(&src, || Ok::<_, pcode::PcodeError>(&clf)).map_err(|e| with_file(e, &file))?;
            let shown = if file.as_os_str() == "-" { "<stdin>".into() } else { file.display().to_string() };
            for w in &q.warnings {
                eprintln!("{shown}:{}:{}: warning: {}", w.line, w.col, w.message);
            }
            print!("{}", q.pcode);
        }
        PcodeCmd::Graph { file, format } => {
            let src = read_query(&file, &QueryLimits::default())?;
            let procs = pcode::graphs(&src, 0).map_err(|e| with_file(e, &file))?;
            let calls = pcode::call_sites(&procs);
            match format {
                PcodeFormat::Dot => print!("{}", pcode::render::to_dot(&procs, &calls)),
                PcodeFormat::Json => println!("{}", pcode::render::to_json(&procs, &calls)),
            }
        }
        PcodeCmd::TrainClassifier { c_corpus, java_corpus, out, seed, per_class } => {
            let cfg = pcode::TrainConfig { c_corpus, java_corpus, seed, per_class, ..Default::default() };
            let (clf, mut report) = pcode::train(&cfg)?;
            clf.save(&out)?;
            report.model_file = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let manifest = out.with_extension("json");
            std::fs::write(&manifest, serde_json::to_string_pretty(&report)? + "\n")
                .with_context(|| format!("writing {}", manifest.display()))?;
            eprintln!(
                "wrote {} ({} points) and {}; held-out mined-line accuracy {:.3}",
                out.display(),
                report.points,
                manifest.display(),
                report.holdout_accuracy
            );
        }
    }
    Ok(())
}
