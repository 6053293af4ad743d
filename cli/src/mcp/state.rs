//! What the server keeps warm: the open indexes with their encoders, the classifier and
//! the scorer, and the matched lines of the last results (for `show`). One worker thread
//! owns it, so libtorch and FAISS objects never cross threads, and calls run one at a time.

use crate::args::{all_cores, default_model};
use beryl::features::{CacheAt, TextEncoders, TextModel};
use beryl::index::{self, Index, IndexError, IndexOptions};
use beryl::pcode::Classifier;
use beryl::report;
use beryl::search::hybrid::{Method, Ranker};
use beryl::search::limits::QueryLimits;
use beryl::search::scope::Scope;
use beryl::search::{self, SearchError, SearchOptions, SearchResult};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Most results one call may ask for.
pub const MAX_TOP: usize = 100;
/// Most lines `show` returns.
pub const MAX_SHOW: u32 = 400;
/// Largest file `show` reads: indexed files are at most the walk's size limit (1 MiB by
/// default); this leaves room for a raised one.
const MAX_SHOW_BYTES: u64 = 64 << 20;

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
            SearchError::EmptyQuery | SearchError::TooLarge(_) => "query",
            SearchError::Scope(_) => "arguments",
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

/// A folder the `index` tool may index under.
struct Allowed {
    path: PathBuf,
    /// Named by the user (`--allow-index`), not taken from an index's roots: only such a
    /// name allows a folder that is refused by default (see [`guarded`]).
    named: bool,
}

pub struct State {
    open: Vec<Open>,
    /// Indexes that failed to open, with why: named in calls, they answer with that error,
    /// and every call tries them again.
    broken: Vec<(PathBuf, String)>,
    allowed: Vec<Allowed>,
    limits: QueryLimits,
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
    /// Where results may come from.
    pub scope: Scope,
}

impl State {
    /// Opens every index in `dirs`. One that is missing or damaged is logged and kept
    /// aside: calls that reach it get its error until it opens (every call tries again),
    /// and the `index` tool can rebuild it. The `index` tool may work under `allow`, or by
    /// default under the roots of the indexes opened here.
    pub fn open(dirs: &[PathBuf], allow: &[PathBuf], threads: Option<usize>, limits: QueryLimits) -> anyhow::Result<State> {
        let threads = all_cores(threads);
        let mut s = State { open: Vec::new(), broken: Vec::new(), allowed: Vec::new(), limits, threads, ranker: None, classifier: None, last: HashMap::new() };
        for a in allow {
            let path = a.canonicalize().map_err(|e| anyhow::anyhow!("--allow-index {}: {e}", a.display()))?;
            s.allowed.push(Allowed { path, named: true });
        }
        for d in dirs {
            if let Err(e) = s.open_index(d) {
                log::error!("{}: {}", d.display(), e.message);
                s.broken.push((absolute(d), e.message));
            }
        }
        if allow.is_empty() {
            let roots: Vec<PathBuf> = s.open.iter().flat_map(|o| o.index.meta.roots.iter().map(PathBuf::from)).collect();
            s.allowed.extend(roots.into_iter().map(|path| Allowed { path, named: false }));
        }
        Ok(s)
    }

    /// Tries the indexes that failed to open again: a build may have written a good
    /// generation since.
    fn recover(&mut self) {
        let broken = std::mem::take(&mut self.broken);
        for (d, old) in broken {
            match self.open_index(&d) {
                Ok(_) => log::info!("{}: opened, after: {old}", d.display()),
                Err(e) => self.broken.push((d, e.message)),
            }
        }
    }

    fn open_index(&mut self, dir: &Path) -> Result<usize, ToolError> {
        let index = Index::open(dir, None, 32)?;
        index.model.start();
        let encs = index.encoders(Some(self.threads));
        let dir = absolute(dir);
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
    fn pick(&mut self, name: Option<&str>) -> Result<usize, ToolError> {
        self.recover();
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
            index.model.start();
            let o = &mut self.open[i];
            if index.meta.encoder != o.index.meta.encoder || index.meta.function_encoder != o.index.meta.function_encoder {
                o.encs = index.encoders(Some(self.threads));
            }
            o.index = index;
        }
        Ok(())
    }

    fn options(&self, a: &SearchArgs) -> Result<SearchOptions, ToolError> {
        let top = a.top.unwrap_or(10);
        if top == 0 || top > MAX_TOP {
            return Err(ToolError::new("arguments", format!("top must be between 1 and {MAX_TOP}, not {top}")));
        }
        // Before anything else: a query over the limits costs nothing more.
        self.limits.check_text(a.query).map_err(|e| ToolError::new("query", e.to_string()))?;
        Ok(SearchOptions { top, limits: self.limits, scope: a.scope.clone(), ..SearchOptions::default() })
    }

    pub fn search_pseudocode(&mut self, a: &SearchArgs, method: Method) -> Result<Answer, ToolError> {
        if a.query.trim().is_empty() {
            return Err(ToolError::new("query", "the query is empty"));
        }
        let opts = self.options(a)?;
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
        let opts = self.options(a)?;
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

    /// The code of the indexed file `path` at `lines`, each line with the query lines the
    /// last search matched to it. Only a file an open index records is served: `path` as
    /// a result gives it (absolute), or relative to one of that index's roots; the file
    /// must still lie under that root once links are resolved. A file that changed since
    /// it was indexed is shown with a note.
    pub fn show(&mut self, path: &str, lines: Option<&str>) -> Result<Answer, ToolError> {
        self.recover();
        for i in 0..self.open.len() {
            // A generation swapped in since (an update may have added the file).
            let _ = self.fresh(i);
        }
        let refused = || ToolError::new("path", format!("{path} is not a file of an open index (show serves only the files an index records, as results name them)"));
        let rel = Path::new(path);
        if path.is_empty() || rel.components().any(|c| matches!(c, std::path::Component::ParentDir | std::path::Component::CurDir)) {
            return Err(refused());
        }
        let mut found = None;
        'search: for o in &self.open {
            for root in &o.index.meta.roots {
                let want = if rel.is_absolute() { rel.to_path_buf() } else { Path::new(root).join(rel) };
                if !want.starts_with(root) {
                    continue;
                }
                if let Some(row) = o.index.store.file_by_path(&want.to_string_lossy())? {
                    // The extensions its build read (`--type-add`, `.beryl.toml` included).
                    let source = o.index.walk_options().map_or_else(|_| beryl::lang::lang_of(&want).is_some(), |w| w.lang_of(&want).is_some());
                    found = Some((row, PathBuf::from(root), source));
                    break 'search;
                }
            }
        }
        let (row, root, source) = found.ok_or_else(refused)?;
        let file = PathBuf::from(&row.path);
        // Recorded by a build, but checked again: a link may have been swapped in since,
        // and only source files are ever indexed.
        let real = file.canonicalize().map_err(|e| ToolError::new("path", format!("{path}: {e} (indexed, but gone since)")))?;
        let real_root = root.canonicalize().map_err(|e| ToolError::new("path", format!("{}: {e}", root.display())))?;
        if !real.starts_with(&real_root) || !source {
            return Err(ToolError::new("path", format!("{path} now resolves outside its indexed root ({})", real.display())));
        }
        let size = std::fs::metadata(&real).map_err(|e| ToolError::new("path", format!("{path}: {e}")))?.len();
        if size > MAX_SHOW_BYTES {
            return Err(ToolError::new("path", format!("{path} has grown to {size} bytes since it was indexed, more than show reads ({MAX_SHOW_BYTES})")));
        }
        let bytes = std::fs::read(&real).map_err(|e| ToolError::new("path", format!("{path}: {e}")))?;
        let text = String::from_utf8_lossy(&bytes);
        let changed = beryl::index::sha256_hex(text.as_bytes()) != row.hash;
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
        let marks = self.last.get(&row.path);
        let mut rows = Vec::new();
        let mut out = String::new();
        let note = changed.then(|| format!("{} changed since it was indexed: lines and marks may have moved; update the index to match", row.path));
        if let Some(n) = &note {
            out.push_str(&format!("note: {n}\n"));
        }
        for l in a..=b {
            let code = all.get((l - 1) as usize).copied().unwrap_or("");
            let q: Vec<u32> = marks.and_then(|m| m.get(&l)).cloned().unwrap_or_default();
            let mark = if q.is_empty() { String::new() } else { format!("  ◀ query {}", q.iter().map(u32::to_string).collect::<Vec<_>>().join(",")) };
            out.push_str(&format!("{l:>5}  {code}{mark}\n"));
            rows.push(json!({"line": l, "code": code, "query_lines": q}));
        }
        Ok(Answer { value: json!({"path": row.path, "lines": [a, b], "changed_since_indexing": changed, "note": note, "code": rows}), text: out })
    }

    pub fn status(&mut self) -> Result<Answer, ToolError> {
        self.recover();
        let mut list = Vec::new();
        let mut text = String::new();
        for o in &self.open {
            let m = &o.index.meta;
            let ch = index::changes(&o.index, &o.index.walk_options()?)?;
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
        let root = Path::new(path).canonicalize().map_err(|e| ToolError::new("path", format!("{path}: {e}")))?;
        self.may_index(&root, path)?;
        let dir = match index {
            Some(d) => {
                let d = absolute(Path::new(d));
                let known = self.open.iter().any(|o| o.dir == d) || self.broken.iter().any(|(b, _)| *b == d);
                if !known {
                    self.may_index(&d, &d.display().to_string())?;
                }
                d
            }
            None if root.is_dir() => root.join(".beryl"),
            None => root.parent().unwrap_or(Path::new("/")).join(".beryl"),
        };
        let encs = TextEncoders::new(TextModel::Static, TextModel::Code, Some(self.threads), CacheAt::Default);
        let model = default_model(TextModel::Static);
        // An index in place keeps the walk rules it was built with.
        let opts = IndexOptions { walk: index::recorded_walk(&dir), ..IndexOptions::default() };
        let r = index::build(&[root], &dir, &opts, &model, &encs, progress).map_err(|e| {
            let kind = if e.is_index_fault() { "index" } else { "build" };
            ToolError::new(kind, e.to_string())
        })?;
        self.open_index(&dir)?;
        let text = format!("{}; {:.1} s", crate::index::summary(&dir, &r), r.total_seconds);
        Ok(Answer { value: serde_json::to_value(&r).unwrap_or(Value::Null), text })
    }

    /// Whether the `index` tool may read or write at `p` (absolute): under an allowed root,
    /// and, when `p` is a guarded folder, named by the user itself.
    fn may_index(&self, p: &Path, shown: &str) -> Result<(), ToolError> {
        let roots = || self.allowed.iter().map(|a| a.path.display().to_string()).collect::<Vec<_>>().join(", ");
        if !self.allowed.iter().any(|a| p.starts_with(&a.path)) {
            let allowed = if self.allowed.is_empty() { "none".to_string() } else { roots() };
            return Err(ToolError::new(
                "path",
                format!("{shown} is outside the folders this server may index (allowed: {allowed}); the user allows more with `beryl mcp --allow-index PATH`"),
            ));
        }
        if let Some(what) = guarded(p) {
            if !self.allowed.iter().any(|a| a.named && a.path == p) {
                return Err(ToolError::new("path", format!("{shown} is {what}: indexed only when the user names it with `beryl mcp --allow-index {}`", p.display())));
            }
        }
        Ok(())
    }
}

/// `p` made absolute against the working directory, and canonical where it exists (the
/// part that does not exist yet is kept as given).
fn absolute(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    let abs = if p.is_absolute() { p.to_path_buf() } else { std::env::current_dir().map(|c| c.join(p)).unwrap_or_else(|_| p.to_path_buf()) };
    // The nearest existing ancestor, canonical, then the rest.
    let mut rest = Vec::new();
    let mut at = abs.as_path();
    while let Some(parent) = at.parent() {
        rest.push(at.file_name().map(|n| n.to_os_string()).unwrap_or_default());
        if let Ok(c) = parent.canonicalize() {
            return rest.iter().rev().fold(c, |acc, n| acc.join(n));
        }
        at = parent;
    }
    abs
}

/// What `p` (absolute, canonical) is, when it is a folder the `index` tool leaves alone
/// unless the user named it: the file system's root, a home folder or the folder of home
/// folders, a top-level system folder, or anything under the folders of the system's
/// configuration and state.
fn guarded(p: &Path) -> Option<&'static str> {
    let parts: Vec<String> = p.components().skip(1).map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if parts.is_empty() {
        return Some("the root of the file system");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).and_then(|h| h.canonicalize().ok());
    if home.as_deref() == Some(p) || (parts[0] == "home" && parts.len() <= 2) || (parts[0] == "root" && parts.len() == 1) {
        return Some("a home folder");
    }
    const INSIDE: [&str; 6] = ["etc", "proc", "sys", "dev", "boot", "run"];
    const TOP: [&str; 14] = ["bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "var", "opt", "srv", "mnt", "media", "tmp", "snap"];
    let first = parts[0].as_str();
    if INSIDE.contains(&first) || (parts.len() == 1 && TOP.contains(&first)) || (parts.len() == 2 && first == "usr" && parts[1] != "src") {
        return Some("a system folder");
    }
    None
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
