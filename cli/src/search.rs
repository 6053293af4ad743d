//! `beryl search`: pseudocode or English against an index.

use crate::args::{all_cores, positive, read_query, MethodArg, QueryLimitArgs, ScopeArgs};
use anyhow::{bail, Context, Result};
use beryl::index::Index;
use beryl::pcode::Classifier;
use beryl::report;
use beryl::search::hybrid::Method;
use beryl::search::hybrid::Ranker;
use beryl::search::{self, SearchOptions};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct SearchArgs {
    /// A natural-language query (or use --pseudo).
    query: Option<String>,
    /// A pseudocode file (p-code or plain), `-` for standard input.
    #[arg(long, conflicts_with = "query")]
    pseudo: Option<PathBuf>,
    /// Results to show (at least 1).
    #[arg(long, default_value_t = 10, value_parser = positive)]
    top: usize,
    /// Index directory.
    #[arg(long, default_value = ".beryl")]
    index: PathBuf,
    /// Check that the index was built with this model.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Natural language: match sentences to code nodes and group them, like pseudocode.
    #[arg(long, conflicts_with = "pseudo")]
    fragments: bool,
    /// Pseudocode search method (with --pseudo): hybrid (default: every signal, learned
    /// scorer), beryllium (the paper's node matching and grouping), bm25, name, dense.
    #[arg(long, value_enum)]
    method: Option<MethodArg>,
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
    /// Print JSON (schema: docs/guide/json.md).
    #[arg(long)]
    json: bool,
    /// Also write an HTML page showing the query beside each fragment.
    #[arg(long)]
    html: Option<PathBuf>,
    /// libtorch threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Search a sharded corpus served on Ray Serve at this address
    /// (http://HOST:PORT/PATH, from scripts/cluster/serve.py) instead of an index here.
    #[arg(long, value_name = "URL")]
    cluster: Option<String>,
    #[command(flatten)]
    scope: ScopeArgs,
    #[command(flatten)]
    limits: QueryLimitArgs,
}

pub fn run(a: SearchArgs) -> Result<()> {
    let limits = a.limits.limits();
    if a.pseudo.is_none() && a.method.is_some() {
        bail!("--method chooses how pseudocode (--pseudo FILE) is matched; an English query is matched by function text vectors, or by statements with --fragments");
    }
    let (text, name) = match (&a.pseudo, &a.query) {
        (Some(p), _) if p.as_os_str() == "-" => (read_query(p, &limits)?, PathBuf::from("<stdin>")),
        (Some(p), _) => (read_query(p, &limits)?, p.clone()),
        (None, Some(q)) => {
            limits.check_text(q)?;
            (q.clone(), PathBuf::from("<query>"))
        }
        (None, None) => bail!("give a natural-language QUERY or --pseudo FILE"),
    };
    let method = a.method.unwrap_or(MethodArg::Hybrid);
    let scope = a.scope.scope();
    if let Some(url) = &a.cluster {
        if !scope.is_all() {
            bail!("--path, --lang and --no-tests apply to an index here; a cluster searches all of its shards");
        }
        if a.fragments || a.pseudo.is_some() && method != MethodArg::Hybrid {
            bail!("a cluster serves hybrid pseudocode search and natural-language search over function vectors");
        }
        let body = if a.pseudo.is_some() {
            serde_json::json!({ "pseudo": text, "name": name.display().to_string(), "top": a.top })
        } else {
            serde_json::json!({ "text": text, "top": a.top })
        };
        let r = crate::http::post_json(url, &body).with_context(|| format!("asking the cluster at {url}"))?;
        if let Some(e) = r.get("error").and_then(|e| e.as_str()) {
            bail!("the cluster answered: {e}");
        }
        let r: beryl::search::SearchResult = serde_json::from_value(r.get("result").cloned().unwrap_or_default()).context("reading the cluster's result")?;
        crate::cluster::print_result(&r, a.json);
        return Ok(());
    }
    let mut idx = Index::open(&a.index, a.model.as_deref(), a.nprobe)?;
    if a.pseudo.is_some() || a.fragments {
        // The graph model's weights (and libtorch) load beside the query's parsing.
        idx.model.start();
    }
    // A query has a handful of texts: encoding them costs milliseconds, while opening the
    // persistent vector cache of a large corpus reads it whole (about 1 GB for 2.7 M lines).
    let enc = idx.encoders(Some(all_cores(a.threads)));
    let opts = SearchOptions { top: a.top, k: a.k.max(1), radius: a.radius, limits, scope, ..SearchOptions::default() };
    let r = if a.pseudo.is_some() {
        let clf = || {
            let p = Classifier::default_path();
            Classifier::load(&p)
        };
        let method = Method::from(method);
        let ranker = match method {
            Method::Hybrid => Some(load_ranker(a.ranker.as_deref())?),
            _ => None,
        };
        search::hybrid::search(&mut idx, &enc, &text, &name, clf, &opts, method, ranker.as_ref())?
    } else if a.fragments {
        search::natural_fragments(&mut idx, &enc, &text, &opts)?
    } else {
        search::natural(&mut idx, &enc, &text, &opts)?
    };
    // Said where an editor or a compiler would say it; JSON carries them too.
    if !a.json {
        for w in &r.warnings {
            eprintln!("{}:{}:{}: warning: {}", name.display(), w.line, w.col, w.message);
        }
    }
    // The page is the report asked for; JSON still goes to stdout when asked for too.
    if a.html.is_none() || a.json {
        crate::cluster::print_result(&r, a.json);
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
