//! `beryl train`, `beryl distill-static`, `beryl mine-pairs`: the shipped models and their
//! training data.

use crate::args::all_cores;
use anyhow::{bail, Context, Result};
use beryl::corpus::{self, fetch, WalkOptions};
use clap::ValueEnum;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Copy, Clone, ValueEnum)]
pub enum LangSel {
    C,
    Cpp,
    Java,
    Mixed,
}

#[allow(clippy::too_many_arguments)]
pub fn train(
    corpora: Vec<PathBuf>,
    lang: LangSel,
    out: PathBuf,
    max_nodes: usize,
    epochs: usize,
    patience: usize,
    seed: u64,
    threads: Option<usize>,
    encoder_dir: Option<PathBuf>,
    model: beryl::features::TextModel,
) -> Result<()> {
    use beryl::features::{CacheAt, Encoder};
    use beryl::graph::Lang;
    use beryl::model::fit::{fit, FitConfig};
    use beryl::model::train::TrainConfig;
    use indicatif::{ProgressBar, ProgressStyle};
    for p in &corpora {
        if !p.exists() {
            bail!("{}: no such file or directory", p.display());
        }
    }
    let (langs, name) = match lang {
        LangSel::C => (vec![Lang::C], "c"),
        LangSel::Cpp => (vec![Lang::Cpp], "cpp"),
        LangSel::Java => (vec![Lang::Java], "java"),
        LangSel::Mixed => (vec![], "mixed"),
    };
    let threads = all_cores(threads);
    let dir = encoder_dir.unwrap_or_else(Encoder::default_dir);
    let enc = model.load_from(&dir, Some(threads), &CacheAt::Default).with_context(|| format!("loading the {} text encoder", model.name()))?;
    let cfg = FitConfig {
        corpora,
        walk: WalkOptions { langs, ..WalkOptions::default() },
        lang: name.to_string(),
        max_nodes,
        train: TrainConfig { max_epochs: epochs, patience, seed, ..TrainConfig::default() },
    };
    let bar = ProgressBar::new(0);
    bar.set_style(ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} {elapsed_precise} {msg}")?.progress_chars("=> "));
    bar.set_prefix("features");
    let mut epoch_bar: Option<ProgressBar> = None;
    let model = fit(
        &cfg,
        &enc,
        |done, total| {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        },
        |e| {
            let b = epoch_bar.get_or_insert_with(|| {
                bar.finish();
                let b = ProgressBar::new(epochs as u64);
                if let Ok(s) = ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} {elapsed_precise} {msg}") {
                    b.set_style(s.progress_chars("=> "));
                }
                b.set_prefix("epochs");
                b
            });
            b.set_position(e.epoch as u64);
            b.set_message(format!("loss {:.4}  val AUC {:.4}", e.loss, e.val_auc));
            let line = format!("epoch {:>3}  loss {:.4}  val AUC {:.4} (all-node negatives {:.4})  lr {:.5}", e.epoch, e.loss, e.val_auc, e.val_auc_global, e.lr);
            // Progress bars are hidden when stderr is not a terminal; the log line is not.
            if b.is_hidden() {
                eprintln!("{line}");
            } else {
                b.println(line);
            }
        },
    )?;
    if let Some(b) = epoch_bar {
        b.finish();
    }
    model.save(&out)?;
    let m = &model.manifest;
    println!(
        "wrote {}: best val AUC {:.4} at epoch {} of {}, {} train / {} val edges, {:.0} s",
        out.display(),
        m.val_auc,
        m.best_epoch,
        m.epochs,
        m.train_edges,
        m.val_edges,
        m.train_seconds
    );
    Ok(())
}

pub fn mine_pairs(packages: Vec<String>, out: PathBuf) -> Result<()> {
    use std::io::Write;
    let truth = beryl_lab::algo::Truth::load(&beryl::repo_path("bench/algo/truth.json"))?;
    let mut f = std::io::BufWriter::new(std::fs::File::create(&out).with_context(|| format!("creating {}", out.display()))?);
    let mut total = 0;
    for p in &packages {
        if beryl_lab::pairs::held_out(p, &truth) {
            anyhow::bail!("{p} is a benchmark or held-out project; it must not be mined");
        }
        let root = fetch::fetch(p).with_context(|| format!("fetching {p}"))?;
        let t = Instant::now();
        let pairs = beryl_lab::pairs::mine(&root, p);
        for x in &pairs {
            writeln!(f, "{}", serde_json::to_string(x)?)?;
        }
        total += pairs.len();
        eprintln!("{p}: {} pairs in {:.1} s", pairs.len(), t.elapsed().as_secs_f64());
    }
    f.flush()?;
    println!("{total} pairs from {} packages in {}", packages.len(), out.display());
    Ok(())
}

/// Distills the static table in f32 (so it does not depend on the CPU) and writes it
/// with a manifest.
pub fn distill_static(corpora: Vec<PathBuf>, out: PathBuf, dir: Option<PathBuf>) -> Result<()> {
    use beryl::features::{static_vec::StaticTable, Encoder, EncoderOptions, Precision};
    let t = Instant::now();
    let dir = dir.unwrap_or_else(Encoder::default_dir);
    let enc = Encoder::load_with(&dir, EncoderOptions { precision: Precision::F32, ..Default::default() })?;
    let c = corpus::load(&corpora, &WalkOptions::default());
    let texts: Vec<&str> = c.icfg.graph.node_weights().map(|n| n.text.as_str()).filter(|t| !t.is_empty()).collect();
    let table = StaticTable::distill(&enc, &texts)?;
    if let Some(d) = out.parent() {
        std::fs::create_dir_all(d)?;
    }
    table.save(&out)?;
    let manifest = serde_json::json!({
        "what": "static token vectors distilled from all-MiniLM-L6-v2 (src/features/static_vec.rs)",
        "encoder": enc.identity(),
        "precision": "f32",
        "sif_a": beryl::features::static_vec::SIF_A,
        "frequency_corpora": corpora,
        "statements": texts.len(),
        "sha256": table.hash(),
        "command": format!("beryl distill-static --corpus {}", corpora.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" ")),
    });
    std::fs::write(out.with_file_name("manifest.json"), serde_json::to_string_pretty(&manifest)?)?;
    println!("{}: {} statements counted, table sha256 {}, {:.1} s", out.display(), texts.len(), table.hash(), t.elapsed().as_secs_f64());
    Ok(())
}
