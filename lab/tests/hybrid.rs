//! The default pseudocode search (hybrid) end to end on real projects, as they are and
//! with every identifier renamed and every comment removed (the project's anonymizer),
//! so that names cannot carry the result; and queries at the edge of what is searchable.

use beryl::corpus::fetch::fetch;
use beryl_lab::algo::renamed_root;
use beryl::features::{CacheAt, TextEncoders};
use beryl::index::{self, Index, IndexOptions};
use beryl::pcode::Classifier;
use beryl::search::hybrid::{self, Method};
use beryl::search::hybrid::Ranker;
use beryl::search::{Fragment, SearchError, SearchOptions};
use std::path::{Path, PathBuf};

/// The default encoders of `beryl index` (static statements, code-search functions).
fn encoder() -> TextEncoders {
    TextEncoders::defaults(None, CacheAt::Default)
}

fn model() -> PathBuf {
    beryl::repo_path("models/default")
}

fn build(roots: &[PathBuf], dir: &Path, enc: &TextEncoders) -> Index {
    let r = index::build(roots, dir, &IndexOptions::default(), &model(), enc, &mut |_, _, _| {}).expect("index");
    eprintln!("indexed {} files, {} functions in {:.1} s", r.files, r.functions, r.total_seconds);
    Index::open(dir, Some(&model()), 32).expect("open")
}

fn search(idx: &mut Index, enc: &TextEncoders, src: &str, method: Method) -> Result<Vec<Fragment>, SearchError> {
    let ranker = Ranker::load(&Ranker::default_path()).expect("shipped ranker");
    let opts = SearchOptions { top: 10, ..SearchOptions::default() };
    let r = hybrid::search(idx, enc, src, Path::new("query"), || Classifier::load(&Classifier::default_path()), &opts, method, Some(&ranker))?;
    for f in &r.fragments {
        let s = &f.spans[0];
        eprintln!("#{} {:.2} {}:{}-{} {} {:?}", f.rank, f.score, s.path, s.lines.0, s.lines.1, s.function, f.reasons);
    }
    Ok(r.fragments)
}

fn query(name: &str) -> String {
    std::fs::read_to_string(beryl::repo_path("queries").join(name)).unwrap()
}

/// Rank of the first fragment that overlaps `lines` of a file ending in `file` and is no
/// larger than the benchmark's size rule allows.
fn hit_rank(frags: &[Fragment], file: &str, lines: (u32, u32)) -> Option<usize> {
    let span = lines.1 - lines.0 + 1;
    let limit = (3 * span).max(span + 30);
    frags
        .iter()
        .position(|f| {
            let size = f.spans.iter().filter(|s| s.path.ends_with(file)).map(|s| s.lines.1 - s.lines.0 + 1).max().unwrap_or(u32::MAX);
            f.spans.iter().any(|s| s.path.ends_with(file) && s.lines.0 <= lines.1 && s.lines.1 >= lines.0) && size <= limit
        })
        .map(|i| i + 1)
}

fn styled(style: &str, name: &str) -> String {
    std::fs::read_to_string(beryl::repo_path("bench/algo/styles").join(style).join(name)).unwrap()
}

/// igraph's shortest-path code: Floyd–Warshall beside Dijkstra, Bellman–Ford, Johnson and
/// BFS, as written and anonymized; the query as CLRS, a wiki and a Python-like text write it.
#[test]
fn floyd_warshall_in_igraph_as_is_and_renamed() {
    let root = fetch("igraph").unwrap().join("src/paths");
    let tmp = tempfile::tempdir().unwrap();
    let enc = encoder();
    let renamed = renamed_root(tmp.path(), "igraph-paths", &root).unwrap();
    // igraph_distances_floyd_warshall, lines 58–141 of 0.10.2 (bench/algo/truth.json).
    let fw = (58, 141);
    for (what, r) in [("as is", root), ("renamed", renamed)] {
        let mut idx = build(&[r], &tmp.path().join(format!("index-{}", what.replace(' ', "-"))), &enc);
        // The anonymized copy keeps igraph's file names; its index knows they say nothing.
        assert_eq!(idx.meta.anonymized, what == "renamed");
        for (style, text) in [("wiki", styled("wiki", "floyd-warshall.txt")), ("python", styled("python", "floyd-warshall.txt"))] {
            let frags = search(&mut idx, &enc, &text, Method::Hybrid).unwrap();
            let rank = hit_rank(&frags, "floyd_warshall.c", fw);
            assert!(rank.is_some_and(|r| r <= 3), "{what}, {style} style: Floyd–Warshall at {rank:?}");
        }
        let frags = search(&mut idx, &enc, &query("floyd-warshall.txt"), Method::Hybrid).unwrap();
        let rank = hit_rank(&frags, "floyd_warshall.c", fw);
        assert!(rank.is_some_and(|r| r <= 3), "{what}: Floyd–Warshall at {rank:?}");
        assert!(!frags[0].reasons.is_empty(), "every fragment says why it matched");
        assert!(frags[0].reasons.iter().any(|r| r.starts_with("tokens:")), "{what}: the name-free token agreement is reported: {:?}", frags[0].reasons);
        assert!(frags[0].reasons.iter().any(|r| r.starts_with("data flow:")), "{what}: the def-use agreement is reported: {:?}", frags[0].reasons);
        // Its error messages name the algorithm, and the anonymizer keeps literals.
        let hit = &frags[rank.unwrap() - 1];
        assert!(hit.reasons.iter().any(|r| r.starts_with("strings: 100%")), "{what}: {:?}", hit.reasons);
        let by_file_name = frags.iter().any(|f| f.reasons.iter().any(|r| r.starts_with("file name:")));
        assert_eq!(by_file_name, what == "as is", "{what}: floyd_warshall.c is read as a name only where names mean something");
    }
}

/// A few files of a project copied into `into`: a slice small enough to index in seconds.
fn copy_slice(from: &Path, files: &[&str], into: &Path) -> PathBuf {
    std::fs::create_dir(into).unwrap();
    for f in files {
        std::fs::copy(from.join(f), into.join(f)).unwrap();
    }
    into.to_path_buf()
}

/// commons-lang3's StringUtils: Levenshtein distance among hundreds of string helpers.
#[test]
fn edit_distance_in_commons_lang3_as_is_and_renamed() {
    let src = fetch("libcommons-lang3-java").unwrap().join("src/main/java/org/apache/commons/lang3");
    let tmp = tempfile::tempdir().unwrap();
    let slice = copy_slice(&src, &["StringUtils.java", "ArrayUtils.java", "CharSequenceUtils.java"], &tmp.path().join("lang3"));
    let renamed = renamed_root(tmp.path(), "lang3", &slice).unwrap();
    let enc = encoder();
    // getLevenshteinDistance(CharSequence, CharSequence), bench/algo/truth.json.
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(beryl::repo_path("bench/algo/truth.json")).unwrap()).unwrap();
    let entries: Vec<(u32, u32)> = truth["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["algorithm"] == "edit-distance" && e["project"] == "commons-lang3")
        .map(|e| (e["start_line"].as_u64().unwrap() as u32, e["end_line"].as_u64().unwrap() as u32))
        .collect();
    assert!(!entries.is_empty());
    for (what, r) in [("as is", slice), ("renamed", renamed)] {
        let mut idx = build(&[r], &tmp.path().join(format!("index-{}", what.replace(' ', "-"))), &enc);
        let frags = search(&mut idx, &enc, &query("edit-distance.txt"), Method::Hybrid).unwrap();
        let rank = entries.iter().filter_map(|&l| hit_rank(&frags, "StringUtils.java", l)).min();
        assert!(rank.is_some_and(|r| r <= 3), "{what}: Levenshtein at {rank:?}");
    }
}

/// igraph's indexed heaps: heapsort's BUILD-MAX-HEAP and MAX-HEAPIFY are two functions of
/// indheap.c that call helpers defined 60–140 lines away. The fragment keeps the two and
/// lists the far helpers apart, so it is as compact as the benchmark asks; and the
/// build function alone, inside it, does not follow it as a result of its own.
#[test]
fn heapsort_in_igraph_is_one_compact_fragment() {
    let core = fetch("igraph").unwrap().join("src/core");
    let tmp = tempfile::tempdir().unwrap();
    let files = ["indheap.c", "indheap.h", "cutheap.c", "cutheap.h", "buckets.c", "buckets.h", "dqueue.c", "psumtree.c"];
    let slice = copy_slice(&core, &files, &tmp.path().join("core"));
    let enc = encoder();
    let mut idx = build(&[slice], &tmp.path().join("index"), &enc);
    let frags = search(&mut idx, &enc, &query("heapsort.txt"), Method::Hybrid).unwrap();
    // igraph_indheap_i_build and igraph_indheap_i_sink, bench/algo/truth.json.
    let rank = [(344, 359), (383, 402)].iter().filter_map(|&l| hit_rank(&frags, "indheap.c", l)).min();
    assert!(rank.is_some_and(|r| r <= 3), "heapsort at {rank:?}");
    assert!(frags.iter().any(|f| !f.apart.is_empty()), "some grown fragment has a helper listed apart");
    for f in &frags {
        for file in f.spans.iter().map(|s| &s.path) {
            let mine: Vec<_> = f.spans.iter().filter(|s| &s.path == file).collect();
            let extent = mine.iter().map(|s| s.lines.1).max().unwrap() - mine.iter().map(|s| s.lines.0).min().unwrap() + 1;
            let widest = mine.iter().map(|s| s.lines.1 - s.lines.0 + 1).max().unwrap();
            assert!(extent <= (3 * widest).max(widest + 30), "#{}: {extent} lines in {file} around a span of {widest}", f.rank);
        }
    }
    let mut shown: std::collections::HashSet<(String, u32)> = std::collections::HashSet::new();
    for f in &frags {
        let lines: Vec<(String, u32)> = f.spans.iter().flat_map(|s| (s.lines.0..=s.lines.1).map(move |l| (s.path.clone(), l))).collect();
        let old = lines.iter().filter(|l| shown.contains(*l)).count();
        assert!(2 * old < lines.len(), "#{}: {old} of its {} lines are shown above", f.rank, lines.len());
        shown.extend(lines);
    }
}

/// Queries with little to align: no loop, one line, nothing at all.
#[test]
fn thin_queries_give_results_or_a_clear_error() {
    let root = fetch("igraph").unwrap().join("src/paths");
    let tmp = tempfile::tempdir().unwrap();
    let enc = encoder();
    let mut idx = build(&[root], tmp.path(), &enc);
    for method in [Method::Hybrid, Method::Bm25, Method::Name, Method::Dense, Method::Beryllium] {
        match search(&mut idx, &enc, "", method) {
            Err(e) => assert!(e.to_string().contains("empty"), "{e}"),
            Ok(f) => panic!("an empty query gave {} fragments", f.len()),
        }
        assert!(search(&mut idx, &enc, "   \n\n  ", method).is_err());
        // One line, no loop.
        // A loop-free query, and one line without a procedure header: ranked fragments
        // (name search may rightly find no function called RELAX).
        let one = search(&mut idx, &enc, "RELAX(u, v, w)\n    if v.d > u.d + w(u, v)\n        v.d = u.d + w(u, v)\n", method).unwrap();
        assert!(!one.is_empty() || method == Method::Name, "{method:?}: no fragment for a loop-free query");
        // A line without a header has no procedure name, and one-letter words are no
        // search terms: name and BM25 search rightly find nothing (the CLI says so).
        let line = search(&mut idx, &enc, "x = a[i] + b[j]", method).unwrap();
        assert!(!line.is_empty() || matches!(method, Method::Name | Method::Bm25), "{method:?}: no fragment for a one-line query");
    }
    // Marked p-code with a syntax error is reported as such.
    let bad = search(&mut idx, &enc, "FOO(A)\n    $x = $ y $\n", Method::Hybrid).unwrap_err();
    assert!(matches!(bad, SearchError::Pcode(_)), "{bad}");
}

/// colt writes each list class once per element type: `binarySearchFromTo` is the same
/// code in AbstractIntList, AbstractLongList, AbstractDoubleList, … under other type
/// names. Those copies come as one fragment that names the others, not as ten results.
#[test]
fn type_specialized_copies_of_binary_search_in_colt_are_one_fragment() {
    let list = fetch("libcolt-free-java").unwrap().join("src/cern/colt/list");
    let tmp = tempfile::tempdir().unwrap();
    let kinds = ["Int", "Long", "Short", "Byte", "Double", "Float", "Char"];
    let files: Vec<String> = kinds.iter().map(|k| format!("Abstract{k}List.java")).collect();
    let slice = copy_slice(&list, &files.iter().map(String::as_str).collect::<Vec<_>>(), &tmp.path().join("list"));
    let enc = encoder();
    let mut idx = build(&[slice], &tmp.path().join("index"), &enc);
    let frags = search(&mut idx, &enc, &query("binary-search.p"), Method::Hybrid).unwrap();
    let is_search = |s: &beryl::search::Span| s.function.ends_with("binarySearchFromTo");
    let top = &frags[0];
    assert!(is_search(&top.spans[0]), "{:?}", top.spans[0]);
    assert!(top.copies.len() >= 2 && top.copies.iter().all(is_search), "copies: {:?}", top.copies);
    assert!(top.copies.iter().all(|c| c.path != top.spans[0].path), "a copy is in another file");
    assert!(top.reasons.iter().any(|r| r.starts_with("copies:")), "{:?}", top.reasons);
    // Asking for one result lists the same copies: the rest of the pool is read for them.
    let ranker = Ranker::load(&Ranker::default_path()).unwrap();
    let opts = SearchOptions { top: 1, ..SearchOptions::default() };
    let clf = || Classifier::load(&Classifier::default_path());
    let first = hybrid::search(&mut idx, &enc, &query("binary-search.p"), Path::new("query"), clf, &opts, Method::Hybrid, Some(&ranker)).unwrap();
    assert_eq!(first.fragments.len(), 1);
    assert_eq!(first.fragments[0].copies.len(), top.copies.len(), "copies depend on --top");
    // Every binarySearchFromTo is reported once: as a fragment or as a copy of one.
    let mut seen: Vec<&str> = frags.iter().flat_map(|f| f.spans.iter().take(1).chain(&f.copies)).filter(|s| is_search(s)).map(|s| s.path.as_str()).collect();
    let n = seen.len();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), n, "a binarySearchFromTo listed twice");
    assert_eq!(n, kinds.len(), "{seen:?}");
}

/// Iterative code against recursive pseudocode, with names gone: graphviz's heap in
/// neatogen sifts down in a loop where MAX-HEAPIFY calls itself, and glpk's gcd loops
/// where EUCLID recurses. The query's tail calls read as loops find both.
#[test]
fn recursive_queries_find_iterative_code_when_renamed() {
    let tmp = tempfile::tempdir().unwrap();
    let enc = encoder();
    let cases = [
        ("graphviz", "lib/neatogen", &["dijkstra.c", "dijkstra.h", "heap.c", "heap.h", "bfs.c", "kkutils.c", "matrix_ops.c", "conjgrad.c"][..], "heapsort.txt", "dijkstra.c", &[(59, 78), (97, 116)][..]),
        ("glpk", "src/misc", &["gcd.c", "fp2rat.c", "bignum.c", "str2int.c", "rng.c", "round2n.c", "spm.c", "triang.c"][..], "euclid-gcd.txt", "gcd.c", &[(50, 56)][..]),
    ];
    for (pkg, dir, files, q, file, truth) in cases {
        let slice = copy_slice(&fetch(pkg).unwrap().join(dir), files, &tmp.path().join(pkg));
        let renamed = renamed_root(tmp.path(), &format!("{pkg}-renamed"), &slice).unwrap();
        let mut idx = build(&[renamed], &tmp.path().join(format!("index-{pkg}")), &enc);
        let frags = search(&mut idx, &enc, &query(q), Method::Hybrid).unwrap();
        let rank = truth.iter().filter_map(|&l| hit_rank(&frags, file, l)).min();
        assert!(rank.is_some_and(|r| r <= 3), "{pkg}: {q} at {rank:?}");
        let hit = &frags[rank.unwrap() - 1];
        assert!(hit.reasons.iter().any(|r| r.contains("written as a loop")), "{pkg}: {:?}", hit.reasons);
    }
}

/// commons-math3's matrix classes beside tests that multiply matrices in loops of their
/// own. Renamed, the tests' loops score as well as the library's: a fragment wholly in
/// tests still follows every fragment of the code under test, whatever its score, and a
/// test grown into the library it calls shows the library's lines alone.
#[test]
fn tests_follow_the_code_they_test() {
    let math = fetch("commons-math3").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("math3");
    let files = [
        ("src/main/java/org/apache/commons/math3/linear", "Array2DRowRealMatrix.java"),
        ("src/main/java/org/apache/commons/math3/linear", "BlockRealMatrix.java"),
        ("src/test/java/org/apache/commons/math3/linear", "SparseRealMatrixTest.java"),
        ("src/test/java/org/apache/commons/math3/linear", "LUDecompositionTest.java"),
    ];
    for (dir, file) in files {
        std::fs::create_dir_all(root.join(dir)).unwrap();
        std::fs::copy(math.join(dir).join(file), root.join(dir).join(file)).unwrap();
    }
    let renamed = renamed_root(tmp.path(), "math3", &root).unwrap();
    let enc = encoder();
    let ranker = Ranker::load(&Ranker::default_path()).expect("shipped ranker");
    let opts = SearchOptions { top: 100, ..SearchOptions::default() };
    let in_tests = |f: &Fragment| f.spans.iter().all(|s| beryl::search::place::is_test_path(&s.path));
    let (mut outranked, mut reached) = (0, 0);
    for (what, r) in [("as is", root), ("renamed", renamed)] {
        let mut idx = build(&[r], &tmp.path().join(format!("index-{}", what.replace(' ', "-"))), &enc);
        let q = query("matrix-multiply.p");
        let frags = hybrid::search(&mut idx, &enc, &q, Path::new("q"), || Classifier::load(&Classifier::default_path()), &opts, Method::Hybrid, Some(&ranker)).unwrap().fragments;
        let first_test = frags.iter().position(in_tests).unwrap_or(frags.len());
        assert!(first_test > 0, "{what}: a test fragment ranks first");
        assert!(frags[first_test..].iter().all(in_tests), "{what}: code under test listed after a test fragment");
        assert!(frags.iter().all(|f| in_tests(f) == f.reasons.iter().any(|r| r.starts_with("tests: in tests"))), "{what}: test fragments say so");
        // A test grown into the library shows the library's lines alone.
        assert!(frags.iter().all(|f| in_tests(f) || f.spans.iter().chain(&f.apart).all(|s| !beryl::search::place::is_test_path(&s.path))), "{what}: a fragment mixes tests and code");
        reached += frags.iter().filter(|f| f.reasons.iter().any(|r| r.starts_with("tests: reached"))).count();
        // Tests that score above code listed before them: the order is by kind first.
        outranked += frags[first_test..].iter().filter(|t| frags[..first_test].iter().any(|c| t.score > c.score)).count();
    }
    assert!(outranked > 0, "no test fragment scored above the code it follows: the rule was not exercised");
    assert!(reached > 0, "no fragment grown from a test: the rule was not exercised");
}
