//! `beryl eval algo`: the algorithm-location benchmark (Beryllium paper, Tables 1–5).

use anyhow::{Context, Result};
use beryl_lab::algo::{self, AlgoReport, Method, QueryForm, RunConfig, Setting, Truth};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct AlgoArgs {
    /// Ground truth (JSON shape of docs/design/benchmarks.md).
    #[arg(long, default_value_os_t = beryl::repo_path("bench/algo/truth.json"))]
    truth: PathBuf,
    /// Add a pooled judgment's entries and decoys to the truth (bench/algo/pooled.json).
    #[arg(long)]
    pooled: Option<PathBuf>,
    /// Folder of `<algorithm>.p` and `<algorithm>.txt` queries.
    #[arg(long, default_value_os_t = beryl::repo_path("queries"))]
    queries: PathBuf,
    /// Folder of fetched corpora (`beryl corpus fetch PKG` puts PKG in
    /// `<cache>/corpora/PKG/src/<top_dir>`); default: the beryl cache's `corpora`.
    #[arg(long)]
    corpus_root: Option<PathBuf>,
    /// one: an index per project; multi: one per language (C++ counts as C); mixed: one for all.
    #[arg(long, value_enum, default_value = "one")]
    setting: Setting,
    /// Projects to evaluate, comma-separated truth names (default: all of them).
    #[arg(long, value_delimiter = ',')]
    projects: Vec<String>,
    /// Methods, comma-separated (default: hybrid, beryllium and its ablations cb+g and cb,
    /// dense, bm25f, pname, the bm25 and name baselines, and the hybrid with each signal
    /// taken out).
    #[arg(long, value_enum, value_delimiter = ',', allow_hyphen_values = true)]
    methods: Vec<Method>,
    /// Index anonymized copies of the corpora (neutral identifiers, comments removed, same
    /// lines): names cannot carry the result.
    #[arg(long)]
    renamed: bool,
    /// Rank hybrid candidates with these scorer weights instead of cross-validating.
    #[arg(long)]
    ranker: Option<PathBuf>,
    /// Folds of the cross-validation by algorithm.
    #[arg(long, default_value_t = 6)]
    folds: usize,
    /// Write the hybrid candidate pools (signals and hit labels, JSON lines) here, for
    /// `beryl eval fit-ranker`.
    #[arg(long)]
    pools_out: Option<PathBuf>,
    /// Pools of other runs (`--pools-out` of other settings) that every fold's scorer
    /// also trains on, minus the fold's algorithms: the shipped scorer learns from every
    /// setting, and so can the cross-validated one.
    #[arg(long, num_args = 1..)]
    train_pools: Vec<PathBuf>,
    /// Query files searched by the embedding methods: `.p` (p-code) or `.txt` (converted).
    #[arg(long, value_enum, default_value = "p")]
    query_form: QueryForm,
    /// Index folders (`<work>/<setting>/<group>/<features>`); default ~/.cache/beryl/algo-indexes.
    #[arg(long)]
    work: Option<PathBuf>,
    /// Model directory (default: $BERYL_MODEL, else the model of the statement encoder).
    #[arg(long)]
    model: Option<PathBuf>,
    #[command(flatten)]
    encoders: crate::args::EncoderArgs,
    /// libtorch threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(a: AlgoArgs) -> Result<()> {
    let mut truth = Truth::load(&a.truth)?;
    if let Some(p) = &a.pooled {
        let n = truth.add_pooled(p)?;
        eprintln!("{}: {n} pooled entries added to the truth", p.display());
    }
    anyhow::ensure!(a.queries.is_dir(), "{}: no such query folder", a.queries.display());
    let methods = if a.methods.is_empty() { Method::DEFAULT.to_vec() } else { a.methods.clone() };
    let ranker = match &a.ranker {
        Some(p) => Some(beryl::search::hybrid::Ranker::load(p)?),
        None => None,
    };
    let enc = methods.iter().any(|m| m.features().is_some()).then(|| a.encoders.load(a.threads));
    let cache = beryl::corpus::fetch::cache_dir();
    let mut train_pools = Vec::new();
    for p in &a.train_pools {
        train_pools.extend(beryl_lab::pool::read_pools(p).map_err(anyhow::Error::msg)?);
    }
    let cfg = RunConfig {
        truth: &truth,
        queries: a.queries.clone(),
        corpus_root: a.corpus_root.clone().unwrap_or_else(|| cache.join("corpora")),
        setting: a.setting,
        projects: a.projects.clone(),
        methods,
        query_form: a.query_form,
        work: a.work.clone().unwrap_or_else(|| cache.join("algo-indexes")),
        encoder: enc.as_ref(),
        model_dir: a.model.clone().unwrap_or_else(|| crate::args::default_model(a.encoders.statements.into())),
        progress: true,
        renamed: a.renamed,
        ranker,
        folds: a.folds,
        train_pools,
    };
    let report = algo::run(&cfg)?;
    if let Some(p) = &a.pools_out {
        beryl_lab::pool::write_pools(p, &report.pools).with_context(|| format!("writing {}", p.display()))?;
        eprintln!("wrote {} candidate pools to {}", report.pools.len(), p.display());
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        let mut truth = a.truth.display().to_string();
        if let Some(p) = &a.pooled {
            truth += &format!(" plus the pooled judgment {}", p.display());
        }
        print!("{}", text(&report, &truth));
    }
    Ok(())
}

fn rank_cell(r: Option<usize>) -> String {
    algo::rank_text(r)
}

/// The paper-style tables: F-rank per query and method, per-algorithm means in `one`,
/// then MRR and hit@k per scope.
pub fn text(r: &AlgoReport, truth: &str) -> String {
    let mut s = String::new();
    let setting = match r.setting {
        Setting::One => "one project (each project its own index; an algorithm's score is the mean over the projects that implement it)",
        Setting::Multi => "multiple projects (one index per language; C++ projects count as C)",
        Setting::Mixed => "mixed (all selected projects, C, C++ and Java, in one index)",
    };
    let form = match r.query_form {
        QueryForm::P => ".p (p-code)",
        QueryForm::Txt => ".txt (plain pseudocode, converted)",
    };
    s += &format!("Algorithm location, setting: {setting}{}\n", if r.renamed { ", renamed identifiers (anonymized corpora)" } else { "" });
    s += &format!("hybrid scorer: {}\n", r.ranker);
    s += &format!("truth {truth}; queries {form}; bm25 always reads the .txt; top {}\n", algo::MAX_RANK);
    for g in &r.groups {
        s += &format!("  group {} ({}): {}\n", g.name, g.language, g.projects.join(", "));
    }
    s += "\nF-rank (rank of the first hit; >100 = none in the top 100)\n";
    let aw = r.rows.iter().map(|x| x.algorithm.len()).max().unwrap_or(9).max(9);
    let gw = r.rows.iter().map(|x| x.group.len()).max().unwrap_or(5).max(5);
    let mut h = format!("{:<aw$}  {:<gw$}  {:<5}", "algorithm", if r.setting == Setting::One { "project" } else { "group" }, "lang");
    for m in &r.methods {
        h += &format!(" {:>10}", m.name());
    }
    s += &format!("{h}\n");
    let mut rows: Vec<_> = r.rows.iter().collect();
    rows.sort_by(|a, b| (&a.algorithm, &a.group).cmp(&(&b.algorithm, &b.group)));
    for row in &rows {
        let mut line = format!("{:<aw$}  {:<gw$}  {:<5}", row.algorithm, row.group, row.language);
        for rk in &row.ranks {
            line += &format!(" {:>10}", rank_cell(*rk));
        }
        s += &format!("{line}\n");
    }
    if r.setting == Setting::One {
        // Per algorithm: mean reciprocal rank over the projects implementing it, per language.
        s += "\nPer algorithm (mean of 1/F-rank over the projects that implement it; n = projects)\n";
        let mut h = format!("{:<aw$}  {:<5} {:>3}", "algorithm", "lang", "n");
        for m in &r.methods {
            h += &format!(" {:>10}", m.name());
        }
        s += &format!("{h}\n");
        let mut per: BTreeMap<(&str, &str), Vec<&algo::Row>> = BTreeMap::new();
        for row in &r.rows {
            per.entry((row.algorithm.as_str(), row.language.as_str())).or_default().push(row);
        }
        for ((a, l), rs) in &per {
            let mut line = format!("{a:<aw$}  {l:<5} {:>3}", rs.len());
            for mi in 0..r.methods.len() {
                let v = rs.iter().map(|x| algo::reciprocal(x.ranks.get(mi).copied().flatten())).sum::<f64>() / rs.len() as f64;
                line += &format!(" {v:>10.3}");
            }
            s += &format!("{line}\n");
        }
    }
    s += "\nSummary (MRR and hit@k: mean over algorithms";
    s += if r.setting == Setting::One { " of the mean over each algorithm's projects)\n" } else { ")\n" };
    s += &format!(
        "{:<6} {:<10} {:>5} {:>5} {:>7} {:>7} {:>7} {:>7}   {:>9}\n",
        "scope", "method", "algs", "rows", "MRR", "hit@1", "hit@10", "hit@25", "MRR-ovl*"
    );
    for x in &r.summary {
        s += &format!(
            "{:<6} {:<10} {:>5} {:>5} {:>7.3} {:>7.3} {:>7.3} {:>7.3}   {:>9.3}\n",
            x.scope,
            x.method.name(),
            x.algorithms,
            x.rows,
            x.mrr,
            x.hit1,
            x.hit10,
            x.hit25,
            x.mrr_overlap
        );
    }
    s += "* MRR-ovl: diagnostic, any fragment touching an entry counts, without the size limit of the hit rule.\n";
    s += "\nPaper anchors (Beryllium, MRR): one project Java 0.819 / C 0.522 / mixed 0.498; multiple projects Java 0.606 / C 0.316 / mixed 0.313; text-only CB 0.256 / 0.184 / 0.122.\n";
    let lost: Vec<&String> = r.rows.iter().flat_map(|x| &x.unindexed).collect();
    if !lost.is_empty() {
        s += &format!("\n{} truth entries lie in files the index skipped (non-UTF-8 or too large); no method can find them:\n", lost.len());
        for e in lost {
            s += &format!("  {e}\n");
        }
    }
    if !r.failures.is_empty() {
        s += &format!("\n{} queries failed (counted as >100):\n", r.failures.len());
        for f in &r.failures {
            s += &format!("  {f}\n");
        }
    }
    let built: Vec<_> = r.builds.iter().filter(|b| !b.up_to_date).collect();
    for b in &built {
        s += &format!(
            "indexed {} [{}]: {} files, {} lines, {} nodes, {} texts encoded, {:.0} s\n",
            b.group, b.features, b.files, b.lines, b.nodes, b.texts_encoded, b.seconds
        );
    }
    s += &format!("total {:.0} s\n", r.seconds);
    s
}

#[derive(clap::Args)]
pub struct FitArgs {
    /// Candidate pools written by `beryl eval algo --pools-out`.
    #[arg(long = "pools", required = true, num_args = 1..)]
    pools: Vec<PathBuf>,
    /// Output folder: weights.json and manifest.json.
    #[arg(long, default_value_os_t = beryl::repo_path("models/ranker"))]
    out: PathBuf,
    /// Folds of the cross-validation reported in the manifest.
    #[arg(long, default_value_t = 6)]
    folds: usize,
}

/// Fits the shipped hybrid scorer on every pool, after a cross-validation by algorithm
/// whose figures go into the manifest.
pub fn fit(a: FitArgs) -> Result<()> {
    use beryl_lab::pool::{self, Variant};
    let mut pools = Vec::new();
    for p in &a.pools {
        pools.extend(pool::read_pools(p).map_err(anyhow::Error::msg)?);
    }
    anyhow::ensure!(!pools.is_empty(), "no candidate pools in {:?}", a.pools);
    let folds = pool::folds(&pools, a.folds);
    let v = Variant { without: None };
    let ranked = pool::cross_validated(&pools, &[], v, &folds, None);
    let cv = pool::mrr(&pools, &ranked);
    let mut per_setting = serde_json::Map::new();
    for s in pools.iter().map(|p| p.setting.clone()).collect::<std::collections::BTreeSet<_>>() {
        let m = pool::mrr_where(&pools, &ranked, |p| p.setting == s);
        println!("  {s}: pool MRR cross-validated by algorithm {m:.3}");
        per_setting.insert(s, serde_json::json!(m));
    }
    let refs: Vec<&pool::Pool> = pools.iter().collect();
    let r = pool::fit(&refs, v);
    let fitted = pool::mrr(&pools, &pool::cross_validated(&pools, &[], v, &folds, Some(&r)));
    std::fs::create_dir_all(&a.out)?;
    r.save(&a.out.join("weights.json"))?;
    let mut settings: Vec<&str> = pools.iter().map(|p| p.setting.as_str()).collect();
    settings.sort();
    settings.dedup();
    let algorithms: std::collections::BTreeSet<&str> = pools.iter().map(|p| p.algorithm.as_str()).collect();
    let manifest = serde_json::json!({
        "model": "logistic regression over the hybrid candidate signals (src/search/hybrid/scorer.rs)",
        "features": beryl::search::hybrid::Signals::NAMES,
        "l2": pool::L2,
        "data": {
            "pools": a.pools,
            "settings": settings,
            "queries": pools.len(),
            "algorithms": algorithms.len(),
            "candidates": pools.iter().map(|p| p.cands.len()).sum::<usize>(),
            "positives": pools.iter().map(|p| p.cands.iter().filter(|c| c.hit).count()).sum::<usize>(),
        },
        "folds": folds,
        "pool_mrr": { "cross_validated_by_algorithm": cv, "cross_validated_by_setting": per_setting, "fitted_on_all (optimistic)": fitted },
        "date": chrono_date(),
        "command": format!("beryl eval fit-ranker --pools {}", a.pools.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" ")),
    });
    std::fs::write(a.out.join("manifest.json"), serde_json::to_string_pretty(&manifest)?)?;
    println!(
        "{} pools, {} algorithms: pool MRR cross-validated by algorithm {cv:.3} (fitted on all: {fitted:.3}); wrote {}",
        pools.len(),
        algorithms.len(),
        a.out.display()
    );
    Ok(())
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
fn chrono_date() -> String {
    let days = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}
