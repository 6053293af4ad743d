//! What the server keeps warm: the open indexes with their encoders, the classifier and
//! the scorer, and the matched lines of the last results (for `show`). One worker thread
//! owns it, so libtorch and FAISS objects never cross threads, and calls run one at a time.

use crate::args::{all_cores, default_model};
use beryl::corpus::WalkOptions;
use beryl::features::{CacheAt, TextEncoders, TextModel};
use beryl::index::{self, Index, IndexError, IndexOptions};
use beryl::pcode::Classifier;
use beryl::report;
use beryl::search::hybrid::{Method, Ranker};
use beryl::search::{self, SearchError, SearchOptions, SearchResult};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Most results one call may ask for.
pub const MAX_TOP: usize = 100;
/// Most lines `show` returns.
pub const MAX_SHOW: u32 = 400;

/// A failed call: the client sees `message`; `kind` lets a program tell causes apart.
#[derive(Debug)]
pub struct ToolError {
    pub kind: &'static str,
    pub message: String,
}

impl ToolError {
    pub fn new(kind: &'static str, message: impl Into<String>) -> ToolError {
        ToolError { kind, message: message.into() }
    }
}

impl From<SearchError> for ToolError {
    fn from(e: SearchError) -> ToolError {
        let kind = match &e {
            SearchError::Index(x) if x.is_index_fault() => "index",
            SearchError::Pcode(_) => "query",
            SearchError::EmptyQuery => "query",
            _ => "search",
        };
        let mut message = e.to_string();
        if kind == "index" {
            message.push_str(" (rebuild it with the `index` tool or `beryl index`)");
        }
        ToolError { kind, message }
    }
}

impl From<IndexError> for ToolError {
    fn from(e: IndexError) -> ToolError {
        let kind = if e.is_index_fault() { "index" } else { "search" };
        ToolError { kind, message: e.to_string() }
    }
}

/// A tool's answer: structured (the `--json` schema for searches) and short text.
pub struct Answer {
    pub value: Value,
    pub text: String,
}

struct Open {
    dir: PathBuf,
    index: Index,
    encs: TextEncoders,
}

pub struct State {
    open: Vec<Open>,
    /// Indexes that failed to open, with why: named in calls, they answer with that error.
    broken: Vec<(PathBuf, String)>,
    threads: usize,
    ranker: Option<Ranker>,
    classifier: Option<Classifier>,
    /// Matched (code line → query lines) of the last search, per file.
    last: HashMap<String, HashMap<u32, Vec<u32>>>,
}

pub struct SearchArgs<'a> {
    pub query: &'a str,
    pub top: Option<usize>,
    pub index: Option<&'a str>,
}

impl State {
    /// Opens every index in `dirs`. One that is missing or damaged is logged and kept
    /// aside: calls that reach it get its error, and the `index` tool can rebuild it.
    pub fn open(dirs: &[PathBuf], threads: Option<usize>) -> State {
        let threads = all_cores(threads);
        let mut s = State { open: Vec::new(), broken: Vec::new(), threads, ranker: None, classifier: None, last: HashMap::new() };
        for d in dirs {
            if let Err(e) = s.open_index(d) {
                log::error!("{}: {}", d.display(), e.message);
                s.broken.push((d.canonicalize().unwrap_or_else(|_| d.clone()), e.message));
            }
        }
        s
    }

    fn open_index(&mut self, dir: &Path) -> Result<usize, ToolError> {
        let index = Index::open(dir, None, 32)?;
        let encs = index.encoders(Some(self.threads));
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        let o = Open { dir: dir.clone(), index, encs };
        self.broken.retain(|(d, _)| *d != dir);
        Ok(match self.open.iter().position(|x| x.dir == dir) {
            Some(i) => {
                self.open[i] = o;
                i
            }
            None => {
                self.open.push(o);
                self.open.len() - 1
            }
        })
    }

    /// Loads what the first search would: the encoders, the scorer and the classifier.
    pub fn warm(&mut self) {
        for o in &self.open {
            let _ = o.encs.statements();
            let _ = o.encs.functions();
        }
        let _ = self.ranker();
        self.load_classifier();
    }

    fn ranker(&mut self) -> Result<&Ranker, ToolError> {
        if self.ranker.is_none() {
            let r = Ranker::load(&Ranker::default_path()).map_err(|e| ToolError::new("setup", e.to_string()))?;
            self.ranker = Some(r);
        }
        Ok(self.ranker.as_ref().expect("set above"))
    }

    /// Loads the line classifier once; plain pseudocode needs it, p-code does not.
    fn load_classifier(&mut self) {
        if self.classifier.is_none() {
            match Classifier::load(&Classifier::default_path()) {
                Ok(c) => self.classifier = Some(c),
                Err(e) => log::warn!("line classifier: {e}"),
            }
        }
    }

    /// The index a call names (by its folder or one of its roots), or the only one open.
    fn pick(&self, name: Option<&str>) -> Result<usize, ToolError> {
        let broken = |d: &Path| self.broken.iter().find(|(b, _)| b == d).map(|(b, m)| ToolError::new("index", format!("{}: {m} (rebuild it with the `index` tool or `beryl index`)", b.display())));
        if let Some(n) = name {
            let want = Path::new(n).canonicalize().unwrap_or_else(|_| PathBuf::from(n));
            if let Some(e) = broken(&want) {
                return Err(e);
            }
        } else if self.open.is_empty() && self.broken.len() == 1 {
            return Err(broken(&self.broken[0].0).expect("one broken index"));
        }
        if self.open.is_empty() {
            return Err(ToolError::new("no_index", "no index is open: start the server with --index DIR, or build one with the `index` tool"));
        }
        let dirs = || self.open.iter().map(|o| o.dir.display().to_string()).collect::<Vec<_>>().join(", ");
        match name {
            None if self.open.len() == 1 => Ok(0),
            None => Err(ToolError::new("no_index", format!("several indexes are open; name one in `index`: {}", dirs()))),
            Some(n) => {
                let want = Path::new(n).canonicalize().unwrap_or_else(|_| PathBuf::from(n));
                self.open
                    .iter()
                    .position(|o| o.dir == want || o.index.meta.roots.iter().any(|r| Path::new(r) == want))
                    .ok_or_else(|| ToolError::new("no_index", format!("no open index at {n}; open: {}", dirs())))
            }
        }
    }

    /// Index `i`, reopened when a build (`beryl index`, `beryl watch`) swapped in a newer
    /// generation since it was opened: every search sees the latest update.
    fn fresh(&mut self, i: usize) -> Result<(), ToolError> {
        let o = &self.open[i];
        let now = beryl::index::current_generation(&o.dir).and_then(|g| g.file_name().map(|n| n.to_os_string()));
        if now.is_some() && now.as_deref() != o.index.dir.file_name() {
            let index = Index::open(&o.dir, None, 32)?;
            let o = &mut self.open[i];
            if index.meta.encoder != o.index.meta.encoder || index.meta.function_encoder != o.index.meta.function_encoder {
                o.encs = index.encoders(Some(self.threads));
            }
            o.index = index;
        }
        Ok(())
    }

    fn options(top: Option<usize>) -> Result<SearchOptions, ToolError> {
        let top = top.unwrap_or(10);
        if top == 0 || top > MAX_TOP {
            return Err(ToolError::new("arguments", format!("top must be between 1 and {MAX_TOP}, not {top}")));
        }
        Ok(SearchOptions { top, ..SearchOptions::default() })
    }

    pub fn search_pseudocode(&mut self, a: &SearchArgs, method: Method) -> Result<Answer, ToolError> {
        if a.query.trim().is_empty() {
            return Err(ToolError::new("query", "the query is empty"));
        }
        let opts = Self::options(a.top)?;
        let i = self.pick(a.index)?;
        self.fresh(i)?;
        if method == Method::Hybrid {
            self.ranker()?;
        }
        self.load_classifier();
        let State { open, classifier, ranker, .. } = self;
        let ranker = if method == Method::Hybrid { ranker.as_ref() } else { None };
        let clf = || classifier.as_ref().ok_or_else(|| beryl::pcode::PcodeError::Model { path: Classifier::default_path(), reason: "could not be loaded".into() });
        let o = &mut open[i];
        let r = search::hybrid::search(&mut o.index, &o.encs, a.query, Path::new("query"), clf, &opts, method, ranker)?;
        Ok(self.answer(r))
    }

    pub fn search_text(&mut self, a: &SearchArgs) -> Result<Answer, ToolError> {
        if a.query.trim().is_empty() {
            return Err(ToolError::new("query", "the query is empty"));
        }
        let opts = Self::options(a.top)?;
        let i = self.pick(a.index)?;
        self.fresh(i)?;
        let o = &mut self.open[i];
        let r = search::natural(&mut o.index, &o.encs, a.query, &opts)?;
        Ok(self.answer(r))
    }

    fn answer(&mut self, r: SearchResult) -> Answer {
        self.last.clear();
        for f in &r.fragments {
            for m in &f.matches {
                let at = self.last.entry(m.path.clone()).or_default();
                for l in m.lines.0..=m.lines.1 {
                    let qs = at.entry(l).or_default();
                    for q in m.query_lines.0..=m.query_lines.1 {
                        if !qs.contains(&q) {
                            qs.push(q);
                        }
                    }
                }
            }
        }
        let value = report::search::json_value(&r);
        Answer { text: short_text(&r), value }
    }

    /// The code of `path` (inside an open index's roots) at `lines`, each line with the
    /// query lines the last search matched to it.
    pub fn show(&mut self, path: &str, lines: Option<&str>) -> Result<Answer, ToolError> {
        let p = Path::new(path).canonicalize().map_err(|e| ToolError::new("path", format!("{path}: {e}")))?;
        let inside = self.open.iter().any(|o| o.index.meta.roots.iter().any(|r| Path::new(r).canonicalize().is_ok_and(|r| p.starts_with(r))));
        if !inside {
            return Err(ToolError::new("path", format!("{path} is outside the indexed roots")));
        }
        let bytes = std::fs::read(&p).map_err(|e| ToolError::new("path", format!("{path}: {e}")))?;
        let text = String::from_utf8_lossy(&bytes);
        let all: Vec<&str> = text.lines().collect();
        let n = all.len() as u32;
        let (a, b) = match lines {
            None => (1, n.min(MAX_SHOW)),
            Some(l) => parse_lines(l)?,
        };
        if a == 0 || a > b || a > n.max(1) {
            return Err(ToolError::new("arguments", format!("lines {a}-{b} are not within the file's 1-{n}")));
        }
        let b = b.min(n).min(a + MAX_SHOW - 1);
        let marks = self.last.get(path).or_else(|| self.last.get(p.to_string_lossy().as_ref()));
        let mut rows = Vec::new();
        let mut out = String::new();
        for l in a..=b {
            let code = all[(l - 1) as usize];
            let q: Vec<u32> = marks.and_then(|m| m.get(&l)).cloned().unwrap_or_default();
            let mark = if q.is_empty() { String::new() } else { format!("  ◀ query {}", q.iter().map(u32::to_string).collect::<Vec<_>>().join(",")) };
            out.push_str(&format!("{l:>5}  {code}{mark}\n"));
            rows.push(json!({"line": l, "code": code, "query_lines": q}));
        }
        Ok(Answer { value: json!({"path": path, "lines": [a, b], "code": rows}), text: out })
    }

    pub fn status(&self) -> Result<Answer, ToolError> {
        let mut list = Vec::new();
        let mut text = String::new();
        for o in &self.open {
            let m = &o.index.meta;
            let ch = index::changes(&o.index, &WalkOptions::default())?;
            text.push_str(&format!(
                "{}: {} files, {} functions, {} lines; built {}; {} changed, {} added, {} removed since\n",
                o.dir.display(),
                m.files,
                m.functions,
                m.lines,
                m.created_unix,
                ch.changed.len(),
                ch.added.len(),
                ch.removed.len()
            ));
            list.push(json!({
                "index": o.dir, "roots": m.roots, "files": m.files, "functions": m.functions, "lines": m.lines,
                "nodes": m.nodes, "built_unix": m.created_unix, "format": m.format,
                "changed_since": {"changed": ch.changed.len(), "added": ch.added.len(), "removed": ch.removed.len(),
                                  "paths": ch.changed.iter().chain(&ch.added).chain(&ch.removed).take(20).collect::<Vec<_>>()},
            }));
        }
        let mut broken = Vec::new();
        for (d, m) in &self.broken {
            text.push_str(&format!("{}: cannot be opened: {m}\n", d.display()));
            broken.push(json!({"index": d, "error": m}));
        }
        if list.is_empty() && broken.is_empty() {
            text.push_str("no index is open\n");
        }
        Ok(Answer { value: json!({"indexes": list, "broken": broken}), text })
    }

    /// Builds or updates the index of `path` (at `index`, default `<path>/.beryl`), then
    /// keeps it open.
    pub fn index(&mut self, path: &str, index: Option<&str>, progress: &mut dyn FnMut(&str, usize, usize)) -> Result<Answer, ToolError> {
        let root = PathBuf::from(path);
        if !root.exists() {
            return Err(ToolError::new("path", format!("{path}: no such file or directory")));
        }
        let dir = index.map(PathBuf::from).unwrap_or_else(|| if root.is_dir() { root.join(".beryl") } else { root.parent().unwrap_or(Path::new(".")).join(".beryl") });
        let encs = TextEncoders::new(TextModel::Static, TextModel::Code, Some(self.threads), CacheAt::Default);
        let model = default_model(TextModel::Static);
        let r = index::build(&[root], &dir, &IndexOptions::default(), &model, &encs, progress).map_err(|e| {
            let kind = if e.is_index_fault() { "index" } else { "build" };
            ToolError::new(kind, e.to_string())
        })?;
        self.open_index(&dir)?;
        let text = format!("{}; {:.1} s", crate::index::summary(&dir, &r), r.total_seconds);
        Ok(Answer { value: serde_json::to_value(&r).unwrap_or(Value::Null), text })
    }
}

/// `a-b` or `a`.
fn parse_lines(s: &str) -> Result<(u32, u32), ToolError> {
    let bad = || ToolError::new("arguments", format!("lines must be `FIRST-LAST` or `LINE`, not {s:?}"));
    let (a, b) = match s.split_once('-') {
        Some((a, b)) => (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?),
        None => {
            let a = s.trim().parse().map_err(|_| bad())?;
            (a, a)
        }
    };
    Ok((a, b))
}

/// One line per result: rank, score, where, and its first reasons.
fn short_text(r: &SearchResult) -> String {
    let mut s = String::new();
    if r.fragments.is_empty() {
        s.push_str("no results\n");
    }
    for f in &r.fragments {
        let Some(first) = f.spans.first() else { continue };
        s.push_str(&format!("#{} {:.2} {}:{}-{} {}", f.rank, f.score, first.path, first.lines.0, first.lines.1, first.function));
        if f.spans.len() > 1 {
            s.push_str(&format!(" (+{} more spans)", f.spans.len() - 1));
        }
        s.push('\n');
        for why in f.reasons.iter().take(2) {
            s.push_str(&format!("    {why}\n"));
        }
    }
    s
}
