//! Finding source files under the given roots and deciding which to skip: the language
//! each extension is read as (built in, `--type-add`, a root's `.beryl.toml`), the rules
//! that leave files out (`--exclude`, `.beryl.toml`, `.berylignore` files, and
//! `.gitignore` unless told otherwise), and why a file found is not read.

use crate::graph::Lang;
use crate::lang::lang_of;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use thiserror::Error;

/// The project configuration file read from each indexed root.
pub const CONFIG: &str = ".beryl.toml";
/// Per-folder exclusion files, in gitignore syntax.
pub const IGNORE_FILE: &str = ".berylignore";

#[derive(Debug, Error)]
pub enum WalkError {
    #[error("--type-add {0:?}: expected EXT:LANG with LANG one of c, cpp, java (as in `--type-add pmt:c`)")]
    TypeAdd(String),
    #[error("--exclude {rule:?}: {error}")]
    Rule { rule: String, error: String },
    #[error("{}: {error}", path.display())]
    Config { path: PathBuf, error: String },
}

/// Which language each file extension is read as: the built-in table, then these.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Types {
    added: BTreeMap<String, Lang>,
}

impl Types {
    /// Adds `EXT:LANG` (`pmt:c`, `.inl:cpp`); a later mapping of an extension wins.
    pub fn add(&mut self, spec: &str) -> Result<(), WalkError> {
        let bad = || WalkError::TypeAdd(spec.to_string());
        let (ext, lang) = spec.split_once(':').ok_or_else(bad)?;
        let ext = ext.trim().trim_start_matches('.').to_ascii_lowercase();
        let lang = Lang::named(lang).ok_or_else(bad)?;
        if ext.is_empty() || ext.contains(['/', '\\', '*']) {
            return Err(bad());
        }
        self.added.insert(ext, lang);
        Ok(())
    }

    /// The language a file is read as, if any.
    pub fn lang_of(&self, path: &Path) -> Option<Lang> {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        ext.and_then(|e| self.added.get(&e).copied()).or_else(|| lang_of(path))
    }

    /// The mappings as `EXT:LANG`, as `--type-add` takes them.
    pub fn specs(&self) -> Vec<String> {
        self.added.iter().map(|(e, l)| format!("{e}:{}", l.name())).collect()
    }
}

/// A rule that leaves files out, and where it comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The root it applies to; `None`: every root (`--exclude`).
    pub root: Option<PathBuf>,
    /// A gitignore line (`!` lines bring files back).
    pub glob: String,
    /// `--exclude`, or the file it was read from.
    pub origin: String,
}

#[derive(Clone, Debug)]
pub struct WalkOptions {
    /// Files larger than this are skipped.
    pub max_bytes: u64,
    /// Honour .gitignore, .ignore and git excludes.
    pub respect_ignore: bool,
    /// Keep only files parsed as one of these languages; empty keeps all.
    pub langs: Vec<crate::graph::Lang>,
    /// Rules that leave files out, in order (the last that matches a path decides).
    pub exclude: Vec<Rule>,
    /// Extensions read as a language beyond the built-in ones (`--type-add`).
    pub types: Types,
    /// Those the indexed roots' `.beryl.toml` files add (the command line's win).
    pub config_types: Types,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            max_bytes: 1 << 20,
            respect_ignore: true,
            langs: Vec::new(),
            exclude: Vec::new(),
            types: Types::default(),
            config_types: Types::default(),
        }
    }
}

/// The walk rules an index records, so that what checks it for changes later (`status`,
/// the MCP server) walks as its build did. A root's `.beryl.toml` is read again each time.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WalkRecord {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub type_add: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_ignore: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_file_size: Option<u64>,
}

impl WalkRecord {
    pub fn is_default(&self) -> bool {
        *self == WalkRecord::default()
    }
}

/// A root's `.beryl.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Config {
    #[serde(default)]
    type_add: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
}

impl WalkOptions {
    /// The language a file is read as: `--type-add`, then `.beryl.toml`, then built in.
    pub fn lang_of(&self, path: &Path) -> Option<Lang> {
        if self.types.added.is_empty() && self.config_types.added.is_empty() {
            return lang_of(path);
        }
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        ext.and_then(|e| self.types.added.get(&e).or_else(|| self.config_types.added.get(&e)).copied()).or_else(|| lang_of(path))
    }

    /// Options from the command line's `--exclude` rules and `--type-add` mappings.
    pub fn with_rules(mut self, exclude: &[String], type_add: &[String]) -> Result<WalkOptions, WalkError> {
        for t in type_add {
            self.types.add(t)?;
        }
        for g in exclude {
            check_rule(g)?;
            self.exclude.push(Rule { root: None, glob: g.clone(), origin: "--exclude".into() });
        }
        Ok(self)
    }

    /// What the index records of these options (the command line's part).
    pub fn record(&self) -> WalkRecord {
        WalkRecord {
            exclude: self.exclude.iter().filter(|r| r.root.is_none()).map(|r| r.glob.clone()).collect(),
            type_add: self.types.specs(),
            no_ignore: !self.respect_ignore,
            max_file_size: (self.max_bytes != WalkOptions::default().max_bytes).then_some(self.max_bytes),
        }
    }

    /// The options a record describes.
    pub fn from_record(r: &WalkRecord) -> Result<WalkOptions, WalkError> {
        let base = WalkOptions { respect_ignore: !r.no_ignore, max_bytes: r.max_file_size.unwrap_or(1 << 20), ..WalkOptions::default() };
        base.with_rules(&r.exclude, &r.type_add)
    }

    /// These options with each root's `.beryl.toml` added: its mappings for every root,
    /// its exclusions for its own root, before the command line's (which then decide).
    pub fn with_project_config(&self, roots: &[PathBuf]) -> Result<WalkOptions, WalkError> {
        let mut out = self.clone();
        let mut from_files = Vec::new();
        let mut types = Types::default();
        // Options made with a project's rules already hold them: read afresh.
        out.exclude.retain(|r| r.root.is_none());
        for root in roots.iter().filter(|r| r.is_dir()) {
            let path = root.join(CONFIG);
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(WalkError::Config { path, error: e.to_string() }),
            };
            let c: Config = toml::from_str(&text).map_err(|e| WalkError::Config { path: path.clone(), error: e.to_string() })?;
            for t in &c.type_add {
                types.add(t).map_err(|e| WalkError::Config { path: path.clone(), error: e.to_string() })?;
            }
            for g in c.exclude {
                check_rule(&g).map_err(|e| WalkError::Config { path: path.clone(), error: e.to_string() })?;
                from_files.push(Rule { root: Some(root.clone()), glob: g, origin: path.display().to_string() });
            }
        }
        out.config_types = types;
        from_files.extend(self.exclude.iter().cloned());
        out.exclude = from_files;
        Ok(out)
    }
}

fn check_rule(g: &str) -> Result<(), WalkError> {
    let mut b = GitignoreBuilder::new("/");
    b.add_line(None, g).map_err(|e| WalkError::Rule { rule: g.to_string(), error: e.to_string() })?;
    Ok(())
}

/// How many files and folders one rule left out.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Excluded {
    /// `--exclude GLOB`, or `FILE: GLOB` for a rule read from a file.
    pub rule: String,
    /// Source files (of a language read) left out by name.
    pub files: usize,
    /// Folders left out whole (their contents are not walked, nor counted).
    pub folders: usize,
}

/// What a walk found.
#[derive(Clone, Debug, Default)]
pub struct Walked {
    pub files: Vec<PathBuf>,
    pub skipped: Vec<Skipped>,
    /// Per rule, in the order rules were first used.
    pub excluded: Vec<Excluded>,
    /// Files of extensions no language is read for: extension → count.
    pub unread: BTreeMap<String, usize>,
}

/// The exclusion rules of one root: the given ones, and the `.berylignore` files of its
/// folders, read as the walk reaches them.
struct Exclusions {
    rules: Gitignore,
    read: WalkOptions,
    folders: Mutex<HashMap<PathBuf, Option<Arc<Gitignore>>>>,
    /// The `.berylignore` files of each folder and of those above it within the root,
    /// nearest first: found once a folder, not once a file.
    /// (Keyed by the path's bytes: hashing a `Path` walks its components, once an entry.)
    chains: Mutex<HashMap<OsString, Arc<[Arc<Gitignore>]>>>,
    counts: Mutex<Vec<Excluded>>,
}

impl Exclusions {
    fn new(root: &Path, rules: &[Rule], read: &WalkOptions) -> Exclusions {
        let mut b = GitignoreBuilder::new(root);
        for r in rules.iter().filter(|r| r.root.as_deref().is_none_or(|x| x == root)) {
            // Checked when the options were made; the origin labels the rule in counts.
            let _ = b.add_line(Some(PathBuf::from(&r.origin)), &r.glob);
        }
        let rules = b.build().unwrap_or_else(|_| Gitignore::empty());
        Exclusions { rules, read: WalkOptions { exclude: Vec::new(), ..read.clone() }, folders: Mutex::new(HashMap::new()), chains: Mutex::new(HashMap::new()), counts: Mutex::new(Vec::new()) }
    }

    /// The `.berylignore` of folder `dir`, read once.
    fn folder(&self, dir: &Path) -> Option<Arc<Gitignore>> {
        let mut f = self.folders.lock().unwrap_or_else(|e| e.into_inner());
        f.entry(dir.to_path_buf())
            .or_insert_with(|| {
                let p = dir.join(IGNORE_FILE);
                if !p.is_file() {
                    return None;
                }
                let mut b = GitignoreBuilder::new(dir);
                if let Some(e) = b.add(&p) {
                    log::warn!("{}: {e}", p.display());
                }
                b.build().ok().map(Arc::new)
            })
            .clone()
    }

    /// The `.berylignore` files that apply in folder `dir` (within `root`), nearest first.
    fn chain(&self, root: &Path, dir: &Path) -> Arc<[Arc<Gitignore>]> {
        if let Some(c) = self.chains.lock().unwrap_or_else(|e| e.into_inner()).get(dir.as_os_str()) {
            return c.clone();
        }
        let mut v: Vec<Arc<Gitignore>> = self.folder(dir).into_iter().collect();
        if let Some(up) = dir.parent().filter(|p| p.starts_with(root)) {
            v.extend(self.chain(root, up).iter().cloned());
        }
        let c: Arc<[Arc<Gitignore>]> = v.into();
        self.chains.lock().unwrap_or_else(|e| e.into_inner()).insert(dir.as_os_str().to_os_string(), c.clone());
        c
    }

    /// Whether the walk keeps `path`: the given rules decide first, then the nearest
    /// `.berylignore` with a matching line. A rule that leaves it out is counted.
    fn keeps(&self, root: &Path, path: &Path, is_dir: bool) -> bool {
        // `None`: no rule matches; `Some(None)`: a `!` rule keeps it; else the rule.
        let verdict = |m: Match<&ignore::gitignore::Glob>| match m {
            Match::None => None,
            Match::Whitelist(_) => Some(None),
            Match::Ignore(glob) => Some(Some(match glob.from() {
                Some(f) if f.as_os_str() == "--exclude" => format!("--exclude {}", glob.original()),
                Some(f) => format!("{}: {}", f.display(), glob.original()),
                None => glob.original().to_string(),
            })),
        };
        let mut v = verdict(self.rules.matched(path, is_dir));
        if v.is_none() {
            // A folder with a chain is within the root: it was when the chain was made.
            let known = |d: &Path| self.chains.lock().unwrap_or_else(|e| e.into_inner()).get(d.as_os_str()).cloned();
            let chain = path.parent().and_then(|d| known(d).or_else(|| d.starts_with(root).then(|| self.chain(root, d))));
            if let Some(chain) = chain {
                for g in chain.iter() {
                    v = verdict(g.matched(path, is_dir));
                    if v.is_some() {
                        break;
                    }
                }
            }
        }
        let Some(Some(rule)) = v else { return true };
        if is_dir || self.read.lang_of(path).is_some() {
            let mut c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
            let i = c.iter().position(|e| e.rule == rule).unwrap_or_else(|| {
                c.push(Excluded { rule, ..Excluded::default() });
                c.len() - 1
            });
            if is_dir {
                c[i].folders += 1;
            } else {
                c[i].files += 1;
            }
        }
        false
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    TooLarge,
    Binary,
    InvalidUtf8,
    Generated,
    Unreadable,
    SymlinkOutsideRoot,
    Unparsable,
    /// Syntax or statements nested past what the parser's walks read.
    TooDeep,
}

impl SkipReason {
    pub fn name(&self) -> &'static str {
        match self {
            SkipReason::TooLarge => "too_large",
            SkipReason::Binary => "binary",
            SkipReason::InvalidUtf8 => "invalid_utf8",
            SkipReason::Generated => "generated",
            SkipReason::Unreadable => "unreadable",
            SkipReason::SymlinkOutsideRoot => "symlink_outside_root",
            SkipReason::Unparsable => "unparsable",
            SkipReason::TooDeep => "too_deep",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    pub path: PathBuf,
    pub reason: SkipReason,
    pub detail: String,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "skipped {}: {} ({})", self.path.display(), self.reason.name(), self.detail)
    }
}

/// Source files under `roots`, sorted, plus the entries skipped on the way.
/// Symlinks are followed only while they stay inside their root.
pub fn discover(roots: &[PathBuf], opts: &WalkOptions) -> (Vec<PathBuf>, Vec<Skipped>) {
    let w = walk(roots, opts);
    (w.files, w.skipped)
}

/// As [`discover`], with what each exclusion rule left out and the extensions not read.
pub fn walk(roots: &[PathBuf], opts: &WalkOptions) -> Walked {
    let mut out = Walked::default();
    for root in roots {
        if root.is_file() {
            if opts.lang_of(root).is_some() {
                out.files.push(root.clone());
            }
            continue;
        }
        let canon_root = root.canonicalize().unwrap_or_else(|_| root.clone());
        let ex = Arc::new(Exclusions::new(root, &opts.exclude, opts));
        let (ex2, r2) = (ex.clone(), root.clone());
        let walker = ignore::WalkBuilder::new(root)
            .standard_filters(opts.respect_ignore)
            .hidden(true)
            .follow_links(true)
            .filter_entry(move |e| e.depth() == 0 || ex2.keeps(&r2, e.path(), e.file_type().is_some_and(|t| t.is_dir())))
            .build();
        let mut folders = HashMap::new();
        for entry in walker {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    log::warn!("walk: {e}");
                    continue;
                }
            };
            let path = entry.path();
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            if opts.lang_of(path).is_none() {
                if let Some(ext) = path.extension().and_then(|e| e.to_str()) {
                    match out.unread.get_mut(ext) {
                        Some(n) if !ext.bytes().any(|b| b.is_ascii_uppercase()) => *n += 1,
                        _ => *out.unread.entry(ext.to_ascii_lowercase()).or_default() += 1,
                    }
                }
                continue;
            }
            if entry.path_is_symlink() || has_symlink_parent(path, root, &mut folders) {
                let inside = path.canonicalize().map(|c| c.starts_with(&canon_root)).unwrap_or(false);
                if !inside {
                    out.skipped.push(Skipped {
                        path: path.to_path_buf(),
                        reason: SkipReason::SymlinkOutsideRoot,
                        detail: "symlink target is outside the root".into(),
                    });
                    continue;
                }
            }
            out.files.push(path.to_path_buf());
        }
        let counts = std::mem::take(&mut *ex.counts.lock().unwrap_or_else(|e| e.into_inner()));
        for c in counts {
            match out.excluded.iter_mut().find(|e| e.rule == c.rule) {
                Some(e) => {
                    e.files += c.files;
                    e.folders += c.folders;
                }
                None => out.excluded.push(c),
            }
        }
    }
    out.files.sort_unstable_by(|a, b| path_order(a, b));
    out.files.dedup();
    out
}

/// The order of `Path`'s `Ord` (component by component) for paths without `.` or doubled
/// separators, as a walk's are: bytes, a separator below every other byte. Comparing
/// components costs a parse of both paths at each step of the sort.
pub fn path_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let key = |c: u8| if c == b'/' { 0 } else { c as u16 + 1 };
        let (x, y) = (a.as_os_str().as_bytes(), b.as_os_str().as_bytes());
        // Paths in one tree share long beginnings: skipped eight bytes at a time.
        let n = x.len().min(y.len());
        let mut same = 0;
        while same + 8 <= n && x[same..same + 8] == y[same..same + 8] {
            same += 8;
        }
        while same < n && x[same] == y[same] {
            same += 1;
        }
        match (x.get(same), y.get(same)) {
            (Some(&p), Some(&q)) => key(p).cmp(&key(q)),
            _ => x.len().cmp(&y.len()),
        }
    }
    #[cfg(not(unix))]
    a.cmp(b)
}

fn has_symlink_parent(path: &Path, root: &Path, folders: &mut HashMap<OsString, bool>) -> bool {
    path.parent().is_some_and(|d| linked_folder(d, root, folders))
}

/// Whether folder `d`, or one above it below `root`, is a symbolic link; each folder's
/// answer is kept in `folders` (by the path's bytes, quicker to hash than its
/// components), so a tree's files cost one `lstat` per folder, not one per folder above
/// each file. Only folders below `root` are kept.
fn linked_folder(d: &Path, root: &Path, folders: &mut HashMap<OsString, bool>) -> bool {
    if let Some(&linked) = folders.get(d.as_os_str()) {
        return linked;
    }
    if d == root || !d.starts_with(root) {
        return false;
    }
    let linked = d.symlink_metadata().map(|m| m.file_type().is_symlink()).unwrap_or(false) || d.parent().is_some_and(|p| linked_folder(p, root, folders));
    folders.insert(d.as_os_str().to_os_string(), linked);
    linked
}

/// Revision of the rules that decide which files are read: copies made from a walk (the
/// anonymized corpora of `beryl eval algo --renamed`) are remade when it changes.
pub const REVISION: u32 = 4;

/// Markers of generated code, looked for in the comments at the top of a file.
const GENERATED_MARKERS: &[&str] = &[
    "@generated",
    "do not edit",
    "automatically generated",
    "autogenerated",
    "auto-generated",
    "generated by the protocol buffer compiler",
    // Parser and scanner generators: their tables and drivers are not anyone's algorithm.
    "made by gnu bison",
    "scanner generated by flex",
    "generated by re2c",
    "code produced by gperf",
];

/// Older Java and C sources are often ISO-8859-1, mostly in comments (authors' names).
/// Every byte is a Latin-1 character, so such a file decodes without loss and keeps its
/// lines; bytes that are control characters in Latin-1 too mean it is not text at all.
fn latin1(bytes: &[u8]) -> Option<String> {
    let control = |b: u8| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c)) || (0x7f..0xa0).contains(&b);
    if bytes.iter().any(|&b| control(b)) {
        return None;
    }
    Some(bytes.iter().map(|&b| b as char).collect())
}

/// The comments at the top of a file, before its first line of code (preprocessor lines
/// may stand among them: an include guard). Generators (bison, protoc, SWIG, gnulib) say
/// so there. A marker further down is not about the file: Eclipse's `// TODO
/// Auto-generated method stub` in hand-written code, a string a generator program prints,
/// a class comment of code a project generates from its own templates and keeps as its
/// source (unrolled matrix kernels), or a Java `@Generated` annotation, which an anonymized
/// copy (comments removed) would otherwise bring within reach of a check its original passed.
fn header_comments(text: &str) -> String {
    const SCANNED: usize = 16 << 10;
    let mut out = String::new();
    let mut rest = text.trim_start_matches('\u{feff}');
    while text.len() - rest.len() < SCANNED {
        rest = rest.trim_start();
        let line_end = rest.find('\n').unwrap_or(rest.len());
        if rest.starts_with("//") {
            out.push_str(&rest[2..line_end]);
            rest = &rest[line_end..];
        } else if let Some(c) = rest.strip_prefix("/*") {
            let end = c.find("*/").unwrap_or(c.len());
            out.push_str(&c[..end]);
            rest = c.get(end + 2..).unwrap_or("");
        } else if rest.starts_with('#') {
            rest = &rest[line_end..];
        } else {
            break;
        }
        out.push('\n');
    }
    out
}

/// Reads a file as UTF-8 (or Latin-1) source, or says why it is skipped.
pub fn read_source(path: &Path, opts: &WalkOptions) -> Result<String, Skipped> {
    let skip = |reason, detail: String| Skipped {
        path: path.to_path_buf(),
        reason,
        detail,
    };
    let meta = std::fs::metadata(path).map_err(|e| skip(SkipReason::Unreadable, e.to_string()))?;
    if meta.len() > opts.max_bytes {
        return Err(skip(SkipReason::TooLarge, format!("{} bytes > limit {}", meta.len(), opts.max_bytes)));
    }
    let bytes = std::fs::read(path).map_err(|e| skip(SkipReason::Unreadable, e.to_string()))?;
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Err(skip(SkipReason::Binary, "NUL byte in the first 8 KiB".into()));
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let t = latin1(e.as_bytes()).ok_or_else(|| skip(SkipReason::InvalidUtf8, e.utf8_error().to_string()))?;
            log::info!("{}: not UTF-8, read as ISO-8859-1", path.display());
            t
        }
    };
    let head = header_comments(&text).to_lowercase();
    if let Some(m) = GENERATED_MARKERS.iter().find(|m| head.contains(*m)) {
        return Err(skip(SkipReason::Generated, format!("header says \"{m}\"")));
    }
    // Minified or machine-written code: a single line longer than any person writes.
    if text.lines().any(|l| l.len() > 20_000) {
        return Err(skip(SkipReason::Generated, "a line over 20,000 characters".into()));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::header_comments;

    #[test]
    fn paths_sort_by_bytes_as_by_components() {
        use std::path::PathBuf;
        let names = ["/r/a", "/r/a/b", "/r/a-b", "/r/a.b/c", "/r/a/b/c.c", "/r/ab", "/r/A", "/r/a b", "/r/\u{e9}/x", "r/a", "/r/a/b-c/d", "/r/a/b/-"];
        let mut by_components: Vec<PathBuf> = names.iter().map(PathBuf::from).collect();
        let mut by_bytes = by_components.clone();
        by_components.sort();
        by_bytes.sort_by(|a, b| super::path_order(a, b));
        assert_eq!(by_bytes, by_components);
        // A real tree's walk, as sorted.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut found = super::walk(&[root], &super::WalkOptions::default()).files;
        assert!(found.len() > 50);
        let walked = found.clone();
        found.sort();
        assert_eq!(walked, found);
    }

    #[test]
    fn header_comments_stop_at_the_first_line_of_code() {
        let c = "/* License */\n#include <stdio.h>\n// one\n#define N 3\nint f(void) { /* body */ return 0; }\n// after\n";
        assert_eq!(header_comments(c).split_whitespace().collect::<Vec<_>>(), ["License", "one"]);
        let java = "\u{feff}/* License */\npackage p;\n/** DO NOT MODIFY. Automatically generated */\n@Generated(\"x\")\nclass C {}\n";
        assert_eq!(header_comments(java).trim(), "License");
        for odd in ["", "//", "/*", "/* open", "#", "package", "\n\n", "// a\r\n/**/x"] {
            let _ = header_comments(odd);
        }
    }
}
