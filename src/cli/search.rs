//! `beryl index` and `beryl search`.

use anyhow::{bail, Context, Result};
use beryl::corpus::WalkOptions;
use beryl::features::{CacheAt, TextEncoders, TextModel};
use beryl::index::{self, FeatureSet, Index, IndexOptions};
use beryl::pcode::Classifier;
use beryl::report;
use beryl::search::hybrid::Method;
use beryl::search::ranker::Ranker;
use beryl::search::{self, SearchOptions};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

/// `$BERYL_MODEL`, else the shipped graph model trained on `statements`' text vectors:
/// `models/default` (static vectors) or `models/minilm`.
pub fn default_model(statements: TextModel) -> PathBuf {
    std::env::var_os("BERYL_MODEL").filter(|m| !m.is_empty()).map(PathBuf::from).unwrap_or_else(|| {
        let name = if statements == TextModel::Minilm { "models/minilm" } else { "models/default" };
        Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
    })
}

/// `threads`, else every core.
pub fn all_cores(threads: Option<usize>) -> usize {
    threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Which text encoder serves statements and which functions, for commands that build indexes.
#[derive(clap::Args, Clone, Copy)]
pub struct EncoderArgs {
    /// Text vectors of statement nodes (the graph model's inputs): static token vectors
    /// (fast) or all-MiniLM-L6-v2.
    #[arg(long = "encoder", value_enum, default_value = "static")]
    pub statements: TextModel,
    /// Text vectors of functions (natural-language and dense search): the code-search
    /// encoder, MiniLM, or static token vectors.
    #[arg(long = "function-encoder", value_enum, default_value = "code")]
    pub functions: TextModel,
}

impl EncoderArgs {
    /// The encoders, each with its persistent vector cache.
    pub fn load(self, threads: Option<usize>) -> TextEncoders {
        TextEncoders::new(self.statements, self.functions, Some(all_cores(threads)), CacheAt::Default)
    }
}

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
    /// Read files that .gitignore and .ignore exclude.
    #[arg(long)]
    no_ignore: bool,
    /// Skip files larger than this many bytes.
    #[arg(long, default_value_t = 1 << 20)]
    max_file_size: u64,
    /// libtorch threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Print the build report as JSON.
    #[arg(long)]
    json: bool,
}

pub fn index_cmd(a: IndexArgs) -> Result<()> {
    for p in &a.paths {
        if !p.exists() {
            bail!("{}: no such file or directory", p.display());
        }
    }
    let dir = a.index.clone().unwrap_or_else(|| {
        let first = &a.paths[0];
        if first.is_dir() { first.join(".beryl") } else { first.parent().unwrap_or(Path::new(".")).join(".beryl") }
    });
    let features = FeatureSet::parse(&a.features).map_err(anyhow::Error::msg)?;
    let opts = IndexOptions {
        walk: WalkOptions { max_bytes: a.max_file_size, respect_ignore: !a.no_ignore, langs: Vec::new() },
        features,
        factory: a.faiss.clone(),
        flat_max: a.flat_max,
        force: a.force,
    };
    let encs = a.encoders.load(a.threads);
    let model = a.model.clone().unwrap_or_else(|| default_model(a.encoders.statements));
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{prefix:>9} [{bar:30}] {pos}/{len} files {per_sec} eta {eta} {elapsed_precise}")?
            .progress_chars("=> "),
    );
    let mut stage = String::new();
    let r = index::build(&a.paths, &dir, &opts, &model, &encs, &mut |s, done, total| {
        if s != stage {
            stage = s.to_string();
            bar.reset();
            bar.set_prefix(stage.clone());
            if bar.is_hidden() {
                eprintln!("beryl index: {stage}");
            }
        }
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })
    .with_context(|| format!("indexing into {}", dir.display()))?;
    bar.finish_and_clear();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else if r.up_to_date {
        println!("{}: up to date ({} files unchanged, {:.2} s)", dir.display(), r.files, r.total_seconds);
    } else {
        println!(
            "{}: {} files ({} unchanged, {} changed, {} new, {} removed), {} lines, {} functions, {} nodes",
            dir.display(),
            r.files,
            r.unchanged_files,
            r.changed_files,
            r.new_files,
            r.removed_files,
            r.lines,
            r.functions,
            r.nodes
        );
        println!(
            "{:.1} s ({:.0} lines/s): parse {:.1} s, vectors {:.1} s ({} texts encoded, {} from cache), write {:.1} s; index {:.1} MB = {:.2} × source",
            r.total_seconds,
            r.lines as f64 / r.total_seconds.max(1e-9),
            r.parse_seconds,
            r.embed_seconds,
            r.texts_encoded,
            r.texts_from_cache,
            r.write_seconds,
            r.index_bytes as f64 / 1e6,
            r.index_bytes as f64 / r.source_bytes.max(1) as f64
        );
    }
    Ok(())
}

#[derive(clap::Args)]
pub struct SearchArgs {
    /// A natural-language query (or use --pseudo).
    query: Option<String>,
    /// A pseudocode file (p-code or plain), `-` for standard input.
    #[arg(long, conflicts_with = "query")]
    pseudo: Option<PathBuf>,
    /// Results to show.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Index directory.
    #[arg(long, default_value = ".beryl")]
    index: PathBuf,
    /// Check that the index was built with this model.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Natural language: match sentences to code nodes and group them, like pseudocode.
    #[arg(long)]
    fragments: bool,
    /// Pseudocode search method: hybrid (every signal, learned scorer), beryllium (the
    /// paper's node matching and grouping), bm25, name, dense.
    #[arg(long, value_enum, default_value_t = Method::Hybrid)]
    method: Method,
    /// Ranker weights for --method hybrid (default: models/ranker/weights.json).
    #[arg(long)]
    ranker: Option<PathBuf>,
    /// Source nodes fetched per query node.
    #[arg(long, default_value_t = 100)]
    k: usize,
    /// Longest ICFG path inside one fragment.
    #[arg(long, default_value_t = 8)]
    radius: u32,
    /// IVF lists probed per query (IVF indexes only).
    #[arg(long, default_value_t = 32)]
    nprobe: usize,
    /// Print JSON (schema: docs/search-json.md).
    #[arg(long)]
    json: bool,
    /// Also write an HTML page showing the query beside each fragment.
    #[arg(long)]
    html: Option<PathBuf>,
    /// libtorch threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
}

pub fn search_cmd(a: SearchArgs) -> Result<()> {
    let (text, name) = match (&a.pseudo, &a.query) {
        (Some(p), _) if p.as_os_str() == "-" => {
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s).context("reading the query from standard input")?;
            (s, PathBuf::from("<stdin>"))
        }
        (Some(p), _) => (std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?, p.clone()),
        (None, Some(q)) => (q.clone(), PathBuf::from("<query>")),
        (None, None) => bail!("give a natural-language QUERY or --pseudo FILE"),
    };
    let mut idx = Index::open(&a.index, a.model.as_deref(), a.nprobe)?;
    // A query has a handful of texts: encoding them costs milliseconds, while opening the
    // persistent vector cache of a large corpus reads it whole (about 1 GB for 2.7 M lines).
    let enc = idx.encoders(Some(all_cores(a.threads)));
    let opts = SearchOptions { top: a.top.max(1), k: a.k.max(1), radius: a.radius, ..SearchOptions::default() };
    let r = if a.pseudo.is_some() {
        let clf = || {
            let p = Classifier::default_path();
            Classifier::load(&p)
        };
        let ranker = match a.method {
            Method::Hybrid => Some(load_ranker(a.ranker.as_deref())?),
            _ => None,
        };
        search::hybrid::search(&mut idx, &enc, &text, &name, clf, &opts, a.method, ranker.as_ref())?
    } else if a.fragments {
        search::natural_fragments(&mut idx, &enc, &text, &opts)?
    } else {
        search::natural(&mut idx, &enc, &text, &opts)?
    };
    if a.json {
        println!("{}", report::search::json(&r));
    } else {
        let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        print!("{}", report::search::text(&r, color));
    }
    if let Some(h) = &a.html {
        let page = report::search::html(&r, &text, &mut |p| std::fs::read(p).ok().map(|b| String::from_utf8_lossy(&b).lines().map(String::from).collect()));
        std::fs::write(h, page).with_context(|| format!("writing {}", h.display()))?;
        eprintln!("wrote {}", h.display());
    }
    Ok(())
}

/// The hybrid scorer's weights: `path`, else the shipped ones.
pub fn load_ranker(path: Option<&Path>) -> Result<Ranker> {
    let p = path.map(Path::to_path_buf).unwrap_or_else(Ranker::default_path);
    Ranker::load(&p).map_err(|e| anyhow::anyhow!(beryl::search::SearchError::NoRanker(e.to_string())))
}

#[derive(clap::Args)]
pub struct BenchIndexArgs {
    /// Source roots; their C, C++ and Java files are copied to a scratch folder first.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Keep using the persistent text-vector cache (default: start from an empty one).
    #[arg(long)]
    warm: bool,
    #[command(flatten)]
    encoders: EncoderArgs,
    #[arg(long)]
    threads: Option<usize>,
}

fn peak_rss_mb() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Full index throughput against parsing alone (the baseline), the speed-up of re-indexing
/// after one file changed, index size against source size, and peak memory.
pub fn bench_index(a: BenchIndexArgs) -> Result<()> {
    use std::time::Instant;
    let opts = WalkOptions::default();
    let scratch = tempfile_dir("beryl-bench-index")?;
    let src = scratch.join("src");
    let (files, _) = beryl::corpus::walk::discover(&a.paths, &opts);
    for f in &files {
        let root = a.paths.iter().find(|r| f.starts_with(r)).cloned().unwrap_or_default();
        let rel = f.strip_prefix(&root).unwrap_or(f);
        let i = a.paths.iter().position(|r| *r == root).unwrap_or(0);
        let to = src.join(i.to_string()).join(rel);
        std::fs::create_dir_all(to.parent().unwrap_or(&src))?;
        std::fs::copy(f, &to).with_context(|| format!("copying {}", f.display()))?;
    }
    let roots = vec![src.clone()];
    let cache = if a.warm { CacheAt::Default } else { CacheAt::Dir(scratch.clone()) };
    let enc = TextEncoders::new(a.encoders.statements, a.encoders.functions, Some(all_cores(a.threads)), cache);
    // Loading the models is not indexing.
    enc.statements()?;
    enc.functions()?;
    println!("encoders       statements {}, functions {}", a.encoders.statements.name(), a.encoders.functions.name());

    let t = Instant::now();
    let c = beryl::corpus::load(&roots, &opts);
    let parse_s = t.elapsed().as_secs_f64();
    let lines: u64 = c.icfg.files.iter().map(|f| f.lines as u64).sum();
    let bytes: u64 = c.icfg.files.iter().map(|f| f.bytes).sum();
    drop(c);
    println!("corpus         {} files, {lines} lines, {:.1} MB", files.len(), bytes as f64 / 1e6);
    println!("parse only     {parse_s:>8.2} s  {:>9.0} lines/s  (baseline)", lines as f64 / parse_s);

    let dir = scratch.join("index");
    let iopts = IndexOptions::default();
    let model = default_model(a.encoders.statements);
    let full = index::build(&roots, &dir, &iopts, &model, &enc, &mut |_, _, _| {})?;
    println!(
        "full index     {:>8.2} s  {:>9.0} lines/s  ({:.3}x baseline; {} texts encoded, {} from cache{})",
        full.total_seconds,
        lines as f64 / full.total_seconds,
        parse_s / full.total_seconds,
        full.texts_encoded,
        full.texts_from_cache,
        if a.warm { ", warm cache" } else { ", empty cache" }
    );
    println!(
        "  stages       parse {:.2} s, vectors {:.2} s, write {:.2} s",
        full.parse_seconds, full.embed_seconds, full.write_seconds
    );
    let first = files.first().map(|f| {
        let root = a.paths.iter().find(|r| f.starts_with(r)).cloned().unwrap_or_default();
        src.join("0").join(f.strip_prefix(&root).unwrap_or(f))
    });
    if let Some(f) = first {
        let mut text = std::fs::read_to_string(&f).unwrap_or_default();
        text.push_str("\nint beryl_bench_touch(int a) { return a + 1; }\n");
        std::fs::write(&f, text)?;
        let inc = index::build(&roots, &dir, &iopts, &model, &enc, &mut |_, _, _| {})?;
        println!(
            "re-index       {:>8.2} s  after changing 1 file ({:.1}x faster than the full index; {} texts encoded)",
            inc.total_seconds,
            full.total_seconds / inc.total_seconds,
            inc.texts_encoded
        );
    }
    println!(
        "index size     {:.1} MB = {:.2} x source",
        full.index_bytes as f64 / 1e6,
        full.index_bytes as f64 / bytes.max(1) as f64
    );
    println!("peak memory    {:.0} MB (whole process)", peak_rss_mb());
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

fn tempfile_dir(prefix: &str) -> Result<PathBuf> {
    let d = std::env::temp_dir().join(format!("{prefix}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d)?;
    Ok(d)
}

#[derive(clap::Args)]
pub struct BenchSearchArgs {
    /// Index directory.
    #[arg(long, default_value = ".beryl")]
    index: PathBuf,
    /// Folder of `.p` queries (natural-language queries are their names as words).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/queries"))]
    queries: PathBuf,
    /// Runs of each query.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    #[arg(long)]
    threads: Option<usize>,
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// Query latency with the index opened once: pseudocode queries against natural-language
/// function search (the baseline), both p50 and p95.
pub fn bench_search(a: BenchSearchArgs) -> Result<()> {
    use std::time::Instant;
    let t = Instant::now();
    let mut idx = Index::open(&a.index, None, 32)?;
    // No vector cache: a user's query texts are new, so every query encodes its texts.
    let enc = idx.encoders(Some(all_cores(a.threads)));
    enc.statements()?;
    enc.functions()?;
    let open_ms = t.elapsed().as_secs_f64() * 1000.0;
    let mut qs: Vec<PathBuf> = std::fs::read_dir(&a.queries)?.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "p")).collect();
    qs.sort();
    let opts = SearchOptions::default();
    let ranker = load_ranker(None)?;
    let (mut pseudo_ms, mut nl_ms, mut hybrid_ms, mut stages) = (Vec::new(), Vec::new(), Vec::new(), [Vec::new(), Vec::new(), Vec::new()]);
    let clf = || Classifier::load(&Classifier::default_path());
    for q in &qs {
        let src = std::fs::read_to_string(q)?;
        let words = q.file_stem().map(|s| s.to_string_lossy().replace('-', " ")).unwrap_or_default();
        for _ in 0..a.repeat.max(1) {
            let r = search::pseudo(&mut idx, &enc, &src, q, clf, &opts)?;
            pseudo_ms.push(r.timings.total_ms);
            stages[0].push(r.timings.embed_ms);
            stages[1].push(r.timings.knn_ms);
            stages[2].push(r.timings.group_ms);
            let t = Instant::now();
            search::hybrid::search(&mut idx, &enc, &src, q, clf, &opts, Method::Hybrid, Some(&ranker))?;
            hybrid_ms.push(t.elapsed().as_secs_f64() * 1000.0);
            let t = Instant::now();
            search::natural(&mut idx, &enc, &format!("{words} algorithm"), &opts)?;
            nl_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let m = &idx.meta;
    println!("index          {} lines, {} files, {} nodes ({}), opened in {open_ms:.0} ms", m.lines, m.files, m.indexed_nodes, m.node_factory);
    let (n50, n95) = (percentile(&mut nl_ms, 0.5), percentile(&mut nl_ms, 0.95));
    let (p50, p95) = (percentile(&mut pseudo_ms, 0.5), percentile(&mut pseudo_ms, 0.95));
    println!("natural lang.  p50 {n50:>7.1} ms  p95 {n95:>7.1} ms  ({} runs, baseline)", nl_ms.len());
    let (h50, h95) = (percentile(&mut hybrid_ms, 0.5), percentile(&mut hybrid_ms, 0.95));
    println!("pseudo hybrid  p50 {h50:>7.1} ms  p95 {h95:>7.1} ms  ({} runs, {:.1}x baseline p50; the default method)", hybrid_ms.len(), h50 / n50.max(1e-9));
    println!("pseudo beryll. p50 {p50:>7.1} ms  p95 {p95:>7.1} ms  ({} runs, {:.1}x baseline p50)", pseudo_ms.len(), p50 / n50.max(1e-9));
    // The whole command as a user runs it: process start, loading libtorch, the encoder
    // and the index, one query, printing.
    if let (Ok(exe), Some(q)) = (std::env::current_exe(), qs.iter().find(|q| q.ends_with("floyd-warshall.p")).or(qs.first())) {
        let mut walls = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            let out = std::process::Command::new(&exe).args(["search", "--top", "10", "--pseudo"]).arg(q).arg("--index").arg(&a.index).output()?;
            anyhow::ensure!(out.status.success(), "beryl search failed: {}", String::from_utf8_lossy(&out.stderr));
            walls.push(t.elapsed().as_secs_f64());
        }
        println!(
            "one command    `beryl search --pseudo {}`: median {:.2} s wall (min {:.2} s, 3 runs)",
            q.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            percentile(&mut walls.clone(), 0.5),
            walls.iter().copied().fold(f64::MAX, f64::min)
        );
    }
    println!(
        "  beryllium p50 stages: embed {:.1} ms, nearest nodes {:.1} ms, grouping {:.1} ms",
        percentile(&mut stages[0], 0.5),
        percentile(&mut stages[1], 0.5),
        percentile(&mut stages[2], 0.5)
    );
    Ok(())
}
