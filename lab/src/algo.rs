//! The algorithm-location benchmark (Beryllium, Tables 1–5): pseudocode queries against
//! real projects, scored by the rank of the first fragment that lies on a known
//! implementation (`bench/algo/truth.json`, rules in `docs/design/benchmarks.md`).
//!
//! Every method yields a ranked list of fragments, each a set of line spans in files, and
//! every list is judged by the same hit rule ([`is_hit`]): the embedding methods return
//! `search::pseudo` fragments from indexes built with different feature switches, the
//! function-level baselines (BM25, name search) return whole functions.

use beryl::corpus::{self, WalkOptions};
use crate::pool::{self, Pool, PoolCand, Variant};
use crate::{bm25::Bm25, tokenize};
use beryl::features::TextEncoders;
use beryl::index::{self, FeatureSet, Index, IndexError, IndexOptions};
use beryl::pcode::Classifier;
use beryl::search::hybrid::{self, HybridOptions, Query};
use beryl::search::hybrid::Ranker;
use beryl::text::{split, Split};
use beryl::search::{self, SearchError, SearchOptions};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;
use thiserror::Error;

/// Ranks beyond this count as a miss (">100").
pub const MAX_RANK: usize = 100;

#[derive(Debug, Error)]
pub enum AlgoError {
    // Causes are part of the message and not `source` fields, so a printed error chain
    // does not repeat them.
    #[error("reading {path}: {error}")]
    Io { path: PathBuf, error: std::io::Error },
    #[error("{path}: not a ground-truth file: {error}")]
    Json { path: PathBuf, error: serde_json::Error },
    #[error("{path}: {msg}")]
    Truth { path: PathBuf, msg: String },
    #[error("project {project}: no corpus at {path} (fetch it with `beryl corpus fetch {package}`)")]
    MissingCorpus { project: String, package: String, path: PathBuf },
    #[error("unknown project {name:?}; the ground truth lists {known}")]
    UnknownProject { name: String, known: String },
    #[error("no query for {algorithm}: {path} does not exist")]
    MissingQuery { algorithm: String, path: PathBuf },
    #[error("method `{0}` needs the text encoder and a model")]
    NeedsEncoder(&'static str),
    #[error("nothing to evaluate: no ground-truth entries in the selected projects")]
    NoEntries,
    #[error("index {dir}: {error}")]
    Index { dir: PathBuf, error: IndexError },
    #[error("reading functions from {path}: {msg}")]
    Functions { path: PathBuf, msg: String },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> AlgoError + '_ {
    move |error| AlgoError::Io { path: path.to_path_buf(), error }
}

fn json(path: &Path) -> impl FnOnce(serde_json::Error) -> AlgoError + '_ {
    move |error| AlgoError::Json { path: path.to_path_buf(), error }
}

// ---------------------------------------------------------------------------------------
// Ground truth

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TruthCorpus {
    pub name: String,
    pub debian_source_package: String,
    pub version: String,
    pub language: String,
    pub orig_tarball: String,
    pub top_dir: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Entry {
    pub algorithm: String,
    pub project: String,
    /// Relative to the corpus's `top_dir`.
    pub path: String,
    pub function: String,
    pub start_line: u32,
    pub end_line: u32,
    #[serde(default)]
    pub confidence: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
}

impl Entry {
    pub fn span(&self) -> u32 {
        self.end_line.saturating_sub(self.start_line) + 1
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Truth {
    pub corpora: Vec<TruthCorpus>,
    pub entries: Vec<Entry>,
    #[serde(default)]
    pub decoys: Vec<Entry>,
}

/// A pooled judgment of the truth: every method's first fragments that hit no entry, read
/// and judged like the truth was (`bench/algo/README.md`). The truth as filed was found by
/// grepping for names, so it misses implementations nobody named; the ranking figures are
/// reported against it and, beside, against it plus these.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pooled {
    /// How the pool was drawn and judged.
    pub about: String,
    /// Judged implementations, in the shape of the truth's entries.
    pub entries: Vec<Entry>,
    /// Judged not to implement the algorithm.
    pub decoys: Vec<Entry>,
}

impl Truth {
    pub fn load(path: &Path) -> Result<Truth, AlgoError> {
        let text = std::fs::read_to_string(path).map_err(io(path))?;
        Truth::parse(&text, path)
    }

    /// Parses and checks that entries name listed projects and sane line ranges.
    pub fn parse(text: &str, path: &Path) -> Result<Truth, AlgoError> {
        let t: Truth = serde_json::from_str(text).map_err(json(path))?;
        t.check(t.entries.iter().chain(&t.decoys), path)?;
        Ok(t)
    }

    /// Adds the entries and decoys of a pooled judgment (`bench/algo/pooled.json`); returns
    /// how many entries it added.
    pub fn add_pooled(&mut self, path: &Path) -> Result<usize, AlgoError> {
        let text = std::fs::read_to_string(path).map_err(io(path))?;
        let p: Pooled = serde_json::from_str(&text).map_err(json(path))?;
        self.check(p.entries.iter().chain(&p.decoys), path)?;
        let n = p.entries.len();
        self.entries.extend(p.entries);
        self.decoys.extend(p.decoys);
        Ok(n)
    }

    fn check<'a>(&self, items: impl Iterator<Item = &'a Entry>, path: &Path) -> Result<(), AlgoError> {
        let names: BTreeSet<&str> = self.corpora.iter().map(|c| c.name.as_str()).collect();
        for e in items {
            let bad = |msg: String| AlgoError::Truth { path: path.to_path_buf(), msg };
            if !names.contains(e.project.as_str()) {
                return Err(bad(format!("{} {}: project {:?} is not among the corpora", e.algorithm, e.function, e.project)));
            }
            if e.start_line == 0 || e.end_line < e.start_line {
                return Err(bad(format!("{} {} in {}: bad line range {}-{}", e.algorithm, e.function, e.path, e.start_line, e.end_line)));
            }
        }
        Ok(())
    }

    pub fn corpus(&self, name: &str) -> Option<&TruthCorpus> {
        self.corpora.iter().find(|c| c.name == name)
    }
}

/// Language class for grouping: C++ projects count as C (the paper has C and Java only).
pub fn language_class(lang: &str) -> &'static str {
    if lang.eq_ignore_ascii_case("java") {
        "Java"
    } else {
        "C"
    }
}

// ---------------------------------------------------------------------------------------
// The hit rule and the metrics

/// One span of a returned fragment, located in a project: `path` relative to its top_dir.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LocSpan {
    pub project: String,
    pub path: String,
    pub lines: (u32, u32),
}

/// The fragment's own size: last minus first line + 1 over its spans in one file, the
/// largest over the files it touches.
pub fn fragment_extent(spans: &[LocSpan]) -> u32 {
    let mut per: HashMap<(&str, &str), (u32, u32)> = HashMap::new();
    for s in spans {
        let (a, b) = (s.lines.0.min(s.lines.1), s.lines.0.max(s.lines.1));
        let e = per.entry((&s.project, &s.path)).or_insert((a, b));
        e.0 = e.0.min(a);
        e.1 = e.1.max(b);
    }
    per.values().map(|&(a, b)| b - a + 1).max().unwrap_or(0)
}

/// Largest fragment still judged a hit on an entry spanning `entry_span` lines.
pub fn size_limit(entry_span: u32) -> u32 {
    (3 * entry_span).max(entry_span + 30)
}

/// A fragment hits an entry when one of its spans is in the entry's file and overlaps its
/// lines, and the fragment is not much larger than the entry.
pub fn is_hit(spans: &[LocSpan], entry: &Entry) -> bool {
    let overlaps = spans.iter().any(|s| {
        s.project == entry.project && s.path == entry.path && s.lines.0.min(s.lines.1) <= entry.end_line && s.lines.0.max(s.lines.1) >= entry.start_line
    });
    overlaps && fragment_extent(spans) <= size_limit(entry.span())
}

/// Rank (1-based) of the first fragment among the top [`MAX_RANK`] that hits any of
/// `entries`; `None` is ">100".
pub fn f_rank(fragments: &[Vec<LocSpan>], entries: &[&Entry]) -> Option<usize> {
    fragments.iter().take(MAX_RANK).position(|f| entries.iter().any(|e| is_hit(f, e))).map(|i| i + 1)
}

/// Like [`f_rank`] without the size limit: the first fragment that touches an entry at
/// all. A diagnostic: where it is much better than the F-rank, fragments were too large.
pub fn overlap_rank(fragments: &[Vec<LocSpan>], entries: &[&Entry]) -> Option<usize> {
    let touches = |f: &Vec<LocSpan>, e: &Entry| {
        f.iter().any(|s| s.project == e.project && s.path == e.path && s.lines.0.min(s.lines.1) <= e.end_line && s.lines.0.max(s.lines.1) >= e.start_line)
    };
    fragments.iter().take(MAX_RANK).position(|f| entries.iter().any(|e| touches(f, e))).map(|i| i + 1)
}

pub fn reciprocal(rank: Option<usize>) -> f64 {
    rank.filter(|r| (1..=MAX_RANK).contains(r)).map_or(0.0, |r| 1.0 / r as f64)
}

pub fn hit_at(rank: Option<usize>, k: usize) -> f64 {
    if rank.is_some_and(|r| r <= k) {
        1.0
    } else {
        0.0
    }
}

/// `3` or `>100`.
pub fn rank_text(rank: Option<usize>) -> String {
    rank.map_or_else(|| format!(">{MAX_RANK}"), |r| r.to_string())
}

// ---------------------------------------------------------------------------------------
// Settings and methods

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Setting {
    /// Each project its own index.
    One,
    /// All projects of one language in one index (C++ counts as C).
    Multi,
    /// All projects in one index.
    Mixed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum QueryForm {
    /// `<algorithm>.p`, p-code.
    P,
    /// `<algorithm>.txt`, plain pseudocode, converted to p-code.
    Txt,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, clap::ValueEnum)]
pub enum Method {
    /// `search --method hybrid`: every retriever, alignment and the learned scorer,
    /// cross-validated by algorithm.
    #[value(name = "hybrid")]
    #[serde(rename = "hybrid")]
    Hybrid,
    /// The paper's pipeline (`search --method beryllium`): index with text, graph and math
    /// features, node matching and grouping.
    #[value(name = "beryllium", alias = "beryl")]
    #[serde(rename = "beryllium")]
    Beryllium,
    /// Beryllium with text and graph features, no math.
    #[value(name = "cb+g")]
    #[serde(rename = "cb+g")]
    CbG,
    /// Beryllium with text features only.
    #[value(name = "cb")]
    #[serde(rename = "cb")]
    Cb,
    /// `search --method dense`: the query text against function text vectors.
    #[value(name = "dense")]
    #[serde(rename = "dense")]
    Dense,
    /// `search --method bm25`: BM25F over function names, comments and bodies.
    #[value(name = "bm25f")]
    #[serde(rename = "bm25f")]
    Bm25f,
    /// `search --method name`: the query's procedure names against function names.
    #[value(name = "pname")]
    #[serde(rename = "pname")]
    Pname,
    /// Baseline: Okapi BM25 over functions, the `.txt` pseudocode as query.
    #[value(name = "bm25")]
    #[serde(rename = "bm25")]
    Bm25,
    /// Baseline: the algorithm's name (file stem) against function identifiers and the
    /// comment above.
    #[value(name = "name")]
    #[serde(rename = "name")]
    Name,
    /// Hybrid without each signal (its retriever and its features; refitted).
    #[value(name = "-lexical")]
    #[serde(rename = "-lexical")]
    NoLexical,
    #[value(name = "-dense")]
    #[serde(rename = "-dense")]
    NoDense,
    #[value(name = "-beryllium")]
    #[serde(rename = "-beryllium")]
    NoBeryllium,
    #[value(name = "-structure")]
    #[serde(rename = "-structure")]
    NoStructure,
    #[value(name = "-fragment")]
    #[serde(rename = "-fragment")]
    NoFragment,
    #[value(name = "-tokens")]
    #[serde(rename = "-tokens")]
    NoTokens,
    #[value(name = "-strings")]
    #[serde(rename = "-strings")]
    NoStrings,
}

impl Method {
    /// What `beryl eval algo` runs without `--methods`.
    pub const DEFAULT: [Method; 16] = [
        Method::Hybrid,
        Method::Beryllium,
        Method::CbG,
        Method::Cb,
        Method::Dense,
        Method::Bm25f,
        Method::Pname,
        Method::Bm25,
        Method::Name,
        Method::NoLexical,
        Method::NoDense,
        Method::NoBeryllium,
        Method::NoStructure,
        Method::NoFragment,
        Method::NoTokens,
        Method::NoStrings,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Method::Hybrid => "hybrid",
            Method::Beryllium => "beryllium",
            Method::CbG => "cb+g",
            Method::Cb => "cb",
            Method::Dense => "dense",
            Method::Bm25f => "bm25f",
            Method::Pname => "pname",
            Method::Bm25 => "bm25",
            Method::Name => "name",
            Method::NoLexical => "-lexical",
            Method::NoDense => "-dense",
            Method::NoBeryllium => "-beryllium",
            Method::NoStructure => "-structure",
            Method::NoFragment => "-fragment",
            Method::NoTokens => "-tokens",
            Method::NoStrings => "-strings",
        }
    }

    /// Index feature switches of the methods that search an index.
    pub fn features(self) -> Option<FeatureSet> {
        match self {
            Method::CbG => Some(FeatureSet { text: true, graph: true, math: false }),
            Method::Cb => Some(FeatureSet { text: true, graph: false, math: false }),
            Method::Bm25 | Method::Name => None,
            _ => Some(FeatureSet { text: true, graph: true, math: true }),
        }
    }

    /// The hybrid variant this method is ranked by, if it is one.
    pub fn variant(self) -> Option<Variant> {
        let without = match self {
            Method::Hybrid => None,
            Method::NoLexical => Some("lexical"),
            Method::NoDense => Some("dense"),
            Method::NoBeryllium => Some("beryllium"),
            Method::NoStructure => Some("structure"),
            Method::NoFragment => Some("fragment"),
            Method::NoTokens => Some("tokens"),
            Method::NoStrings => Some("strings"),
            _ => return None,
        };
        Some(Variant { without })
    }
}

/// Projects searched together in one index.
#[derive(Clone, Debug, Serialize)]
pub struct Group {
    /// Project name (`one`), `java`/`c` (`multi`) or `mixed`.
    pub name: String,
    /// `Java`, `C` or `mixed`.
    pub language: String,
    pub projects: Vec<String>,
}

/// Index units of a setting over the selected projects (sorted by name inside a group).
pub fn groups(truth: &Truth, setting: Setting, projects: &[String]) -> Vec<Group> {
    let lang = |p: &str| truth.corpus(p).map_or("C", |c| language_class(&c.language));
    let mut sorted: Vec<String> = projects.to_vec();
    sorted.sort();
    sorted.dedup();
    match setting {
        Setting::One => sorted
            .iter()
            // A project without entries has nothing to find when it is alone.
            .filter(|p| truth.entries.iter().any(|e| &e.project == *p))
            .map(|p| Group { name: p.clone(), language: lang(p).to_string(), projects: vec![p.clone()] })
            .collect(),
        Setting::Multi => ["Java", "C"]
            .iter()
            .map(|l| Group {
                name: l.to_lowercase(),
                language: l.to_string(),
                projects: sorted.iter().filter(|p| lang(p) == *l).cloned().collect(),
            })
            .filter(|g| !g.projects.is_empty())
            .collect(),
        Setting::Mixed => vec![Group { name: "mixed".into(), language: "mixed".into(), projects: sorted }],
    }
}

// ---------------------------------------------------------------------------------------
// The runner

pub struct RunConfig<'a> {
    pub truth: &'a Truth,
    /// Folder of `<algorithm>.p` and `<algorithm>.txt`.
    pub queries: PathBuf,
    /// Folder of fetched corpora: `<root>/<debian package>/src/<top_dir>`.
    pub corpus_root: PathBuf,
    pub setting: Setting,
    /// Projects to evaluate; empty = all in the truth.
    pub projects: Vec<String>,
    pub methods: Vec<Method>,
    pub query_form: QueryForm,
    /// Index folders go to `<work>/<setting>/<group>/<features>`.
    pub work: PathBuf,
    /// Needed by the embedding methods.
    pub encoder: Option<&'a TextEncoders>,
    pub model_dir: PathBuf,
    /// Progress lines on standard error.
    pub progress: bool,
    /// Index anonymized copies of the corpora (neutral names, no comments, same lines).
    pub renamed: bool,
    /// Rank the hybrid candidates with this scorer instead of cross-validating.
    pub ranker: Option<Ranker>,
    /// Folds of the cross-validation by algorithm.
    pub folds: usize,
    /// Pools of other runs every fold's scorer also trains on (minus the fold's algorithms).
    pub train_pools: Vec<Pool>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub algorithm: String,
    pub group: String,
    /// Language class of the row: the group's, or in `one` the project's.
    pub language: String,
    /// Projects of the group that implement the algorithm.
    pub projects: Vec<String>,
    /// F-rank per method, in the order of [`AlgoReport::methods`]; `None` is ">100".
    pub ranks: Vec<Option<usize>>,
    /// The first [`SHOWN`] fragments per method (where each points): what won, and what a
    /// pooled judgment of the truth reads.
    pub top: Vec<Vec<String>>,
    /// Rank of the first fragment touching an entry, whatever its size ([`overlap_rank`]).
    pub overlap_ranks: Vec<Option<usize>>,
    /// Truth entries of the row.
    pub entries: usize,
    /// Entries in files the index left out (skipped as non-UTF-8, too large, …).
    pub unindexed: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// `Java`, `C`, `mixed` or `all`.
    pub scope: String,
    pub method: Method,
    pub algorithms: usize,
    pub rows: usize,
    /// Mean over algorithms of (mean over the algorithm's rows of 1/F-rank).
    pub mrr: f64,
    pub hit1: f64,
    pub hit10: f64,
    pub hit25: f64,
    /// MRR when any fragment touching an entry counted, whatever its size (diagnostic).
    pub mrr_overlap: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct BuildInfo {
    pub group: String,
    pub features: String,
    pub dir: PathBuf,
    pub up_to_date: bool,
    pub files: usize,
    pub lines: u64,
    pub functions: usize,
    pub nodes: usize,
    pub texts_encoded: u64,
    pub seconds: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct AlgoReport {
    pub setting: Setting,
    pub query_form: QueryForm,
    pub methods: Vec<Method>,
    pub groups: Vec<Group>,
    pub rows: Vec<Row>,
    pub summary: Vec<Summary>,
    pub builds: Vec<BuildInfo>,
    /// Queries that could not be run (counted as >100), with the reason.
    pub failures: Vec<String>,
    pub seconds: f64,
    pub renamed: bool,
    /// How the hybrid scorer was obtained for these figures.
    pub ranker: String,
    /// The hybrid candidate pools (for fitting the shipped scorer).
    #[serde(skip)]
    pub pools: Vec<Pool>,
}

/// `<corpus_root>/<debian package>/src/<top_dir>`, as `beryl corpus fetch` leaves it.
pub fn project_root(corpus_root: &Path, c: &TruthCorpus) -> Result<PathBuf, AlgoError> {
    let p = corpus_root.join(&c.debian_source_package).join("src").join(&c.top_dir);
    if !p.is_dir() {
        return Err(AlgoError::MissingCorpus { project: c.name.clone(), package: c.debian_source_package.clone(), path: p });
    }
    // One spelling for indexing and for locating results.
    std::fs::canonicalize(&p).map_err(io(&p))
}

/// Maps indexed (absolute) paths back to (project, path under top_dir).
struct Locator {
    roots: Vec<(PathBuf, String)>,
}

impl Locator {
    fn locate(&self, path: &str, lines: (u32, u32)) -> LocSpan {
        let p = Path::new(path);
        for (root, project) in &self.roots {
            if let Ok(rel) = p.strip_prefix(root) {
                let rel = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
                return LocSpan { project: project.clone(), path: rel, lines };
            }
        }
        LocSpan { project: String::new(), path: path.to_string(), lines }
    }
}

/// Fragments per method and row kept in the report.
pub const SHOWN: usize = 10;

fn shown(frags: &[Vec<LocSpan>]) -> Vec<String> {
    frags.iter().take(SHOWN).filter_map(|f| describe(f)).collect()
}

fn describe(f: &[LocSpan]) -> Option<String> {
    let s = f.first()?;
    let (a, b) = f.iter().filter(|x| x.path == s.path).fold((u32::MAX, 0), |(a, b), x| (a.min(x.lines.0), b.max(x.lines.1)));
    Some(format!("{}:{}:{a}-{b}", s.project, s.path))
}

/// A function of the corpus, as the index (or the parser) records it.
#[derive(Clone, Debug)]
pub struct FuncRec {
    pub path: String,
    pub qualified: String,
    pub lang: String,
    pub lines: (u32, u32),
}

/// Function rows of an index generation, read-only.
fn functions_from_sqlite(db: &Path) -> Result<Vec<FuncRec>, AlgoError> {
    use rusqlite::{Connection, OpenFlags};
    let err = |e: rusqlite::Error| AlgoError::Functions { path: db.to_path_buf(), msg: e.to_string() };
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX).map_err(err)?;
    let mut st = conn
        .prepare("SELECT fi.path, f.qualified, fi.lang, f.start_line, f.end_line FROM functions f JOIN files fi ON f.file = fi.id ORDER BY f.id")
        .map_err(err)?;
    let rows = st
        .query_map([], |r| Ok(FuncRec { path: r.get(0)?, qualified: r.get(1)?, lang: r.get(2)?, lines: (r.get(3)?, r.get(4)?) }))
        .map_err(err)?;
    rows.collect::<Result<Vec<_>, _>>().map_err(err)
}

/// The group's functions: from an index already built over exactly these roots (cheap),
/// else by parsing (the same parser the index uses, so the boundaries agree).
fn functions_of(roots: &[PathBuf], index_dirs: &[PathBuf]) -> Result<Vec<FuncRec>, AlgoError> {
    let want: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    for d in index_dirs {
        let Some(gen) = index::current_generation(d) else { continue };
        let same_roots = std::fs::read_to_string(gen.join("meta.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<index::IndexMeta>(&t).ok())
            .is_some_and(|m| m.roots == want);
        if same_roots {
            return functions_from_sqlite(&gen.join("index.sqlite"));
        }
    }
    let c = corpus::load(roots, &WalkOptions::default());
    let icfg = c.icfg;
    Ok(icfg
        .functions
        .iter()
        .map(|f| {
            let file = &icfg.files[f.meta.file as usize];
            FuncRec { path: file.path.display().to_string(), qualified: f.meta.qualified(), lang: file.lang.name().to_string(), lines: f.meta.lines }
        })
        .collect())
}

/// Source files read once, as lines.
#[derive(Default)]
struct Sources {
    files: HashMap<String, Vec<String>>,
}

impl Sources {
    fn lines(&mut self, path: &str) -> &[String] {
        self.files.entry(path.to_string()).or_insert_with(|| {
            std::fs::read(path).map(|b| String::from_utf8_lossy(&b).lines().map(str::to_string).collect()).unwrap_or_default()
        })
    }
}

/// The comment block right above line `start` (1-based), skipping blank and annotation
/// lines in between (Javadoc sits above `@Override`).
pub fn comment_above(lines: &[String], start: u32) -> String {
    let mut i = (start as usize).saturating_sub(1).min(lines.len());
    let mut skipped = 0;
    while i > 0 && skipped < 6 {
        let t = lines[i - 1].trim();
        if t.is_empty() || t.starts_with('@') {
            i -= 1;
            skipped += 1;
        } else {
            break;
        }
    }
    if i == 0 {
        return String::new();
    }
    let last = lines[i - 1].trim();
    let mut out: Vec<&str> = Vec::new();
    if last.ends_with("*/") {
        let mut j = i;
        while j > 0 && i - j < 200 {
            j -= 1;
            out.push(&lines[j]);
            if lines[j].contains("/*") {
                break;
            }
        }
    } else {
        let mut j = i;
        while j > 0 && lines[j - 1].trim_start().starts_with("//") && i - j < 200 {
            j -= 1;
            out.push(&lines[j]);
        }
    }
    out.reverse();
    out.join("\n")
}

fn stem(w: &str) -> String {
    if w.len() >= 4 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        w[..w.len() - 1].to_string()
    } else {
        w.to_string()
    }
}

/// Lower-case words of identifiers and prose: split at non-alphanumerics and camelCase,
/// plural `s` stripped. No stop words: `union` or `all` are real name words here.
pub fn name_words(text: &str) -> Vec<String> {
    split(text, &Split::WORDS).iter().map(|w| stem(&w.chars().flat_map(char::to_lowercase).collect::<String>())).collect()
}

/// Identifier words of a function: Java package components (lower-case leading parts of
/// the qualified name) are left out, the class and method names kept.
fn identifier_words(f: &FuncRec) -> Vec<String> {
    let parts: Vec<&str> = if f.lang == "java" { f.qualified.split('.').collect() } else { f.qualified.split("::").collect() };
    let mut keep = parts.as_slice();
    if f.lang == "java" {
        while keep.len() > 1 && keep[0].chars().next().is_some_and(|c| c.is_lowercase()) {
            keep = &keep[1..];
        }
    }
    keep.iter().flat_map(|p| name_words(p)).collect()
}

/// Name search: the fraction of the algorithm's name words found among the function's
/// identifier words and the comment above it; ties go to the shorter function.
pub fn rank_by_name(algorithm: &str, funcs: &[FuncRec], comments: &[String]) -> Vec<usize> {
    let want: BTreeSet<String> = name_words(&algorithm.replace('-', " ")).into_iter().collect();
    if want.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(f64, u32, usize)> = Vec::new();
    for (i, f) in funcs.iter().enumerate() {
        let mut have: BTreeSet<String> = identifier_words(f).into_iter().collect();
        have.extend(name_words(&comments[i]));
        let n = want.iter().filter(|w| have.contains(*w)).count();
        if n > 0 {
            scored.push((n as f64 / want.len() as f64, f.lines.1.saturating_sub(f.lines.0) + 1, i));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    scored.into_iter().take(MAX_RANK).map(|s| s.2).collect()
}

/// Plain pseudocode with the listing's line numbers (` 1 FOO(A)`) taken off.
pub fn strip_line_numbers(text: &str) -> String {
    text.lines()
        .map(|l| {
            let t = l.trim_start();
            let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            // The listing writes the number, one space, then the indented line.
            if digits > 0 && t[digits..].starts_with(' ') {
                &t[digits + 1..]
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn query_path(dir: &Path, algorithm: &str, ext: &str) -> Result<PathBuf, AlgoError> {
    let p = dir.join(format!("{algorithm}.{ext}"));
    if p.is_file() {
        Ok(p)
    } else {
        Err(AlgoError::MissingQuery { algorithm: algorithm.to_string(), path: p })
    }
}

fn index_dir(work: &Path, setting: Setting, group: &Group, f: FeatureSet) -> PathBuf {
    let setting = setting_label(setting);
    // Different project subsets of one language must not overwrite each other's index.
    let name = if setting == "one" {
        group.name.clone()
    } else {
        use sha2::{Digest, Sha256};
        let h = Sha256::digest(group.projects.join(",").as_bytes());
        format!("{}-{}p-{:02x}{:02x}{:02x}{:02x}", group.name, group.projects.len(), h[0], h[1], h[2], h[3])
    };
    work.join(setting).join(name).join(f.name().replace(',', "-"))
}

/// The anonymized copy of a project (neutral names, comments removed, lines kept), made
/// once under `<work>/renamed/<project>` per revision of the anonymizer and of the walk.
pub fn renamed_root(work: &Path, project: &str, root: &Path) -> Result<PathBuf, AlgoError> {
    let out = work.join("renamed").join(project);
    let done = out.join(".done");
    let src = out.join("src");
    let stamp = format!("anonymizer {} walk {}\n", beryl::anonymize::REVISION, corpus::walk::REVISION);
    if std::fs::read_to_string(&done).is_ok_and(|d| d.starts_with(&stamp)) {
        // Copies made before trees were marked.
        if !beryl::anonymize::is_marked(&src) {
            beryl::anonymize::mark(&src).map_err(io(&src))?;
        }
        return Ok(src);
    }
    if src.exists() {
        std::fs::remove_dir_all(&src).map_err(io(&src))?;
    }
    let opts = WalkOptions::default();
    let (found, _) = corpus::walk::discover(&[root.to_path_buf()], &opts);
    let files: Vec<(PathBuf, String)> = found.into_iter().filter_map(|p| corpus::walk::read_source(&p, &opts).ok().map(|s| (p, s))).collect();
    let a = beryl::anonymize::anonymize_sources(&files, beryl::anonymize::Mode::Neutral, 0, false)
        .map_err(|e| AlgoError::Truth { path: root.to_path_buf(), msg: format!("anonymizing: {e}") })?;
    for f in &a.files {
        let rel = f.path.strip_prefix(root).unwrap_or(&f.path);
        let dest = src.join(rel);
        if let Some(d) = dest.parent() {
            std::fs::create_dir_all(d).map_err(io(d))?;
        }
        std::fs::write(&dest, &f.text).map_err(io(&dest))?;
    }
    beryl::anonymize::mark(&src).map_err(io(&src))?;
    std::fs::write(&done, format!("{stamp}{} files\n", a.files.len())).map_err(io(&done))?;
    std::fs::canonicalize(&src).map_err(io(&src))
}

/// Runs every method on every algorithm of every group of the setting.
pub fn run(cfg: &RunConfig) -> Result<AlgoReport, AlgoError> {
    let t0 = Instant::now();
    let truth = cfg.truth;
    let known = || truth.corpora.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ");
    let projects: Vec<String> = if cfg.projects.is_empty() {
        truth.corpora.iter().map(|c| c.name.clone()).collect()
    } else {
        for p in &cfg.projects {
            if truth.corpus(p).is_none() {
                return Err(AlgoError::UnknownProject { name: p.clone(), known: known() });
            }
        }
        cfg.projects.clone()
    };
    let mut methods = cfg.methods.clone();
    if methods.is_empty() {
        methods = Method::DEFAULT.to_vec();
    }
    methods.dedup();
    if let Some(m) = methods.iter().find(|m| m.features().is_some()) {
        if cfg.encoder.is_none() {
            return Err(AlgoError::NeedsEncoder(m.name()));
        }
    }
    let groups = groups(truth, cfg.setting, &projects);
    // Check every corpus and query before hours of indexing start.
    let mut roots: BTreeMap<String, PathBuf> = BTreeMap::new();
    for g in &groups {
        for p in &g.projects {
            let c = truth.corpus(p).ok_or_else(|| AlgoError::UnknownProject { name: p.clone(), known: known() })?;
            roots.insert(p.clone(), project_root(&cfg.corpus_root, c)?);
        }
    }
    let ext = if cfg.query_form == QueryForm::P { "p" } else { "txt" };
    let mut algos_of: Vec<Vec<String>> = Vec::new();
    for g in &groups {
        let set: BTreeSet<String> = truth.entries.iter().filter(|e| g.projects.contains(&e.project)).map(|e| e.algorithm.clone()).collect();
        for a in &set {
            if methods.iter().any(|m| m.features().is_some()) {
                query_path(&cfg.queries, a, ext)?;
            }
            if methods.contains(&Method::Bm25) {
                query_path(&cfg.queries, a, "txt")?;
            }
        }
        algos_of.push(set.into_iter().collect());
    }
    if algos_of.iter().all(Vec::is_empty) {
        return Err(AlgoError::NoEntries);
    }
    if cfg.renamed {
        for (p, r) in roots.iter_mut() {
            let t = Instant::now();
            *r = renamed_root(&cfg.work, p, r)?;
            if cfg.progress {
                eprintln!("{p}: anonymized copy at {} ({:.1} s)", r.display(), t.elapsed().as_secs_f64());
            }
        }
    }
    let work = if cfg.renamed { cfg.work.join("renamed-indexes") } else { cfg.work.clone() };
    let wants_hybrid = methods.iter().any(|m| m.variant().is_some());

    let mut rows: Vec<Row> = Vec::new();
    let mut builds = Vec::new();
    let mut failures = Vec::new();
    let mut pools: Vec<Pool> = Vec::new();
    // (row, pool) for the hybrid ranks filled in after cross-validation.
    let mut pool_rows: Vec<(usize, usize)> = Vec::new();
    let setting_name = format!("{}{}", setting_label(cfg.setting), if cfg.renamed { "-renamed" } else { "" });
    for (g, algos) in groups.iter().zip(&algos_of) {
        if algos.is_empty() {
            continue;
        }
        let group_roots: Vec<PathBuf> = g.projects.iter().map(|p| roots[p].clone()).collect();
        let loc = Locator { roots: g.projects.iter().map(|p| (roots[p].clone(), p.clone())).collect() };
        let entries_of = |a: &str| -> Vec<&Entry> { truth.entries.iter().filter(|e| e.algorithm == a && g.projects.contains(&e.project)).collect() };
        let mut ranks: Vec<Vec<Option<usize>>> = vec![vec![None; methods.len()]; algos.len()];
        let mut tops: Vec<Vec<Vec<String>>> = vec![vec![Vec::new(); methods.len()]; algos.len()];
        let mut loose: Vec<Vec<Option<usize>>> = vec![vec![None; methods.len()]; algos.len()];
        let all_index_dirs: Vec<PathBuf> =
            [Method::Cb, Method::CbG, Method::Beryllium].iter().filter_map(|m| m.features()).map(|f| index_dir(&work, cfg.setting, g, f)).collect();
        let mut funcs: Option<(Vec<FuncRec>, Vec<String>, Sources)> = None;
        // Files that made it into the index (or the parse): an entry in a skipped file
        // (non-UTF-8 source, too large) cannot be found by any method.
        let mut indexed: BTreeSet<(String, String)> = BTreeSet::new();
        let mut group_pools: Vec<Option<usize>> = vec![None; algos.len()];
        // Methods sharing an index run together; the hybrid variants once for all.
        let mut done_hybrid = false;
        for (mi, &m) in methods.iter().enumerate() {
            let tm = Instant::now();
            if m.variant().is_some() {
                if done_hybrid {
                    continue;
                }
                done_hybrid = true;
            }
            let frags_per_algo: Vec<Vec<Vec<LocSpan>>> = if let Some(features) = m.features() {
                let enc = cfg.encoder.ok_or(AlgoError::NeedsEncoder(m.name()))?;
                let dir = index_dir(&work, cfg.setting, g, features);
                if !builds.iter().any(|b: &BuildInfo| b.dir == dir) {
                    builds.push(build_index(cfg, g, &group_roots, &dir, features, enc)?);
                }
                let mut idx = Index::open(&dir, None, 32).map_err(|error| AlgoError::Index { dir: dir.clone(), error })?;
                if indexed.is_empty() {
                    for f in idx.store.files().map_err(|error| AlgoError::Index { dir: dir.clone(), error })? {
                        let l = loc.locate(&f.path, (1, 1));
                        indexed.insert((l.project, l.path));
                    }
                }
                let opts = SearchOptions { top: MAX_RANK, ..SearchOptions::default() };
                let mut out = Vec::new();
                for (ai, a) in algos.iter().enumerate() {
                    let qp = query_path(&cfg.queries, a, ext)?;
                    let text = std::fs::read_to_string(&qp).map_err(io(&qp))?;
                    let clf = || Classifier::load(&Classifier::default_path());
                    let result = if m.variant().is_some() {
                        Query::parse(&text, &qp, clf).and_then(|q| hybrid::candidates(&mut idx, enc, &q, &HybridOptions::default())).map(|cands| {
                            let es = entries_of(a);
                            let pc: Vec<PoolCand> = cands
                                .into_iter()
                                .map(|c| {
                                    let spans: Vec<LocSpan> = c.spans.iter().map(|s| loc.locate(&s.path, s.lines)).collect();
                                    let hit = es.iter().any(|e| is_hit(&spans, e));
                                    let touches = overlap_rank(std::slice::from_ref(&spans), &es).is_some();
                                    PoolCand {
                                        x: c.signals.to_array().to_vec(),
                                        found: c.found,
                                        keys: c.keys(),
                                        spans,
                                        hit,
                                        touches,
                                        copy: c.copy,
                                        tests: c.tests,
                                    }
                                })
                                .collect();
                            group_pools[ai] = Some(pools.len());
                            pools.push(Pool { algorithm: a.clone(), group: g.name.clone(), setting: setting_name.clone(), cands: pc });
                            Vec::new()
                        })
                    } else {
                        let method = match m {
                            Method::Dense => Some(hybrid::Method::Dense),
                            Method::Bm25f => Some(hybrid::Method::Bm25),
                            Method::Pname => Some(hybrid::Method::Name),
                            _ => None,
                        };
                        let r = match method {
                            Some(hm) => hybrid::search(&mut idx, enc, &text, &qp, clf, &opts, hm, None),
                            None => search::pseudo(&mut idx, enc, &text, &qp, clf, &opts),
                        };
                        r.map(|r| r.fragments.iter().map(|f| f.spans.iter().map(|s| loc.locate(&s.path, s.lines)).collect()).collect())
                    };
                    match result {
                        Ok(f) => out.push(f),
                        Err(SearchError::Index(error)) => return Err(AlgoError::Index { dir: dir.clone(), error }),
                        // A query that does not parse or convert is a miss, not the end of the run.
                        Err(e) => {
                            let msg = format!("{} {} {}: {e}", g.name, m.name(), qp.display());
                            if cfg.progress {
                                eprintln!("warning: {msg}");
                            }
                            failures.push(msg);
                            out.push(Vec::new());
                        }
                    }
                }
                out
            } else {
                let mut fx = match funcs.take() {
                    Some(f) => f,
                    None => {
                        let t = Instant::now();
                        let fs = functions_of(&group_roots, &all_index_dirs)?;
                        let mut src = Sources::default();
                        let comments: Vec<String> = fs.iter().map(|f| comment_above(src.lines(&f.path), f.lines.0)).collect();
                        if cfg.progress {
                            eprintln!("{}: {} functions read in {:.1} s", g.name, fs.len(), t.elapsed().as_secs_f64());
                        }
                        (fs, comments, src)
                    }
                };
                if indexed.is_empty() {
                    for f in &fx.0 {
                        let l = loc.locate(&f.path, (1, 1));
                        indexed.insert((l.project, l.path));
                    }
                }
                let r = function_ranking(m, algos, &fx.0, &fx.1, &mut fx.2, &cfg.queries, &loc);
                funcs = Some(fx);
                r?
            };
            if m.variant().is_none() {
                for (i, a) in algos.iter().enumerate() {
                    let frags = &frags_per_algo[i];
                    ranks[i][mi] = f_rank(frags, &entries_of(a));
                    loose[i][mi] = overlap_rank(frags, &entries_of(a));
                    tops[i][mi] = shown(frags);
                }
            }
            if cfg.progress {
                let what = if m.variant().is_some() { "hybrid candidates" } else { m.name() };
                eprintln!("{}: {} on {} queries in {:.1} s", g.name, what, algos.len(), tm.elapsed().as_secs_f64());
            }
        }
        for (i, a) in algos.iter().enumerate() {
            let mut ps: Vec<String> = entries_of(a).iter().map(|e| e.project.clone()).collect();
            ps.sort();
            ps.dedup();
            let unindexed = entries_of(a)
                .iter()
                .filter(|e| !indexed.is_empty() && !indexed.contains(&(e.project.clone(), e.path.clone())))
                .map(|e| format!("{}:{}:{}-{} {}", e.project, e.path, e.start_line, e.end_line, e.function))
                .collect();
            if let Some(p) = group_pools[i] {
                pool_rows.push((rows.len(), p));
            }
            rows.push(Row {
                algorithm: a.clone(),
                group: g.name.clone(),
                language: g.language.clone(),
                projects: ps,
                ranks: std::mem::take(&mut ranks[i]),
                top: std::mem::take(&mut tops[i]),
                overlap_ranks: std::mem::take(&mut loose[i]),
                entries: entries_of(a).len(),
                unindexed,
            });
        }
    }
    // The hybrid variants: each pool ranked by a scorer that never saw its algorithm.
    let mut ranker_note = String::from("not run");
    if wants_hybrid {
        let folds = pool::folds(&pools, cfg.folds);
        let fixed = if folds.len() < 2 && cfg.ranker.is_none() { Ranker::load(&Ranker::default_path()).ok() } else { cfg.ranker.clone() };
        ranker_note = match (&cfg.ranker, &fixed) {
            (Some(_), _) => "a fixed scorer given on the command line (not cross-validated)".to_string(),
            (None, Some(_)) => "the shipped scorer (one algorithm only: no cross-validation possible)".to_string(),
            (None, None) if cfg.train_pools.is_empty() => format!(
                "cross-validated by algorithm: {} folds, each ranked by a scorer fitted on the other folds' pools of this run",
                folds.len()
            ),
            (None, None) => format!(
                "cross-validated by algorithm: {} folds, each ranked by a scorer fitted on the other folds' pools of this run and of {} pools given by --train-pools",
                folds.len(),
                cfg.train_pools.len()
            ),
        };
        for (mi, &m) in methods.iter().enumerate() {
            let Some(v) = m.variant() else { continue };
            let ranked = pool::cross_validated(&pools, &cfg.train_pools, v, &folds, fixed.as_ref());
            for &(ri, pi) in &pool_rows {
                let p = &pools[pi];
                let frags: Vec<Vec<LocSpan>> = ranked[pi].iter().map(|&k| p.cands[k].spans.clone()).collect();
                let es: Vec<&Entry> = truth.entries.iter().filter(|e| e.algorithm == p.algorithm && rows[ri].projects.contains(&e.project)).collect();
                rows[ri].ranks[mi] = f_rank(&frags, &es);
                rows[ri].overlap_ranks[mi] = overlap_rank(&frags, &es);
                rows[ri].top[mi] = shown(&frags);
            }
        }
    }
    let summary = summarize(&rows, &methods);
    Ok(AlgoReport {
        setting: cfg.setting,
        query_form: cfg.query_form,
        methods,
        groups,
        rows,
        summary,
        builds,
        failures,
        seconds: t0.elapsed().as_secs_f64(),
        renamed: cfg.renamed,
        ranker: ranker_note,
        pools,
    })
}

fn setting_label(s: Setting) -> &'static str {
    match s {
        Setting::One => "one",
        Setting::Multi => "multi",
        Setting::Mixed => "mixed",
    }
}

/// Function-level baselines: whole functions as one-span fragments, best first.
fn function_ranking(
    m: Method,
    algos: &[String],
    fs: &[FuncRec],
    comments: &[String],
    src: &mut Sources,
    queries: &Path,
    loc: &Locator,
) -> Result<Vec<Vec<Vec<LocSpan>>>, AlgoError> {
    let as_frag = |i: usize| vec![loc.locate(&fs[i].path, fs[i].lines)];
    if m == Method::Name {
        return Ok(algos.iter().map(|a| rank_by_name(a, fs, comments).into_iter().map(as_frag).collect()).collect());
    }
    // BM25 documents: the comment above the function and its source lines.
    let docs: Vec<Vec<String>> = fs
        .iter()
        .zip(comments)
        .map(|(f, c)| {
            let lines = src.lines(&f.path);
            let (a, b) = ((f.lines.0 as usize).saturating_sub(1).min(lines.len()), (f.lines.1 as usize).min(lines.len()));
            let mut t = c.clone();
            t.push('\n');
            t.push_str(&lines[a..b.max(a)].join("\n"));
            tokenize::tokens(&t)
        })
        .collect();
    let bm = Bm25::new(&docs);
    let mut out = Vec::new();
    for a in algos {
        let qp = query_path(queries, a, "txt")?;
        let text = std::fs::read_to_string(&qp).map_err(io(&qp))?;
        let scores = bm.scores(&tokenize::tokens(&strip_line_numbers(&text)));
        let mut order: Vec<usize> = (0..scores.len()).filter(|&i| scores[i] > 0.0).collect();
        order.sort_by(|&x, &y| scores[y].total_cmp(&scores[x]).then(x.cmp(&y)));
        out.push(order.into_iter().take(MAX_RANK).map(as_frag).collect());
    }
    Ok(out)
}

fn build_index(cfg: &RunConfig, g: &Group, roots: &[PathBuf], dir: &Path, features: FeatureSet, enc: &TextEncoders) -> Result<BuildInfo, AlgoError> {
    let opts = IndexOptions { features, ..IndexOptions::default() };
    let mut last = (String::new(), Instant::now());
    let name = format!("{} [{}]", g.name, features.name());
    let show = cfg.progress;
    let r = index::build(roots, dir, &opts, &cfg.model_dir, enc, &mut |stage, done, total| {
        // A line per stage and about every 30 s: indexing a large project takes minutes.
        if show && (stage != last.0 || last.1.elapsed().as_secs() >= 30) {
            eprintln!("{name}: {stage} {done}/{total}");
            last = (stage.to_string(), Instant::now());
        }
    })
    .map_err(|error| AlgoError::Index { dir: dir.to_path_buf(), error })?;
    if show {
        eprintln!(
            "{name}: {} ({} files, {} lines, {} functions, {} nodes, {} texts encoded, {:.1} s)",
            if r.up_to_date { "up to date" } else { "indexed" },
            r.files,
            r.lines,
            r.functions,
            r.nodes,
            r.texts_encoded,
            r.total_seconds
        );
    }
    Ok(BuildInfo {
        group: g.name.clone(),
        features: features.name(),
        dir: dir.to_path_buf(),
        up_to_date: r.up_to_date,
        files: r.files,
        lines: r.lines,
        functions: r.functions,
        nodes: r.nodes,
        texts_encoded: r.texts_encoded,
        seconds: r.total_seconds,
    })
}

/// F-rank and overlap rank of one row for one method.
type RankPair = (Option<usize>, Option<usize>);

/// MRR and hit@k per scope (each language present, then `all`) and method. Rows of one
/// algorithm are averaged first (in `one`: over the projects that implement it), then
/// the algorithms, as the paper does.
pub fn summarize(rows: &[Row], methods: &[Method]) -> Vec<Summary> {
    let mut scopes: Vec<String> = Vec::new();
    for l in ["Java", "C", "mixed"] {
        if rows.iter().any(|r| r.language == l) {
            scopes.push(l.to_string());
        }
    }
    if scopes.len() != 1 {
        scopes.push("all".into());
    }
    let mut out = Vec::new();
    for scope in &scopes {
        let in_scope: Vec<&Row> = rows.iter().filter(|r| scope == "all" || &r.language == scope).collect();
        for (mi, &m) in methods.iter().enumerate() {
            // (F-rank, overlap rank) of each row, by algorithm.
            let mut per: BTreeMap<&str, Vec<RankPair>> = BTreeMap::new();
            for r in &in_scope {
                let get = |v: &[Option<usize>]| v.get(mi).copied().flatten();
                per.entry(&r.algorithm).or_default().push((get(&r.ranks), get(&r.overlap_ranks)));
            }
            let mean_of = |f: &dyn Fn(RankPair) -> f64| -> f64 {
                if per.is_empty() {
                    return 0.0;
                }
                per.values().map(|v| v.iter().map(|&r| f(r)).sum::<f64>() / v.len() as f64).sum::<f64>() / per.len() as f64
            };
            let mean = |f: &dyn Fn(Option<usize>) -> f64| mean_of(&|r| f(r.0));
            out.push(Summary {
                scope: scope.clone(),
                method: m,
                algorithms: per.len(),
                rows: in_scope.len(),
                mrr: mean(&reciprocal),
                hit1: mean(&|r| hit_at(r, 1)),
                hit10: mean(&|r| hit_at(r, 10)),
                hit25: mean(&|r| hit_at(r, 25)),
                mrr_overlap: mean_of(&|r| reciprocal(r.1)),
            });
        }
    }
    out
}
