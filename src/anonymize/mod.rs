//! Consistent identifier anonymization of C, C++, Java, Python, Rust and Go sources.
//!
//! One mapping is shared by all files of a run, so a function defined in `a.c` and called
//! in `b.c` gets the same new name in both. The rules:
//!
//! - **What is renamed.** Names *declared* somewhere in the given sources: functions
//!   (definitions and prototypes, C++ methods, Java methods), variables, parameters, fields,
//!   labels and macro parameters (category `variable`); struct / class / union / enum /
//!   typedef / `using` alias / template parameter / Java class, interface, enum, record and
//!   annotation names and enum constants (`type`); C++ namespaces (`namespace`); `#define`d
//!   macros (`macro`). Every identifier token whose text is such a name is then renamed,
//!   wherever it occurs (one name, one new name, whatever the scope), including inside
//!   macro bodies and `#undef`. A struct/class/enum only counts as declared where it has a
//!   body, so `struct stat *st` keeps a library type. The scopes of an out-of-line C++
//!   definition (`Scanner` in `void Scanner::scan() {…}`) count as declared types unless
//!   declared otherwise, so a method file renamed without its header stays consistent.
//! - **Category of a name declared several ways**: macro > type > namespace > function >
//!   variable (a C++ constructor is its class; a Java method and a field named alike are
//!   one function name).
//! - **New names.** Neutral: `func_N`, `var_N`, `class_N` (types), `ns_N`, `MACRO_N`, one
//!   counter per category, numbered in order of first renamed occurrence (files in the order
//!   given, then byte order); a number whose name already occurs in the input is skipped.
//!   Random: 8 characters, a lowercase letter then lowercase letters or digits, from a
//!   splitmix64 stream seeded by `seed` (the same seed and input give the same output);
//!   never a keyword of C, C++ or Java, never a word of the input, never reused. In both
//!   modes a name whose original starts with an upper-case letter starts with one too
//!   (`Stack` → `Class_0`, `MAX_ITER` → `Var_3`, `Node` → a capitalized random name): Java
//!   tells `Type.m()` and `new T()` from `obj.m()` by it, beryl's call resolver included.
//! - **What stays.** Keywords (the identifier-shaped keywords of the three tree-sitter
//!   grammars), words tree-sitter parses as built-in types (`size_t`), names never declared
//!   in the sources (`printf`, `std::vector`, `System.out.println`, `java.util.List`), and
//!   the lists in `kept.rs`, applied for the languages present: `main`; C standard library
//!   names and implementation-reserved spellings (`__x__`, `__builtin_*`, `__lowercase`)
//!   even when a compat header re-declares them; C++ protocol names (`begin`, `end`,
//!   `size`, `value_type`, `swap`, …; with any C++ file present they stay in C files too);
//!   java.lang types and annotations, and Java methods
//!   that override or implement JDK methods (`toString`, `equals`, `hashCode`, `compareTo`,
//!   `run`, `iterator`, `get`, `size`, …, plus `length` and `serialVersionUID`).
//!   **Overriding is detected by that list only**, not by resolving supertypes. Literals
//!   (strings, characters, numbers, `#include` paths) are never changed, so names written
//!   inside them leak.
//! - **Qualified names.** A path whose first segment is not declared in the sources (or is
//!   `std`, `boost`, `java`, `javax`) keeps its later segments (`std::sort`, `Math.max`,
//!   `Map.Entry`, `java.util.Arrays.sort`, JUnit's `Assert.assertEquals`) even if the corpus
//!   declares a `sort` or an `Entry`: they name library members. A Java path through
//!   lower-case package segments to a declared type (`org.x.Foo.bar`) is the corpus's own
//!   and is renamed. Package declarations are never touched; in an import only
//!   the imported name is renamed (and a prefix segment that is a declared type).
//! - **Python, Rust and Go.** Declarations are read per language (`def`, `class`,
//!   parameters and assignment targets, `self.field = …`; Rust items, fields, variants,
//!   pattern bindings; Go functions, methods, types, fields, `:=` and `range` targets).
//!   Module and package names are file and folder names, so they keep their spelling:
//!   Python import paths, Rust path segments written in lower case before `::`, Go
//!   package names and import aliases. A Rust path from `crate`, `self`, `super`, `Self`
//!   or a module of the corpus (a file stem or folder), and a Go selector through one of
//!   the corpus's packages, are the corpus's own. Python attributes are renamed by
//!   spelling (no chains: a receiver's type is unknown), with built-ins, the methods of
//!   built-in types and dunder names kept; Rust keeps its prelude and std trait methods,
//!   Go its built-ins and the methods of standard interfaces (`Len`, `Less`, `Swap`, …).
//! - **Comments** are removed (they leak names) unless `keep_comments`: a comment becomes
//!   its line breaks, so line numbers stay, or one space where it separated two tokens;
//!   blanks before a comment that ends its line go with it; a multi-line comment inside a
//!   preprocessor directive becomes line continuations.
//! - **Broken input.** Files with tree-sitter ERROR/MISSING regions are rewritten too, tokens
//!   inside ERROR regions included. Each output is parsed again: tree-sitter's error
//!   recovery weighs skipped characters, so longer or shorter names near an error can make
//!   it recover differently. If the output has more ERROR/MISSING nodes than the input, the
//!   file is redone leaving ERROR nodes as they were; if that is still worse, leaving every
//!   item that contains an error as it was (top-level declarations, namespace and class
//!   members, preprocessor-branch items: names and comments there stay); then also the
//!   items right before and after those; and if even that is worse, the file is left as
//!   it was, names and comments included (the CLI warns). So no output has more error
//!   regions than its input. [`AnonymizedFile::rewritten`] says which version a file got,
//!   [`AnonymizedFile::kept_near_errors`] how many renames that dropped; the mapping is
//!   the same for all. Nothing here panics on input. (Removing comments can also *remove*
//!   errors: tree-sitter stops a macro body at a `/*`, so a comment inside a multi-line
//!   `#define` breaks its parse.)
//! - **Preprocessor conditionals.** Where a file has error regions, its declarations are
//!   also read from a view that keeps one branch of every `#if`/`#else` (the last, or the
//!   first, whichever parses better; see `branches`): a declaration split across branches
//!   (`#ifdef DOXYGEN template<…> #else template<…> #endif class Bfs {…}`) parses there.
//!   The names it declares are renamed everywhere in the file as usual.
//! - **Known limits.** Renaming is by spelling, not by scope: a declared name is renamed
//!   also where it refers to a library member (`solver.solve()` on a library object when
//!   the corpus declares its own `solve`); names built by token pasting (`foo_##x`) are
//!   not seen, so a function defined through such a macro no longer matches its renamed
//!   prototype; Java file names keep their class names.
//!
//! [`Mapping`] serializes as `{"function": {"orig": "func_0", …}, "variable": …, "type": …,
//! "namespace": …, "macro": …}` (categories with no renamed name are absent).

mod branches;
mod kept;
mod names;
mod rewrite;

use crate::graph::Lang;
use crate::lang::lang_of;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Bumped whenever the same input would be renamed differently, so anonymized copies
/// cached by the evaluation are made again.
pub const REVISION: u32 = 2;

/// File at the root of an anonymized tree. Its paths keep the original file names (line
/// numbers and paths must still meet the truth), so an index of it records that those
/// names say nothing, and search does not read them.
pub const MARKER: &str = ".beryl-anonymized";

/// Marks `dir` as the root of an anonymized tree ([`MARKER`]).
pub fn mark(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(MARKER), "identifiers anonymized by beryl; file names are the originals\n")
}

/// Whether `root` (a directory or a file) lies in an anonymized tree: the marker is in it
/// or in a folder above, as when a part of the tree is indexed.
pub fn is_marked(root: &Path) -> bool {
    if !root.exists() {
        return false;
    }
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    root.ancestors().any(|d| d.join(MARKER).is_file())
}

/// How new names look.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// `func_0`, `var_0`, `class_0`, `ns_0`, `MACRO_0` (capitalized where the original is).
    Neutral,
    /// Seeded random 8-character names.
    Random,
}

/// What kind of name a declared identifier is; one counter per category in neutral mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Function,
    Variable,
    Type,
    Namespace,
    Macro,
}

impl Category {
    pub const ALL: [Category; 5] = [
        Category::Function,
        Category::Variable,
        Category::Type,
        Category::Namespace,
        Category::Macro,
    ];

    /// Prefix of neutral names.
    pub fn prefix(self) -> &'static str {
        match self {
            Category::Function => "func",
            Category::Variable => "var",
            Category::Type => "class",
            Category::Namespace => "ns",
            Category::Macro => "MACRO",
        }
    }

    /// Which category wins for a name declared several ways (higher wins).
    fn rank(self) -> u8 {
        match self {
            Category::Variable => 0,
            Category::Function => 1,
            Category::Namespace => 2,
            Category::Type => 3,
            Category::Macro => 4,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AnonymizeError {
    #[error("{}: not a C, C++, Java, Python, Rust or Go file", .0.display())]
    UnsupportedFile(PathBuf),
    #[error("{0:?} sources cannot be anonymized")]
    UnsupportedLang(Lang),
    #[error("{}: tree-sitter returned no tree", .0.display())]
    Unparsable(PathBuf),
}

/// Original name → new name, by category.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(transparent)]
pub struct Mapping(pub BTreeMap<Category, BTreeMap<String, String>>);

impl Mapping {
    /// The new name of `original`, if it was renamed anywhere.
    pub fn get(&self, original: &str) -> Option<&str> {
        self.0.values().find_map(|m| m.get(original)).map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.0.values().map(BTreeMap::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Clone, Debug)]
pub struct AnonymizedFile {
    pub path: PathBuf,
    /// The language the file was parsed as (`.h` files: C, or C++ where that parses better).
    pub lang: Lang,
    pub text: String,
    /// Identifier tokens renamed.
    pub renamed: usize,
    /// Tokens spelled like a renamed name but left alone by the qualified-name, import or
    /// package rule.
    pub kept_by_context: usize,
    /// Tokens of renamed names left alone near syntax errors (see `rewritten`).
    pub kept_near_errors: usize,
    /// tree-sitter ERROR/MISSING nodes of the input and of the output.
    pub errors_before: u32,
    pub errors_after: u32,
    /// Where the file was rewritten: less than everywhere when that parsed worse.
    pub rewritten: Rewritten,
}

/// How much of a file was rewritten (renames and comment removal).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rewritten {
    Everywhere,
    /// Not inside tree-sitter ERROR nodes.
    OutsideErrorNodes,
    /// Not inside top-level declarations, namespace/class members or preprocessor-branch
    /// items that contain an ERROR or MISSING node.
    OutsideErroneousItems,
    /// Not inside such items nor the items right before and after them.
    AwayFromErroneousItems,
    /// Left as it was: every rewrite parsed worse than the input.
    Untouched,
}

#[derive(Clone, Debug)]
pub struct Anonymized {
    /// In the order given.
    pub files: Vec<AnonymizedFile>,
    pub mapping: Mapping,
}

struct Input<'a> {
    path: &'a Path,
    src: &'a str,
    lang: Lang,
    is_h: bool,
}

/// Anonymizes the files together (one mapping); the language comes from each extension.
pub fn anonymize_sources(files: &[(PathBuf, String)], mode: Mode, seed: u64, keep_comments: bool) -> Result<Anonymized, AnonymizeError> {
    let inputs = files
        .iter()
        .map(|(path, src)| {
            let lang = lang_of(path).ok_or_else(|| AnonymizeError::UnsupportedFile(path.clone()))?;
            let is_h = path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.eq_ignore_ascii_case("h"));
            Ok(Input { path, src, lang, is_h })
        })
        .collect::<Result<Vec<_>, AnonymizeError>>()?;
    run(&inputs, mode, seed, keep_comments)
}

/// Anonymizes one source text of a known language, comments removed.
pub fn anonymize_str(lang: Lang, src: &str, mode: Mode, seed: u64) -> Result<String, AnonymizeError> {
    if lang == Lang::Pcode {
        return Err(AnonymizeError::UnsupportedLang(lang));
    }
    let input = Input {
        path: Path::new("<string>"),
        src,
        lang,
        is_h: false,
    };
    let mut out = run(&[input], mode, seed, false)?;
    Ok(out.files.pop().map(|f| f.text).unwrap_or_default())
}

/// Adds the declarations of the one-branch view of the file (see [`branches`]) that parses
/// with fewer errors than the file; the tokens to rename stay those of the whole file.
fn declare_across_branches(lang: Lang, src: &str, errors: u32, scan: &mut names::Scan) {
    let best = [branches::Keep::Last, branches::Keep::First]
        .into_iter()
        .filter_map(|k| branches::view(src, k))
        .filter_map(|v| crate::lang::parse(lang, &v).map(|t| (crate::lang::error_regions(&t), t, v)))
        .min_by_key(|(e, _, _)| *e);
    if let Some((e, tree, view)) = best.filter(|b| b.0 < errors) {
        let more = names::scan(lang, &tree, &view, e);
        scan.decls.extend(more.decls);
        scan.weak_types.extend(more.weak_types);
        scan.primitive.extend(more.primitive);
    }
}

fn run(inputs: &[Input], mode: Mode, seed: u64, keep_comments: bool) -> Result<Anonymized, AnonymizeError> {
    let scans = inputs
        .par_iter()
        .map(|inp| {
            let (lang, tree, errors) =
                crate::lang::parse_source(inp.lang, inp.is_h, inp.src).ok_or_else(|| AnonymizeError::Unparsable(inp.path.to_path_buf()))?;
            let mut scan = names::scan(lang, &tree, inp.src, errors);
            if errors > 0 {
                declare_across_branches(lang, inp.src, errors, &mut scan);
            }
            Ok((lang, scan))
        })
        .collect::<Result<Vec<_>, AnonymizeError>>()?;

    // The declared names, minus the ones that must keep their spelling.
    let mut langs: Vec<Lang> = scans.iter().map(|(l, _)| *l).collect();
    langs.sort();
    langs.dedup();
    let kept = kept::Kept::new(&langs);
    let primitive: HashSet<&str> = scans.iter().flat_map(|(_, s)| s.primitive.iter().map(String::as_str)).collect();
    let mut declared: HashMap<String, Category> = HashMap::new();
    for (_, s) in &scans {
        for (name, cat) in &s.decls {
            let e = declared.entry(name.clone()).or_insert(*cat);
            if cat.rank() > e.rank() {
                *e = *cat;
            }
        }
    }
    for (_, s) in &scans {
        for name in &s.weak_types {
            declared.entry(name.clone()).or_insert(Category::Type);
        }
    }
    let mut declared_any: HashSet<String> = declared.keys().cloned().collect();
    // Paths from the corpus's own modules and packages, or from the crate itself, are its own.
    declared_any.extend(scans.iter().flat_map(|(_, s)| s.own_roots.iter().cloned()));
    declared_any.extend(["crate", "self", "super", "Self"].map(String::from));
    // Rust modules and Go packages are named by files and folders: a path through one
    // (`graph::bfs`, `heap.Fix`) is the corpus's own even when its declaration (`mod
    // graph;`, `package heap`) is not among the files given.
    for inp in inputs.iter().filter(|i| matches!(i.lang, Lang::Rust | Lang::Go)) {
        let stem = (inp.lang == Lang::Rust).then(|| inp.path.file_stem()).flatten();
        let folder = inp.path.parent().and_then(Path::file_name);
        declared_any.extend([stem, folder].into_iter().flatten().filter_map(|s| s.to_str()).map(str::to_string));
    }
    let aliases: Vec<String> = scans
        .iter()
        .flat_map(|(_, s)| &s.package_aliases)
        .filter(|(_, folder)| declared_any.contains(folder))
        .map(|(alias, _)| alias.clone())
        .collect();
    declared_any.extend(aliases);
    declared.retain(|n, _| !kept.keeps(n) && !primitive.contains(n.as_str()));

    // New names in order of first renamed occurrence: sequential, it is cheap.
    let taken: HashSet<String> = scans.iter().flat_map(|(_, s)| s.seen.iter().cloned()).collect();
    let mut namer = rewrite::Namer::new(mode, seed, taken);
    let mut plans = Vec::with_capacity(inputs.len());
    for (inp, (lang, scan)) in inputs.iter().zip(&scans) {
        let keep_from = rewrite::chain_keep_from(scan, &declared_any, &declared, *lang == Lang::Java);
        let mut edits = Vec::new();
        let mut kept_by_context = 0;
        for tok in &scan.tokens {
            let text = &inp.src[tok.start..tok.end];
            let Some(&cat) = declared.get(text) else { continue };
            if rewrite::renames(tok, cat, &keep_from) {
                edits.push((*tok, namer.name_for(text, cat).to_string()));
            } else {
                kept_by_context += 1;
            }
        }
        plans.push((edits, kept_by_context));
    }

    let files = inputs
        .par_iter()
        .zip(scans.par_iter())
        .zip(plans.into_par_iter())
        .map(|((inp, (lang, scan)), (renames, kept_by_context))| {
            let build = |limit: names::Zone| {
                let mut edits: Vec<rewrite::Edit> = renames
                    .iter()
                    .filter(|(t, _)| t.zone < limit)
                    .map(|(t, new)| rewrite::Edit {
                        start: t.start,
                        end: t.end,
                        text: new.clone(),
                    })
                    .collect();
                let n = edits.len();
                if !keep_comments {
                    edits.extend(rewrite::comment_edits(inp.src, &scan.comments, limit));
                }
                edits.sort_by_key(|e| e.start);
                let text = rewrite::apply(inp.src, &edits);
                let errors = crate::lang::parse(*lang, &text).map_or(u32::MAX, |t| crate::lang::error_regions(&t));
                (text, n, errors, limit)
            };
            // Everything first; while that parses worse, leave more around the errors as it
            // was: ERROR nodes, items with errors, their neighbours, finally the whole file.
            let mut best = build(4);
            for limit in [3, 2, 1, 0] {
                let touches =
                    renames.iter().any(|(t, _)| t.zone >= limit) || (!keep_comments && scan.comments.iter().any(|c| c.2 >= limit));
                if best.2 <= scan.errors || !touches {
                    continue;
                }
                let next = build(limit);
                if next.2 < best.2 {
                    best = next;
                }
            }
            let (text, n, errors, limit) = best;
            AnonymizedFile {
                path: inp.path.to_path_buf(),
                lang: *lang,
                text,
                renamed: n,
                kept_by_context,
                kept_near_errors: renames.len() - n,
                errors_before: scan.errors,
                errors_after: errors,
                rewritten: match limit {
                    4 => Rewritten::Everywhere,
                    3 => Rewritten::OutsideErrorNodes,
                    2 => Rewritten::OutsideErroneousItems,
                    1 => Rewritten::AwayFromErroneousItems,
                    _ => Rewritten::Untouched,
                },
            }
        })
        .collect();

    let mut mapping = Mapping::default();
    for original in &namer.order {
        let (cat, new) = &namer.assigned[original];
        mapping.0.entry(*cat).or_default().insert(original.clone(), new.clone());
    }
    Ok(Anonymized { files, mapping })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marked_tree_is_known_from_its_root_and_its_files() {
        let tmp = tempfile::tempdir().unwrap();
        let sub = tmp.path().join("src/paths");
        std::fs::create_dir_all(&sub).unwrap();
        let file = sub.join("floyd_warshall.c");
        std::fs::write(&file, "int f(void) { return 0; }\n").unwrap();
        assert!(!is_marked(tmp.path()) && !is_marked(&sub) && !is_marked(&file));
        mark(tmp.path()).unwrap();
        assert!(is_marked(tmp.path()) && is_marked(&sub) && is_marked(&file), "a part of the tree is in it");
        assert!(!is_marked(&tmp.path().join("absent")), "a missing root is not an anonymized tree");
    }
}
