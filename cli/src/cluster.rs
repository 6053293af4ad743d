//! `beryl cluster`: a corpus as shards. Planning, the global parts, the statistics reduce,
//! a shard server and a coordinator speaking JSON lines (what `scripts/cluster/` runs on
//! Ray), and an in-process search over shard directories.

use crate::args::{all_cores, default_model, EncoderArgs};
use anyhow::{bail, Context, Result};
use beryl::cluster::protocol::{Reply, Request};
use beryl::cluster::{shard_count, shard_of, Coordinator, Fanout, Local, ShardServer};
use beryl::corpus::WalkOptions;
use beryl::index::global::{self, Global};
use beryl::index::IndexOptions;
use beryl::search::SearchResult;
use clap::Subcommand;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum ClusterCmd {
    /// Assign projects (each PATH is one) to shards by a hash of the project's name,
    /// about --lines-per-shard lines each (or exactly --shards); prints the plan as JSON.
    Plan {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[arg(long)]
        shards: Option<usize>,
        #[arg(long, default_value_t = 750_000)]
        lines_per_shard: u64,
        /// Write the plan here too.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Train the global parts (projection, FAISS quantizers) on a sample of every project's
    /// files; every shard is then built with `beryl index --global DIR`.
    Global {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[arg(long)]
        out: PathBuf,
        /// Bytes of source to sample (spread over all files).
        #[arg(long, default_value_t = 32 << 20)]
        sample_bytes: u64,
        /// FAISS factory of the node index (default: by the corpus's estimated size).
        #[arg(long)]
        faiss: Option<String>,
        #[arg(long, default_value_t = 50_000)]
        flat_max: usize,
        #[arg(long)]
        model: Option<PathBuf>,
        #[command(flatten)]
        encoders: EncoderArgs,
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Sum the shards' BM25F statistics and totals into the global parts (after building
    /// or rebuilding any shard).
    Reduce {
        #[arg(long)]
        global: PathBuf,
        #[arg(required = true)]
        shards: Vec<PathBuf>,
    },
    /// Serve one shard: a request per line on standard input, a reply per line out; with
    /// --listen, the same on each TCP connection to ADDR (the bound address is printed first).
    Shard {
        #[arg(long)]
        global: PathBuf,
        #[arg(long)]
        index: PathBuf,
        #[arg(long, default_value_t = 32)]
        nprobe: usize,
        #[arg(long, value_name = "ADDR")]
        listen: Option<String>,
        /// With --listen: end when standard input closes (the owner that started it is gone).
        #[arg(long, requires = "listen")]
        exit_with_stdin: bool,
    },
    /// Coordinate N shards through the pipes: a search per line in, the shard requests out,
    /// their replies in, the result out (the protocol of scripts/cluster/serve.py).
    Coordinate {
        #[arg(long)]
        global: PathBuf,
        #[arg(long)]
        shards: usize,
        #[arg(long)]
        ranker: Option<PathBuf>,
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Search shard indexes in this process, merged as one index.
    Search {
        /// A natural-language query (or use --pseudo).
        query: Option<String>,
        #[arg(long, conflicts_with = "query")]
        pseudo: Option<PathBuf>,
        #[arg(long)]
        global: PathBuf,
        /// Shard index directories.
        #[arg(long = "shard", required = true)]
        shards: Vec<PathBuf>,
        #[arg(long, default_value_t = 10)]
        top: usize,
        #[arg(long)]
        ranker: Option<PathBuf>,
        #[arg(long)]
        json: bool,
        #[arg(long)]
        threads: Option<usize>,
    },
}

/// Projects and their shards.
#[derive(Debug, Serialize, Deserialize)]
pub struct Plan {
    pub shards: Vec<PlannedShard>,
    pub lines: u64,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct PlannedShard {
    pub projects: Vec<String>,
    pub lines: u64,
}

pub fn run(cmd: ClusterCmd) -> Result<()> {
    match cmd {
        ClusterCmd::Plan { paths, shards, lines_per_shard, out } => {
            let plan = plan(&paths, shards, lines_per_shard)?;
            let text = serde_json::to_string_pretty(&plan)?;
            if let Some(o) = out {
                std::fs::write(&o, &text).with_context(|| format!("writing {}", o.display()))?;
            }
            println!("{text}");
            Ok(())
        }
        ClusterCmd::Global { paths, out, sample_bytes, faiss, flat_max, model, encoders, threads } => {
            crate::args::check_paths(&paths)?;
            let encs = encoders.load(threads);
            let model = model.unwrap_or_else(|| default_model(encoders.statements.into()));
            let opts = IndexOptions { factory: faiss, flat_max, ..IndexOptions::default() };
            let m = global::fit(&paths, &out, &opts, &model, &encs, sample_bytes, &mut |s, d, t| log::info!("global parts: {s} {d}/{t}"))
                .with_context(|| format!("training the global parts into {}", out.display()))?;
            println!("{}", serde_json::to_string_pretty(&m)?);
            Ok(())
        }
        ClusterCmd::Reduce { global, shards } => {
            let g = Global::open(&global).with_context(|| format!("opening the global parts at {}", global.display()))?;
            let t = global::reduce(&g, &shards)?;
            println!("{}", serde_json::to_string_pretty(&t)?);
            Ok(())
        }
        ClusterCmd::Shard { global, index, nprobe, listen: None, .. } => serve_shard(&index, &global, nprobe),
        ClusterCmd::Shard { global, index, nprobe, listen: Some(addr), exit_with_stdin } => listen_shard(&index, &global, nprobe, &addr, exit_with_stdin),
        ClusterCmd::Coordinate { global, shards, ranker, threads } => coordinate(&global, shards, ranker.as_deref(), threads),
        ClusterCmd::Search { query, pseudo, global, shards, top, ranker, json, threads } => {
            let mut local = Local { shards: shards.iter().map(|d| ShardServer::open(d, &global, 32).with_context(|| format!("opening shard {}", d.display()))).collect::<Result<_>>()? };
            let ranker = crate::search::load_ranker(ranker.as_deref())?;
            let mut c = Coordinator::new(&global, ranker, Some(all_cores(threads)), shards.len(), &mut local)?;
            let r = match (&pseudo, &query) {
                (Some(p), _) => {
                    let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
                    c.pseudo(&text, p, top, &mut local)?
                }
                (None, Some(q)) => c.text(q, top, &mut local)?,
                (None, None) => bail!("give a natural-language QUERY or --pseudo FILE"),
            };
            print_result(&r, json);
            Ok(())
        }
    }
}

pub fn print_result(r: &SearchResult, json: bool) {
    use std::io::IsTerminal;
    if json {
        println!("{}", beryl::report::search::json(r));
    } else {
        let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        // Stored paths are canonical, so the working directory is compared canonical too.
        let here = std::env::current_dir().and_then(|d| d.canonicalize()).ok();
        print!("{}", beryl::report::search::text(r, color, here.as_deref()));
        if !r.missing_shards.is_empty() {
            println!("missing shards (no answer in time): {}", r.missing_shards.join(", "));
        }
    }
}

fn plan(paths: &[PathBuf], shards: Option<usize>, per_shard: u64) -> Result<Plan> {
    crate::args::check_paths(paths)?;
    let mut projects = Vec::new();
    for p in paths {
        let (files, _) = beryl::corpus::walk::discover(std::slice::from_ref(p), &WalkOptions::default());
        let lines: u64 = files.iter().map(|f| std::fs::read(f).map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count() as u64)).sum();
        projects.push((p.clone(), lines));
    }
    let total: u64 = projects.iter().map(|p| p.1).sum();
    let n = shards.unwrap_or_else(|| shard_count(total, per_shard)).max(1);
    let mut out: Vec<PlannedShard> = (0..n).map(|_| PlannedShard { projects: Vec::new(), lines: 0 }).collect();
    for (p, lines) in projects {
        let name = project_name(&p);
        let s = &mut out[shard_of(&name, n)];
        s.projects.push(p.display().to_string());
        s.lines += lines;
    }
    Ok(Plan { shards: out, lines: total })
}

/// A project's name: its directory's (or file's) name.
fn project_name(p: &Path) -> String {
    let c = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    c.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| c.display().to_string())
}

fn serve_shard(index: &Path, global: &Path, nprobe: usize) -> Result<()> {
    let mut shard = ShardServer::open(index, global, nprobe).with_context(|| format!("opening shard {}", index.display()))?;
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.context("reading a request")?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = match serde_json::from_str::<Request>(&line) {
            Ok(req) => answer(&mut shard, req),
            Err(e) => Reply::Error { message: format!("not a request: {e}") },
        };
        serde_json::to_writer(&mut out, &reply)?;
        out.write_all(b"\n")?;
        out.flush()?;
    }
    Ok(())
}

/// Answers one request; a panic (a bug) becomes an error reply rather than a shard that
/// fails every request after it.
fn answer(shard: &mut ShardServer, req: Request) -> Reply {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| shard.handle(req))).unwrap_or_else(|_| Reply::Error { message: "the shard failed on this request (a bug: see its log)".into() })
}

/// One shard on TCP: each connection is a conversation of request and reply lines; one
/// request is answered at a time.
fn listen_shard(index: &Path, global: &Path, nprobe: usize, addr: &str, exit_with_stdin: bool) -> Result<()> {
    use std::sync::{Arc, Mutex};
    let shard = Arc::new(Mutex::new(ShardServer::open(index, global, nprobe).with_context(|| format!("opening shard {}", index.display()))?));
    let listener = std::net::TcpListener::bind(addr).with_context(|| format!("listening on {addr}"))?;
    println!("{}", serde_json::json!({ "listening": listener.local_addr()?.to_string() }));
    std::io::stdout().flush()?;
    if exit_with_stdin {
        std::thread::spawn(|| {
            let mut sink = String::new();
            while std::io::stdin().read_line(&mut sink).is_ok_and(|n| n > 0) {}
            std::process::exit(0);
        });
    }
    for conn in listener.incoming() {
        let conn = match conn {
            Ok(c) => c,
            Err(e) => {
                // Out of descriptors, say: wait rather than spin.
                log::warn!("accepting a connection: {e}");
                std::thread::sleep(std::time::Duration::from_millis(50));
                continue;
            }
        };
        let shard = Arc::clone(&shard);
        std::thread::spawn(move || {
            let _ = conn.set_nodelay(true);
            let Ok(read) = conn.try_clone() else { return };
            let mut out = std::io::BufWriter::new(conn);
            for line in std::io::BufReader::new(read).lines() {
                let Ok(line) = line else { return };
                let reply = match serde_json::from_str::<Request>(&line) {
                    Ok(req) => answer(&mut shard.lock().unwrap_or_else(|p| p.into_inner()), req),
                    Err(e) => Reply::Error { message: format!("not a request: {e}") },
                };
                if serde_json::to_writer(&mut out, &reply).is_err() || out.write_all(b"\n").is_err() || out.flush().is_err() {
                    return;
                }
            }
        });
    }
    Ok(())
}

/// A search, as the coordinator reads it.
#[derive(Deserialize)]
struct Search {
    #[serde(default)]
    pseudo: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default = "ten")]
    top: usize,
}

fn ten() -> usize {
    10
}

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    search: Option<Search>,
}

/// The coordinator's side of the pipes. A fan-out is a line `{"ask": [s, …]}` followed by
/// one request line per shard; the transport answers with one line per shard in the same
/// order: the shard's reply as it sent it, or an error reply of the transport's own
/// (`{"reply": "error", "message": …}`). Replies pass through the transport unread.
struct Pipes<'a> {
    lines: std::io::Lines<std::io::StdinLock<'a>>,
    out: std::io::StdoutLock<'a>,
}

impl Pipes<'_> {
    fn send(&mut self, v: &serde_json::Value) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.out, v)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }

    fn write_ask(&mut self, requests: &[(usize, Request)]) -> std::io::Result<()> {
        let shards: Vec<usize> = requests.iter().map(|r| r.0).collect();
        serde_json::to_writer(&mut self.out, &serde_json::json!({ "ask": shards }))?;
        self.out.write_all(b"\n")?;
        for (_, r) in requests {
            serde_json::to_writer(&mut self.out, r)?;
            self.out.write_all(b"\n")?;
        }
        self.out.flush()
    }
}

impl Fanout for Pipes<'_> {
    fn ask(&mut self, requests: Vec<(usize, Request)>) -> Vec<(usize, Result<Reply, String>)> {
        if let Err(e) = self.write_ask(&requests) {
            return requests.into_iter().map(|(s, _)| (s, Err(format!("writing to the transport: {e}")))).collect();
        }
        let mut out = Vec::with_capacity(requests.len());
        for (s, _) in requests {
            let r = match self.lines.next() {
                Some(Ok(line)) => serde_json::from_str::<Reply>(&line).map_err(|e| format!("an unreadable reply ({e})")),
                _ => Err("the transport closed".into()),
            };
            out.push((s, r));
        }
        out
    }
}

fn coordinate(global: &Path, shards: usize, ranker: Option<&Path>, threads: Option<usize>) -> Result<()> {
    let ranker = crate::search::load_ranker(ranker)?;
    let stdin = std::io::stdin();
    let mut pipes = Pipes { lines: stdin.lock().lines(), out: std::io::stdout().lock() };
    let mut c = Coordinator::new(global, ranker, Some(all_cores(threads)), shards, &mut pipes)?;
    pipes.send(&serde_json::json!({ "ready": { "shards": c.shards(), "lines": c.lines() } }))?;
    while let Some(line) = pipes.lines.next() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = match serde_json::from_str::<Line>(&line) {
            Ok(Line { search: Some(s), .. }) => {
                let r = match (&s.pseudo, &s.text) {
                    (Some(p), _) => c.pseudo(p, Path::new(s.name.as_deref().unwrap_or("<query>")), s.top, &mut pipes),
                    (None, Some(t)) => c.text(t, s.top, &mut pipes),
                    (None, None) => Err(beryl::search::SearchError::EmptyQuery),
                };
                match r {
                    Ok(r) => serde_json::json!({ "result": r }),
                    Err(e) => serde_json::json!({ "error": e.to_string() }),
                }
            }
            _ => serde_json::json!({ "error": "expected a search" }),
        };
        pipes.send(&answer)?;
    }
    Ok(())
}
