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

pub struct MineArgs {
    pub packages: Vec<String>,
    pub packages_from: Option<PathBuf>,
    pub out: PathBuf,
    pub list: Option<PathBuf>,
    pub rebuild: Option<PathBuf>,
    pub exclude_code: Vec<PathBuf>,
    pub per_package: usize,
}

/// Bumped when mining would give other pairs from the same tree, so cached pairs of an
/// older miner are not reused.
const MINER: u32 = 3;

/// The pairs of package `pkg`, unpacked at `root`: from the cache when this package version
/// was mined by this miner already, else mined (and cached).
fn mined(pkg: &str, root: &std::path::Path) -> Result<Vec<beryl_lab::pairs::Pair>> {
    use std::io::BufRead;
    let version = fetch::fetched_version(pkg).unwrap_or_default();
    let cache = fetch::cache_dir().join("pairs").join(format!("v{MINER}")).join(format!("{pkg}_{version}.jsonl"));
    if let Ok(f) = std::fs::File::open(&cache) {
        let pairs: std::result::Result<Vec<beryl_lab::pairs::Pair>, _> = std::io::BufReader::new(f).lines().map(|l| serde_json::from_str(&l.map_err(anyhow::Error::from)?).map_err(anyhow::Error::from)).collect();
        if let Ok(p) = pairs {
            return Ok(p);
        }
    }
    let mut pairs = beryl_lab::pairs::mine(root, pkg);
    for p in &mut pairs {
        p.version = version.clone();
    }
    let tmp = cache.with_extension(format!("{}.tmp", std::process::id()));
    write_pairs(&tmp, &pairs)?;
    std::fs::rename(&tmp, &cache)?;
    Ok(pairs)
}

/// Yields each package's mined pairs in order, fetching and unpacking the next packages on
/// two threads while the current one is mined.
fn mine_in_order(packages: &[String], mut each: impl FnMut(&str, Result<Vec<beryl_lab::pairs::Pair>>, f64) -> Result<()>) -> Result<()> {
    use std::sync::mpsc;
    let (tx, rx) = mpsc::sync_channel::<(usize, Result<PathBuf>)>(4);
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let list: std::sync::Arc<Vec<String>> = std::sync::Arc::new(packages.to_vec());
    let mut workers = Vec::new();
    for _ in 0..2 {
        let (tx, next, list) = (tx.clone(), next.clone(), list.clone());
        workers.push(std::thread::spawn(move || loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let Some(p) = list.get(i) else { break };
            let r = fetch::fetch(p).with_context(|| format!("fetching {p}"));
            if tx.send((i, r)).is_err() {
                break;
            }
        }));
    }
    drop(tx);
    let mut ready: std::collections::HashMap<usize, Result<PathBuf>> = Default::default();
    for i in 0..packages.len() {
        while !ready.contains_key(&i) {
            let Ok((j, r)) = rx.recv() else { break };
            ready.insert(j, r);
        }
        let t = Instant::now();
        let r = match ready.remove(&i) {
            Some(Ok(root)) => mined(&packages[i], &root),
            Some(Err(e)) => Err(e),
            None => Err(anyhow::anyhow!("{}: not fetched", packages[i])),
        };
        each(&packages[i], r, t.elapsed().as_secs_f64())?;
    }
    drop(rx);
    for w in workers {
        let _ = w.join();
    }
    Ok(())
}

fn write_pairs(out: &PathBuf, pairs: &[beryl_lab::pairs::Pair]) -> Result<()> {
    use std::io::Write;
    if let Some(d) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(d)?;
    }
    let mut f = std::io::BufWriter::new(std::fs::File::create(out).with_context(|| format!("creating {}", out.display()))?);
    for x in pairs {
        writeln!(f, "{}", serde_json::to_string(x)?)?;
    }
    f.flush()?;
    Ok(())
}

pub fn mine_pairs(a: MineArgs) -> Result<()> {
    use beryl_lab::pairs::{self, PairRef, Selection};
    let t0 = Instant::now();
    if let Some(list) = &a.rebuild {
        let refs = pairs::read_list(list).map_err(anyhow::Error::msg)?;
        let truth = beryl_lab::algo::Truth::load(&beryl::repo_path("bench/algo/truth.json"))?;
        if let Some(r) = refs.iter().find(|r| pairs::held_out(&r.package, &truth)) {
            bail!("{}: lists {}, a benchmark or held-out project that must not be mined", list.display(), r.package);
        }
        let mut by_pkg: std::collections::BTreeMap<&str, Vec<&PairRef>> = Default::default();
        for r in &refs {
            by_pkg.entry(r.package.as_str()).or_default().push(r);
        }
        let packages: Vec<String> = by_pkg.keys().map(|s| s.to_string()).collect();
        let (mut all, mut missing, mut failed) = (Vec::new(), 0usize, Vec::new());
        mine_in_order(&packages, |pkg, r, _| {
            let want = &by_pkg[pkg];
            match r {
                Ok(mined) => {
                    let have = mined.first().map(|p| p.version.clone()).unwrap_or_default();
                    if let Some(w) = want.first().filter(|w| !have.is_empty() && w.version != have) {
                        eprintln!("{pkg}: listed version {} but the archive has {have}; pairs whose code changed are missing", w.version);
                    }
                    let (got, lost) = pairs::rebuild(want, mined);
                    missing += lost.len();
                    all.extend(got);
                }
                Err(e) => {
                    eprintln!("{pkg}: skipped: {e:#}");
                    missing += want.len();
                    failed.push(pkg.to_string());
                }
            }
            Ok(())
        })?;
        write_pairs(&a.out, &all)?;
        println!("rebuilt {} of {} listed pairs from {} packages into {} ({missing} missing; packages not fetched: {}) in {:.0} s", all.len(), refs.len(), packages.len() - failed.len(), a.out.display(), if failed.is_empty() { "none".to_string() } else { failed.join(", ") }, t0.elapsed().as_secs_f64());
        if all.is_empty() {
            bail!("no listed pair could be rebuilt");
        }
        return Ok(());
    }
    let truth = beryl_lab::algo::Truth::load(&beryl::repo_path("bench/algo/truth.json"))?;
    let mut packages = a.packages.clone();
    if let Some(f) = &a.packages_from {
        let text = std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        packages.extend(text.lines().map(|l| l.split('#').next().unwrap_or("").trim()).filter(|l| !l.is_empty()).map(str::to_string));
    }
    packages.sort();
    packages.dedup();
    if packages.is_empty() {
        bail!("no packages to mine: name some, or give --packages-from FILE");
    }
    for p in &packages {
        if pairs::held_out(p, &truth) {
            bail!("{p} is a benchmark or held-out project; it must not be mined");
        }
    }
    let mut sel = Selection::new(a.per_package);
    let mut excluded = 0;
    for f in &a.exclude_code {
        let codes: Vec<String> = if f.extension().is_some_and(|e| e == "jsonl") {
            beryl_lab::gecs::load(f)?.0.into_iter().map(|p| p.code).collect()
        } else {
            beryl_lab::clarc::ClarcFile::load(f)?.pool.into_iter().map(|c| c.code).collect()
        };
        excluded += codes.len();
        for c in &codes {
            sel.exclude(c);
        }
    }
    if excluded > 0 {
        eprintln!("{excluded} functions of {} evaluation files excluded", a.exclude_code.len());
    }
    let (mut kept, mut mined_total, mut used, mut failed) = (Vec::new(), 0usize, 0usize, 0usize);
    mine_in_order(&packages, |pkg, r, secs| {
        match r {
            Ok(p) => {
                mined_total += p.len();
                let k = sel.admit_package(p);
                if !k.is_empty() {
                    used += 1;
                }
                eprintln!("{pkg}: {} pairs kept in {secs:.1} s ({} so far)", k.len(), kept.len() + k.len());
                kept.extend(k);
            }
            Err(e) => {
                failed += 1;
                eprintln!("{pkg}: skipped: {e:#}");
            }
        }
        Ok(())
    })?;
    write_pairs(&a.out, &kept)?;
    if let Some(list) = &a.list {
        if let Some(d) = list.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(d)?;
        }
        let refs: Vec<PairRef> = kept.iter().map(PairRef::of).collect();
        pairs::write_list(list, &refs).with_context(|| format!("writing {}", list.display()))?;
    }
    let dev = kept.iter().filter(|p| p.split == "dev").count();
    let dev_pkgs: std::collections::BTreeSet<&str> = kept.iter().filter(|p| p.split == "dev").map(|p| p.source.as_str()).collect();
    println!(
        "{} pairs ({} train, {dev} dev from {} packages) from {used} of {} packages ({failed} not fetched), {mined_total} mined, dropped {:?}, in {:.0} s: {}",
        kept.len(),
        kept.len() - dev,
        dev_pkgs.len(),
        packages.len(),
        sel.dropped,
        t0.elapsed().as_secs_f64(),
        a.out.display()
    );
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
    let texts: Vec<&str> = c.icfg.graph.node_weights().map(|n| &*n.text).filter(|t| !t.is_empty()).collect();
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
