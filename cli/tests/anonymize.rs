//! Identifier anonymization: exact rewrites of small snippets, determinism of random mode,
//! one mapping across files, and real corpora (Debian source packages cached by
//! `beryl::corpus::fetch`) that must parse no worse and keep their ICFG shape.
//! Run with `cargo test --release --test anonymize`.

use beryl::anonymize::{anonymize_sources, anonymize_str, Anonymized, Mode};
use beryl::corpus::walk::{discover, read_source};
use beryl::corpus::{fetch::fetch, load, WalkOptions};
use beryl::graph::Lang;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

fn neutral(lang: Lang, src: &str) -> String {
    anonymize_str(lang, src, Mode::Neutral, 0).unwrap()
}

#[test]
fn snippets_in_neutral_mode() {
    let cases: &[(Lang, &str, &str)] = &[
        (
            Lang::C,
            "#include <stdio.h>\n#define SQ(x) ((x) * (x))\nstruct pt { int x; int y; };\ntypedef struct pt pt_t;\nenum dir { UP, DOWN };\nstatic int calls = 0; /* counter */\nint norm(const pt_t *p) { calls++; return SQ(p->x) + SQ(p->y); }\nint main(void) {\n    pt_t a = { .x = 3, .y = 4 };\n    printf(\"norm %d\\n\", norm(&a)); // print\n    return UP;\n}\n",
            "#include <stdio.h>\n#define MACRO_0(var_0) ((var_0) * (var_0))\nstruct class_0 { int var_0; int var_1; };\ntypedef struct class_0 class_1;\nenum class_2 { Class_3, Class_4 };\nstatic int var_2 = 0;\nint func_0(const class_1 *var_3) { var_2++; return MACRO_0(var_3->var_0) + MACRO_0(var_3->var_1); }\nint main(void) {\n    class_1 var_4 = { .var_0 = 3, .var_1 = 4 };\n    printf(\"norm %d\\n\", func_0(&var_4));\n    return Class_3;\n}\n",
        ),
        (
            // Function pointers are variables; labels too; library calls and types stay.
            Lang::C,
            "int (*handler)(int);\nint *make(size_t n) { int *b = malloc(n * sizeof(int)); if (!b) goto fail; return b;\nfail:\n  return NULL; }\n",
            "int (*var_0)(int);\nint *func_0(size_t var_1) { int *var_2 = malloc(var_1 * sizeof(int)); if (!var_2) goto var_3; return var_2;\nvar_3:\n  return NULL; }\n",
        ),
        (
            Lang::Cpp,
            "#include <vector>\nnamespace geo {\ntemplate <typename T> class Box {\npublic:\n  Box(T w) : w_(w) {}\n  ~Box() {}\n  T area() const { return w_ * w_; }\n  void sort(std::vector<T>& v) { std::sort(v.begin(), v.end()); }\nprivate:\n  T w_;\n};\n}\nint main() { geo::Box<int> b(2); return b.area(); }\n",
            "#include <vector>\nnamespace ns_0 {\ntemplate <typename Class_0> class Class_1 {\npublic:\n  Class_1(Class_0 var_0) : var_1(var_0) {}\n  ~Class_1() {}\n  Class_0 func_0() const { return var_1 * var_1; }\n  void func_1(std::vector<Class_0>& var_2) { std::sort(var_2.begin(), var_2.end()); }\nprivate:\n  Class_0 var_1;\n};\n}\nint main() { ns_0::Class_1<int> var_3(2); return var_3.func_0(); }\n",
        ),
        (
            // An out-of-line definition without its class: the scope is a type of the corpus.
            Lang::Cpp,
            "void Scanner::scan(int n) { std::size_t k = n; }\nScanner::~Scanner() {}\n",
            "void Class_0::func_0(int var_0) { std::size_t var_1 = var_0; }\nClass_0::~Class_0() {}\n",
        ),
        (
            // Package and import paths stay; java.lang, overrides by list and `Math.max` stay.
            Lang::Java,
            "package org.example.stack;\nimport java.util.List;\n/** A stack. */\npublic class Stack<T> implements Comparable<Stack<T>> {\n  private int depth;\n  public int push(T item) { depth++; return Math.max(depth, 0); }\n  @Override public String toString() { return \"Stack \" + depth; }\n  public int compareTo(Stack<T> other) { return Integer.compare(depth, other.depth); }\n  static int sum(List<Integer> xs) { int s = 0; for (int v : xs) s += v; return s; }\n}\n",
            "package org.example.stack;\nimport java.util.List;\n\npublic class Class_0<Class_1> implements Comparable<Class_0<Class_1>> {\n  private int var_0;\n  public int func_0(Class_1 var_1) { var_0++; return Math.max(var_0, 0); }\n  @Override public String toString() { return \"Stack \" + var_0; }\n  public int compareTo(Class_0<Class_1> var_2) { return Integer.compare(var_0, var_2.var_0); }\n  static int func_1(List<Integer> var_3) { int var_4 = 0; for (int var_5 : var_3) var_4 += var_5; return var_4; }\n}\n",
        ),
        (
            // Enum constants, a lambda parameter, a catch parameter, a nested class path.
            Lang::Java,
            "class Outer {\n  enum Mode { FAST, SLOW }\n  static class Inner { int k; }\n  int f(java.util.List<Inner> xs) {\n    xs.forEach(i -> i.k++);\n    try { return Outer.Inner.class.hashCode(); } catch (RuntimeException e) { return Mode.FAST.ordinal(); }\n  }\n}\n",
            "class Class_0 {\n  enum Class_1 { Class_2, Class_3 }\n  static class Class_4 { int var_0; }\n  int func_0(java.util.List<Class_4> var_1) {\n    var_1.forEach(var_2 -> var_2.var_0++);\n    try { return Class_0.Class_4.class.hashCode(); } catch (RuntimeException var_3) { return Class_1.Class_2.ordinal(); }\n  }\n}\n",
        ),
        (
            // A template header split by `#ifdef` (lemon's Bfs): tree-sitter leaves the class in
            // an ERROR region; the one-branch view still declares its names.
            Lang::Cpp,
            "namespace lemon {\n#ifdef DOXYGEN\n  template <typename GR>\n#else\n  template <typename GR=Graph>\n#endif\n  class Bfs {\n  public:\n    int run(int s) { int count = s + 1; return count; }\n  };\n}\n",
            "namespace ns_0 {\n#ifdef DOXYGEN\n  template <typename Class_0>\n#else\n  template <typename Class_0=Graph>\n#endif\n  class Class_1 {\n  public:\n    int func_0(int var_0) { int var_1 = var_0 + 1; return var_1; }\n  };\n}\n",
        ),
    ];
    for (lang, src, want) in cases {
        let got = neutral(*lang, src);
        assert_eq!(&got, want, "\n--- {lang:?} input:\n{src}\n--- got:\n{got}");
    }
}

#[test]
fn python_rust_and_go_snippets_in_neutral_mode() {
    // Python: `self`, dunder methods, built-ins and imported module paths stay; a field
    // assigned on `self` is renamed with its uses. Rust: std paths and trait-protocol
    // methods stay, `Self::f` follows `f`. Go: package names and `sort`/`heap`
    // interface methods stay; the receiver is a variable.
    let cases: &[(Lang, &str, &str)] = &[
        (
            Lang::Python,
            "import math\nfrom pkg.heap import heapify\n\nclass Heap:\n    def __init__(self, items):\n        self.items = list(items)\n        self.size = len(items)\n\n    def push(self, value):\n        self.items.append(value)\n        self._sift(self.size)\n\n    def _sift(self, i):\n        while i > 0:\n            parent = (i - 1) // 2\n            i = parent\n        return math.floor(i)\n\ndef gcd(a, b):\n    # Euclid\n    while b:\n        a, b = b, a % b\n    return heapify([a])\n",
            "import math\nfrom pkg.heap import heapify\n\nclass Class_0:\n    def __init__(self, items):\n        self.items = list(items)\n        self.var_0 = len(items)\n\n    def func_0(self, var_1):\n        self.items.append(var_1)\n        self.func_1(self.var_0)\n\n    def func_1(self, var_2):\n        while var_2 > 0:\n            var_3 = (var_2 - 1) // 2\n            var_2 = var_3\n        return math.floor(var_2)\n\ndef func_2(var_4, var_5):\n\n    while var_5:\n        var_4, var_5 = var_5, var_4 % var_5\n    return heapify([var_4])\n",
        ),
        (
            Lang::Rust,
            "use std::collections::HashMap;\nuse crate::graph::Graph;\n\npub struct Counter { counts: HashMap<String, usize>, total: usize }\n\nimpl Counter {\n    /// Adds one.\n    pub fn add(&mut self, word: &str) -> usize {\n        let entry = self.counts.entry(word.to_string()).or_insert(0);\n        *entry += 1;\n        self.total += 1;\n        Self::check(self.total)\n    }\n    fn check(n: usize) -> usize { n }\n}\n\nfn gcd(mut a: u64, mut b: u64) -> u64 {\n    while b != 0 { let t = b; b = a % b; a = t; }\n    match Some(a) { Some(v) => v, None => 0 }\n}\n",
            "use std::collections::HashMap;\nuse crate::graph::Graph;\n\npub struct Class_0 { var_0: HashMap<String, usize>, var_1: usize }\n\nimpl Class_0 {\n\n    pub fn add(&mut self, var_2: &str) -> usize {\n        let entry = self.var_0.entry(var_2.to_string()).or_insert(0);\n        *entry += 1;\n        self.var_1 += 1;\n        Self::func_0(self.var_1)\n    }\n    fn func_0(var_3: usize) -> usize { var_3 }\n}\n\nfn func_1(mut var_4: u64, mut var_5: u64) -> u64 {\n    while var_5 != 0 { let var_6 = var_5; var_5 = var_4 % var_5; var_4 = var_6; }\n    match Some(var_4) { Some(var_7) => var_7, None => 0 }\n}\n",
        ),
        (
            Lang::Go,
            "package heap\n\nimport \"fmt\"\n\ntype Heap struct {\n\titems []int\n}\n\n// Push adds x.\nfunc (h *Heap) Push(x int) {\n\th.items = append(h.items, x)\n\th.up(len(h.items) - 1)\n}\n\nfunc (h *Heap) up(i int) {\n\tfor i > 0 {\n\t\tparent := (i - 1) / 2\n\t\ti = parent\n\t}\n\tfmt.Println(i)\n}\n",
            "package heap\n\nimport \"fmt\"\n\ntype Class_0 struct {\n\tvar_0 []int\n}\n\n\nfunc (var_1 *Class_0) Push(var_2 int) {\n\tvar_1.var_0 = append(var_1.var_0, var_2)\n\tvar_1.func_0(len(var_1.var_0) - 1)\n}\n\nfunc (var_1 *Class_0) func_0(var_3 int) {\n\tfor var_3 > 0 {\n\t\tvar_4 := (var_3 - 1) / 2\n\t\tvar_3 = var_4\n\t}\n\tfmt.Println(var_3)\n}\n",
        ),
    ];
    for (lang, src, want) in cases {
        let got = neutral(*lang, src);
        assert_eq!(&got, want, "\n--- {lang:?} input:\n{src}\n--- got:\n{got}");
        // The renamed copy parses as cleanly as the original.
        let path = PathBuf::from(format!("x.{}", ext(*lang)));
        assert_eq!(beryl::lang::parse_file(&path, &got, 0).unwrap().error_regions, 0);
    }
}

#[test]
fn comments_kept_on_request() {
    let files = vec![(PathBuf::from("k.c"), "int f(void) { return 1; } /* f */\n".to_string())];
    let out = anonymize_sources(&files, Mode::Neutral, 0, true).unwrap();
    assert_eq!(out.files[0].text, "int func_0(void) { return 1; } /* f */\n");
}

#[test]
fn keywords_library_names_and_literals_stay() {
    let src = "#include <string.h>\nstatic const char *greet(const char *who) {\n  size_t n = strlen(who);\n  if (n > 0 && who[0] == 'g') return \"greet who\";\n  return sizeof(double) > 4 ? NULL : \"0x1F\";\n}\n";
    let got = neutral(Lang::C, src);
    for kept in [
        "#include <string.h>",
        "static const char *",
        "size_t",
        "strlen(",
        "'g'",
        "\"greet who\"",
        "sizeof(double) > 4 ? NULL : \"0x1F\"",
        "return",
    ] {
        assert!(got.contains(kept), "{kept:?} missing in\n{got}");
    }
    assert!(
        !got.contains("greet(") && !got.contains("who[") && !got.contains("strlen(who)") && !got.contains("n >"),
        "{got}"
    );
}

#[test]
fn random_mode_is_deterministic_and_seeded() {
    let src = "int total(int *xs, int n) { int s = 0; for (int i = 0; i < n; i++) s += xs[i]; return s; }\n";
    let a = anonymize_str(Lang::C, src, Mode::Random, 7).unwrap();
    let b = anonymize_str(Lang::C, src, Mode::Random, 7).unwrap();
    let c = anonymize_str(Lang::C, src, Mode::Random, 8).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
    // Same shape as the neutral output, word for word.
    let n = neutral(Lang::C, src);
    let words = |s: &str| {
        s.split(|c: char| !c.is_alphanumeric() && c != '_')
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let (wa, wn) = (words(&a), words(&n));
    assert_eq!(wa.len(), wn.len());
    for (x, y) in wa.iter().zip(&wn) {
        if x != y {
            assert!(y.contains('_'), "{y} was renamed to {x}");
            assert_eq!(x.len(), 8, "{x}");
            assert!(x.starts_with(|c: char| c.is_ascii_lowercase()) && x.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
        }
    }
}

#[test]
fn one_mapping_across_files() {
    let files = vec![
        (PathBuf::from("a.c"), "int helper(int v) { return v * 2; }\n".to_string()),
        (
            PathBuf::from("b.c"),
            "int helper(int v);\nint twice(int w) { return helper(w); }\n".to_string(),
        ),
    ];
    let out = anonymize_sources(&files, Mode::Neutral, 0, false).unwrap();
    assert_eq!(out.files[0].text, "int func_0(int var_0) { return var_0 * 2; }\n");
    assert_eq!(
        out.files[1].text,
        "int func_0(int var_0);\nint func_1(int var_1) { return func_0(var_1); }\n"
    );
    assert_eq!(out.mapping.get("helper"), Some("func_0"));
    let json = serde_json::to_value(&out.mapping).unwrap();
    assert_eq!(json["function"]["twice"], "func_1");
    assert_eq!(json["variable"]["w"], "var_1");
}

#[test]
fn broken_input_does_not_panic_or_get_worse() {
    for (lang, src) in [
        (Lang::C, "int f( { return x +; }\n#define G(a a\nstruct { int"),
        (Lang::Cpp, "template <class T class X { void g() { T::h<; } };"),
        (Lang::Java, "class A { void m( { int x = ; } class"),
        (Lang::Python, "def f(x:\n    return x +\nclass"),
        (Lang::Rust, "fn f(x: u32 { let y = ; match x { 1 => }"),
        (Lang::Go, "package p\nfunc f(x int { y := ; for {"),
        (Lang::C, ""),
    ] {
        let files = vec![(PathBuf::from(format!("x.{}", ext(lang))), src.to_string())];
        let out = anonymize_sources(&files, Mode::Neutral, 0, false).unwrap();
        let f = &out.files[0];
        assert!(
            f.errors_after <= f.errors_before,
            "{src}: {} -> {}",
            f.errors_before,
            f.errors_after
        );
    }
    assert!(anonymize_str(Lang::Pcode, "x", Mode::Neutral, 0).is_err());
}

fn ext(lang: Lang) -> &'static str {
    match lang {
        Lang::C => "c",
        Lang::Cpp => "cpp",
        Lang::Python => "py",
        Lang::Rust => "rs",
        Lang::Go => "go",
        _ => "java",
    }
}

// ---- real corpora --------------------------------------------------------------------

fn ts_language(lang: Lang) -> tree_sitter::Language {
    match lang {
        Lang::C => tree_sitter_c::LANGUAGE.into(),
        Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        Lang::Python => tree_sitter_python::LANGUAGE.into(),
        Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
        Lang::Go => tree_sitter_go::LANGUAGE.into(),
        _ => tree_sitter_java::LANGUAGE.into(),
    }
}

/// Identifier tokens of a source text.
fn identifiers(lang: Lang, src: &str) -> Vec<String> {
    let mut p = tree_sitter::Parser::new();
    p.set_language(&ts_language(lang)).unwrap();
    let tree = p.parse(src, None).unwrap();
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        if n.child_count() == 0
            && matches!(
                n.kind(),
                "identifier" | "field_identifier" | "type_identifier" | "namespace_identifier" | "statement_identifier"
                    | "shorthand_field_identifier"
            )
        {
            out.push(src[n.byte_range()].to_string());
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    out
}

/// `n` files of the corpus with one of `exts`, spread evenly over its sorted file list.
fn sample(pkg: &str, exts: &[&str], n: usize) -> (PathBuf, Vec<(PathBuf, String)>) {
    let root = fetch(pkg).unwrap_or_else(|e| panic!("fetching {pkg}: {e}"));
    let opts = WalkOptions::default();
    let (files, _) = discover(std::slice::from_ref(&root), &opts);
    let files: Vec<PathBuf> = files
        .into_iter()
        .filter(|p| p.extension().and_then(|e| e.to_str()).is_some_and(|e| exts.contains(&e)))
        .collect();
    assert!(files.len() >= n, "{pkg}: only {} files", files.len());
    let step = files.len() / n;
    let picked = files
        .iter()
        .step_by(step)
        .filter_map(|p| read_source(p, &opts).ok().map(|s| (p.clone(), s)))
        .take(n)
        .collect();
    (root, picked)
}

fn write_tree(dir: &Path, root: &Path, files: impl Iterator<Item = (PathBuf, String)>) {
    for (path, text) in files {
        let dest = dir.join(path.strip_prefix(root).unwrap());
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::write(dest, text).unwrap();
    }
}

fn check_real(pkg: &str, exts: &[&str], n: usize) {
    let (root, files) = sample(pkg, exts, n);
    let t0 = std::time::Instant::now();
    let out: Anonymized = anonymize_sources(&files, Mode::Neutral, 0, false).unwrap();
    eprintln!(
        "{pkg}: {} files, {} names renamed in {:.2} s",
        files.len(),
        out.mapping.len(),
        t0.elapsed().as_secs_f64()
    );
    assert!(out.mapping.len() > 50, "{pkg}: only {} names renamed", out.mapping.len());

    let (mut renamed, mut kept, mut errors_before, mut errors_after) = (0, 0, 0, 0);
    for ((path, src), f) in files.iter().zip(&out.files) {
        // Error regions as beryl's own front end counts them (same `.h` language choice).
        let before = beryl::lang::parse_file(path, src, 0).unwrap().error_regions;
        let after = beryl::lang::parse_file(path, &f.text, 0).unwrap();
        assert!(
            after.error_regions <= before,
            "{}: {} error regions, {} before",
            path.display(),
            after.error_regions,
            before
        );
        errors_before += before;
        errors_after += after.error_regions;

        // No renamed name survives as a token, except where the library says it left one.
        let survivors: Vec<String> = identifiers(f.lang, &f.text)
            .into_iter()
            .filter(|w| out.mapping.get(w).is_some())
            .collect();
        assert!(
            survivors.len() <= f.kept_by_context + f.kept_near_errors,
            "{}: {} declared names survive ({} left on purpose): {:?}",
            path.display(),
            survivors.len(),
            f.kept_by_context + f.kept_near_errors,
            &survivors[..survivors.len().min(20)]
        );
        renamed += f.renamed;
        kept += f.kept_by_context + f.kept_near_errors;
    }
    eprintln!("{pkg}: {renamed} tokens renamed, {kept} left by rule; error regions {errors_before} -> {errors_after}");
    assert!(kept * 20 < renamed, "{pkg}: {kept} tokens left alone vs {renamed} renamed");

    // The ICFG of the anonymized files has the same functions and nodes.
    let tmp = tempfile::tempdir().unwrap();
    let (orig_dir, anon_dir) = (tmp.path().join("orig"), tmp.path().join("anon"));
    write_tree(&orig_dir, &root, files.iter().cloned());
    write_tree(
        &anon_dir,
        &root,
        files.iter().zip(&out.files).map(|((p, _), f)| (p.clone(), f.text.clone())),
    );
    let a = load(&[orig_dir], &WalkOptions::default());
    let b = load(&[anon_dir], &WalkOptions::default());
    assert_eq!(a.icfg.files.len(), b.icfg.files.len(), "{pkg}: files");
    assert_eq!(a.icfg.functions.len(), b.icfg.functions.len(), "{pkg}: functions");
    assert_eq!(a.icfg.graph.node_count(), b.icfg.graph.node_count(), "{pkg}: nodes");
    // Calls resolve alike: names map one to one and keep their first letter's case.
    assert_eq!(a.icfg.graph.edge_count(), b.icfg.graph.edge_count(), "{pkg}: edges");
    eprintln!(
        "{pkg}: ICFG {} functions, {} nodes, {} edges",
        a.icfg.functions.len(),
        a.icfg.graph.node_count(),
        a.icfg.graph.edge_count()
    );

    // Function names of the original ICFG that are still there: only kept names (main,
    // overrides by list) may remain.
    let is_ident = |n: &&str| n.chars().all(|c| c.is_alphanumeric() || c == '_');
    let orig_names: HashSet<&str> = a.icfg.functions.iter().map(|f| f.meta.name.as_str()).filter(is_ident).collect();
    let anon_names: HashSet<&str> = b.icfg.functions.iter().map(|f| f.meta.name.as_str()).collect();
    let mut still: Vec<&&str> = orig_names.intersection(&anon_names).collect();
    still.sort();
    eprintln!("{pkg}: function names not renamed: {still:?}");
    assert!(
        still.len() * 10 < orig_names.len(),
        "{pkg}: {} of {} function names survive",
        still.len(),
        orig_names.len()
    );
}

#[test]
fn real_igraph_c() {
    check_real("igraph", &["c"], 30);
}

#[test]
fn real_yaml_cpp() {
    check_real("yaml-cpp", &["cpp", "h"], 20);
}

#[test]
fn real_commons_math3_java() {
    check_real("commons-math3", &["java"], 30);
}

#[test]
fn real_sympy_python() {
    check_real("sympy", &["py"], 30);
}

#[test]
fn real_num_bigint_rust() {
    check_real("crate:num-bigint@0.4.3", &["rs"], 12);
}

#[test]
fn real_gods_go() {
    check_real("golang-github-emirpasic-gods", &["go"], 30);
}

/// `beryl anonymize --out` marks its tree, `beryl index` records it, and search then reads
/// no file names there: the copy keeps `floyd_warshall.c`, which would name the answer.
#[test]
fn an_anonymized_tree_is_indexed_as_one() {
    let root = fetch("igraph").unwrap().join("src/paths");
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    for f in ["floyd_warshall.c", "bellman_ford.c"] {
        std::fs::copy(root.join(f), src.join(f)).unwrap();
    }
    let beryl = |args: &[&std::ffi::OsStr]| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_beryl")).args(args).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let query = beryl::repo_path("queries/floyd-warshall.p");
    let anon = tmp.path().join("anon");
    beryl(&["anonymize".as_ref(), src.as_os_str(), "--out".as_ref(), anon.as_os_str()]);
    assert!(anon.join("floyd_warshall.c").is_file() && beryl::anonymize::is_marked(&anon));
    for (tree, anonymized) in [(&src, false), (&anon, true)] {
        let index = tmp.path().join(format!("index-{anonymized}"));
        beryl(&["index".as_ref(), tree.as_os_str(), "--index".as_ref(), index.as_os_str()]);
        let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(index.join("current/meta.json")).unwrap()).unwrap();
        assert_eq!(meta["anonymized"], anonymized);
        let out = beryl(&["search".as_ref(), "--pseudo".as_ref(), query.as_os_str(), "--index".as_ref(), index.as_os_str(), "--top".as_ref(), "3".as_ref()]);
        assert!(out.contains("floyd_warshall.c"), "{out}");
        assert_eq!(out.contains("why: file name:"), !anonymized, "{out}");
    }
}
