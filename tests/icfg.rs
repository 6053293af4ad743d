//! Call resolution across files and the interprocedural edges it adds.

use beryl::corpus::{load, WalkOptions};
use beryl::graph::{EdgeKind, Icfg};
use std::path::PathBuf;

fn corpus(files: &[(&str, &str)]) -> (tempfile::TempDir, Icfg) {
    let d = tempfile::tempdir().unwrap();
    for (name, src) in files {
        let p = d.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, src).unwrap();
    }
    let c = load(&[d.path().to_path_buf()], &WalkOptions::default());
    (d, c.icfg)
}

/// Qualified names of the callees of every call named `callee` inside function `caller`.
fn targets(icfg: &Icfg, caller: &str, callee: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for site in &icfg.calls {
        let node = &icfg.graph[site.node];
        let f = &icfg.functions[node.function as usize];
        if f.meta.qualified() != caller || node.calls[site.call as usize].name != callee {
            continue;
        }
        let mut t: Vec<String> = site
            .targets
            .iter()
            .map(|&t| {
                let g = &icfg.functions[t as usize];
                format!("{}@{}", g.meta.qualified(), icfg.files[g.meta.file as usize].path.file_name().unwrap().to_string_lossy())
            })
            .collect();
        t.sort();
        out.push(t);
    }
    out
}

#[test]
fn c_static_functions_stay_in_their_file() {
    let (_d, icfg) = corpus(&[
        ("a.c", "static int helper(int x) { return x; }\nint run(void) { return helper(1); }\n"),
        ("b.c", "static int helper(int x) { return 2 * x; }\nint run(void);\nint use(void) { return helper(2) + run(); }\n"),
        ("c.c", "int other(void) { return helper(3); }\n"),
    ]);
    assert_eq!(targets(&icfg, "run", "helper"), [["helper@a.c"]]);
    assert_eq!(targets(&icfg, "use", "helper"), [["helper@b.c"]]);
    assert_eq!(targets(&icfg, "use", "run"), [["run@a.c"]]);
    // A static function of another file is invisible: an external target.
    assert_eq!(targets(&icfg, "other", "helper"), [Vec::<String>::new()]);
}

#[test]
fn arity_selects_overloads_and_default_arguments() {
    let (_d, icfg) = corpus(&[(
        "o.cpp",
        "int f(int a) { return a; }\nint f(int a, int b) { return a + b; }\nint h(int a, int b = 2, int c = 3) { return a; }\n\
         int g() { return f(1) + f(1, 2) + h(1) + h(1, 2, 3) + f(1, 2, 3); }\n",
    )]);
    assert_eq!(targets(&icfg, "g", "f"), [vec!["f@o.cpp"], vec!["f@o.cpp"], vec![]]);
    let arities: Vec<Option<u32>> = icfg.calls.iter().filter(|s| !s.targets.is_empty()).map(|s| icfg.functions[s.targets[0] as usize].meta.arity).collect();
    assert_eq!(arities, [Some(1), Some(2), Some(3), Some(3)]);
    assert_eq!(targets(&icfg, "g", "h"), [["h@o.cpp"], ["h@o.cpp"]]);
}

#[test]
fn cpp_member_and_qualified_calls() {
    let (_d, icfg) = corpus(&[(
        "m.cpp",
        "namespace n { int free_fn(int x) { return x; } }\n\
         struct A { int v(int x) { return x; } int w() { return this->v(1) + v(2); } };\n\
         int call(A* a) { return n::free_fn(1) + a->v(3); }\n",
    )]);
    assert_eq!(targets(&icfg, "A::w", "v"), [["A::v@m.cpp"], ["A::v@m.cpp"]]);
    assert_eq!(targets(&icfg, "call", "free_fn"), [["n::free_fn@m.cpp"]]);
    // `a->v(3)` may dispatch virtually: not guessed.
    assert_eq!(targets(&icfg, "call", "v"), [Vec::<String>::new()]);
}

#[test]
fn java_prefers_same_class_then_package_then_imports() {
    let (_d, icfg) = corpus(&[
        ("p/A.java", "package p;\nclass A {\n  void go() { help(); B.stat(); new B(); x.help(); }\n  void help() { }\n}\n"),
        ("p/B.java", "package p;\nclass B {\n  B() { }\n  void help() { }\n  static void stat() { }\n}\n"),
        ("q/B.java", "package q;\npublic class B {\n  public B() { }\n  public static void stat() { }\n}\n"),
        ("r/C.java", "package r;\nimport q.B;\nclass C {\n  void go() { B.stat(); help(); }\n}\n"),
    ]);
    assert_eq!(targets(&icfg, "p.A.go", "help"), [vec!["p.A.help@A.java"], vec![]]);
    assert_eq!(targets(&icfg, "p.A.go", "stat"), [["p.B.stat@B.java"]]);
    assert_eq!(targets(&icfg, "p.A.go", "B"), [["p.B.B@B.java"]]);
    let r: Vec<Vec<String>> = targets(&icfg, "r.C.go", "stat");
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].len(), 1);
    assert!(r[0][0].starts_with("q.B.stat"), "{r:?}");
    assert_eq!(targets(&icfg, "r.C.go", "help"), [Vec::<String>::new()]);
}

#[test]
fn call_and_return_edges_join_caller_and_callee() {
    let (_d, icfg) = corpus(&[("j.c", "int sq(int x) { return x * x; }\nint main(void) { int y = sq(3); y++; return y; }\n")]);
    let sq = icfg.functions.iter().find(|f| f.meta.name == "sq").unwrap();
    let call_node = icfg.graph.node_indices().find(|&n| &*icfg.graph[n].text == "int y = sq(3);").unwrap();
    let after = icfg.graph.node_indices().find(|&n| &*icfg.graph[n].text == "y++;").unwrap();
    assert!(icfg.graph.edges_connecting(call_node, sq.entry).any(|e| *e.weight() == EdgeKind::Call));
    assert!(icfg.graph.edges_connecting(sq.exit, after).any(|e| *e.weight() == EdgeKind::Return));
    let returns = icfg.graph.edges(sq.exit).filter(|e| *e.weight() == EdgeKind::Return).count();
    assert_eq!(returns, 1);
}

#[test]
fn bounded_distances() {
    let (_d, icfg) = corpus(&[("k.c", "int f(int a) { a++; a++; a++; a++; return a; }\n")]);
    let f = &icfg.functions[0];
    let d = icfg.distances_within(f.entry, 2, false);
    assert_eq!(d.len(), 3, "ENTRY and the first two statements");
    assert_eq!(icfg.shortest_path(f.entry, f.exit, 10, false), Some(6));
    assert_eq!(icfg.shortest_path(f.exit, f.entry, 10, false), None);
    assert_eq!(icfg.shortest_path(f.exit, f.entry, 10, true), Some(6));
    assert_eq!(icfg.shortest_path(f.entry, f.exit, 3, false), None);
}

#[test]
fn bad_input_is_skipped_with_reasons() {
    let d = tempfile::tempdir().unwrap();
    let w = |n: &str, b: &[u8]| std::fs::write(d.path().join(n), b).unwrap();
    w("bin.c", b"int x;\0\0\0binary");
    w("latin1.c", b"/* caf\xe9 */ int lat(void) { return 0; }\n");
    w("garbage.c", b"int g\xff\x81\x02(void);\n");
    w("gen.c", b"// Code generated by tool. DO NOT EDIT.\nint g(void) { return 1; }\n");
    w("gdefs.h", b"#ifndef GDEFS_H\n#define GDEFS_H\n\n/* generated by mkdefs; do not edit */\nint y(void);\n#endif\n");
    w("lexer.c", b"\n#define  YY_INT_ALIGNED short int\n\n/* A lexical scanner generated by flex */\n\nint yylex(void) { return 0; }\n");
    w("parser.c", b"/* A Bison parser, made by GNU Bison 3.8.2.  */\n\n/* Bison implementation for Yacc-like parsers in C */\nint yyparse(void) { return 0; }\n");
    // Markers below the leading comments are not about the file: an IDE's stub comment, a
    // class comment, and the annotation an anonymized copy (comments removed) brings to the top.
    w("stub.c", b"int stub(void) {\n    // TODO Auto-generated method stub\n    return 0;\n}\n");
    w("Mult.java", b"/* License */\npackage p;\n\nimport javax.annotation.Generated;\n\n/** Generated from a template: DO NOT MODIFY. */\n@Generated(\"p.Gen\")\npublic class Mult { int mult() { return 1; } }\n");
    w("big.c", &vec![b'/'; 4096]);
    w("ok.c", b"int ok(void) { return 2; }\n");
    w("ignored.c", b"int ig(void) { return 3; }\n");
    w(".gitignore", b"ignored.c\n");
    std::fs::create_dir(d.path().join(".git")).unwrap();
    let opts = WalkOptions { max_bytes: 1000, respect_ignore: true, ..WalkOptions::default() };
    let c = load(&[d.path().to_path_buf()], &opts);
    let reasons: std::collections::BTreeMap<String, usize> = c.skipped_by_reason();
    assert_eq!(reasons.get("binary"), Some(&1));
    assert_eq!(reasons.get("invalid_utf8"), Some(&1));
    assert_eq!(reasons.get("generated"), Some(&4));
    assert_eq!(reasons.get("too_large"), Some(&1));
    let mut names: Vec<&str> = c.icfg.functions.iter().map(|f| f.meta.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["lat", "mult", "ok", "stub"], "Latin-1 is read, not skipped");
    let all = load(&[d.path().to_path_buf()], &WalkOptions { max_bytes: 1000, respect_ignore: false, ..WalkOptions::default() });
    assert!(all.icfg.functions.iter().any(|f| f.meta.name == "ig"));
}

#[cfg(unix)]
#[test]
fn symlinks_leaving_the_root_are_not_followed() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("out.c"), "int out(void) { return 0; }\n").unwrap();
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("in.c"), "int in(void) { return 0; }\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("out.c"), root.path().join("link.c")).unwrap();
    std::os::unix::fs::symlink(root.path().join("in.c"), root.path().join("inlink.c")).unwrap();
    let c = load(&[PathBuf::from(root.path())], &WalkOptions::default());
    let names: Vec<&str> = c.icfg.functions.iter().map(|f| f.meta.name.as_str()).collect();
    assert!(!names.contains(&"out"), "{names:?}");
    assert!(names.contains(&"in"));
    assert_eq!(c.skipped_by_reason().get("symlink_outside_root"), Some(&1));
}

#[test]
fn python_resolves_self_imports_modules_and_constructors() {
    let (_d, icfg) = corpus(&[
        (
            "pkg/heap.py",
            "class Heap:\n    def __init__(self, items):\n        self.a = list(items)\n        self._sift(0)\n    def _sift(this, i):\n        return i\n\ndef heapify(xs):\n    return Heap(xs)\n",
        ),
        (
            "pkg/graph.py",
            "from pkg.heap import heapify\nimport pkg.heap as hp\n\ndef helper(x):\n    return x\n\ndef dijkstra(g, s):\n    def relax(u):\n        return helper(u)\n    h = heapify(g)\n    hp.heapify(g)\n    other.heapify(g)\n    return relax(s)\n",
        ),
    ]);
    assert_eq!(targets(&icfg, "Heap.__init__", "_sift"), [["Heap._sift@heap.py"]]);
    assert_eq!(targets(&icfg, "heapify", "Heap"), [["Heap.__init__@heap.py"]]);
    assert_eq!(targets(&icfg, "dijkstra", "heapify"), [vec!["heapify@heap.py"], vec!["heapify@heap.py"], vec![]]);
    assert_eq!(targets(&icfg, "dijkstra", "relax"), [["dijkstra.relax@graph.py"]]);
    assert_eq!(targets(&icfg, "dijkstra.relax", "helper"), [["helper@graph.py"]]);
}

#[test]
fn rust_resolves_self_paths_uses_and_modules() {
    let (_d, icfg) = corpus(&[
        (
            "src/graph/mod.rs",
            "pub struct Graph;\nimpl Graph {\n    pub fn new() -> Self { Graph }\n    pub fn bfs(&self) -> usize { self.visit(0) + Self::helper() }\n    fn visit(&self, u: usize) -> usize { u }\n    fn helper() -> usize { 1 }\n}\npub fn degree(g: &Graph) -> usize { g.visit(1) }\n",
        ),
        (
            "src/main.rs",
            "use crate::graph::degree;\nuse crate::graph::Graph;\nfn main() { let g = Graph::new(); degree(&g); graph::degree(&g); local(); }\nfn local() {}\n",
        ),
    ]);
    assert_eq!(targets(&icfg, "Graph::bfs", "visit"), [["Graph::visit@mod.rs"]]);
    assert_eq!(targets(&icfg, "Graph::bfs", "helper"), [["Graph::helper@mod.rs"]]);
    // A method on a value of unknown type stays unresolved.
    assert_eq!(targets(&icfg, "degree", "visit"), [Vec::<String>::new()]);
    assert_eq!(targets(&icfg, "main", "new"), [["Graph::new@mod.rs"]]);
    assert_eq!(targets(&icfg, "main", "degree"), [["degree@mod.rs"], ["degree@mod.rs"]]);
    assert_eq!(targets(&icfg, "main", "local"), [["local@main.rs"]]);
}

#[test]
fn go_resolves_receivers_packages_and_imports() {
    let (_d, icfg) = corpus(&[
        ("heap/heap.go", "package heap\n\ntype H struct{}\n\nfunc (h *H) Push(x int) { h.up(x) }\nfunc (h *H) up(i int) {}\nfunc New() *H { return nil }\n"),
        ("heap/util.go", "package heap\n\nfunc Fix(h *H) { h.up(0); New() }\n"),
        ("main.go", "package main\n\nimport hp \"example.com/x/heap\"\n\nfunc main() { h := hp.New(); h.Push(1); New() }\n"),
    ]);
    assert_eq!(targets(&icfg, "H.Push", "up"), [["H.up@heap.go"]]);
    assert_eq!(targets(&icfg, "Fix", "New"), [["New@heap.go"]]);
    assert_eq!(targets(&icfg, "Fix", "up"), [Vec::<String>::new()]);
    assert_eq!(targets(&icfg, "main", "New"), [vec!["New@heap.go"], vec![]]);
    assert_eq!(targets(&icfg, "main", "Push"), [Vec::<String>::new()]);
}
