//! What a new user meets in the first hour, as a user runs it: `pcode convert` reading as
//! `search --pseudo` does, from a file or standard input, and `--html` writing the page
//! alone.

use beryl::corpus::fetch::fetch;
use std::io::Write;
use std::process::{Command, Stdio};

fn beryl() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_beryl"));
    c.env("NO_COLOR", "1");
    c
}

#[test]
fn pcode_convert_reads_what_search_reads() {
    let body = "for i = 1 to n\n    if A[i] > m\n        m = A[i]\nreturn m\n";
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("body.txt");
    std::fs::write(&f, body).unwrap();
    let o = beryl().args(["pcode", "convert"]).arg(&f).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.starts_with("QUERY()") && out.contains("for"), "{out}");
    // The same from standard input.
    let mut c = beryl().args(["pcode", "convert", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    c.stdin.take().unwrap().write_all(body.as_bytes()).unwrap();
    let o = c.wait_with_output().unwrap();
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stdout), out);
    // A missing file: its OS error once.
    let o = beryl().args(["pcode", "convert", "/nonexistent/q.txt"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
}

#[test]
fn html_writes_the_page_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    let root = fetch("igraph").expect("fetching igraph");
    std::fs::copy(root.join("src/paths/floyd_warshall.c"), src.join("floyd_warshall.c")).unwrap();
    let idx = tmp.path().join("idx");
    assert!(beryl().arg("index").arg(&src).arg("--index").arg(&idx).output().unwrap().status.success());
    let page = tmp.path().join("r.html");
    let q = beryl::repo_path("queries/floyd-warshall.txt");
    let o = beryl().args(["search", "--pseudo"]).arg(&q).arg("--index").arg(&idx).arg("--html").arg(&page).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty(), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(std::fs::read_to_string(&page).unwrap().contains("floyd_warshall.c"));
    // With --json the JSON still comes.
    let o = beryl().args(["search", "--pseudo"]).arg(&q).arg("--index").arg(&idx).arg("--html").arg(&page).arg("--json").output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["fragments"].as_array().is_some_and(|f| !f.is_empty()));
}

/// Ranked results of a JSON search: (path, function) of each fragment's first span.
fn results(o: &std::process::Output) -> Vec<(String, String)> {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["fragments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["spans"][0]["path"].as_str().unwrap().to_string(), f["spans"][0]["function"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn a_scope_ranks_inside_it() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let root = fetch("igraph").expect("fetching igraph");
    for d in ["paths", "flow"] {
        let to = src.join(d);
        std::fs::create_dir_all(&to).unwrap();
        for e in std::fs::read_dir(root.join("src").join(d)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "c" || x == "h") {
                std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
            }
        }
    }
    let idx = tmp.path().join("idx");
    let o = beryl().arg("index").arg(&src).arg("--index").arg(&idx).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let q = beryl::repo_path("queries/dijkstra.txt");
    let search = |extra: &[&str]| beryl().args(["search", "--json", "--pseudo"]).arg(&q).arg("--index").arg(&idx).args(extra).output().unwrap();
    let flow = src.join("flow");
    let in_flow = |r: &[(String, String)]| r.iter().all(|(p, _)| p.starts_with(flow.to_str().unwrap()));

    // Globally the shortest-path code fills the first screen; inside flow/ the best three
    // are ones the global top 3 did not hold.
    let global = results(&search(&["--top", "3"]));
    assert!(global.iter().all(|(p, _)| p.contains("/paths/")), "{global:?}");
    let scoped = results(&search(&["--top", "3", "--path", "flow/**"]));
    assert_eq!(scoped.len(), 3, "{scoped:?}");
    assert!(in_flow(&scoped) && scoped.iter().all(|s| !global.contains(s)), "{scoped:?}");
    // The same from a working directory above the root, as the text report prints paths.
    let o = beryl().current_dir(tmp.path()).args(["search", "--json", "--top", "3", "--path", "src/flow/*.c", "--pseudo"]).arg(&q).arg("--index").arg(&idx).output().unwrap();
    assert_eq!(results(&o), scoped);

    // BM25 scores each function alone: the scoped list is the global ranking's in-scope part.
    let all = results(&search(&["--method", "bm25", "--top", "200"]));
    let want: Vec<_> = all.iter().filter(|(p, _)| p.starts_with(flow.to_str().unwrap())).take(5).cloned().collect();
    assert_eq!(results(&search(&["--method", "bm25", "--top", "5", "--path", "flow"])), want);
    // `!` leaves out; the last glob that matches decides.
    let r = results(&search(&["--top", "5", "--path", "**/*.c", "--path", "!paths/dijkstra.c"]));
    assert!(r.iter().all(|(p, _)| !p.ends_with("paths/dijkstra.c")) && r.len() == 5, "{r:?}");

    // English too, with a language; a scope that holds nothing says so.
    let o = beryl().args(["search", "--json", "--top", "3", "--lang", "c", "--path", "flow/", "maximum flow in a network"]).arg("--index").arg(&idx).output().unwrap();
    assert!(in_flow(&results(&o)));
    let o = beryl().args(["search", "--lang", "java", "maximum flow"]).arg("--index").arg(&idx).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no indexed file is inside --lang java"), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn one_text_layout_for_every_search() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("tests")).unwrap();
    let root = fetch("igraph").expect("fetching igraph");
    std::fs::copy(root.join("src/paths/floyd_warshall.c"), src.join("floyd_warshall.c")).unwrap();
    std::fs::copy(root.join("src/paths/floyd_warshall.c"), src.join("tests/floyd_copy.c")).unwrap();
    let idx = tmp.path().join("idx");
    assert!(beryl().arg("index").arg(&src).arg("--index").arg(&idx).output().unwrap().status.success());
    let q = beryl::repo_path("queries/floyd-warshall.txt");
    let pseudo = beryl().current_dir(&src).args(["search", "--top", "3", "--pseudo"]).arg(&q).arg("--index").arg(&idx).output().unwrap();
    let english = beryl().current_dir(&src).args(["search", "--top", "3", "all-pairs shortest paths"]).arg("--index").arg(&idx).output().unwrap();
    for o in [&pseudo, &english] {
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // Every result opens with `path:line: function  #rank score`, the path relative.
        let heads: Vec<&str> = out.lines().filter(|l| l.contains("  #") && l.contains(" score ")).collect();
        assert!(!heads.is_empty(), "{out}");
        for h in &heads {
            let (path, rest) = h.split_once(':').unwrap();
            assert!(path.ends_with(".c") && !path.starts_with('/'), "{h}");
            assert!(rest.split(':').next().unwrap().parse::<u32>().is_ok(), "{h}");
        }
        // The copy under tests/ is marked as such, wherever it is named.
        let named: Vec<&str> = out.lines().filter(|l| l.starts_with("tests/")).collect();
        assert!(!named.is_empty() && named.iter().all(|l| l.ends_with("[test]")), "{out}");
        let last = out.lines().last().unwrap();
        assert!(last.contains(" result") && last.contains(" query node"), "{out}");
    }
    // JSON marks it too.
    let o = beryl().args(["search", "--json", "--top", "3", "all-pairs shortest paths"]).arg("--index").arg(&idx).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let spans: Vec<&serde_json::Value> = v["fragments"].as_array().unwrap().iter().map(|f| &f["spans"][0]).collect();
    assert!(spans.iter().any(|s| s["test"] == true) && spans.iter().any(|s| s["test"] == false), "{spans:?}");
}
