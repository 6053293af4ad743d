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
    // The indexed root itself lies in a folder named like tests: only what is below the
    // root decides.
    let src = tmp.path().join("benchmarks").join("src");
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

/// The build report of `beryl index --json`.
fn report(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn exclusion_rules_leave_files_out_and_are_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let root = fetch("igraph").expect("fetching igraph");
    for (d, n) in [("paths", 4), ("flow", 3)] {
        std::fs::create_dir_all(src.join(d)).unwrap();
        let mut names: Vec<_> = std::fs::read_dir(root.join("src").join(d)).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "c")).collect();
        names.sort();
        for p in names.into_iter().take(n) {
            std::fs::copy(&p, src.join(d).join(p.file_name().unwrap())).unwrap();
        }
    }
    std::fs::create_dir_all(src.join("third_party/zlib")).unwrap();
    std::fs::copy(root.join("src/paths/floyd_warshall.c"), src.join("third_party/zlib/fw.c")).unwrap();
    std::fs::copy(root.join("src/paths/floyd_warshall.c"), src.join("paths/fw_gen.c")).unwrap();
    // A `.berylignore` in a subfolder, with a rule and a `!` exception to it.
    std::fs::write(src.join("flow/.berylignore"), "*.c\n!flow.c\n").unwrap();
    let idx = tmp.path().join("idx");
    let o = beryl().arg("index").arg(&src).arg("--index").arg(&idx).args(["--json", "--exclude", "third_party/", "--exclude", "*_gen.c"]).output().unwrap();
    let r = report(&o);
    let excluded = r["excluded"].as_array().unwrap();
    let count = |rule: &str, key: &str| excluded.iter().find(|e| e["rule"].as_str().unwrap().ends_with(rule)).map(|e| e[key].as_u64().unwrap());
    assert_eq!(count("--exclude third_party/", "folders"), Some(1), "{excluded:?}");
    assert_eq!(count("--exclude *_gen.c", "files"), Some(1), "{excluded:?}");
    let flow_has = std::fs::read_dir(src.join("flow")).unwrap().filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "c")).count();
    let kept_flow = usize::from(src.join("flow/flow.c").exists());
    assert_eq!(count(".berylignore: *.c", "files"), Some((flow_has - kept_flow) as u64), "{excluded:?}");
    assert_eq!(r["files"].as_u64(), Some((4 + kept_flow) as u64));

    // The text summary names each rule; an update walks the same way when given the same rules.
    let o = beryl().arg("index").arg(&src).arg("--index").arg(&idx).args(["--exclude", "third_party/", "--exclude", "*_gen.c"]).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("up to date") && out.contains("excluded: ") && out.contains("--exclude third_party/ (1 folder)"), "{out}");
    // A new file a rule covers changes nothing.
    std::fs::copy(root.join("src/paths/dijkstra.c"), src.join("flow/dijkstra_copy.c")).unwrap();
    let o = beryl().arg("index").arg(&src).arg("--index").arg(&idx).args(["--exclude", "third_party/", "--exclude", "*_gen.c"]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("up to date"), "{}", String::from_utf8_lossy(&o.stdout));
    // A search never returns what was left out.
    let o = beryl().args(["search", "--json", "--top", "10", "all-pairs shortest paths"]).arg("--index").arg(&idx).output().unwrap();
    assert!(results(&o).iter().all(|(p, _)| !p.contains("third_party") && !p.ends_with("_gen.c")));
    // A bad rule is an error before anything is written.
    let o = beryl().arg("index").arg(&src).arg("--index").arg(tmp.path().join("idx2")).args(["--exclude", "a/{b"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--exclude \"a/{b\""), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!tmp.path().join("idx2").exists());
}

#[test]
fn type_add_reads_a_template_file_as_c() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let root = fetch("igraph").expect("fetching igraph");
    // igraph writes its typed containers once, as `.pmt` templates a `.c` file includes.
    for f in ["src/core/heap.c", "src/core/heap.pmt", "src/paths/dijkstra.c", "src/paths/unweighted.c"] {
        let p = root.join(f);
        std::fs::copy(&p, src.join(p.file_name().unwrap())).unwrap();
    }
    // CUDA sources are C++ by default.
    std::fs::copy(root.join("src/paths/floyd_warshall.c"), src.join("fw_kernel.cu")).unwrap();
    let idx = tmp.path().join("idx");
    let q = beryl::repo_path("queries/heapsort.txt");
    let heap_first = |idx: &std::path::Path| {
        let o = beryl().args(["search", "--json", "--top", "1", "--pseudo"]).arg(&q).arg("--index").arg(idx).output().unwrap();
        results(&o)[0].0.ends_with("heap.pmt")
    };

    let r = report(&beryl().arg("index").arg(&src).arg("--index").arg(&idx).arg("--json").output().unwrap());
    assert_eq!(r["unread"]["pmt"].as_u64(), Some(1), "{r}");
    assert_eq!(r["files"].as_u64(), Some(4));
    let o = beryl().arg("index").arg(&src).arg("--index").arg(tmp.path().join("idx-text")).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("not read: .pmt 1 (to read an extension as a language beryl reads: --type-add EXT:c|cpp|java|python|rust|go)"));
    assert!(!heap_first(&idx));

    let r = report(&beryl().arg("index").arg(&src).arg("--index").arg(&idx).args(["--json", "--type-add", "pmt:c"]).output().unwrap());
    assert_eq!(r["files"].as_u64(), Some(5));
    assert!(r["unread"].as_object().unwrap().is_empty(), "{r}");
    assert!(heap_first(&idx));
    // Mapped to another language, the same bytes are read again, as that language.
    let r = report(&beryl().arg("index").arg(&src).arg("--index").arg(&idx).args(["--json", "--type-add", "pmt:cpp"]).output().unwrap());
    assert_eq!((r["changed_files"].as_u64(), r["up_to_date"].as_bool()), (Some(1), Some(false)), "{r}");
    let in_lang = |l: &str| {
        let o = beryl().args(["search", "--json", "--top", "5", "--lang", l, "--pseudo"]).arg(&q).arg("--index").arg(&idx).output().unwrap();
        results(&o).iter().any(|r| r.0.ends_with("heap.pmt"))
    };
    assert!(in_lang("cpp") && !in_lang("c"));

    // The same from the root's `.beryl.toml`, for every later build.
    std::fs::write(src.join(".beryl.toml"), "type-add = [\"pmt:c\"]\n").unwrap();
    let idx2 = tmp.path().join("idx2");
    let r = report(&beryl().arg("index").arg(&src).arg("--index").arg(&idx2).arg("--json").output().unwrap());
    assert_eq!(r["files"].as_u64(), Some(5));
    assert!(heap_first(&idx2));
    // A misspelt key or mapping is an error that names the file.
    std::fs::write(src.join(".beryl.toml"), "type_add = [\"pmt:c\"]\n").unwrap();
    let o = beryl().arg("index").arg(&src).arg("--index").arg(&idx2).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains(".beryl.toml"), "{}", String::from_utf8_lossy(&o.stderr));
    let o = beryl().arg("index").arg(&src).arg("--index").arg(&idx2).args(["--type-add", "pmt:cobol"]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("expected EXT:LANG"), "{}", String::from_utf8_lossy(&o.stderr));

    // A tree of nothing beryl reads says which extensions it found.
    let only = tmp.path().join("only");
    std::fs::create_dir_all(&only).unwrap();
    std::fs::copy(root.join("src/core/heap.pmt"), only.join("heap.pmt")).unwrap();
    let o = beryl().arg("index").arg(&only).arg("--index").arg(tmp.path().join("idx3")).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("found .pmt 1; --type-add"), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn progress_off_a_terminal_is_a_few_plain_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let root = fetch("igraph").expect("fetching igraph");
    for f in ["floyd_warshall.c", "dijkstra.c", "bellman_ford.c"] {
        std::fs::copy(root.join("src/paths").join(f), src.join(f)).unwrap();
    }
    let idx = tmp.path().join("idx");
    // Standard error is a pipe here, as in a log or CI.
    let o = beryl().arg("index").arg(&src).arg("--index").arg(&idx).arg("--json").output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("--json output is JSON alone");
    assert_eq!(v["files"].as_u64(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains('\r') && !err.contains('\x1b'), "{err:?}");
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines.len() <= 8, "{err}");
    for stage in ["parse 3 files in", "vectors 3 files in", "encode ", "write "] {
        assert!(lines.iter().any(|l| l.starts_with("beryl index: ") && l.contains(stage)), "no `{stage}` line in:\n{err}");
    }
    // The text summary is one line (here nothing was excluded or left unread).
    std::fs::remove_dir_all(&idx).unwrap();
    let o = beryl().arg("index").arg(&src).arg("--index").arg(&idx).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.contains("3 files") && out.contains("lines/s"), "{out}");
    // --quiet: nothing at all.
    std::fs::write(src.join("dijkstra.c"), std::fs::read_to_string(src.join("dijkstra.c")).unwrap() + "\n/* edited */\n").unwrap();
    let o = beryl().arg("index").arg(&src).arg("--index").arg(&idx).arg("--quiet").output().unwrap();
    assert!(o.status.success() && o.stdout.is_empty() && o.stderr.is_empty(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
}

#[test]
fn syntax_the_language_lacks_is_a_warning_with_its_place() {
    let tmp = tempfile::tempdir().unwrap();
    let q = tmp.path().join("shell.txt");
    // A loop stride and a statement on its test's line, as a user wrote them.
    std::fs::write(&q, "SHELL-SORT(A, n)\n    for gap = n/2 downto 1 by 7\n        for i = gap to n\n            if A[i] < A[i - gap] replace it with A[i - gap]\n    return A\n").unwrap();
    let o = beryl().args(["pcode", "convert"]).arg(&q).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    let out = String::from_utf8_lossy(&o.stdout);
    let at = |l: u32, c: u32| format!("{}:{l}:{c}: warning: ", q.display());
    assert!(err.contains(&(at(2, 28) + "`by 7`")), "{err}");
    assert!(err.contains(&(at(4, 13) + "no statement under this test")), "{err}");
    // The stride is not taken for part of the bound.
    assert!(out.contains("downto $1$") && !out.contains("by 7"), "{out}");
    // Without a header, the places are still the user's.
    let body = tmp.path().join("body.txt");
    std::fs::write(&body, "\nfor i = 1 to n step 2\n    s = s + A[i]\n").unwrap();
    let o = beryl().args(["pcode", "convert"]).arg(&body).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("{}:2:16: warning: `step 2`", body.display())), "{}", String::from_utf8_lossy(&o.stderr));
    // Well-formed pseudocode gets none.
    let o = beryl().args(["pcode", "convert"]).arg(beryl::repo_path("queries/heapsort.txt")).output().unwrap();
    assert!(o.status.success() && o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));

    // A search reports them too: on standard error, and in JSON.
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::copy(fetch("igraph").unwrap().join("src/paths/floyd_warshall.c"), src.join("fw.c")).unwrap();
    let idx = tmp.path().join("idx");
    assert!(beryl().arg("index").arg(&src).arg("--index").arg(&idx).output().unwrap().status.success());
    let o = beryl().args(["search", "--pseudo"]).arg(&q).arg("--index").arg(&idx).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains(&at(2, 28)), "{}", String::from_utf8_lossy(&o.stderr));
    let o = beryl().args(["search", "--json", "--pseudo"]).arg(&q).arg("--index").arg(&idx).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = v["warnings"].as_array().unwrap();
    assert_eq!(w.len(), 2, "{w:?}");
    assert_eq!((w[0]["line"].as_u64(), w[0]["col"].as_u64()), (Some(2), Some(28)));
}
