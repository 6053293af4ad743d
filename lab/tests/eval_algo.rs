//! `beryl eval algo`: the hit rule, F-rank and MRR on hand-made fragments, and one real
//! run on java-string-similarity (Debian, 4 k lines) with name search, CB and beryl.

use beryl::corpus::fetch::{cache_dir, fetch};
use beryl_lab::algo::{
    self, comment_above, f_rank, fragment_extent, hit_at, is_hit, name_words, rank_by_name, reciprocal, size_limit, strip_line_numbers,
    summarize, AlgoError, Entry, FuncRec, LocSpan, Method, QueryForm, Row, RunConfig, Setting, Truth,
};
use beryl::features::{CacheAt, TextEncoders};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn entry(alg: &str, path: &str, a: u32, b: u32) -> Entry {
    Entry {
        algorithm: alg.into(),
        project: "p".into(),
        path: path.into(),
        function: "f".into(),
        start_line: a,
        end_line: b,
        confidence: Some("high".into()),
        note: None,
    }
}

fn span(path: &str, a: u32, b: u32) -> LocSpan {
    LocSpan { project: "p".into(), path: path.into(), lines: (a, b) }
}

#[test]
fn hit_rule_needs_same_file_overlap_and_a_small_enough_fragment() {
    // Entry of 20 lines: fragments up to max(3·20, 20 + 30) = 60 lines count.
    let e = entry("a", "src/x.c", 10, 29);
    assert_eq!(size_limit(20), 60);
    assert_eq!(size_limit(5), 35);
    assert!(is_hit(&[span("src/x.c", 15, 20)], &e));
    assert!(is_hit(&[span("src/x.c", 29, 40)], &e), "touching the last line overlaps");
    assert!(!is_hit(&[span("src/x.c", 30, 40)], &e), "no overlap");
    assert!(!is_hit(&[span("src/y.c", 15, 20)], &e), "other file");
    let other_project = LocSpan { project: "q".into(), path: "src/x.c".into(), lines: (15, 20) };
    assert!(!is_hit(&[other_project], &e), "same path in another project");
    // Size: max − min + 1 over the spans in one file.
    assert!(is_hit(&[span("src/x.c", 12, 14), span("src/x.c", 60, 71)], &e), "extent 60 is allowed");
    assert!(!is_hit(&[span("src/x.c", 12, 14), span("src/x.c", 60, 72)], &e), "extent 61 is too large");
    assert!(!is_hit(&[span("src/x.c", 1, 100)], &e), "a whole-file fragment is not a hit");
    // Several files: the largest per-file extent counts, even in the other file.
    assert_eq!(fragment_extent(&[span("src/x.c", 15, 20), span("src/y.c", 1, 100)]), 100);
    assert!(!is_hit(&[span("src/x.c", 15, 20), span("src/y.c", 1, 100)], &e));
    assert!(is_hit(&[span("src/x.c", 15, 20), span("src/y.c", 1, 50)], &e));
}

#[test]
fn f_rank_mrr_and_hits() {
    let e = entry("a", "x.java", 100, 120);
    let miss = vec![span("x.java", 1, 5)];
    let hit = vec![span("x.java", 110, 115)];
    let mut frags = vec![miss.clone(), miss.clone(), hit.clone(), hit.clone()];
    assert_eq!(f_rank(&frags, &[&e]), Some(3));
    assert!((reciprocal(Some(3)) - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(hit_at(Some(3), 1), 0.0);
    assert_eq!(hit_at(Some(3), 10), 1.0);
    assert_eq!(f_rank(&frags, &[]), None);
    // A whole-file fragment first: no hit there, but it touches the entry.
    let big = vec![span("x.java", 1, 400)];
    let with_big = vec![big, miss.clone(), hit.clone()];
    assert_eq!(f_rank(&with_big, &[&e]), Some(3));
    assert_eq!(algo::overlap_rank(&with_big, &[&e]), Some(1));
    // The first hit at 101 is ">100".
    frags = vec![miss.clone(); 100];
    frags.push(hit.clone());
    assert_eq!(f_rank(&frags, &[&e]), None);
    assert_eq!(reciprocal(None), 0.0);
    frags[99] = hit;
    assert_eq!(f_rank(&frags, &[&e]), Some(100));
    assert_eq!(algo::rank_text(None), ">100");
}

fn row(alg: &str, group: &str, lang: &str, ranks: Vec<Option<usize>>) -> Row {
    Row {
        algorithm: alg.into(),
        group: group.into(),
        language: lang.into(),
        projects: vec![group.into()],
        top: vec![Vec::new(); ranks.len()],
        overlap_ranks: ranks.clone(),
        ranks,
        entries: 1,
        unindexed: Vec::new(),
    }
}

#[test]
fn mrr_averages_projects_first_then_algorithms() {
    // Algorithm a in two projects (ranks 1 and >100: 0.5), b in one (rank 4: 0.25).
    let rows = vec![
        row("a", "p1", "Java", vec![Some(1), Some(2)]),
        row("a", "p2", "Java", vec![None, Some(2)]),
        row("b", "p1", "Java", vec![Some(4), Some(30)]),
        row("c", "q", "C", vec![Some(10), None]),
    ];
    let s = summarize(&rows, &[Method::Beryllium, Method::Name]);
    let get = |scope: &str, m: Method| s.iter().find(|x| x.scope == scope && x.method == m).unwrap();
    let java = get("Java", Method::Beryllium);
    assert_eq!((java.algorithms, java.rows), (2, 3));
    assert!((java.mrr - 0.375).abs() < 1e-12, "{}", java.mrr);
    assert!((java.hit1 - 0.25).abs() < 1e-12);
    assert!((java.hit10 - 0.75).abs() < 1e-12);
    let name = get("Java", Method::Name);
    assert!((name.mrr - (0.5 + 1.0 / 30.0) / 2.0).abs() < 1e-12);
    assert!((name.hit25 - 0.5).abs() < 1e-12);
    let all = get("all", Method::Beryllium);
    assert_eq!(all.algorithms, 3);
    assert!((all.mrr - (0.5 + 0.25 + 0.1) / 3.0).abs() < 1e-12);
    assert!(s.iter().all(|x| (0.0..=1.0).contains(&x.mrr)));
}

#[test]
fn truth_errors_are_clear() {
    let missing = Truth::load(Path::new("/nonexistent/truth.json"));
    assert!(matches!(missing, Err(AlgoError::Io { .. })));
    let bad = Truth::parse("{\"corpora\": 3}", Path::new("t.json"));
    assert!(matches!(bad, Err(AlgoError::Json { .. })));
    let unknown = r#"{"corpora": [], "entries": [{"algorithm": "bfs", "project": "x", "path": "a.c",
        "function": "f", "start_line": 1, "end_line": 2}]}"#;
    let e = Truth::parse(unknown, Path::new("t.json")).unwrap_err();
    assert!(e.to_string().contains("\"x\" is not among the corpora"), "{e}");
}

#[test]
fn pooled_judgment_adds_to_the_truth() {
    let mut truth = Truth::load(&repo().join("bench/algo/truth.json")).unwrap();
    let (entries, decoys) = (truth.entries.len(), truth.decoys.len());
    let added = truth.add_pooled(&repo().join("bench/algo/pooled.json")).unwrap();
    assert!(added > 0 && truth.entries.len() == entries + added);
    assert!(truth.decoys.len() > decoys);
    // Judged entries are new: none repeats a filed entry of the same algorithm.
    let filed: BTreeSet<_> = truth.entries[..entries].iter().map(|e| (&e.algorithm, &e.project, &e.path, e.start_line, e.end_line)).collect();
    assert!(truth.entries[entries..].iter().all(|e| !filed.contains(&(&e.algorithm, &e.project, &e.path, e.start_line, e.end_line))));

    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("pooled.json");
    std::fs::write(&p, r#"{"about": "x", "entries": [{"algorithm": "bfs", "project": "nowhere", "path": "a.c",
        "function": "f", "start_line": 1, "end_line": 2}], "decoys": []}"#)
    .unwrap();
    let e = truth.add_pooled(&p).unwrap_err();
    assert!(e.to_string().contains("\"nowhere\" is not among the corpora"), "{e}");
    std::fs::write(&p, r#"{"entries": [], "decoys": [], "extra": 1}"#).unwrap();
    assert!(matches!(truth.add_pooled(&p), Err(AlgoError::Json { .. })));
}

#[test]
fn name_search_words_and_comments() {
    assert_eq!(name_words("igraph_bfs"), ["igraph", "bfs"]);
    assert_eq!(name_words("LevenshteinDistance"), ["levenshtein", "distance"]);
    assert_eq!(name_words("HTTPServer edits"), ["http", "server", "edit"]);
    let src: Vec<String> = ["int x;", "/**", " * Edit distance.", " */", "@Override", "public int d() {", "}"].iter().map(|s| s.to_string()).collect();
    assert_eq!(comment_above(&src, 6), "/**\n * Edit distance.\n */");
    assert_eq!(comment_above(&src, 1), "");
    let c: Vec<String> = ["// one", "// two", "void f() {}"].iter().map(|s| s.to_string()).collect();
    assert_eq!(comment_above(&c, 3), "// one\n// two");

    let f = |q: &str, a: u32, b: u32| FuncRec { path: "x.java".into(), qualified: q.into(), lang: "java".into(), lines: (a, b) };
    let funcs = vec![f("org.edit.Foo.bar", 1, 5), f("a.b.Levenshtein.distance", 10, 40), f("a.b.Edit.distance", 50, 60)];
    let comments = vec![String::new(), "/** the edit distance */".into(), String::new()];
    // Both words: functions 1 and 2; the shorter (2) first. Package words do not count.
    assert_eq!(rank_by_name("edit-distance", &funcs, &comments), vec![2, 1]);
    assert_eq!(strip_line_numbers(" 1 FOO(A)\n10     x ← 1\nno number"), "FOO(A)\n    x ← 1\nno number");
}

fn repo() -> PathBuf {
    beryl::repo_path("")
}

#[test]
fn missing_corpus_names_the_fetch_command() {
    let truth = Truth::load(&repo().join("bench/algo/truth.json")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = RunConfig {
        truth: &truth,
        queries: repo().join("queries"),
        corpus_root: tmp.path().to_path_buf(),
        setting: Setting::One,
        projects: vec!["colt".into()],
        methods: vec![Method::Name],
        query_form: QueryForm::P,
        work: tmp.path().join("work"),
        encoder: None,
        model_dir: repo().join("models/default"),
        progress: false,
        renamed: false,
        ranker: None,
        folds: 6,
        train_pools: Vec::new(),
    };
    let e = algo::run(&cfg).unwrap_err();
    assert!(e.to_string().contains("beryl corpus fetch libcolt-free-java"), "{e}");
    // Embedding methods without an encoder are refused up front.
    let cfg = RunConfig { methods: vec![Method::Cb], ..cfg };
    assert!(matches!(algo::run(&cfg), Err(AlgoError::NeedsEncoder("cb"))));
}

#[test]
fn real_run_on_java_string_similarity() {
    let root = fetch("java-string-similarity").expect("fetching java-string-similarity");
    let truth = Truth::load(&repo().join("bench/algo/truth.json")).unwrap();
    let corpus_root = cache_dir().join("corpora");
    assert!(root.starts_with(&corpus_root), "{}", root.display());
    let enc = TextEncoders::defaults(Some(2), CacheAt::Default);
    let work = tempfile::tempdir().unwrap();
    let methods = vec![Method::Name, Method::Cb, Method::Beryllium, Method::Hybrid, Method::NoLexical];
    let cfg = RunConfig {
        truth: &truth,
        queries: repo().join("queries"),
        corpus_root,
        setting: Setting::One,
        projects: vec!["java-string-similarity".into()],
        methods: methods.clone(),
        query_form: QueryForm::P,
        work: work.path().to_path_buf(),
        encoder: Some(&enc),
        model_dir: repo().join("models/default"),
        progress: false,
        renamed: false,
        ranker: None,
        folds: 6,
        train_pools: Vec::new(),
    };
    let r = algo::run(&cfg).unwrap();
    let mut want: Vec<&str> = truth.entries.iter().filter(|e| e.project == "java-string-similarity").map(|e| e.algorithm.as_str()).collect();
    want.sort();
    want.dedup();
    let got: Vec<&str> = r.rows.iter().map(|x| x.algorithm.as_str()).collect();
    assert_eq!(got, want, "one row per truth algorithm of the project");
    assert!(r.rows.iter().all(|x| x.ranks.len() == methods.len() && x.group == "java-string-similarity"));
    assert_eq!(r.summary.len(), methods.len(), "one scope (Java) × methods");
    for s in &r.summary {
        assert!((0.0..=1.0).contains(&s.mrr) && s.hit1 <= s.hit10 && s.hit10 <= s.hit25, "{s:?}");
    }
    let rank = |alg: &str, m: Method| {
        let mi = methods.iter().position(|x| *x == m).unwrap();
        r.rows.iter().find(|x| x.algorithm == alg).unwrap().ranks[mi]
    };
    // Levenshtein.distance is named and documented as the edit distance.
    assert!(rank("edit-distance", Method::Name).is_some_and(|k| k <= 3), "{:?}", r.rows);
    // The p-code of EDIT-DISTANCE finds the DP table loop of Levenshtein or a sibling.
    assert!(rank("edit-distance", Method::Beryllium).is_some_and(|k| k <= 10), "{:?}", r.rows);
    // The hybrid is ranked by scorers fitted on the other algorithm only.
    assert!(r.ranker.starts_with("cross-validated by algorithm: 2 folds"), "{}", r.ranker);
    assert_eq!(r.pools.len(), want.len(), "one candidate pool per query");
    assert!(r.pools.iter().all(|p| p.cands.iter().any(|c| c.hit)), "every pool holds a hit");
    assert!(rank("edit-distance", Method::Hybrid).is_some_and(|k| k <= 10), "{:?}", r.rows);
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    assert!(r.rows.iter().all(|x| x.unindexed.is_empty()), "every entry's file is indexed");
}
