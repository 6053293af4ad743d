//! The `beryl` command line: parses arguments and dispatches to one module per command
//! family. The work itself is the library's (`beryl`) or, for benchmarks and training
//! data, the lab's (`beryl_lab`); this crate adds context to errors and maps them to exit
//! codes (0 ok, 1 error, 3 a missing, damaged or mismatched index).

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod anonymize;
mod args;
mod bench;
mod cluster;
mod corpus;
mod doctor;
mod eval;
mod graph;
mod http;
mod index;
mod mcp;
mod pcode;
mod progress;
mod search;
mod train;
mod watch;

#[derive(Parser)]
#[command(name = "beryl", version, about = "Find algorithm implementations in C, C++, Java, Python, Rust and Go code")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Control-flow graphs of a function, or statistics of a whole corpus.
    Graph {
        #[command(flatten)]
        walk: args::Walk,
        /// Show the CFG of the functions with this name (`name`, `Cls::name` or `Cls.name`).
        #[arg(long)]
        function: Option<String>,
        /// Output format; default `stats` without --function, `dot` with it.
        #[arg(long, value_enum)]
        format: Option<graph::GraphFormat>,
        /// Print statistics as JSON (with --format stats).
        #[arg(long)]
        json: bool,
    },
    /// Real corpora from Debian source packages.
    Corpus {
        #[command(subcommand)]
        cmd: corpus::CorpusCmd,
    },
    /// The p-language: check, convert plain pseudocode, graph, train the line classifier.
    #[command(subcommand)]
    Pcode(pcode::PcodeCmd),
    /// Train the GCN graph autoencoder on real corpora (self-supervised link prediction).
    Train {
        /// Corpus roots; each contributes at most --max-nodes nodes.
        #[arg(long = "corpus", required = true, num_args = 1..)]
        corpora: Vec<PathBuf>,
        /// Keep only files of this language.
        #[arg(long, value_enum, default_value_t = train::LangSel::Mixed)]
        lang: train::LangSel,
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
        encoder: args::TextModelArg,
    },
    /// Check that libtorch and FAISS load and compute.
    Doctor,
    /// Index C, C++, Java, Python, Rust and Go sources for search (incremental, atomic).
    Index(index::IndexArgs),
    /// Search an index with pseudocode (--pseudo FILE) or a natural-language QUERY.
    Search(search::SearchArgs),
    /// Read every byte of an index and check it against the sums its build recorded
    /// (opening reads a file only when it was written since it was last found whole).
    Verify {
        /// Index directory.
        #[arg(long, default_value = ".beryl")]
        index: PathBuf,
    },
    /// Keep an index up to date while its sources change (one line per update).
    Watch(watch::WatchArgs),
    /// Benchmarks of search quality: CLARC, GenCodeSearchNet, algorithm location.
    #[command(subcommand)]
    Eval(eval::EvalCmd),
    /// Rewrite identifiers of C, C++, Java, Python, Rust and Go sources consistently (neutral or random names).
    Anonymize(anonymize::AnonymizeArgs),
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
    ///
    /// Pairs are kept unique across packages (identical, renamed and near-identical
    /// functions) and split into train and dev by package. `--list` writes the pair list
    /// (package, version, file, lines, hash) that the repository keeps; `--rebuild LIST`
    /// mines the listed packages again and writes exactly the listed pairs.
    MinePairs {
        /// Debian source packages to mine.
        packages: Vec<String>,
        /// A file with more package names, one per line (`#` starts a comment).
        #[arg(long)]
        packages_from: Option<PathBuf>,
        /// The pairs with their texts (JSON lines).
        #[arg(long)]
        out: PathBuf,
        /// Also write the pair list (tab-separated; gzip when it ends in .gz).
        #[arg(long)]
        list: Option<PathBuf>,
        /// Rebuild the texts of the pairs in this list instead of selecting anew.
        #[arg(long, conflicts_with_all = ["packages", "packages_from", "list"])]
        rebuild: Option<PathBuf>,
        /// Evaluation files whose code must never be mined: CLARC (`.json`) and
        /// GenCodeSearchNet (`.jsonl`) files; copies and near-copies are dropped.
        #[arg(long)]
        exclude_code: Vec<PathBuf>,
        /// At most this many pairs from one package.
        #[arg(long, default_value_t = 1500)]
        per_package: usize,
    },
    /// A Model Context Protocol server over stdio: indexes and models stay loaded between
    /// tool calls from an agent or editor.
    Mcp(mcp::McpArgs),
    /// A corpus as shards: plan, global parts, statistics, shard servers and the
    /// coordinator that Ray Serve runs (scripts/cluster/), and an in-process search.
    Cluster {
        #[command(subcommand)]
        cmd: cluster::ClusterCmd,
    },
    /// Speed benchmarks; they print ratios against a baseline run in the same process.
    Bench {
        #[command(subcommand)]
        cmd: bench::BenchCmd,
    },
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let cli = Cli::parse();
    if matches!(cli.cmd, Cmd::Mcp(_) | Cmd::Bench { cmd: bench::BenchCmd::Search(_) } | Cmd::Cluster { cmd: cluster::ClusterCmd::Shard { .. } }) {
        passive_openmp();
    }
    // One-shot commands whose work is done (written and closed) once they return.
    let ends_at_once = matches!(cli.cmd, Cmd::Search(_) | Cmd::Index(_));
    if matches!(cli.cmd, Cmd::Search(_) | Cmd::Graph { .. } | Cmd::Pcode(_)) {
        quiet_on_closed_pipe();
    }
    match run(cli) {
        Ok(()) if ends_at_once => exit_now(),
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

/// Lets a command whose output is read through a pipe (`beryl graph … | head`) end quietly
/// when the reader leaves, as other command-line tools do: Rust ignores SIGPIPE, so the
/// next write would fail and `print!` would panic. Only for commands that write nothing
/// but their output; servers keep ignoring it, since a client leaving is not their end.
fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // Safety: restores the default action of one signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Query servers, and the benchmark that measures them, let OpenMP's idle threads sleep:
/// after each FAISS search they otherwise spin for milliseconds on cores the search's
/// other threads want (on two cores, a tenth of a query stream's CPU). libgomp reads
/// `OMP_WAIT_POLICY` as it is loaded, before `main`, so the process starts itself again
/// once with it set; a policy the user set is kept, and a failed start goes on as is.
fn passive_openmp() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os("OMP_WAIT_POLICY").is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else { return };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| exe.clone().into_os_string());
    let err = std::process::Command::new(&exe).arg0(arg0).args(args).env("OMP_WAIT_POLICY", "passive").exec();
    log::warn!("could not start again with OMP_WAIT_POLICY=passive ({err}); OpenMP's idle threads will spin between searches");
}

/// Ends a one-shot command that has finished without the libraries' exit handlers:
/// libtorch's took 0.13 s, an eighth of a one-shot `beryl search`, a thirtieth of an
/// update of a large index. Nothing is lost: a search writes nothing but its output, and
/// `beryl index` has committed its generation and closed its files when it returns (what
/// its threads still free goes with the process).
fn exit_now() -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    extern "C" {
        fn _exit(code: i32) -> !;
    }
    // Safety: `_exit` only ends the process; the output is flushed above, and neither
    // command holds a file open for writing by then (`--html` is written whole before).
    unsafe { _exit(0) }
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Graph { walk, function, format, json } => graph::run(walk, function, format, json),
        Cmd::Corpus { cmd } => corpus::run(cmd),
        Cmd::Pcode(cmd) => pcode::run(cmd),
        Cmd::Train { corpora, lang, out, max_nodes, epochs, patience, seed, threads, encoder_dir, encoder } => {
            train::train(corpora, lang, out, max_nodes, epochs, patience, seed, threads, encoder_dir, encoder.into())
        }
        Cmd::Doctor => doctor::run(),
        Cmd::Verify { index } => {
            let t = std::time::Instant::now();
            beryl::index::verify(&index)?;
            println!("{}: every file has its recorded sum (checked in {:.2} s)", index.display(), t.elapsed().as_secs_f64());
            Ok(())
        }
        Cmd::Index(a) => index::run(a),
        Cmd::Search(a) => search::run(a),
        Cmd::Watch(a) => watch::run(a),
        Cmd::Eval(cmd) => eval::run(cmd),
        Cmd::Anonymize(a) => anonymize::run(a),
        Cmd::Bench { cmd } => bench::run(cmd),
        Cmd::Mcp(a) => mcp::run(a),
        Cmd::Cluster { cmd } => cluster::run(cmd),
        Cmd::DistillStatic { corpora, out, encoder_dir } => train::distill_static(corpora, out, encoder_dir),
        Cmd::MinePairs { packages, packages_from, out, list, rebuild, exclude_code, per_package } => train::mine_pairs(train::MineArgs { packages, packages_from, out, list, rebuild, exclude_code, per_package }),
    }
}
