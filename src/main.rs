use anyhow::{bail, Context, Result};
use beryl::corpus::{self, fetch, WalkOptions};
use beryl::pcode::{self, Classifier};
use beryl::report;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

mod cli;

#[derive(Parser)]
#[command(name = "beryl", version, about = "Find algorithm implementations in C, C++ and Java code")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Args, Clone)]
struct Walk {
    /// Files or directories to read.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Read files that .gitignore and .ignore exclude.
    #[arg(long)]
    no_ignore: bool,
    /// Skip files larger than this many bytes.
    #[arg(long, default_value_t = 1 << 20)]
    max_file_size: u64,
}

impl Walk {
    fn options(&self) -> WalkOptions {
        WalkOptions {
            max_bytes: self.max_file_size,
            respect_ignore: !self.no_ignore,
            langs: Vec::new(),
        }
    }
}

#[derive(Copy, Clone, ValueEnum)]
enum GraphFormat {
    Dot,
    Json,
    Stats,
}

#[derive(Subcommand)]
enum Cmd {
    /// Control-flow graphs of a function, or statistics of a whole corpus.
    Graph {
        #[command(flatten)]
        walk: Walk,
        /// Show the CFG of the functions with this name (`name`, `Cls::name` or `Cls.name`).
        #[arg(long)]
        function: Option<String>,
        /// Output format; default `stats` without --function, `dot` with it.
        #[arg(long, value_enum)]
        format: Option<GraphFormat>,
        /// Print statistics as JSON (with --format stats).
        #[arg(long)]
        json: bool,
    },
    /// Real corpora from Debian source packages.
    Corpus {
        #[command(subcommand)]
        cmd: CorpusCmd,
    },
    /// The p-language: check, convert plain pseudocode, graph, train the line classifier.
    #[command(subcommand)]
    Pcode(PcodeCmd),
    /// Train the GCN graph autoencoder on real corpora (self-supervised link prediction).
    Train {
        /// Corpus roots; each contributes at most --max-nodes nodes.
        #[arg(long = "corpus", required = true, num_args = 1..)]
        corpora: Vec<PathBuf>,
        /// Keep only files of this language.
        #[arg(long, value_enum, default_value_t = LangSel::Mixed)]
        lang: LangSel,
        /// Output directory (weights.safetensors + manifest.json).
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value_t = 40_000)]
        max_nodes: usize,
        #[arg(long, default_value_t = 100)]
        epochs: usize,
        /// Epochs without a better validation AUC before stopping.
        #[arg(long, default_value_t = 5)]
        patience: usize,
        #[arg(long, default_value_t = 7)]
        seed: u64,
        /// libtorch threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Folder with the encoder files (default $BERYL_ENCODER_DIR or /opt/beryl/encoder).
        #[arg(long)]
        encoder_dir: Option<PathBuf>,
        /// Text vectors of statement nodes, the model's inputs (an index must use the same).
        #[arg(long, value_enum, default_value = "static")]
        encoder: beryl::features::TextModel,
    },
    /// Check that libtorch and FAISS load and compute.
    Doctor,
    /// Index C, C++ and Java sources for search (incremental, atomic).
    Index(cli::search::IndexArgs),
    /// Search an index with pseudocode (--pseudo FILE) or a natural-language QUERY.
    Search(cli::search::SearchArgs),
    /// Benchmarks of search quality: CLARC, GenCodeSearchNet, algorithm location.
    #[command(subcommand)]
    Eval(cli::eval::EvalCmd),
    /// Rewrite identifiers of C, C++ and Java sources consistently (neutral or random names).
    Anonymize(cli::anonymize::AnonymizeArgs),
    /// Distill static token vectors from the text encoder (model2vec recipe), with token
    /// frequencies from the statements of the given corpora.
    DistillStatic {
        #[arg(long = "corpus", required = true, num_args = 1..)]
        corpora: Vec<PathBuf>,
        #[arg(long, default_value = "models/static/table.bin")]
        out: PathBuf,
        #[arg(long)]
        encoder_dir: Option<PathBuf>,
    },
    /// Mine (doc comment, function) pairs, with anonymized twins, from Debian source
    /// packages for training a code-search encoder (JSON lines). Packages of bench/algo and
    /// those kept for held-out evaluation are refused.
    MinePairs {
        #[arg(required = true)]
        packages: Vec<String>,
        #[arg(long)]
        out: PathBuf,
    },
    /// Speed benchmarks; they print ratios against a baseline run in the same process.
    Bench {
        #[command(subcommand)]
        cmd: BenchCmd,
    },
}

#[derive(Subcommand)]
enum CorpusCmd {
    /// Download and unpack source packages (cached); prints each unpacked path.
    Fetch {
        #[arg(required = true)]
        names: Vec<String>,
    },
}

#[derive(Copy, Clone, ValueEnum)]
enum LangSel {
    C,
    Cpp,
    Java,
    Mixed,
}

#[derive(Subcommand)]
enum PcodeCmd {
    /// Parse a p-code file and report syntax errors.
    Check { file: PathBuf },
    /// Convert plain pseudocode to p-code (printed on stdout).
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
enum PcodeFormat {
    Dot,
    Json,
}

#[derive(Subcommand)]
enum BenchCmd {
    /// Full `index` throughput against parsing alone, re-index speed-up, size, memory.
    Index(cli::search::BenchIndexArgs),
    /// Query latency p50/p95 of pseudocode and natural-language search on an index.
    Search(cli::search::BenchSearchArgs),
    /// Parse + CFG speed in lines/s with one thread (the baseline) and with all threads.
    Parse {
        #[command(flatten)]
        walk: Walk,
        /// Repetitions of each measurement; the best is reported.
        #[arg(long, default_value_t = 3)]
        repeat: u32,
    },
    /// Text-encoder speed in texts/s, statement- and function-sized: one text per forward
    /// pass (the baseline), length-sorted batches, and cache hits.
    Encoder {
        /// Texts of each size.
        #[arg(long, default_value_t = 128)]
        n: usize,
        /// libtorch threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Folder with model.safetensors, tokenizer.json, config.json
        /// (default: $BERYL_ENCODER_DIR, else /opt/beryl/encoder).
        #[arg(long)]
        encoder_dir: Option<PathBuf>,
        /// Most padded tokens in one forward pass (default: the encoder's).
        #[arg(long)]
        batch_tokens: Option<usize>,
        /// Repetitions of each measurement; the best is reported.
        #[arg(long, default_value_t = 2)]
        repeat: u32,
        /// Also time this static token table against the model, one thread each.
        #[arg(long = "static")]
        static_table: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let cli = Cli::parse();
    let read_only = matches!(cli.cmd, Cmd::Search(_));
    match run(cli) {
        Ok(()) if read_only => exit_now(),
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("beryl: error: {e:#}");
            // A missing, damaged or mismatched index gets its own code, so scripts can rebuild.
            let index_fault = e.chain().any(|c| {
                c.downcast_ref::<beryl::index::IndexError>().is_some_and(|x| x.is_index_fault())
                    || matches!(c.downcast_ref::<beryl::search::SearchError>(), Some(beryl::search::SearchError::Index(x)) if x.is_index_fault())
            });
            ExitCode::from(if index_fault { 3 } else { 1 })
        }
    }
}

/// Ends a command that wrote nothing but its output without the libraries' exit handlers:
/// libtorch's took 0.13 s, an eighth of a one-shot `beryl search`.
fn exit_now() -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    extern "C" {
        fn _exit(code: i32) -> !;
    }
    // Safety: `_exit` only ends the process; the output is flushed above and a search
    // holds no file open for writing (`--html` is written whole before).
    unsafe { _exit(0) }
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Graph { walk, function, format, json } => graph(walk, function, format, json),
        Cmd::Corpus { cmd: CorpusCmd::Fetch { names } } => {
            for n in names {
                let p = fetch::fetch(&n).with_context(|| format!("fetching corpus {n}"))?;
                println!("{}", p.display());
            }
            Ok(())
        }
        Cmd::Pcode(cmd) => pcode_cmd(cmd),
        Cmd::Train { corpora, lang, out, max_nodes, epochs, patience, seed, threads, encoder_dir, encoder } => {
            train_cmd(corpora, lang, out, max_nodes, epochs, patience, seed, threads, encoder_dir, encoder)
        }
        Cmd::Doctor => {
            for line in beryl::native::check().context("native runtime check failed")? {
                println!("{line}");
            }
            let p = beryl::features::Precision::auto();
            println!("text encoder linear layers: {p:?} (BERYL_ENCODER_PRECISION=f32|bf16 overrides; bf16 is the default where the CPU has AVX512-BF16)");
            Ok(())
        }
        Cmd::Index(a) => cli::search::index_cmd(a),
        Cmd::Search(a) => cli::search::search_cmd(a),
        Cmd::Eval(cmd) => cli::eval::run(cmd),
        Cmd::Anonymize(args) => cli::anonymize::run(args),
        Cmd::Bench { cmd: BenchCmd::Index(a) } => cli::search::bench_index(a),
        Cmd::Bench { cmd: BenchCmd::Search(a) } => cli::search::bench_search(a),
        Cmd::Bench { cmd: BenchCmd::Parse { walk, repeat } } => bench_parse(walk, repeat),
        Cmd::Bench { cmd: BenchCmd::Encoder { n, threads, encoder_dir, batch_tokens, repeat, static_table } } => {
            bench_encoder(n, threads, encoder_dir, batch_tokens, repeat, static_table)
        }
        Cmd::DistillStatic { corpora, out, encoder_dir } => distill_static(corpora, out, encoder_dir),
        Cmd::MinePairs { packages, out } => mine_pairs(packages, out),
    }
}

fn pcode_cmd(cmd: PcodeCmd) -> Result<()> {
    let with_file = |e: pcode::PcodeError, f: &std::path::Path| anyhow::anyhow!("{}", e.with_file(&f.display().to_string()));
    match cmd {
        PcodeCmd::Check { file } => {
            let src = pcode::read_file(&file)?;
            let procs = pcode::graphs(&src, 0).map_err(|e| with_file(e, &file))?;
            let names: Vec<&str> = procs.iter().map(|p| p.meta.name.as_str()).collect();
            println!("{}: ok ({} procedures: {})", file.display(), procs.len(), names.join(", "));
        }
        PcodeCmd::Convert { file, model } => {
            let path = model.unwrap_or_else(Classifier::default_path);
            let clf = Classifier::load(&path).with_context(|| format!("loading classifier {}", path.display()))?;
            let src = pcode::read_file(&file)?;
            let conv = pcode::convert(&src, &clf).map_err(|e| with_file(e, &file))?;
            print!("{}", conv.pcode);
        }
        PcodeCmd::Graph { file, format } => {
            let src = pcode::read_file(&file)?;
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

#[allow(clippy::too_many_arguments)]
fn train_cmd(
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
    let threads = cli::search::all_cores(threads);
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

fn check_paths(walk: &Walk) -> Result<()> {
    for p in &walk.paths {
        if !p.exists() {
            bail!("{}: no such file or directory", p.display());
        }
    }
    Ok(())
}

fn graph(walk: Walk, function: Option<String>, format: Option<GraphFormat>, json: bool) -> Result<()> {
    check_paths(&walk)?;
    let c = corpus::load(&walk.paths, &walk.options());
    let format = format.unwrap_or(if function.is_some() { GraphFormat::Dot } else { GraphFormat::Stats });
    match (format, function) {
        (GraphFormat::Stats, _) => {
            let s = c.stats();
            if json {
                println!("{}", serde_json::to_string_pretty(&s)?);
            } else {
                print!("{}", report::graph::stats_text(&s));
            }
        }
        (_, None) => bail!("--format dot/json needs --function NAME"),
        (f, Some(name)) => {
            let ids: Vec<u32> = c.icfg.functions_named(&name).map(|(i, _)| i).collect();
            if ids.is_empty() {
                bail!("no function named {name:?} in {} functions", c.icfg.functions.len());
            }
            match f {
                GraphFormat::Dot => print!("{}", report::graph::functions_dot(&c.icfg, &ids)),
                _ => println!("{}", report::graph::functions_json(&c.icfg, &ids)),
            }
        }
    }
    Ok(())
}

fn bench_parse(walk: Walk, repeat: u32) -> Result<()> {
    check_paths(&walk)?;
    let opts = walk.options();
    let measure = |threads: usize| -> Result<(f64, u64)> {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
        let mut best = f64::INFINITY;
        let mut lines = 0;
        for _ in 0..repeat.max(1) {
            let t = Instant::now();
            let c = pool.install(|| corpus::load(&walk.paths, &opts));
            best = best.min(t.elapsed().as_secs_f64());
            lines = c.icfg.files.iter().map(|f| f.lines as u64).sum();
        }
        Ok((best, lines))
    };
    let all = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let (t1, lines) = measure(1)?;
    let (tn, _) = measure(all)?;
    println!("corpus         {lines} lines");
    println!("1 thread       {:.3} s  {:>10.0} lines/s  (baseline)", t1, lines as f64 / t1);
    println!(
        "{all} threads      {:.3} s  {:>10.0} lines/s  ({:.2}x baseline, {:.0} lines/s per core)",
        tn,
        lines as f64 / tn,
        t1 / tn,
        lines as f64 / tn / all as f64
    );
    Ok(())
}

/// Packages never mined: the benchmark's projects (bench/algo/truth.json) and those kept
/// for an evaluation this project does not see.
const HELD_OUT: [&str; 6] = ["coreutils", "guava-libraries", "guava", "libguava-java", "jgrapht", "libjgrapht-java"];

fn mine_pairs(packages: Vec<String>, out: PathBuf) -> Result<()> {
    use std::io::Write;
    let truth = beryl::eval::algo::Truth::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/algo/truth.json"))?;
    let mut f = std::io::BufWriter::new(std::fs::File::create(&out).with_context(|| format!("creating {}", out.display()))?);
    let mut total = 0;
    for p in &packages {
        let benched = truth.corpora.iter().any(|c| c.debian_source_package == *p);
        if benched || HELD_OUT.contains(&p.as_str()) || p.contains("jgrapht") || p.contains("guava") {
            anyhow::bail!("{p} is a benchmark or held-out project; it must not be mined");
        }
        let root = fetch::fetch(p).with_context(|| format!("fetching {p}"))?;
        let t = Instant::now();
        let pairs = beryl::features::pairs::mine(&root, p);
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
fn distill_static(corpora: Vec<PathBuf>, out: PathBuf, dir: Option<PathBuf>) -> Result<()> {
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

fn bench_encoder(n: usize, threads: Option<usize>, dir: Option<PathBuf>, batch_tokens: Option<usize>, repeat: u32, static_table: Option<PathBuf>) -> Result<()> {
    use beryl::features::{count_source, synth, Encoder, EncoderOptions, Precision};
    let n = n.max(1);
    let threads = cli::search::all_cores(threads);
    let dir = dir.unwrap_or_else(Encoder::default_dir);
    let mut opts = EncoderOptions { threads: Some(threads), ..Default::default() };
    if let Some(b) = batch_tokens {
        opts.batch_tokens = b.max(1);
    }
    let t = Instant::now();
    let mut enc = Encoder::load_with(&dir, opts.clone()).context("loading the text encoder")?;
    println!("encoder        {} (hash {}), loaded in {:.2} s, {threads} threads", dir.display(), &enc.hash()[..16], t.elapsed().as_secs_f64());
    let tmp = std::env::temp_dir().join(format!("beryl-bench-cache-{}.bin", std::process::id()));
    enc.attach_cache(&tmp)?;
    // Warm-up: the first forward pass pays for libtorch's lazy initialisation.
    enc.encode_uncached(&["warm up the encoder"], 1)?;

    let sizes = [("statements", synth::statements(n, 1)), ("functions", synth::functions(n, 2))];
    for (name, texts) in &sizes {
        let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
        let mut tokens = 0;
        for t in &refs {
            tokens += enc.token_count(t)?;
        }
        let rate = |secs: f64| refs.len() as f64 / secs;
        // Best of `repeat` runs: other work on the machine only ever slows a run down.
        let time = |f: &mut dyn FnMut() -> Result<()>, times: u32| -> Result<f64> {
            let mut best = f64::INFINITY;
            for _ in 0..times.max(1) {
                let t = Instant::now();
                f()?;
                best = best.min(t.elapsed().as_secs_f64());
            }
            Ok(best)
        };
        let single = time(&mut || enc.encode_uncached(&refs, 1).map(|_| ()).map_err(Into::into), repeat)?;
        let batched = time(&mut || enc.encode_uncached(&refs, opts.max_batch).map(|_| ()).map_err(Into::into), repeat)?;
        // The first cached pass encodes and writes; it runs once, as after it all texts hit.
        let fill = time(&mut || enc.encode(&refs).map(|_| ()).map_err(Into::into), 1)?;
        let hits = time(&mut || enc.encode(&refs).map(|_| ()).map_err(Into::into), repeat)?;
        println!("{name:<14} {} texts, {:.0} tokens each on average", refs.len(), tokens as f64 / refs.len() as f64);
        println!("  one at a time  {:>10.1} texts/s  (baseline)", rate(single));
        println!("  batched        {:>10.1} texts/s  ({:.2}x baseline)", rate(batched), single / batched);
        println!("  batched+cache  {:>10.1} texts/s  ({:.2}x baseline; first pass, writes the cache)", rate(fill), single / fill);
        println!("  cache hits     {:>10.1} texts/s  ({:.0}x baseline)", rate(hits), single / hits);
    }
    let _ = std::fs::remove_file(&tmp);

    // bf16 linear layers against f32 (the baseline), batched, with the worst cosine between them.
    let load = |precision: Precision| Encoder::load_with(&dir, EncoderOptions { precision, ..opts.clone() });
    let (f32e, bf16e) = (load(Precision::F32)?, load(Precision::Bf16)?);
    println!("precision      batched, linear layers in bf16 against f32 (default here: {:?})", enc.precision());
    for (name, texts) in &sizes {
        let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
        let mut out = Vec::new();
        let mut secs = Vec::new();
        for e in [&f32e, &bf16e] {
            e.encode_uncached(&refs[..1], 1)?;
            let t = Instant::now();
            out.push(e.encode_uncached(&refs, opts.max_batch)?);
            secs.push(t.elapsed().as_secs_f64());
        }
        let worst = out[0].iter().zip(&out[1]).map(|(a, b)| beryl::features::encoder::cosine(a, b)).fold(1f32, f32::min);
        println!(
            "  {name:<12} f32 {:>8.1} texts/s (baseline)  bf16 {:>8.1} texts/s ({:.2}x)  min cosine {worst:.5}",
            refs.len() as f64 / secs[0],
            refs.len() as f64 / secs[1],
            secs[0] / secs[1]
        );
    }

    // The static table against the model, one thread each (`bench encoder --static FILE`).
    if let Some(path) = &static_table {
        let table = beryl::features::static_vec::StaticTable::load(path, &enc).with_context(|| format!("loading {}", path.display()))?;
        let stmts = synth::statements(20_000.max(n), 4);
        let refs: Vec<&str> = stmts.iter().map(|s| s.as_str()).collect();
        let t = Instant::now();
        let mut ids = Vec::new();
        let mut acc = 0f32;
        for r in &refs {
            acc += table.encode(r, &mut ids)[0];
        }
        let stat = refs.len() as f64 / t.elapsed().as_secs_f64();
        tch::set_num_threads(1);
        let one = Encoder::load_with(&dir, EncoderOptions { threads: Some(1), ..opts.clone() })?;
        let sample = &refs[..refs.len().min(400)];
        one.encode_uncached(&sample[..1], 1)?;
        let t = Instant::now();
        one.encode_uncached(sample, opts.max_batch)?;
        let model = sample.len() as f64 / t.elapsed().as_secs_f64();
        println!("static table   {} (sha256 {}…)", path.display(), &table.hash()[..16]);
        println!("  statements, 1 thread: model batched {model:>9.0} texts/s (baseline)  static {stat:>10.0} texts/s ({:.0}x){}", stat / model, if acc.is_nan() { " !" } else { "" });
        tch::set_num_threads(threads as i32);
    }

    // Math-operator counts parse each statement; they must stay far cheaper than encoding.
    let stmts = synth::statements(5000, 3);
    let t = Instant::now();
    let mut total = 0u64;
    for s in &stmts {
        total += count_source(beryl::graph::Lang::C, s).total() as u64;
    }
    let secs = t.elapsed().as_secs_f64();
    println!("math counts    {:>10.0} statements/s  (count_source, C; {total} operators)", stmts.len() as f64 / secs);
    Ok(())
}
