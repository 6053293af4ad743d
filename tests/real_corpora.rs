//! ICFGs of real projects from Debian source packages (downloaded once into the cache by
//! `beryl::corpus::fetch`). Invariants every graph must satisfy, on real code.

use beryl::corpus::{fetch::fetch, load, Corpus, WalkOptions};
use beryl::graph::{EdgeKind, Lang, NodeKind};
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use petgraph::Direction;

fn corpus(pkg: &str) -> Corpus {
    let root = fetch(pkg).unwrap_or_else(|e| panic!("fetching {pkg}: {e}"));
    load(&[root], &WalkOptions::default())
}

fn check_invariants(c: &Corpus, lang: Lang, min_functions: usize) {
    let g = &c.icfg.graph;
    let s = c.stats();
    eprintln!("{}", beryl::report::graph::stats_text(&s));
    assert!(s.files_in(lang) > 50, "too few {lang:?} files: {:?}", s.files_by_lang);
    assert!(c.icfg.functions.len() >= min_functions, "{} functions", c.icfg.functions.len());

    // More than 90 % of the source files are parsed and contribute CFGs.
    let parsed = c.icfg.files.len() as f64 / (c.icfg.files.len() + c.skipped.len()) as f64;
    assert!(parsed > 0.9, "only {:.1} % of files parsed", parsed * 100.0);

    for (i, f) in c.icfg.functions.iter().enumerate() {
        let nodes = c.icfg.function_nodes(i as u32);
        let kinds: Vec<NodeKind> = nodes.clone().map(|n| g[NodeIndex::new(n)].kind).collect();
        assert_eq!(kinds.iter().filter(|&&k| k == NodeKind::Entry).count(), 1, "{}", f.meta.qualified());
        assert_eq!(kinds.iter().filter(|&&k| k == NodeKind::Exit).count(), 1, "{}", f.meta.qualified());
        assert_eq!(g[f.entry].kind, NodeKind::Entry);
        assert_eq!(g[f.exit].kind, NodeKind::Exit);
        let file = &c.icfg.files[f.meta.file as usize];
        for n in nodes {
            let idx = NodeIndex::new(n);
            let node = &g[idx];
            assert_eq!(node.function as usize, i);
            assert!(node.bytes.0 <= node.bytes.1 && node.bytes.1 as u64 <= file.bytes, "span outside {}", file.path.display());
            assert!(node.lines.0 >= 1 && node.lines.0 <= node.lines.1 && node.lines.1 <= file.lines + 1);
            if node.kind != NodeKind::Exit {
                let intra = g
                    .edges_directed(idx, Direction::Outgoing)
                    .any(|e| !matches!(e.weight(), EdgeKind::Call | EdgeKind::Return));
                assert!(intra, "node without successor in {} ({}:{}): {:?}", f.meta.qualified(), file.path.display(), node.lines.0, node.text);
            }
        }
    }
    assert!(s.resolved_call_sites > 0 && s.edges_by_kind["call"] > 0 && s.edges_by_kind["return"] > 0);
}

fn calls_between(c: &Corpus, caller: &str, callee: &str) -> bool {
    c.icfg.functions.iter().filter(|f| f.meta.name == caller).any(|f| {
        c.icfg.function_nodes(c.icfg.graph[f.entry].function).any(|n| {
            c.icfg
                .graph
                .edges(NodeIndex::new(n))
                .any(|e| *e.weight() == EdgeKind::Call && c.icfg.functions[c.icfg.graph[e.target()].function as usize].meta.name == callee)
        })
    })
}

#[test]
fn igraph_c() {
    let c = corpus("igraph");
    check_invariants(&c, Lang::C, 3000);
    assert!(calls_between(&c, "igraph_distances_floyd_warshall", "igraph_vcount"));
}

#[test]
fn yaml_cpp() {
    let c = corpus("yaml-cpp");
    check_invariants(&c, Lang::Cpp, 1000);
}

#[test]
fn commons_math3_java() {
    let c = corpus("commons-math3");
    check_invariants(&c, Lang::Java, 10000);
    // A constructor call to a class of the same package resolves to its constructor.
    assert!(calls_between(&c, "getSolver", "Solver"));
    // A static call through an imported class of another package: `FastMath.sqrt(...)`.
    assert!(calls_between(&c, "getNorm", "sqrt"));
    // OptimumImpl is written by hand; a comment inside its class, `/* auto-generated
    // implementations */`, says nothing about the file.
    assert_eq!(c.skipped_by_reason().get("generated"), None, "{:?}", c.skipped.iter().map(|s| &s.path).collect::<Vec<_>>());
    assert!(c.icfg.functions.iter().any(|f| f.meta.name == "getRMS" && c.icfg.files[f.meta.file as usize].path.ends_with("OptimumImpl.java")));
}

/// As [`calls_between`], with the caller's and the callee's files named by their ends.
fn calls_across(c: &Corpus, caller: (&str, &str), callee: (&str, &str)) -> bool {
    let in_file = |f: &beryl::graph::Function, name: &str, file: &str| {
        f.meta.name == name && c.icfg.files[f.meta.file as usize].path.ends_with(file)
    };
    c.icfg.functions.iter().filter(|f| in_file(f, caller.0, caller.1)).any(|f| {
        c.icfg.function_nodes(c.icfg.graph[f.entry].function).any(|n| {
            c.icfg.graph.edges(NodeIndex::new(n)).any(|e| {
                *e.weight() == EdgeKind::Call
                    && in_file(&c.icfg.functions[c.icfg.graph[e.target()].function as usize], callee.0, callee.1)
            })
        })
    })
}

#[test]
fn algorithms_python() {
    let c = corpus("pypi:algorithms==0.1.4");
    check_invariants(&c, Lang::Python, 600);
    // `self.dfs_util(i, i)` in a method of the same class.
    assert!(calls_between(&c, "transitive_closure", "dfs_util"));
    // `DirectedGraph(d)` after `from algorithms.graph.graph import DirectedGraph` runs its
    // `__init__` in another file.
    assert!(calls_across(&c, ("__init__", "graph/tarjan.py"), ("__init__", "graph/graph.py")));
}

#[test]
fn pathfinding_rust() {
    let c = corpus("crate:pathfinding@4.3.0");
    check_invariants(&c, Lang::Rust, 300);
    // The recursive `visit(…)?;` of the topological sort calls itself, and its `?` leaves
    // the function.
    assert!(calls_across(&c, ("visit", "directed/topological_sort.rs"), ("visit", "directed/topological_sort.rs")));
    let g = &c.icfg.graph;
    let visit = c.icfg.functions.iter().find(|f| f.meta.name == "visit" && c.icfg.files[f.meta.file as usize].path.ends_with("directed/topological_sort.rs")).unwrap();
    let question = c.icfg.function_nodes(g[visit.entry].function).map(NodeIndex::new).find(|&n| g[n].text.starts_with("visit(&n,")).expect("the recursive call");
    assert!(g.edges(question).any(|e| e.target() == visit.exit), "`?` has no edge out of the function");
}

#[test]
fn gods_go() {
    let c = corpus("golang-github-emirpasic-gods");
    check_invariants(&c, Lang::Go, 500);
    // `t.put(…)` on the receiver, and `utils.ToString(…)` through the import of another package.
    assert!(calls_across(&c, ("Put", "trees/avltree/avltree.go"), ("put", "trees/avltree/avltree.go")));
    assert!(calls_across(&c, ("ToJSON", "trees/avltree/serialization.go"), ("ToString", "utils/utils.go")));
}
