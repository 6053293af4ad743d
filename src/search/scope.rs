//! Where a query may look: `--path` globs, `--lang` and `--no-tests`. The scope becomes a
//! subset of the index's functions and nodes before any retriever runs, so every
//! retriever ranks inside it and the top N are the best N of the scope, not what of a
//! corpus-wide top N happens to fall inside.

use super::place::is_test_path;
use super::SearchError;
use crate::graph::Lang;
use crate::index::subset::{self, Subset};
use crate::index::Index;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scope {
    /// Globs over paths relative to the indexed root, in gitignore syntax: a glob without
    /// `/` matches a name at any depth, a folder matches what it holds, `!GLOB` leaves out,
    /// and the last glob that matches decides. With any plain glob, a file must match one.
    pub paths: Vec<String>,
    /// Languages kept; empty keeps all.
    pub langs: Vec<Lang>,
    /// Leave out tests, examples, demos and benchmarks (see [`is_test_path`]).
    pub no_tests: bool,
    /// Where the user stands (the CLI's working directory): a glob with a `/` in it that
    /// names a place under an indexed root from here is read from here, as the paths the
    /// text report prints are.
    pub cwd: Option<PathBuf>,
}

impl Scope {
    /// The whole index.
    pub fn is_all(&self) -> bool {
        self.paths.is_empty() && self.langs.is_empty() && !self.no_tests
    }

    fn key(&self) -> String {
        format!("{:?}|{:?}|{}|{:?}", self.paths, self.langs, self.no_tests, self.cwd)
    }

    /// The scope in words, for messages.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self.paths.iter().map(|p| format!("--path {p}")).collect();
        parts.extend(self.langs.iter().map(|l| format!("--lang {}", l.name())));
        if self.no_tests {
            parts.push("--no-tests".into());
        }
        parts.join(" ")
    }
}

/// A language by the name `--lang` takes.
pub fn lang_named(name: &str) -> Option<Lang> {
    Lang::named(name)
}

/// The globs as one matcher, anchored at the indexed root when written absolute or (with a
/// `/` inside) from `cwd` to a place under a root.
fn matcher(globs: &[String], roots: &[PathBuf], cwd: Option<&Path>) -> Result<Gitignore, SearchError> {
    let mut b = GitignoreBuilder::new("");
    for g in globs {
        let (neg, body) = match g.strip_prefix('!') {
            Some(rest) => ("!", rest),
            None => ("", g.as_str()),
        };
        let under = |p: &Path| roots.iter().find_map(|r| p.strip_prefix(r).ok().map(|rel| format!("/{}", rel.display())));
        let from_cwd = || {
            let inner = body.trim_end_matches('/').contains('/') && !body.starts_with("**");
            cwd.filter(|_| inner && !body.starts_with('/')).and_then(|c| under(&c.join(body.trim_start_matches("./"))))
        };
        let body = under(Path::new(body)).or_else(from_cwd).unwrap_or_else(|| body.to_string());
        b.add_line(None, &format!("{neg}{body}")).map_err(|e| SearchError::Scope(format!("--path {g:?}: {e}")))?;
    }
    b.build().map_err(|e| SearchError::Scope(format!("--path: {e}")))
}

/// `path` relative to the root it lies under (the longest, where roots nest); a root that
/// is a file gives its name.
fn relative<'p>(path: &'p Path, roots: &[PathBuf]) -> &'p Path {
    roots
        .iter()
        .filter(|r| path.starts_with(r))
        .max_by_key(|r| r.as_os_str().len())
        .and_then(|r| path.strip_prefix(r).ok().filter(|p| !p.as_os_str().is_empty()))
        .or_else(|| path.file_name().map(Path::new))
        .unwrap_or(path)
}

/// Whether a file at `path` (in `lang`) is inside `scope`.
fn admits(scope: &Scope, m: &Gitignore, plain: bool, roots: &[PathBuf], path: &str, lang: &str) -> bool {
    if !scope.langs.is_empty() && !scope.langs.iter().any(|l| l.name() == lang) {
        return false;
    }
    let rel = relative(Path::new(path), roots);
    // The path below the root decides, and the root's own name when it is exactly a
    // tests or examples folder; the folders above it (`/tmp/test-repo`) say nothing.
    if scope.no_tests {
        let root = roots.iter().filter(|r| Path::new(path).starts_with(r)).max_by_key(|r| r.as_os_str().len());
        if is_test_path(&rel.to_string_lossy()) || root.is_some_and(|r| super::place::root_is_tests(&r.to_string_lossy())) {
            return false;
        }
    }
    if scope.paths.is_empty() {
        return true;
    }
    // Gitignore's "ignored" is a plain glob matching, "whitelisted" a `!` one. A `!`
    // glob on any folder of the path leaves the file out, as a folder git ignores hides
    // what it holds, whatever glob the file's own name matches.
    let mut kept = false;
    for (i, level) in rel.ancestors().filter(|a| !a.as_os_str().is_empty()).enumerate() {
        match m.matched(level, i > 0) {
            Match::Whitelist(_) => return false,
            Match::Ignore(_) => kept = true,
            Match::None => {}
        }
    }
    kept || !plain
}

/// Confines `index` to `scope` for the queries that follow (reusing the subset when the
/// scope is the one in place). A scope no indexed file falls in is an error that says so.
pub fn confine(index: &mut Index, scope: &Scope) -> Result<(), SearchError> {
    if scope.is_all() {
        index.confine(None);
        return Ok(());
    }
    let key = scope.key();
    if index.subset().is_some_and(|s| s.key == key) {
        return Ok(());
    }
    let roots: Vec<PathBuf> = index.meta.roots.iter().map(PathBuf::from).collect();
    let m = matcher(&scope.paths, &roots, scope.cwd.as_deref())?;
    let plain = scope.paths.iter().any(|g| !g.starts_with('!'));
    let files = index.store.files()?;
    let mut file_in = subset::bitmap(files.iter().map(|f| f.id as usize + 1).max().unwrap_or(0));
    let mut n_files = 0;
    for f in &files {
        if admits(scope, &m, plain, &roots, &f.path, &f.lang) {
            subset::set(&mut file_in, f.id as usize);
            n_files += 1;
        }
    }
    if n_files == 0 {
        return Err(SearchError::Scope(format!("no indexed file is inside {} ({} files indexed)", scope.describe(), files.len())));
    }
    let funcs = index.store.function_files()?;
    let mut entries: Vec<u32> = funcs.iter().map(|f| f.2).collect();
    entries.sort_unstable();
    let node_count = index.graph.node_count();
    let mut functions = subset::bitmap(funcs.iter().map(|f| f.0 as usize + 1).max().unwrap_or(0));
    let mut nodes = subset::bitmap(node_count);
    let mut n_functions = 0;
    for &(id, file, entry) in &funcs {
        if !subset::get(&file_in, file as usize) {
            continue;
        }
        subset::set(&mut functions, id as usize);
        n_functions += 1;
        // A function's nodes run from its entry to the next function's.
        let next = entries.partition_point(|&e| e <= entry);
        let end = entries.get(next).map_or(node_count, |&e| e as usize);
        subset::set_range(&mut nodes, entry as usize, end);
    }
    log::debug!("scope {}: {n_files} files, {n_functions} functions", scope.describe());
    index.confine(Some(Subset { key, functions, nodes, files: n_files, function_count: n_functions }));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(paths: &[&str]) -> Scope {
        Scope { paths: paths.iter().map(|s| s.to_string()).collect(), ..Scope::default() }
    }

    fn inside(s: &Scope, path: &str, lang: &str) -> bool {
        let roots = vec![PathBuf::from("/r/proj")];
        let m = matcher(&s.paths, &roots, s.cwd.as_deref()).unwrap();
        let plain = s.paths.iter().any(|g| !g.starts_with('!'));
        admits(s, &m, plain, &roots, path, lang)
    }

    #[test]
    fn globs_follow_gitignore_rules_relative_to_the_root() {
        let s = scope(&["src/**", "!src/vendor/**"]);
        assert!(inside(&s, "/r/proj/src/sort/quick.c", "c"));
        assert!(!inside(&s, "/r/proj/src/vendor/zlib/inflate.c", "c"));
        assert!(!inside(&s, "/r/proj/lib/heap.c", "c"));
        // A folder name matches what it holds, at any depth; a name pattern any file.
        assert!(inside(&scope(&["graph"]), "/r/proj/src/graph/bfs.c", "c"));
        assert!(inside(&scope(&["*.h"]), "/r/proj/a/b/heap.h", "c"));
        assert!(!inside(&scope(&["*.h"]), "/r/proj/a/b/heap.c", "c"));
        // Only exclusions: everything else stays.
        assert!(inside(&scope(&["!tests/"]), "/r/proj/src/a.c", "c"));
        assert!(!inside(&scope(&["!tests/"]), "/r/proj/tests/a.c", "c"));
        // A folder left out stays out whatever its files' names match.
        assert!(!inside(&scope(&["*.c", "!vendor/"]), "/r/proj/src/vendor/x.c", "c"));
        assert!(inside(&scope(&["*.c", "!vendor/"]), "/r/proj/src/x.c", "c"));
        // Absolute globs under the root mean the same.
        assert!(inside(&scope(&["/r/proj/src/**"]), "/r/proj/src/x.c", "c"));
        assert!(!inside(&scope(&["/r/proj/src/**"]), "/r/proj/lib/src/x.c", "c"));
        assert!(matcher(&["a/{b".to_string()], &[], None).is_err());
        // From a working directory above or inside the root, as the report prints paths.
        let from = |cwd: &str, g: &str| Scope { cwd: Some(PathBuf::from(cwd)), ..scope(&[g]) };
        assert!(inside(&from("/r", "proj/src/**"), "/r/proj/src/x.c", "c"));
        assert!(inside(&from("/r/proj/src", "./sort/*.c"), "/r/proj/src/sort/q.c", "c"));
        assert!(!inside(&from("/r/proj/src", "sort/*.c"), "/r/proj/lib/sort/q.c", "c"));
        // A glob that names nothing from there is read from the root.
        assert!(inside(&from("/elsewhere", "src/**"), "/r/proj/src/x.c", "c"));
    }

    #[test]
    fn languages_and_tests() {
        let s = Scope { langs: vec![Lang::Java], ..Scope::default() };
        assert!(inside(&s, "/r/proj/A.java", "java") && !inside(&s, "/r/proj/a.c", "c"));
        let s = Scope { no_tests: true, ..Scope::default() };
        assert!(!inside(&s, "/r/proj/tests/t.c", "c") && inside(&s, "/r/proj/src/t.c", "c"));
        // Only the part below the root counts.
        let roots = vec![PathBuf::from("/tmp/test-repo")];
        assert!(admits(&s, &matcher(&[], &roots, None).unwrap(), false, &roots, "/tmp/test-repo/src/heap.c", "c"));
        assert_eq!(lang_named("C++"), Some(Lang::Cpp));
        assert_eq!(lang_named("go"), Some(Lang::Go));
        assert_eq!(lang_named("py"), Some(Lang::Python));
        assert_eq!(lang_named("kotlin"), None);
    }
}
