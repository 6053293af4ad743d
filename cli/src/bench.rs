//! `beryl bench …`: speed benchmarks. Each prints ratios against a baseline run in the
//! same process, so figures from different machines compare by ratio.

use crate::args::{all_cores, default_model, EncoderArgs, Walk};
use crate::search::load_ranker;
use anyhow::{Context, Result};
use beryl::corpus::{self, WalkOptions};
use beryl::pcode::Classifier;
use beryl::features::{CacheAt, TextEncoders};
use beryl::index::{self, Index, IndexOptions};
use beryl::search::hybrid::Method;
use beryl::search::{self, SearchOptions};
use clap::Subcommand;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Subcommand)]
pub enum BenchCmd {
    /// Full `index` throughput against parsing alone, re-index speed-up, size, memory.
    Index(BenchIndexArgs),
    /// Query latency p50/p95 of pseudocode and natural-language search on an index.
    Search(BenchSearchArgs),
    /// Sharded search against one index of the same corpora (the baseline), in one
    /// process: p50/p95 of each, the fan-out overhead, and whether results are equal;
    /// with --url also through a Ray Serve deployment (scripts/cluster/serve.py).
    Cluster(BenchClusterArgs),
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

pub fn run(cmd: BenchCmd) -> Result<()> {
    match cmd {
        BenchCmd::Index(a) => bench_index(a),
        BenchCmd::Search(a) => bench_search(a),
        BenchCmd::Cluster(a) => bench_cluster(a),
        BenchCmd::Parse { walk, repeat } => bench_parse(walk, repeat),
        BenchCmd::Encoder { n, threads, encoder_dir, batch_tokens, repeat, static_table } => {
            bench_encoder(n, threads, encoder_dir, batch_tokens, repeat, static_table)
        }
    }
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
    /// Leave out the `beryl watch` figure.
    #[arg(long)]
    no_watch: bool,
}

fn peak_rss_mb() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Full index throughput against parsing alone (the baseline), index size against source
/// size and peak memory; then updates (one function changed, a file added, a file
/// removed) against a warm full index in the same run, and `beryl watch` from saving a
/// file to a search that finds it.
fn bench_index(a: BenchIndexArgs) -> Result<()> {
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
    let enc = TextEncoders::new(a.encoders.statements.into(), a.encoders.functions.into(), Some(all_cores(a.threads)), cache);
    // Loading the models is not indexing.
    enc.statements()?;
    enc.functions()?;
    println!("encoders       statements {}, functions {}", beryl::features::TextModel::from(a.encoders.statements).name(), beryl::features::TextModel::from(a.encoders.functions).name());

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
    let model = default_model(a.encoders.statements.into());
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
    println!(
        "index size     {:.1} MB = {:.2} x source",
        full.index_bytes as f64 / 1e6,
        full.index_bytes as f64 / bytes.max(1) as f64
    );
    println!("peak memory    {:.0} MB (whole process, full index)", peak_rss_mb());

    // The baseline of the updates: a full index with every text vector cached, into a new
    // folder, in this process.
    let warm_dir = scratch.join("index-warm");
    let warm = index::build(&roots, &warm_dir, &iopts, &model, &enc, &mut |_, _, _| {})?;
    let _ = std::fs::remove_dir_all(&warm_dir);
    println!("warm full      {:>8.2} s  (baseline of the updates)", warm.total_seconds);
    let update = |what: &str, expect: &dyn Fn(&index::BuildReport) -> bool| -> Result<()> {
        let t = Instant::now();
        let r = index::build(&roots, &dir, &iopts, &model, &enc, &mut |_, _, _| {})?;
        let wall = t.elapsed().as_secs_f64();
        let how = if r.updated { format!("{} nodes recomputed", r.recomputed_nodes) } else { format!("full: {}", r.full_reason.as_deref().unwrap_or("?")) };
        anyhow::ensure!(expect(&r), "{what}: unexpected change set {} changed, {} new, {} removed", r.changed_files, r.new_files, r.removed_files);
        println!("{what:<14} {wall:>8.2} s  ({:.1}x faster than the warm full index; {how})", warm.total_seconds / wall);
        Ok(())
    };
    let Some((file, text, at)) = function_to_edit(&files, &a.paths, &src) else {
        anyhow::bail!("no function to edit in the corpus");
    };
    // One changed function body: a declaration added at the top of a body.
    let mut edited = text.clone();
    edited.insert_str(at, "\n    int beryl_bench_touch = 0;\n");
    std::fs::write(&file, &edited)?;
    update("1 function", &|r| r.changed_files == 1 && r.new_files == 0 && r.removed_files == 0)?;
    std::fs::write(&file, &text)?;
    update("(undo)", &|r| r.changed_files == 1)?;
    // One added file: a copy of that file under a new name; then removed again.
    let added = file.with_file_name(format!("beryl_bench_added.{}", file.extension().and_then(|e| e.to_str()).unwrap_or("c")));
    std::fs::write(&added, &text)?;
    update("1 added file", &|r| r.new_files == 1 && r.changed_files == 0)?;
    std::fs::remove_file(&added)?;
    update("1 removed file", &|r| r.removed_files == 1 && r.new_files == 0)?;

    // `beryl watch`: from saving a file to a search that finds what was saved.
    if !a.no_watch {
        let mut child = std::process::Command::new(std::env::current_exe()?)
            .arg("watch")
            .arg(&src)
            .arg("--index")
            .arg(&dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .context("starting beryl watch")?;
        let mut out = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().context("watch output")?));
        let _ready = out.next();
        let probe = "beryl_bench_probe_gcd";
        let mut saved = text.clone();
        saved.push_str(&format!("\nint {probe}(int a, int b) {{ while (b != 0) {{ int t = a % b; a = b; b = t; }} return a; }}\n"));
        let t = Instant::now();
        std::fs::write(&file, &saved)?;
        let mut seen = None;
        while t.elapsed().as_secs() < 60 {
            if let Ok(mut idx) = Index::open(&dir, None, 32) {
                let encs = idx.encoders(Some(all_cores(a.threads)));
                let r = search::natural(&mut idx, &encs, "greatest common divisor of two integers", &SearchOptions::default())?;
                if r.fragments.iter().any(|f| f.spans.iter().any(|s| s.function == probe)) {
                    seen = Some(t.elapsed().as_secs_f64());
                    break;
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        std::fs::write(&file, &text)?;
        match seen {
            Some(s) => println!("watch          {s:>8.2} s  from saving a file to a search that finds it"),
            None => println!("watch          the saved function was not found within 60 s"),
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

/// A typical file of the copied corpus (of median size among those with a function of ten
/// lines or more): its path, text, and the byte just after the opening brace of its
/// largest function's body.
fn function_to_edit(files: &[PathBuf], roots: &[PathBuf], src: &std::path::Path) -> Option<(PathBuf, String, usize)> {
    let mut sorted: Vec<(u64, &PathBuf)> = files.iter().map(|f| (std::fs::metadata(f).map_or(0, |m| m.len()), f)).collect();
    sorted.sort();
    // From the median outwards.
    let mid = sorted.len() / 2;
    let order = (0..sorted.len()).map(|i| if i % 2 == 0 { mid + i / 2 } else { mid.wrapping_sub(i / 2 + 1) }).filter(|&i| i < sorted.len());
    for f in order.map(|i| sorted[i].1) {
        let root = roots.iter().find(|r| f.starts_with(r))?;
        let i = roots.iter().position(|r| r == root)?;
        let copy = src.join(i.to_string()).join(f.strip_prefix(root).ok()?);
        let text = std::fs::read_to_string(&copy).ok()?;
        let Ok(pf) = beryl::lang::parse_file(&copy, &text, 0) else { continue };
        let Some((m, _)) = pf.functions.iter().filter(|(m, _)| m.lines.1 >= m.lines.0 + 10).max_by_key(|(m, _)| m.bytes.1 - m.bytes.0) else { continue };
        let body = text.get(m.bytes.0 as usize..m.bytes.1 as usize)?;
        let brace = body.find('{')?;
        return Some((copy, text.clone(), m.bytes.0 as usize + brace + 1));
    }
    None
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
    #[arg(long, default_value_os_t = beryl::repo_path("queries"))]
    queries: PathBuf,
    /// Runs of each query.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    #[arg(long)]
    threads: Option<usize>,
}

/// English queries of `bench cluster` (natural-language search over function vectors).
const ENGLISH: [&str; 8] = [
    "greatest common divisor of two integers",
    "edit distance between two strings",
    "LU decomposition of a matrix",
    "modular exponentiation by repeated squaring",
    "shortest paths from one vertex",
    "sort an array in place",
    "similarity of two strings",
    "parse a number from text",
];

#[derive(clap::Args)]
pub struct BenchClusterArgs {
    /// One index of the corpora (built with the same --global parts).
    #[arg(long)]
    index: PathBuf,
    #[arg(long)]
    global: PathBuf,
    /// Shard index directories.
    #[arg(long = "shard", required = true)]
    shards: Vec<PathBuf>,
    /// Also time the corpus served at this address (`beryl search --cluster`).
    #[arg(long)]
    url: Option<String>,
    #[arg(long, default_value_os_t = beryl::repo_path("queries"))]
    queries: PathBuf,
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    #[arg(long)]
    threads: Option<usize>,
}

/// The one-index baseline and the sharded paths, query by query in turn, so that the
/// machine's load falls on all alike.
fn bench_cluster(a: BenchClusterArgs) -> Result<()> {
    use beryl::cluster::{Coordinator, Local, ShardServer};
    use std::time::Instant;
    let mut idx = Index::open(&a.index, None, 32)?;
    let enc = idx.encoders(Some(all_cores(a.threads)));
    enc.statements()?;
    enc.functions()?;
    let ranker = load_ranker(None)?;
    let mut local = Local { shards: a.shards.iter().map(|d| ShardServer::open(d, &a.global, 32)).collect::<Result<_, _>>()? };
    let mut c = Coordinator::new(&a.global, load_ranker(None)?, Some(all_cores(a.threads)), a.shards.len(), &mut local)?;
    // Every query of the folder: p-code (`.p`) and plain pseudocode (`.txt`).
    let mut qs: Vec<PathBuf> = std::fs::read_dir(&a.queries)?.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "p" || e == "txt")).collect();
    qs.sort();
    let opts = SearchOptions::default();
    let clf = Classifier::load(&Classifier::default_path())?;
    let (mut one, mut local_ms, mut http_ms) = (Vec::new(), Vec::new(), Vec::new());
    let (mut same, mut same_http, mut n) = (0usize, 0usize, 0usize);
    let shown = |r: &beryl::search::SearchResult| serde_json::to_string(&r.fragments).unwrap_or_default();
    for q in &qs {
        let src = std::fs::read_to_string(q)?;
        for _ in 0..a.repeat.max(1) {
            let t = Instant::now();
            let r1 = search::hybrid::search(&mut idx, &enc, &src, q, || Ok::<_, beryl::pcode::PcodeError>(&clf), &opts, Method::Hybrid, Some(&ranker))?;
            one.push(t.elapsed().as_secs_f64() * 1000.0);
            let t = Instant::now();
            let r2 = c.pseudo(&src, q, 10, &mut local)?;
            local_ms.push(t.elapsed().as_secs_f64() * 1000.0);
            n += 1;
            same += usize::from(shown(&r1) == shown(&r2));
            if let Some(url) = &a.url {
                let body = serde_json::json!({ "pseudo": src, "name": q.display().to_string(), "top": 10 });
                let t = Instant::now();
                let v = crate::http::post_json(url, &body)?;
                http_ms.push(t.elapsed().as_secs_f64() * 1000.0);
                let r3: beryl::search::SearchResult = serde_json::from_value(v.get("result").cloned().unwrap_or_default())?;
                same_http += usize::from(shown(&r1) == shown(&r3));
            }
        }
    }
    // English queries through natural-language search, compared, not timed.
    for t in ENGLISH {
        let r1 = search::natural(&mut idx, &enc, t, &opts)?;
        let r2 = c.text(t, 10, &mut local)?;
        n += 1;
        same += usize::from(shown(&r1) == shown(&r2));
        if let Some(url) = &a.url {
            let v = crate::http::post_json(url, &serde_json::json!({ "text": t, "top": 10 }))?;
            let r3: beryl::search::SearchResult = serde_json::from_value(v.get("result").cloned().unwrap_or_default())?;
            same_http += usize::from(shown(&r1) == shown(&r3));
        }
    }
    let line = |name: &str, v: &mut Vec<f64>, base: f64| {
        let (p50, p95) = (percentile(v, 0.5), percentile(v, 0.95));
        println!("{name:<28} p50 {p50:>7.1} ms  p95 {p95:>7.1} ms  ({} runs; p50 {:+.1} ms against one index)", v.len(), p50 - base);
    };
    let base = percentile(&mut one, 0.5);
    println!("corpus         {} lines in {} shards; one index {} nodes ({})", c.lines(), c.shards(), idx.meta.indexed_nodes, idx.meta.node_factory);
    line("one index (baseline)", &mut one, base);
    line("shards, in this process", &mut local_ms, base);
    if a.url.is_some() {
        line("shards, Ray Serve over HTTP", &mut http_ms, base);
    }
    println!("in this process: sharded top-10 equals one index: {same} of {n} queries");
    if a.url.is_some() {
        println!("sharded top-10 equals one index: {same_http} of {n} queries");
    }
    Ok(())
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
fn bench_search(a: BenchSearchArgs) -> Result<()> {
    use std::time::Instant;
    let t = Instant::now();
    let mut idx = Index::open(&a.index, None, 32)?;
    let index_ms = t.elapsed().as_secs_f64() * 1000.0;
    // As `beryl search` does for a pseudocode query.
    idx.model.start();
    // No vector cache: a user's query texts are new, so every query encodes its texts.
    let enc = idx.encoders(Some(all_cores(a.threads)));
    enc.statements()?;
    enc.functions()?;
    let open_ms = t.elapsed().as_secs_f64() * 1000.0;
    // What reading every byte against its sums costs (`beryl verify`; an open pays it
    // only for files written since they were summed), warm in the page cache.
    let t = Instant::now();
    beryl::index::verify(&a.index)?;
    let verify_ms = t.elapsed().as_secs_f64() * 1000.0;
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
    println!(
        "checksums      every byte of the generation checked in {verify_ms:.0} ms (`beryl verify`); the index alone opens in {index_ms:.0} ms"
    );
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


fn bench_parse(walk: Walk, repeat: u32) -> Result<()> {
    walk.check()?;
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

fn bench_encoder(n: usize, threads: Option<usize>, dir: Option<PathBuf>, batch_tokens: Option<usize>, repeat: u32, static_table: Option<PathBuf>) -> Result<()> {
    use beryl::features::{count_source, Encoder, EncoderOptions, Precision};
    use beryl_lab::synth;
    let n = n.max(1);
    let threads = all_cores(threads);
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
