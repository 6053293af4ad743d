//! The runner: indexes per setting, every method on every algorithm, rows and pools.

#[allow(unused_imports)]
use super::*;

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
    let p = corpus_root.join(c.cache_folder()).join("src").join(&c.top_dir);
    if !p.is_dir() {
        return Err(AlgoError::MissingCorpus { project: c.name.clone(), package: c.fetch_spec().to_string(), path: p });
    }
    // One spelling for indexing and for locating results.
    std::fs::canonicalize(&p).map_err(io(&p))
}

/// Maps indexed (absolute) paths back to (project, path under top_dir).
pub(crate) struct Locator {
    roots: Vec<(PathBuf, String)>,
}

impl Locator {
    pub(crate) fn locate(&self, path: &str, lines: (u32, u32)) -> LocSpan {
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

pub(crate) fn shown(frags: &[Vec<LocSpan>]) -> Vec<String> {
    frags.iter().take(SHOWN).filter_map(|f| describe(f)).collect()
}

pub(crate) fn describe(f: &[LocSpan]) -> Option<String> {
    let s = f.first()?;
    let (a, b) = f.iter().filter(|x| x.path == s.path).fold((u32::MAX, 0), |(a, b), x| (a.min(x.lines.0), b.max(x.lines.1)));
    Some(format!("{}:{}:{a}-{b}", s.project, s.path))
}

pub(crate) fn query_path(dir: &Path, algorithm: &str, ext: &str) -> Result<PathBuf, AlgoError> {
    let p = dir.join(format!("{algorithm}.{ext}"));
    if p.is_file() {
        Ok(p)
    } else {
        Err(AlgoError::MissingQuery { algorithm: algorithm.to_string(), path: p })
    }
}

pub(crate) fn index_dir(work: &Path, setting: Setting, group: &Group, f: FeatureSet) -> PathBuf {
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

/// What a run covers, checked before any index is built: projects, methods, the groups
/// of projects each index holds, their roots (anonymized copies with `renamed`), and the
/// algorithms of each group with their query files.
pub(crate) struct Plan {
    methods: Vec<Method>,
    groups: Vec<Group>,
    roots: BTreeMap<String, PathBuf>,
    algos_of: Vec<Vec<String>>,
    ext: &'static str,
}

pub(crate) fn plan(cfg: &RunConfig) -> Result<Plan, AlgoError> {
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
    Ok(Plan { methods, groups, roots, algos_of, ext })
}

/// Ranks every pool by each hybrid variant's scorer, cross-validated by algorithm unless a
/// scorer is given, and fills the variants' columns of the rows; returns how it ranked.
pub(crate) fn rank_pools(cfg: &RunConfig, methods: &[Method], pools: &[Pool], pool_rows: &[(usize, usize)], rows: &mut [Row]) -> String {
    let truth = cfg.truth;
    let folds = pool::folds(pools, cfg.folds);
    let fixed = if folds.len() < 2 && cfg.ranker.is_none() { Ranker::load(&Ranker::default_path()).ok() } else { cfg.ranker.clone() };
    let note = match (&cfg.ranker, &fixed) {
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
        let ranked = pool::cross_validated(pools, &cfg.train_pools, v, &folds, fixed.as_ref());
        for &(ri, pi) in pool_rows {
            let p = &pools[pi];
            let frags: Vec<Vec<LocSpan>> = ranked[pi].iter().map(|&k| p.cands[k].spans.clone()).collect();
            let es: Vec<&Entry> = truth.entries.iter().filter(|e| e.algorithm == p.algorithm && rows[ri].projects.contains(&e.project)).collect();
            rows[ri].ranks[mi] = f_rank(&frags, &es);
            rows[ri].overlap_ranks[mi] = overlap_rank(&frags, &es);
            rows[ri].top[mi] = shown(&frags);
        }
    }
    note
}

/// Runs every method on every algorithm of every group of the setting.
pub fn run(cfg: &RunConfig) -> Result<AlgoReport, AlgoError> {
    let t0 = Instant::now();
    let truth = cfg.truth;
    let Plan { methods, groups, roots, algos_of, ext } = plan(cfg)?;
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
    let ranker_note = if wants_hybrid { rank_pools(cfg, &methods, &pools, &pool_rows, &mut rows) } else { String::from("not run") };
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

pub(crate) fn setting_label(s: Setting) -> &'static str {
    match s {
        Setting::One => "one",
        Setting::Multi => "multi",
        Setting::Mixed => "mixed",
    }
}

pub(crate) fn build_index(cfg: &RunConfig, g: &Group, roots: &[PathBuf], dir: &Path, features: FeatureSet, enc: &TextEncoders) -> Result<BuildInfo, AlgoError> {
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
