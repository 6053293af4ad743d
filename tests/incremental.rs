//! An index brought up to date file by file answers as a fresh index of the same tree: on
//! a copy of igraph, after a sequence of edits (a loop edited, a function added that calls
//! another, a file deleted, a function renamed, a Java file added), every `queries/`
//! pseudocode query and a set of English queries get the same top 10 from the updated
//! index as from a full build.
//!
//! With the exact layout (`Flat`: full vectors, no projection) the two hold the same graph,
//! text and vectors, up to float rounding: the GCN's, and the function encoder's, whose
//! bf16 arithmetic depends on which texts share a batch (an update encodes a handful, a
//! full build thousands), and the GCN's matrix products, whose rounding depends on how many
//! rows go through them at once. Node similarities then differ in the sixth decimal, which
//! can move a candidate across a rank the scorer reads (a pool rank, the nearest nodes of
//! a query node): the same top 10s in the same order, scores within 0.05 (fragments closer
//! than that may trade places). The default layout
//! (IVF lists with product-quantized codes) is trained by each full build on its own
//! vectors, while an update keeps the first build's quantizers, so there the top 10 may
//! differ near their ends: the bound is tested.

use beryl::corpus::fetch::fetch;
use beryl::features::{CacheAt, TextEncoders};
use beryl::index::{self, BuildReport, Index, IndexOptions};
use beryl::pcode::Classifier;
use beryl::search::hybrid::{Method, Ranker};
use beryl::search::{self, Fragment, SearchOptions};
use std::path::{Path, PathBuf};

fn model() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models/default")
}

fn build(root: &Path, dir: &Path, enc: &TextEncoders, factory: Option<&str>) -> BuildReport {
    build_patching(root, dir, enc, factory, index::PATCH_FROM)
}

/// [`build`], updates patching the files in place from `patch_from` indexed nodes on.
/// Each update checks its rows against an adjacency rebuilt whole.
fn build_patching(root: &Path, dir: &Path, enc: &TextEncoders, factory: Option<&str>, patch_from: usize) -> BuildReport {
    let opts = IndexOptions { factory: factory.map(str::to_string), patch_from, check_update: true, ..IndexOptions::default() };
    index::build(&[root.to_path_buf()], dir, &opts, &model(), enc, &mut |_, _, _| {}).expect("index")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&p, &t);
        } else if e.file_type().unwrap().is_file() {
            std::fs::copy(&p, &t).unwrap();
        }
    }
}

fn edit(path: &Path, from: &str, to: &str) {
    let s = std::fs::read_to_string(path).unwrap();
    assert!(s.contains(from), "{} lacks {from:?}", path.display());
    std::fs::write(path, s.replacen(from, to, 1)).unwrap();
}

const ENGLISH: [&str; 6] = [
    "all-pairs shortest path lengths with the Floyd-Warshall algorithm",
    "single-source shortest paths with negative edge weights",
    "breadth-first search from a source vertex",
    "minimum spanning tree of a weighted graph",
    "maximum flow between two vertices",
    "sort vertices by degree",
];

/// Top 10 of every query: (query, [(fragment key, score)]).
type Answers = Vec<(String, Vec<(String, f64)>)>;

fn answers(dir: &Path, enc: &TextEncoders) -> Answers {
    let mut idx = Index::open(dir, Some(&model()), 32).expect("open");
    let opts = SearchOptions { top: 10, ..SearchOptions::default() };
    let ranker = Ranker::load(&Ranker::default_path()).expect("the shipped scorer");
    let key = |frags: &[Fragment]| -> Vec<(String, f64)> {
        frags
            .iter()
            .take(10)
            .map(|f| {
                let spans: Vec<String> = f.spans.iter().map(|s| format!("{}:{}:{}-{}", s.path, s.function, s.lines.0, s.lines.1)).collect();
                (spans.join(" + "), f.score)
            })
            .collect()
    };
    let mut out = Vec::new();
    let qdir = Path::new(env!("CARGO_MANIFEST_DIR")).join("queries");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&qdir).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "p")).collect();
    files.sort();
    for p in files {
        let src = std::fs::read_to_string(&p).unwrap();
        let clf = || Classifier::load(&Classifier::default_path());
        let r = search::hybrid::search(&mut idx, enc, &src, &p, clf, &opts, Method::Hybrid, Some(&ranker)).unwrap();
        out.push((p.file_name().unwrap().to_string_lossy().into_owned(), key(&r.fragments)));
    }
    for q in ENGLISH {
        let r = search::natural(&mut idx, enc, q, &opts).unwrap();
        out.push((q.to_string(), key(&r.fragments)));
    }
    out
}

/// Applies the edits one at a time, updating the indexes `dirs` (folder, layout, nodes
/// from which updates patch) after each.
fn edit_and_update(tree: &Path, dirs: &[(&Path, Option<&str>, usize)], enc: &TextEncoders) {
    let paths = tree.join("src/paths");
    let steps: Vec<(&str, Box<dyn Fn()>)> = vec![
        (
            "a loop edited",
            Box::new(|| edit(&paths.join("floyd_warshall.c"), "for (igraph_integer_t e=0; e < no_of_edges; e++) {", "for (igraph_integer_t e = no_of_edges - 1; e >= 0; e--) {")),
        ),
        (
            "a function added that calls another",
            Box::new(|| {
                let p = paths.join("johnson.c");
                let mut s = std::fs::read_to_string(&p).unwrap();
                s.push_str(
                    "\nigraph_error_t igraph_i_all_pairs_johnson(const igraph_t *graph, igraph_matrix_t *res, const igraph_vector_t *weights) {\n    \
                     if (igraph_vcount(graph) == 0) {\n        return IGRAPH_SUCCESS;\n    }\n    \
                     return igraph_distances_johnson(graph, res, igraph_vss_all(), igraph_vss_all(), weights);\n}\n",
                );
                std::fs::write(&p, s).unwrap();
            }),
        ),
        ("a file deleted", Box::new(|| std::fs::remove_file(paths.join("widest_paths.c")).unwrap())),
        (
            "a function renamed",
            Box::new(|| {
                edit(&paths.join("bellman_ford.c"), "igraph_error_t igraph_distances_bellman_ford(", "igraph_error_t igraph_distances_bellman_ford_all(");
            }),
        ),
        (
            "a Java file added",
            Box::new(|| {
                std::fs::write(
                    tree.join("Bfs.java"),
                    "package demo;\n\nimport java.util.ArrayDeque;\nimport java.util.List;\n\n/** Breadth-first search over adjacency lists. */\n\
                     public class Bfs {\n    /** Distances in edges from the source; -1 where unreachable. */\n    \
                     public static int[] distances(List<List<Integer>> adj, int source) {\n        int[] dist = new int[adj.size()];\n        \
                     java.util.Arrays.fill(dist, -1);\n        ArrayDeque<Integer> queue = new ArrayDeque<>();\n        dist[source] = 0;\n        \
                     queue.add(source);\n        while (!queue.isEmpty()) {\n            int u = queue.poll();\n            for (int v : adj.get(u)) {\n                \
                     if (dist[v] == -1) {\n                    dist[v] = dist[u] + 1;\n                    queue.add(v);\n                }\n            }\n        }\n        \
                     return dist;\n    }\n}\n",
                )
                .unwrap();
            }),
        ),
    ];
    for (what, step) in steps {
        step();
        for &(dir, factory, patch_from) in dirs {
            let r = build_patching(tree, dir, enc, factory, patch_from);
            assert!(r.updated, "{what}: not an update ({:?})", r.full_reason);
            assert!(r.changed_files + r.new_files + r.removed_files == 1, "{what}: {r:?}");
            eprintln!("{what}: updated in {:.2} s, {} nodes recomputed", r.total_seconds, r.recomputed_nodes);
        }
    }
}

#[test]
fn an_updated_index_answers_as_a_fresh_one() {
    let src = fetch("igraph").unwrap();
    let work = tempfile::tempdir().unwrap();
    let tree = work.path().join("igraph");
    copy_tree(&src, &tree);
    let enc = TextEncoders::defaults(None, CacheAt::Default);
    let (flat, ivf) = (work.path().join("flat"), work.path().join("ivf"));
    build(&tree, &flat, &enc, Some("Flat"));
    let first = build(&tree, &ivf, &enc, None);
    // The same, each update written as a patch over the first build's files.
    let (flat_patched, ivf_patched) = (work.path().join("flat-patched"), work.path().join("ivf-patched"));
    build(&tree, &flat_patched, &enc, Some("Flat"));
    build(&tree, &ivf_patched, &enc, None);
    edit_and_update(&tree, &[(&flat, Some("Flat"), usize::MAX), (&ivf, None, usize::MAX), (&flat_patched, Some("Flat"), 0), (&ivf_patched, None, 0)], &enc);

    // The same tree indexed anew.
    let (flat_new, ivf_new) = (work.path().join("flat-new"), work.path().join("ivf-new"));
    let r = build(&tree, &flat_new, &enc, Some("Flat"));
    assert!(!r.updated);
    build(&tree, &ivf_new, &enc, None);
    let meta = |d: &Path| Index::open(d, None, 32).unwrap().meta;
    let (mu, mf) = (meta(&flat), meta(&flat_new));
    assert_eq!((mu.files, mu.functions, mu.indexed_nodes, mu.lines), (mf.files, mf.functions, mf.indexed_nodes, mf.lines));
    assert!(mu.function_slots > mf.function_slots, "removed functions leave their ids empty");
    assert!(first.nodes > 0 && meta(&ivf).node_factory.starts_with("IVF"), "the default layout here is IVF");

    for d in [&flat_patched, &ivf_patched] {
        let m = meta(d);
        assert!(m.checksums.contains_key(index::patch::FILE), "{} holds no patch", d.display());
        assert_eq!((m.files, m.functions, m.indexed_nodes, m.lines, m.function_slots, m.edges), (mu.files, mu.functions, mu.indexed_nodes, mu.lines, mu.function_slots, mu.edges));
    }
    assert!(!mu.checksums.contains_key(index::patch::FILE));
    // Flat: the same fragments in the same order, scores within the tolerance; the
    // patched index as the one written whole.
    for (updated, fresh) in [(&flat, &flat_new), (&flat_patched, &flat_new)] {
        same_answers(&answers(updated, &enc), &answers(fresh, &enc));
    }

    // IVF-PQ: each build trains its own quantizers; the top 10s stay close. A patch holds
    // its vectors exactly, beside the first build's quantized ones.
    for (updated, fresh) in [(&ivf, &ivf_new), (&ivf_patched, &ivf_new)] {
        close_answers(&answers(updated, &enc), &answers(fresh, &enc));
    }
}

/// The same fragments in the same order, scores within the tolerance.
fn same_answers(a: &Answers, b: &Answers) {
    const TOLERANCE: f64 = 0.05;
    let mut worst = 0f64;
    assert!(a.len() > 40);
    for ((q, x), (_, y)) in a.iter().zip(b) {
        assert_eq!(x.len(), y.len(), "{q}");
        let mut xs: Vec<&String> = x.iter().map(|f| &f.0).collect();
        let mut ys: Vec<&String> = y.iter().map(|f| &f.0).collect();
        xs.sort();
        ys.sort();
        assert_eq!(xs, ys, "{q}: another top 10");
        for (i, ((kx, sx), (ky, sy))) in x.iter().zip(y).enumerate() {
            // Fragments whose scores differ by less than the tolerance may trade places.
            assert!(kx == ky || (sx - sy).abs() < TOLERANCE, "{q}: rank {} is {kx} updated, {ky} anew", i + 1);
            let other = y.iter().find(|f| &f.0 == kx).map_or(f64::NAN, |f| f.1);
            assert!((sx - other).abs() < TOLERANCE, "{q}: {kx} scores {sx} updated, {other} anew");
            worst = worst.max((sx - other).abs());
        }
    }
    eprintln!("flat: largest score difference {worst:.4}");
}

/// Top 10s that share most of their fragments and mostly their first.
fn close_answers(a: &Answers, b: &Answers) {
    let mut overlap = 0.0;
    let mut same_first = 0;
    for ((q, x), (_, y)) in a.iter().zip(b) {
        let shared = x.iter().filter(|(k, _)| y.iter().any(|(kk, _)| kk == k)).count();
        overlap += shared as f64 / x.len().max(1) as f64;
        same_first += usize::from(x.first().map(|f| &f.0) == y.first().map(|f| &f.0));
        eprintln!("{q}: {shared} of {} shared", x.len());
    }
    let (mean, first_share) = (overlap / a.len() as f64, same_first as f64 / a.len() as f64);
    eprintln!("IVF: mean top-10 overlap {mean:.3}, same first result {first_share:.3}");
    assert!(mean >= 0.9, "IVF: mean top-10 overlap {mean:.3}");
    assert!(first_share >= 0.9, "IVF: same first result in {first_share:.3} of the queries");
}

/// Finding what changed costs a look at each file, not a read: a file is read again only
/// when its size, times or inode moved, or when it changed too recently to trust them.
#[test]
fn an_update_reads_only_the_files_that_changed() {
    let src = fetch("igraph").unwrap();
    let work = tempfile::tempdir().unwrap();
    let tree = work.path().join("paths");
    copy_tree(&src.join("src/paths"), &tree);
    let enc = TextEncoders::defaults(None, CacheAt::Default);
    let dir = work.path().join("idx");
    // Just copied: every file is read, none stamped; once settled, all are stamped.
    let r = build(&tree, &dir, &enc, None);
    let files = r.files;
    assert!(files > 10, "{files}");
    std::thread::sleep(std::time::Duration::from_millis(3300));
    let r = build(&tree, &dir, &enc, None);
    assert!(r.up_to_date && r.read_files >= files, "{r:?}");
    let r = build(&tree, &dir, &enc, None);
    assert!(r.up_to_date && r.read_files >= files, "stamps are written with a new generation only: {r:?}");
    // A new generation records them.
    edit(&tree.join("floyd_warshall.c"), "igraph_error_t igraph_distances_floyd_warshall(", "igraph_error_t igraph_distances_floyd_warshall_renamed(");
    let r = build(&tree, &dir, &enc, None);
    assert!(r.updated && r.changed_files == 1 && r.read_files >= files, "{r:?}");
    // Now only the edited file, not yet settled, is read.
    let r = build(&tree, &dir, &enc, None);
    assert!(r.up_to_date && r.read_files == 1, "{r:?}");
    // Rewritten with its size and modification time kept: the change time tells.
    let other = tree.join("dijkstra.c");
    let (text, old) = (std::fs::read_to_string(&other).unwrap(), std::fs::metadata(&other).unwrap().modified().unwrap());
    std::fs::write(&other, text.replacen("igraph_", "igraph-", 1)).unwrap();
    std::fs::File::options().write(true).open(&other).unwrap().set_modified(old).unwrap();
    let r = build(&tree, &dir, &enc, None);
    assert!(r.updated && r.changed_files == 1 && r.read_files == 2, "{r:?}");
}

/// A callee with more callers than `HUB_CALLERS` joins none of them in the adjacency: an
/// update that adds its last caller, or takes it away, rewrites the rows of every caller.
/// Each update checks its rows against the adjacency rebuilt whole, patched and written
/// whole alike.
#[test]
fn an_update_that_makes_or_unmakes_a_hub_rewrites_the_rows_it_joins() {
    let hub = beryl::graph::csr::HUB_CALLERS;
    let work = tempfile::tempdir().unwrap();
    let tree = work.path().join("src");
    std::fs::create_dir_all(&tree).unwrap();
    let callers = |from: usize, to: usize| -> String { (from..to).map(|i| format!("int c{i}(int x) {{ if (x > {i}) x = step(x); return x; }}\n")).collect() };
    std::fs::write(tree.join("a.c"), format!("int step(int x) {{ return x + 1; }}\n{}", callers(0, hub))).unwrap();
    let enc = TextEncoders::defaults(None, CacheAt::Default);
    let (whole, patched) = (work.path().join("whole"), work.path().join("patched"));
    for (dir, from) in [(&whole, usize::MAX), (&patched, 0)] {
        assert!(!build_patching(&tree, dir, &enc, Some("Flat"), from).updated);
    }
    let steps: Vec<(&str, Box<dyn Fn()>)> = vec![
        ("a caller added in another file: a hub", Box::new(|| std::fs::write(tree.join("b.c"), callers(hub, hub + 1)).unwrap())),
        ("the callee's own file edited", Box::new(|| std::fs::write(tree.join("a.c"), format!("int step(int x) {{ return x + 2; }}\n{}", callers(0, hub))).unwrap())),
        ("that caller removed: no hub again", Box::new(|| std::fs::remove_file(tree.join("b.c")).unwrap())),
        ("the callee removed", Box::new(|| std::fs::write(tree.join("a.c"), callers(0, hub)).unwrap())),
    ];
    for (what, step) in steps {
        step();
        for (dir, from) in [(&whole, usize::MAX), (&patched, 0)] {
            let r = build_patching(&tree, dir, &enc, Some("Flat"), from);
            assert!(r.updated, "{what}: not an update ({:?})", r.full_reason);
        }
    }
    assert!(Index::open(&patched, None, 32).unwrap().meta.checksums.contains_key(index::patch::FILE));
}

/// A new call into a function whose other callers are in files the change does not touch:
/// the callee's EXIT row returns to those callers, so a patching update, which reads the
/// edges of the files its rows reach alone, must read theirs too (its self-check reads
/// every file's and compares).
#[test]
fn a_new_call_rewrites_the_return_rows_into_untouched_files() {
    let work = tempfile::tempdir().unwrap();
    let tree = work.path().join("src");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(tree.join("lib.c"), "int step(int x) { if (x > 2) return x - 1; return x + 1; }\n").unwrap();
    std::fs::write(tree.join("user.c"), "int u(int x) { x = step(x); return x * 3; }\nint w(int y) { return y; }\n").unwrap();
    let enc = TextEncoders::defaults(None, CacheAt::Default);
    let dir = work.path().join("patched");
    assert!(!build_patching(&tree, &dir, &enc, Some("Flat"), 0).updated);
    std::fs::write(tree.join("new.c"), "int v(int x) { int y = step(x); return y * 2; }\n").unwrap();
    let r = build_patching(&tree, &dir, &enc, Some("Flat"), 0);
    assert!(r.updated, "not an update ({:?})", r.full_reason);
    std::fs::write(tree.join("new.c"), "int v(int x) { return x; }\n").unwrap();
    let r = build_patching(&tree, &dir, &enc, Some("Flat"), 0);
    assert!(r.updated, "not an update ({:?})", r.full_reason);
}
