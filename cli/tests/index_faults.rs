//! `beryl index` / `beryl search` as a user runs them: a SIGKILL in the middle of an index
//! run, damaged, missing and mismatched indexes, bad queries. Real files from igraph.

use beryl::corpus::fetch::fetch;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn beryl() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_beryl"));
    c.env("NO_COLOR", "1");
    c
}

fn queries() -> PathBuf {
    beryl::repo_path("queries")
}

/// A small corpus of real C files, copied so the test may change them.
fn corpus(dir: &Path) {
    let root = fetch("igraph").expect("fetching igraph");
    for f in ["floyd_warshall.c", "bellman_ford.c", "unweighted.c"] {
        std::fs::copy(root.join("src/paths").join(f), dir.join(f)).unwrap();
    }
}

fn run(c: &mut Command) -> (i32, String, String) {
    let o = c.output().expect("running beryl");
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn search(index: &Path) -> (i32, String, String) {
    run(beryl().arg("search").arg("--pseudo").arg(queries().join("floyd-warshall.p")).arg("--index").arg(index).arg("--top").arg("3"))
}

#[test]
fn killed_index_run_leaves_the_previous_index_searchable() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    corpus(&src);
    let index = tmp.path().join("idx");

    let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0, "{out}{err}");
    let (code, before, err) = search(&index);
    assert_eq!(code, 0, "{err}");
    assert!(before.contains("#1 score"), "{before}");

    // Change a file, then kill the indexer after it wrote the new generation aside.
    let f = src.join("unweighted.c");
    let mut text = std::fs::read_to_string(&f).unwrap();
    text.push_str("\nint beryl_added(int a, int b) { return a < b ? a : b; }\n");
    std::fs::write(&f, text).unwrap();
    let mut child = beryl()
        .arg("index")
        .arg(&src)
        .arg("--index")
        .arg(&index)
        .env("BERYL_TEST_PAUSE_BEFORE_SWAP_MS", "60000")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut stages = Vec::new();
    for l in lines.by_ref() {
        let l = l.unwrap();
        stages.push(l.clone());
        if l.contains("swap") {
            break;
        }
    }
    assert!(stages.iter().any(|s| s.contains("swap")), "{stages:?}");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let leftovers: Vec<String> = std::fs::read_dir(&index).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert!(leftovers.iter().any(|n| n.contains(".tmp-")), "the killed run wrote aside: {leftovers:?}");

    // The previous index answers exactly as before.
    let (code, after, err) = search(&index);
    assert_eq!(code, 0, "{err}");
    let strip = |s: &str| s.lines().filter(|l| !l.contains(" ms (")).collect::<Vec<_>>().join("\n");
    assert_eq!(strip(&before), strip(&after));

    // A new run completes, sees one changed file, and cleans up the killed run's folder.
    let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("2 unchanged, 1 changed"), "{out}");
    let names: Vec<String> = std::fs::read_dir(&index).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert!(!names.iter().any(|n| n.contains(".tmp-")), "{names:?}");
    assert_eq!(names.iter().filter(|n| n.starts_with("gen-")).count(), 1, "{names:?}");
    let (code, out, _) = run(beryl().arg("search").arg("smaller of two integers").arg("--index").arg(&index).arg("--top").arg("20"));
    assert_eq!(code, 0);
    assert!(out.contains("beryl_added"), "{out}");

    // Unchanged sources: nothing to do.
    let (code, out, _) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0);
    assert!(out.contains("up to date"), "{out}");
}

#[test]
fn damaged_missing_and_mismatched_indexes_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    corpus(&src);
    let index = tmp.path().join("idx");

    let (code, _, err) = search(&index);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("no index at"), "{err}");

    let (code, _, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0, "{err}");
    let gen = index.join(std::fs::read_link(index.join("current")).unwrap());

    // Malformed p-code: a syntax error with its line, exit 1, index untouched.
    let bad = tmp.path().join("bad.p");
    std::fs::write(&bad, "SORT(A)\n  for $i = 1$ to\n    $x = $\n").unwrap();
    let (code, _, err) = run(beryl().arg("search").arg("--pseudo").arg(&bad).arg("--index").arg(&index));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("bad.p:2"), "{err}");

    // Truncated vectors.
    let faiss = gen.join("nodes.faiss");
    let keep = std::fs::read(&faiss).unwrap();
    std::fs::write(&faiss, &keep[..keep.len() / 3]).unwrap();
    let (code, _, err) = search(&index);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("damaged"), "{err}");
    std::fs::write(&faiss, &keep).unwrap();

    // Garbage database.
    let db = gen.join("index.sqlite");
    let keep_db = std::fs::read(&db).unwrap();
    std::fs::write(&db, b"this is not a database at all, not even close........................................").unwrap();
    let (code, _, err) = search(&index);
    assert_eq!(code, 3, "{err}");
    std::fs::write(&db, &keep_db).unwrap();

    // Built by another encoder, at either level.
    let meta = gen.join("meta.json");
    let keep_meta = std::fs::read_to_string(&meta).unwrap();
    for field in ["encoder", "function_encoder"] {
        let mut v: serde_json::Value = serde_json::from_str(&keep_meta).unwrap();
        v[field] = "0000000000000000000000000000000000000000000000000000000000000000".into();
        std::fs::write(&meta, v.to_string()).unwrap();
        let (code, _, err) = search(&index);
        assert_eq!(code, 3, "{field}: {err}");
        assert!(err.contains("does not match") && err.contains("encoder"), "{field}: {err}");
    }
    std::fs::write(&meta, &keep_meta).unwrap();

    // Another model than the one given.
    let other = tmp.path().join("model");
    std::fs::create_dir(&other).unwrap();
    let shipped = beryl::repo_path("models/default");
    std::fs::copy(shipped.join("manifest.json"), other.join("manifest.json")).unwrap();
    let mut w = std::fs::read(shipped.join("weights.safetensors")).unwrap();
    let last = w.len() - 1;
    w[last] ^= 1;
    std::fs::write(other.join("weights.safetensors"), w).unwrap();
    let (code, _, err) = run(beryl().arg("search").arg("shortest paths").arg("--index").arg(&index).arg("--model").arg(&other));
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("model"), "{err}");

    // And after all that the index still works.
    let (code, out, err) = search(&index);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("#1 score"), "{out}");
}
