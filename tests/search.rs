//! End to end on real projects: index a slice of a Debian source package, search it with
//! the query library, and check the hits against implementations read by hand.

use beryl::corpus::fetch::fetch;
use beryl::features::{CacheAt, TextEncoders};
use beryl::index::{self, Index, IndexOptions};
use beryl::pcode::Classifier;
use beryl::search::{self, Fragment, SearchOptions};
use std::path::{Path, PathBuf};

/// The default encoders of `beryl index` (static statements, code-search functions).
fn encoder() -> TextEncoders {
    TextEncoders::defaults(None, CacheAt::Default)
}

fn model() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models/default")
}

fn build(roots: &[PathBuf], dir: &Path, enc: &TextEncoders) -> Index {
    let r = index::build(roots, dir, &IndexOptions::default(), &model(), enc, &mut |_, _, _| {}).expect("index");
    eprintln!("indexed {} files, {} nodes in {:.1} s", r.files, r.nodes, r.total_seconds);
    Index::open(dir, Some(&model()), 32).expect("open")
}

fn pseudo(idx: &mut Index, enc: &TextEncoders, query: &str) -> Vec<Fragment> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("queries").join(query);
    let src = std::fs::read_to_string(&path).unwrap();
    let r = search::pseudo(idx, enc, &src, &path, || Classifier::load(&Classifier::default_path()), &SearchOptions::default()).unwrap();
    for f in &r.fragments {
        eprintln!("{}", beryl::report::search::summary(f));
    }
    r.fragments
}

/// Rank (1-based) of the first fragment overlapping `lines` of a file ending in `file`.
fn hit_rank(frags: &[Fragment], file: &str, lines: (u32, u32)) -> Option<usize> {
    frags.iter().position(|f| f.spans.iter().any(|s| s.path.ends_with(file) && s.lines.0 <= lines.1 && s.lines.1 >= lines.0)).map(|i| i + 1)
}

#[test]
fn floyd_warshall_in_igraph_shortest_paths() {
    // igraph's src/paths: Floyd–Warshall beside Dijkstra, Bellman–Ford, Johnson, BFS and
    // more shortest-path code, so the query must tell close relatives apart.
    let root = fetch("igraph").unwrap().join("src/paths");
    let tmp = tempfile::tempdir().unwrap();
    let enc = encoder();
    let mut idx = build(&[root], tmp.path(), &enc);
    // igraph_distances_floyd_warshall, lines 58–141 of 0.10.2; the k, j, i loops are 120–139.
    let fw = (58, 141);
    let p = pseudo(&mut idx, &enc, "floyd-warshall.p");
    let rank = hit_rank(&p, "floyd_warshall.c", fw);
    assert!(rank.is_some_and(|r| r <= 10), "p-code query: Floyd–Warshall at {rank:?}");
    let t = pseudo(&mut idx, &enc, "floyd-warshall.txt");
    let rank = hit_rank(&t, "floyd_warshall.c", fw);
    assert!(rank.is_some_and(|r| r <= 10), "plain pseudocode query: Floyd–Warshall at {rank:?}");

    // Natural language over function text vectors.
    let r = search::natural(&mut idx, &enc, "all-pairs shortest path lengths with the Floyd-Warshall algorithm", &SearchOptions::default()).unwrap();
    let rank = hit_rank(&r.fragments, "floyd_warshall.c", fw);
    assert!(rank.is_some_and(|r| r <= 3), "natural language: {rank:?}");
}

#[test]
fn insertion_sort_in_colt_sorting() {
    // Colt's two sorting classes: quicksort, merge sort, binary search and, inside the
    // merge sorts, insertion sort of small ranges (bench/algo/truth.json: GenericSorting.java
    // 280–287 and Sorting.java 1076–1081, read by hand).
    let root = fetch("libcolt-free-java").unwrap().join("src/cern/colt");
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    for f in ["Sorting.java", "GenericSorting.java"] {
        std::fs::copy(root.join(f), src.join(f)).unwrap();
    }
    let enc = encoder();
    let mut idx = build(&[src], &tmp.path().join("index"), &enc);
    for q in ["insertion-sort.p", "insertion-sort.txt"] {
        let p = pseudo(&mut idx, &enc, q);
        let rank = [hit_rank(&p, "GenericSorting.java", (280, 287)), hit_rank(&p, "/Sorting.java", (1076, 1081))].into_iter().flatten().min();
        assert!(rank.is_some_and(|r| r <= 10), "{q}: insertion sort at {rank:?}");
    }
}

#[test]
fn natural_language_lists_examples_after_the_code() {
    // igraph's shortest-path code beside its examples, whose `main`s call it by name: a
    // function in an example folder follows every other result, whatever its similarity.
    let igraph = fetch("igraph").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let (src, examples) = (tmp.path().join("src"), tmp.path().join("examples"));
    std::fs::create_dir(&src).unwrap();
    std::fs::create_dir(&examples).unwrap();
    for f in ["floyd_warshall.c", "unweighted.c"] {
        std::fs::copy(igraph.join("src/paths").join(f), src.join(f)).unwrap();
    }
    for f in ["distances.c", "igraph_average_path_length.c", "igraph_get_shortest_paths.c", "igraph_get_shortest_paths_dijkstra.c", "bellman_ford.c"] {
        std::fs::copy(igraph.join("examples/simple").join(f), examples.join(f)).unwrap();
    }
    let enc = encoder();
    let mut idx = build(&[src, examples], &tmp.path().join("index"), &enc);
    let opts = SearchOptions { top: 10, ..SearchOptions::default() };
    let r = search::natural(&mut idx, &enc, "shortest path lengths between all pairs of vertices", &opts).unwrap();
    let in_examples = |f: &Fragment| f.spans[0].path.contains("/examples/");
    for f in &r.fragments {
        eprintln!("#{} {:.3} {} {}", f.rank, f.score, f.spans[0].path, f.spans[0].function);
    }
    assert_eq!(r.fragments.iter().map(|f| f.rank).collect::<Vec<_>>(), (1..=r.fragments.len()).collect::<Vec<_>>());
    let first = r.fragments.iter().position(in_examples).expect("no example among the results");
    assert!(first > 0 && r.fragments[first..].iter().all(in_examples), "code listed after an example");
    assert!(r.fragments.iter().all(|f| in_examples(f) == !f.reasons.is_empty()), "examples say why they come last");
    let outranked = r.fragments[first..].iter().filter(|e| r.fragments[..first].iter().any(|c| e.score > c.score)).count();
    assert!(outranked > 0, "no example scored above the code it follows: the rule was not exercised");
}
