//! tree-sitter front ends: a C, C++, Java, Python, Rust or Go file becomes one CFG per
//! function (methods, nested functions, lambdas and closures included).

mod builder;
mod calls;
mod functions;

use crate::graph::{FnCfg, FunctionMeta, Lang};
use std::path::Path;
use thiserror::Error;
use tree_sitter::{Parser, Tree};

pub use crate::graph::FileUnit;

/// Deepest syntax tree read. Every walk over whole trees runs on an explicit stack, so this
/// only keeps pathological files out (thousands of nested brackets); the deepest of 12,491
/// files of the corpora beryl is evaluated on is 493 levels (a long `#if` chain).
pub const MAX_SYNTAX_DEPTH: usize = 2048;
/// Deepest nesting of statements the CFG builder follows (a block in an `if` is two). It
/// recurses once a level at about 1.5 KiB of stack (release build), so files at the bound
/// need about 0.4 MiB, within a rayon worker's 2 MiB; the deepest real file nests 34.
pub const MAX_STATEMENT_NESTING: usize = 256;

/// Why a file gives no CFGs.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ParseError {
    #[error("not a C, C++, Java, Python, Rust or Go file name")]
    UnknownLanguage,
    #[error("tree-sitter returned no tree")]
    NoTree,
    #[error("syntax nested more than {0} levels deep")]
    TooDeep(usize),
    #[error("statements nested more than {0} levels deep")]
    TooNested(usize),
}

/// The language a path's extension names; `.h` is tried as C first (see [`parse_file`]).
pub fn lang_of(path: &Path) -> Option<Lang> {
    // Lowered on the stack: a walk asks this of every file in the tree.
    let ext = path.extension()?.as_encoded_bytes();
    let mut low = [0u8; 4];
    let low = low.get_mut(..ext.len())?;
    low.copy_from_slice(ext);
    low.make_ascii_lowercase();
    match std::str::from_utf8(low).ok()? {
        "c" | "h" => Some(Lang::C),
        // CUDA sources are C++ with launch syntax tree-sitter recovers from.
        "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" | "tcc" | "cu" | "cuh" => Some(Lang::Cpp),
        "java" => Some(Lang::Java),
        "py" | "pyi" => Some(Lang::Python),
        "rs" => Some(Lang::Rust),
        "go" => Some(Lang::Go),
        _ => None,
    }
}

fn ts_language(lang: Lang) -> tree_sitter::Language {
    match lang {
        Lang::C => tree_sitter_c::LANGUAGE.into(),
        Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        Lang::Java => tree_sitter_java::LANGUAGE.into(),
        Lang::Python => tree_sitter_python::LANGUAGE.into(),
        Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
        Lang::Go => tree_sitter_go::LANGUAGE.into(),
        Lang::Pcode => unreachable!("p-code has its own parser"),
    }
}

/// Parses `src` as `lang`. tree-sitter only fails on cancellation or a missing language,
/// neither of which happens here, so `None` is reported as an unparsable file.
pub(crate) fn parse(lang: Lang, src: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(&ts_language(lang)).ok()?;
    parser.parse(src, None)
}

/// Number of ERROR and MISSING nodes: regions tree-sitter had to recover from.
pub(crate) fn error_regions(tree: &Tree) -> u32 {
    // Explicit stack: the tree may be deeper than a thread's stack allows.
    let mut n = 0;
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            n += 1;
        } else if node.has_error() {
            stack.extend(node.children(&mut node.walk()));
        }
    }
    n
}

/// Whether some node of `tree` lies more than `limit` levels below the root.
pub(crate) fn deeper_than(tree: &Tree, limit: usize) -> bool {
    let mut c = tree.walk();
    let mut depth = 0;
    loop {
        if c.goto_first_child() {
            depth += 1;
            if depth > limit {
                return true;
            }
            continue;
        }
        while !c.goto_next_sibling() {
            if !c.goto_parent() {
                return false;
            }
            depth -= 1;
        }
    }
}

/// The CFGs of one source file.
#[derive(Debug)]
pub struct ParsedFile {
    pub lang: Lang,
    pub functions: Vec<(FunctionMeta, FnCfg)>,
    pub unit: FileUnit,
    /// ERROR/MISSING regions in the syntax tree; their functions are still built.
    pub error_regions: u32,
}

/// Parses `src` in the language its path gives (`is_h`: a `.h` file), and picks C or C++
/// for a header: C++ where it uses C++-only syntax, even when both parsers give up on it
/// (templates with `#ifdef` in their heads leave one ERROR region in either), or
/// where C leaves error regions that C++ does not. Returns the language, the tree and its
/// error regions.
pub(crate) fn parse_source(lang: Lang, is_h: bool, src: &str) -> Option<(Lang, Tree, u32)> {
    if is_h && looks_cpp(src) {
        let t = parse(Lang::Cpp, src)?;
        let e = error_regions(&t);
        return Some((Lang::Cpp, t, e));
    }
    let tree = parse(lang, src)?;
    let errors = error_regions(&tree);
    if is_h && errors > 0 {
        if let Some(t) = parse(Lang::Cpp, src) {
            let e = error_regions(&t);
            if e < errors {
                return Some((Lang::Cpp, t, e));
            }
        }
    }
    Some((lang, tree, errors))
}

/// Parses one file and builds its functions' CFGs. `file` is the id nodes will carry.
/// A file nested past [`MAX_SYNTAX_DEPTH`] or [`MAX_STATEMENT_NESTING`] gives none.
pub fn parse_file(path: &Path, src: &str, file: u32) -> Result<ParsedFile, ParseError> {
    parse_file_as(path, lang_of(path).ok_or(ParseError::UnknownLanguage)?, src, file)
}

fn is_header(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("h"))
}

/// Whether a file at `path` that its extension maps to `mapped` may have been read as
/// `read` (a language name): as that language, or a `.h` mapped to C read as C++ (see
/// [`parse_source`]).
pub fn reads_as(path: &Path, mapped: Lang, read: &str) -> bool {
    read == mapped.name() || (mapped == Lang::C && read == Lang::Cpp.name() && is_header(path))
}

/// As [`parse_file`], in `lang` whatever the extension (`--type-add`).
pub fn parse_file_as(path: &Path, lang: Lang, src: &str, file: u32) -> Result<ParsedFile, ParseError> {
    let is_h = is_header(path);
    let (lang, tree, errors) = parse_source(lang, is_h, src).ok_or(ParseError::NoTree)?;
    if deeper_than(&tree, MAX_SYNTAX_DEPTH) {
        return Err(ParseError::TooDeep(MAX_SYNTAX_DEPTH));
    }
    let (functions, unit) = functions::build_all(lang, &tree, src, file)?;
    Ok(ParsedFile {
        lang,
        functions,
        unit,
        error_regions: errors,
    })
}

/// Whether a header uses syntax C does not have: `namespace`, `template <`, access
/// specifiers, or `::` outside comments.
fn looks_cpp(src: &str) -> bool {
    src.lines().any(|l| {
        let t = l.trim_start();
        if t.starts_with("//") || t.starts_with('*') || t.starts_with("/*") {
            return false;
        }
        t.starts_with("namespace ")
            || t.starts_with("template<")
            || t.starts_with("template <")
            || t.starts_with("public:")
            || t.starts_with("private:")
            || t.starts_with("protected:")
            || t.split("//").next().is_some_and(|code| code.contains("::"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_with_cpp_syntax_are_cpp() {
        assert!(looks_cpp("namespace graphs {\n  template <typename GR>\n  class Bfs {};\n}"));
        assert!(looks_cpp("int x = std::max(a, b);"));
        assert!(!looks_cpp("/* see Foo::bar */\nint f(int a);\n// a::b\n"));
        assert!(!looks_cpp("struct s { int a; };\nint f(void);"));
    }

    #[test]
    fn extensions_map_to_languages() {
        assert_eq!(lang_of(Path::new("a/b.c")), Some(Lang::C));
        assert_eq!(lang_of(Path::new("x.HPP")), Some(Lang::Cpp));
        assert_eq!(lang_of(Path::new("x.java")), Some(Lang::Java));
        assert_eq!(lang_of(Path::new("x.py")), Some(Lang::Python));
        assert_eq!(lang_of(Path::new("x.pyi")), Some(Lang::Python));
        assert_eq!(lang_of(Path::new("lib.rs")), Some(Lang::Rust));
        assert_eq!(lang_of(Path::new("sort_test.go")), Some(Lang::Go));
        assert_eq!(lang_of(Path::new("x.pyc")), None);
        assert_eq!(lang_of(Path::new("k.cu")), Some(Lang::Cpp));
        assert_eq!(lang_of(Path::new("Makefile")), None);
    }

    #[test]
    fn header_with_classes_is_cpp() {
        let src = "namespace n { class A { public: int f(int x) { return x + 1; } }; }\n";
        let f = parse_file(Path::new("a.h"), src, 0).unwrap();
        assert_eq!(f.lang, Lang::Cpp);
        assert_eq!(f.functions.len(), 1);
        assert_eq!(f.functions[0].0.qualified(), "n::A::f");
    }

    #[test]
    fn plain_c_header_stays_c() {
        let src = "static inline int sq(int x) { return x * x; }\n";
        let f = parse_file(Path::new("a.h"), src, 0).unwrap();
        assert_eq!(f.lang, Lang::C);
        assert!(f.functions[0].0.file_local);
    }
}
