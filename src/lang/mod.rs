//! tree-sitter front ends: a C, C++ or Java file becomes one CFG per function.

mod builder;
mod calls;
mod functions;

use crate::graph::{FnCfg, FunctionMeta, Lang};
use std::path::Path;
use tree_sitter::{Parser, Tree};

pub use crate::graph::FileUnit;

/// The language a path's extension names; `.h` is tried as C first (see [`parse_file`]).
pub fn lang_of(path: &Path) -> Option<Lang> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "c" | "h" => Some(Lang::C),
        "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" | "tcc" => Some(Lang::Cpp),
        "java" => Some(Lang::Java),
        _ => None,
    }
}

fn ts_language(lang: Lang) -> tree_sitter::Language {
    match lang {
        Lang::C => tree_sitter_c::LANGUAGE.into(),
        Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        Lang::Java => tree_sitter_java::LANGUAGE.into(),
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
    fn walk(n: tree_sitter::Node, acc: &mut u32) {
        if n.is_error() || n.is_missing() {
            *acc += 1;
            return;
        }
        if !n.has_error() {
            return;
        }
        let mut c = n.walk();
        for ch in n.children(&mut c) {
            walk(ch, acc);
        }
    }
    let mut n = 0;
    walk(tree.root_node(), &mut n);
    n
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
pub fn parse_file(path: &Path, src: &str, file: u32) -> Option<ParsedFile> {
    let is_h = path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("h"));
    let (lang, tree, errors) = parse_source(lang_of(path)?, is_h, src)?;
    let (functions, unit) = functions::build_all(lang, &tree, src, file);
    Some(ParsedFile {
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
        assert_eq!(lang_of(Path::new("x.py")), None);
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
