//! `beryl index` / `beryl search` as a user runs them: a SIGKILL in the middle of an index
//! run, damaged, missing and mismatched indexes, bad queries. Real files from igraph.

mod common;

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

/// A scratch folder with the small real corpus in `src/` and the place of its index.
fn scratch() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    corpus(&src);
    let index = tmp.path().join("idx");
    (tmp, src, index)
}

fn search(index: &Path) -> (i32, String, String) {
    run(beryl().arg("search").arg("--pseudo").arg(queries().join("floyd-warshall.p")).arg("--index").arg(index).arg("--top").arg("3"))
}

#[test]
fn killed_index_run_leaves_the_previous_index_searchable() {
    let (_tmp, src, index) = scratch();

    let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0, "{out}{err}");
    let (code, before, err) = search(&index);
    assert_eq!(code, 0, "{err}");
    assert!(before.contains("#1 score"), "{before}");

    // Change a file, then kill the indexer (an update) after it wrote the new generation
    // aside.
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
        // The line that ends the write stage comes as the swap begins (and pauses).
        if l.contains(": write ") {
            break;
        }
    }
    assert!(stages.iter().any(|s| s.contains(": write ")), "{stages:?}");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let leftovers: Vec<String> = std::fs::read_dir(&index).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert!(leftovers.iter().any(|n| n.contains(".tmp-")), "the killed run wrote aside: {leftovers:?}");

    // The previous index answers exactly as before.
    let (code, after, err) = search(&index);
    assert_eq!(code, 0, "{err}");
    let strip = |s: &str| s.lines().filter(|l| !l.contains(" ms (")).collect::<Vec<_>>().join("\n");
    assert_eq!(strip(&before), strip(&after));

    // A new run completes, updating the index for the one changed file, and cleans up the
    // killed run's folder.
    let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("2 unchanged, 1 changed") && out.contains("updated in"), "{out}");
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
    let (tmp, src, index) = scratch();

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
        common::forge_meta(&gen, |v| v[field] = "0000000000000000000000000000000000000000000000000000000000000000".into());
        let (code, _, err) = search(&index);
        assert_eq!(code, 3, "{field}: {err}");
        assert!(err.contains("does not match") && err.contains("encoder"), "{field}: {err}");
        // Edited in meta.json alone, it is a damaged index.
        common::forge_meta(&gen, |_| {});
        let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&meta).unwrap()).unwrap();
        v[field] = "1111111111111111111111111111111111111111111111111111111111111111".into();
        std::fs::write(&meta, v.to_string()).unwrap();
        let (code, _, err) = search(&index);
        assert_eq!(code, 3, "{field}: {err}");
        assert!(err.contains("damaged") && err.contains("meta.json"), "{field}: {err}");
    }
    common::forge_meta(&gen, |v| *v = serde_json::from_str(&keep_meta).unwrap());

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

/// `open` `n` times, `middle`, then `close` `n` times, 100 to a line.
fn nest(head: &str, open: &str, middle: &str, close: &str, n: usize, tail: &str) -> String {
    let lines = |s: &str| (0..n).map(|i| if i % 100 == 99 { format!("{s}\n") } else { s.to_string() }).collect::<String>();
    format!("{head}{}{middle}{}{tail}", lines(open), lines(close))
}

/// Generation folders of an index directory.
fn generations(index: &Path) -> Vec<String> {
    let mut g: Vec<String> =
        std::fs::read_dir(index).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.starts_with("gen-")).collect();
    g.sort();
    g
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if std::fs::symlink_metadata(&p).unwrap().is_dir() {
                todo.push(p);
            } else {
                let bytes = std::fs::read_link(&p).map(|t| t.to_string_lossy().into_owned().into_bytes()).or_else(|_| std::fs::read(&p)).unwrap();
                out.push((p, bytes));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn deeply_nested_files_are_skipped_and_the_rest_indexed() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    corpus(&src);
    let blocks = src.join("blocks.c");
    std::fs::write(&blocks, nest("void f(void) {", "{", "int x = 1;", "}", 5_000, "}\n")).unwrap();
    std::fs::write(src.join("parens.c"), nest("int g(int a) { return ", "(", "a", ")", 10_000, "; }\n")).unwrap();
    let index = tmp.path().join("idx");

    let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("3 files, ") && out.contains("2 files skipped (too_deep 2)"), "{out}");
    let (code, out, err) = search(&index);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("igraph_distances_floyd_warshall"), "{out}");

    let (code, out, err) = run(beryl().arg("graph").arg(&src).arg("--format").arg("stats"));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("too_deep 2"), "{out}");

    let (code, out, err) = run(beryl().arg("anonymize").arg(&blocks));
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("void func_0(void) {{{"), "{}", &out[..40.min(out.len())]);
}

#[test]
fn searches_during_rebuilds_never_fail() {
    let (_tmp, src, index) = scratch();
    let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0, "{out}{err}");

    // A long-lived reader keeps the generation it opened, whatever is built meanwhile.
    let held = beryl::index::Index::open(&index, None, 32).expect("opens");
    for _ in 0..2 {
        let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index).arg("--force"));
        assert_eq!(code, 0, "{out}{err}");
    }
    assert!(held.dir.join("nodes.faiss").is_file(), "{} was swept while open", held.dir.display());
    assert_eq!(held.store.files().unwrap().len(), 3);
    let pinned = held.dir.clone();
    drop(held);
    let (code, _, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index).arg("--force"));
    assert_eq!(code, 0, "{err}");
    assert!(!pinned.exists(), "a generation no one reads is removed");
    assert_eq!(generations(&index).len(), 1);

    // Searches in processes and opens in this one, in a loop, while the index is rebuilt.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let searcher = {
        let (stop, index) = (stop.clone(), index.clone());
        std::thread::spawn(move || {
            let mut failures = Vec::new();
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let (code, out, err) =
                    run(beryl().arg("search").arg("--index").arg(&index).arg("--pseudo").arg(queries().join("bfs.p")).arg("--top").arg("1"));
                if code != 0 || !out.contains("#1 score") {
                    failures.push(format!("exit {code}: {err}"));
                }
                n += 1;
            }
            (n, failures)
        })
    };
    let opener = {
        let (stop, index) = (stop.clone(), index.clone());
        std::thread::spawn(move || {
            let mut failures = Vec::new();
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                match beryl::index::Index::open(&index, None, 32) {
                    Ok(idx) if idx.store.files().is_ok_and(|f| f.len() == 3) => {}
                    Ok(_) => failures.push("an opened index lost its files".to_string()),
                    Err(e) => failures.push(e.to_string()),
                }
                n += 1;
            }
            (n, failures)
        })
    };
    for _ in 0..10 {
        let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index).arg("--force"));
        assert_eq!(code, 0, "{out}{err}");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (searches, search_failures) = searcher.join().unwrap();
    let (opens, open_failures) = opener.join().unwrap();
    assert!(search_failures.is_empty() && open_failures.is_empty(), "{search_failures:?} {open_failures:?}");
    assert!(searches >= 3 && opens >= 10, "{searches} searches, {opens} opens");
    // Generations pinned during a sweep go with the next build.
    let (code, _, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index).arg("--force"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(generations(&index).len(), 1, "{:?}", generations(&index));
}

#[test]
fn failed_runs_leave_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    // No source at all: nothing is created, not even the default `.beryl` beside the file.
    let notes = tmp.path().join("notes.txt");
    std::fs::write(&notes, "not code\n").unwrap();
    let (code, _, err) = run(beryl().arg("index").arg(&notes));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no C, C++, Java, Python, Rust or Go source files"), "{err}");
    assert!(!tmp.path().join(".beryl").exists());

    // Sources that are all skipped fail after the lock was taken: what the run made goes.
    let deep = tmp.path().join("deep");
    std::fs::create_dir(&deep).unwrap();
    std::fs::write(deep.join("blocks.c"), nest("void f(void) {", "{", "int x = 1;", "}", 5_000, "}\n")).unwrap();
    let fresh = tmp.path().join("fresh");
    let (code, _, err) = run(beryl().arg("index").arg(&deep).arg("--index").arg(fresh.join("a/idx")));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("too_deep 1"), "{err}");
    assert!(!fresh.exists(), "{:?}", snapshot(&fresh));
    // A folder the user made stays, without a lock.
    let made = tmp.path().join("made");
    std::fs::create_dir(&made).unwrap();
    let (code, _, _) = run(beryl().arg("index").arg(&deep).arg("--index").arg(&made));
    assert_eq!(code, 1);
    assert_eq!(std::fs::read_dir(&made).unwrap().count(), 0);

    // A failed run over an index keeps it as it was, lock file included, and searchable.
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    corpus(&src);
    let index = tmp.path().join("idx");
    let (code, _, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0, "{err}");
    // The lock file holds the pid of its last holder; the rest must stay byte for byte.
    let unlocked = |s: Vec<(PathBuf, Vec<u8>)>| s.into_iter().filter(|(p, _)| !p.ends_with("lock")).collect::<Vec<_>>();
    let before = unlocked(snapshot(&index));
    let (code, _, _) = run(beryl().arg("index").arg(&deep).arg("--index").arg(&index).arg("--force"));
    assert_eq!(code, 1);
    assert!(unlocked(snapshot(&index)) == before, "a failed run changed the index");
    assert!(index.join("lock").is_file());
    let (code, _, err) = search(&index);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn damaged_vector_files_are_noticed_and_rebuilt() {
    let (_tmp, src, index) = scratch();
    let (code, _, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0, "{err}");
    let gen = index.join(std::fs::read_link(index.join("current")).unwrap());
    for name in ["nodes.faiss", "functions.faiss"] {
        // Random bytes over the middle: the sizes and headers stay as FAISS expects.
        let p = gen.join(name);
        let keep = std::fs::read(&p).unwrap();
        let mut bad = keep.clone();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for b in &mut bad[keep.len() / 2..keep.len() / 2 + 64] {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        std::fs::write(&p, &bad).unwrap();
        let (code, _, err) = search(&index);
        assert_eq!(code, 3, "{name}: {err}");
        assert!(err.contains("damaged") && err.contains(name), "{name}: {err}");
        let (code, _, err) = run(beryl().arg("search").arg("shortest paths").arg("--index").arg(&index));
        assert_eq!(code, 3, "{name}: {err}");
        std::fs::write(&p, &keep).unwrap();
    }
    // `beryl index`, as the message says, rebuilds a damaged index even with no source changed.
    let p = gen.join("functions.faiss");
    let mut bad = std::fs::read(&p).unwrap();
    let mid = bad.len() / 2;
    bad[mid] ^= 0xff;
    std::fs::write(&p, &bad).unwrap();
    let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("up to date"), "{out}");
    let (code, out, err) = search(&index);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("#1 score"), "{out}");
}

/// Byte `at` of `path` flipped, and `verified.json` told that the file as it is now is the
/// one found whole: the damage a disk makes in place, which no `stat` shows.
fn rot(gen: &Path, name: &str, at: usize) {
    use std::os::unix::fs::MetadataExt;
    let p = gen.join(name);
    let mut b = std::fs::read(&p).unwrap();
    b[at] ^= 0x5a;
    std::fs::write(&p, &b).unwrap();
    let rec = gen.join("verified.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
    let m = std::fs::metadata(&p).unwrap();
    let e = &mut v[name];
    assert!(e.is_object(), "{name} is not in the record: {v}");
    e["len"] = m.len().into();
    e["ino"] = m.ino().into();
    e["dev"] = m.dev().into();
    e["mtime"] = serde_json::json!([m.mtime(), m.mtime_nsec()]);
    e["ctime"] = serde_json::json!([m.ctime(), m.ctime_nsec()]);
    std::fs::write(&rec, v.to_string()).unwrap();
}

#[test]
fn opening_sums_a_file_once_and_verify_reads_every_byte() {
    let (_tmp, src, index) = scratch();
    let (code, _, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0, "{err}");
    let gen = index.join(std::fs::read_link(index.join("current")).unwrap());
    // The build recorded every file it summed.
    let rec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(gen.join("verified.json")).unwrap()).unwrap();
    for name in ["index.sqlite", "nodes.sqlite", "nodes.faiss", "functions.faiss", "graph.bin", "shapes.bin", "lexical.bin", "icfg.bin"] {
        assert!(rec[name]["sum"].is_string(), "{name}: {rec}");
    }
    let (code, out, err) = run(beryl().arg("verify").arg("--index").arg(&index));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("every file has its recorded sum"), "{out}");

    // A damaged file the record does not see: opening trusts the record, `verify` does not
    // (exit 3, naming the file), and takes the file out of the record, so that the next
    // open sums it and refuses the index.
    let size = std::fs::metadata(gen.join("functions.faiss")).unwrap().len() as usize;
    rot(&gen, "functions.faiss", size / 2);
    let (code, _, err) = run(beryl().arg("verify").arg("--index").arg(&index));
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("damaged") && err.contains("functions.faiss"), "{err}");
    let (code, _, err) = search(&index);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("functions.faiss"), "{err}");
    // `beryl index` rebuilds it, and the new generation verifies.
    let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("up to date"), "{out}");
    let (code, _, err) = run(beryl().arg("verify").arg("--index").arg(&index));
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = search(&index);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("#1 score"), "{out}");

    // A record that is not one means every file is summed again.
    let gen = index.join(std::fs::read_link(index.join("current")).unwrap());
    std::fs::write(gen.join("verified.json"), b"{ torn").unwrap();
    let (code, _, err) = search(&index);
    assert_eq!(code, 0, "{err}");
    let rec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(gen.join("verified.json")).unwrap()).unwrap();
    assert!(rec["shapes.bin"]["sum"].is_string(), "{rec}");

    // The nodes' database, which updates link rather than copy, is checked as the main one.
    let size = std::fs::metadata(gen.join("nodes.sqlite")).unwrap().len() as usize;
    rot(&gen, "nodes.sqlite", size / 2);
    let (code, _, err) = run(beryl().arg("verify").arg("--index").arg(&index));
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("damaged") && err.contains("nodes.sqlite"), "{err}");
}

#[test]
fn an_index_of_a_newer_format_is_left_alone() {
    let (_tmp, src, index) = scratch();
    let (code, _, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0, "{err}");
    let meta = index.join(std::fs::read_link(index.join("current")).unwrap()).join("meta.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&meta).unwrap()).unwrap();
    let newer = beryl::index::FORMAT + 1;
    v["format"] = newer.into();
    // A newer format may add and change fields this beryl cannot read.
    v["checksums"] = "a newer layout".into();
    std::fs::write(&meta, v.to_string()).unwrap();
    let before = snapshot(&index);
    for force in [false, true] {
        let mut c = beryl();
        c.arg("index").arg(&src).arg("--index").arg(&index);
        if force {
            c.arg("--force");
        }
        let (code, _, err) = run(&mut c);
        assert_eq!(code, 3, "{err}");
        let (want_new, want_own) = (format!("format {newer}"), format!("format {}", beryl::index::FORMAT));
        assert!(err.contains(&want_new) && err.contains(&want_own) && err.contains("remove it"), "{err}");
        assert!(snapshot(&index) == before, "the newer index was changed");
    }
    let (code, _, err) = search(&index);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains(&format!("format {newer}")), "{err}");
}

#[test]
fn two_writers_on_one_index_one_refuses() {
    let (_tmp, src, index) = scratch();
    let (code, _, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0, "{err}");
    // Both start at once; whichever takes the lock first then waits 8 s before its swap,
    // long past the moment the other asks for the lock.
    let start = || {
        beryl()
            .arg("index")
            .arg(&src)
            .arg("--index")
            .arg(&index)
            .arg("--force")
            .env("BERYL_TEST_PAUSE_BEFORE_SWAP_MS", "8000")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (start(), start());
    let ids = [a.id(), b.id()];
    let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
    let codes: Vec<i32> = outs.iter().map(|o| o.status.code().unwrap_or(-1)).collect();
    let errs: Vec<String> = outs.iter().map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).collect();
    let winner = codes.iter().position(|&c| c == 0).unwrap_or_else(|| panic!("{codes:?} {errs:?}"));
    let loser = 1 - winner;
    assert_eq!(codes[loser], 1, "{errs:?}");
    let busy = format!("another `beryl index` (process {}) is writing {}", ids[winner], index.display());
    assert!(errs[loser].contains(&busy), "{}", errs[loser]);
    let (code, out, err) = search(&index);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("#1 score"), "{out}");
    assert_eq!(generations(&index).len(), 1, "{:?}", generations(&index));
}

#[test]
fn a_file_skipped_in_an_update_loses_its_entries() {
    let (_tmp, src, index) = scratch();
    let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0, "{out}{err}");
    let find = |what: &str| {
        let (code, out, err) = run(beryl().arg("search").arg(what).arg("--index").arg(&index).arg("--top").arg("30"));
        assert_eq!(code, 0, "{err}");
        out
    };
    assert!(find("shortest paths with the Bellman-Ford algorithm").contains("bellman_ford.c"));

    // One file nested past what the parser reads, another turned binary: both leave.
    let bf = src.join("bellman_ford.c");
    let original = std::fs::read(&bf).unwrap();
    std::fs::write(&bf, nest("void f(void) {", "{", "int x = 1;", "}", 5_000, "}\n")).unwrap();
    let uw = src.join("unweighted.c");
    let mut bytes = std::fs::read(&uw).unwrap();
    bytes[10] = 0;
    std::fs::write(&uw, &bytes).unwrap();
    let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("updated in") && out.contains("2 files skipped (binary 1, too_deep 1)"), "{out}");
    let found = find("shortest paths with the Bellman-Ford algorithm");
    assert!(!found.contains("bellman_ford.c") && !found.contains("unweighted.c"), "{found}");

    // Unchanged since: up to date, still saying what it skips.
    let (code, out, _) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0);
    assert!(out.contains("up to date"), "{out}");

    // Restored: back in the index.
    std::fs::write(&bf, original).unwrap();
    let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("updated in"), "{out}");
    assert!(find("shortest paths with the Bellman-Ford algorithm").contains("bellman_ford.c"));
}

/// An update written as a patch (`BERYL_PATCH_FROM=0` makes any index take one): the new
/// generation links the first build's files, answers with the patch's functions, keeps
/// trusting the linked files without reading them again, and a damaged patch is found and
/// rebuilt like any damaged file.
#[test]
fn a_patched_update_links_the_base_and_its_damage_is_noticed() {
    use std::os::unix::fs::MetadataExt;
    let (_tmp, src, index) = scratch();
    let (code, _, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index));
    assert_eq!(code, 0, "{err}");
    let current = |index: &Path| index.join(std::fs::read_link(index.join("current")).unwrap());
    let first = current(&index);
    let inode = |p: &Path| std::fs::metadata(p).unwrap().ino();
    let base: Vec<(&str, u64)> = ["nodes.faiss", "shapes.bin", "icfg.bin"].iter().map(|n| (*n, inode(&first.join(n)))).collect();
    for (i, added) in ["int beryl_added(int a, int b) { return a < b ? a : b; }", "int beryl_larger(int a, int b) { return a > b ? a : b; }"].iter().enumerate() {
        let f = src.join("unweighted.c");
        let text = std::fs::read_to_string(&f).unwrap();
        std::fs::write(&f, format!("{text}\n{added}\n")).unwrap();
        let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index).env("BERYL_PATCH_FROM", "0"));
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("updated in"), "update {i}: {out}");
        let gen = current(&index);
        assert!(gen.join("patch.bin").is_file(), "update {i}");
        for (name, ino) in &base {
            assert_eq!(inode(&gen.join(name)), *ino, "update {i}: {name} is the first build's file");
        }
        // The record follows the linked files' change time: the next open trusts them.
        let rec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(gen.join("verified.json")).unwrap()).unwrap();
        let m = std::fs::metadata(gen.join("nodes.faiss")).unwrap();
        assert_eq!(rec["nodes.faiss"]["ctime"], serde_json::json!([m.ctime(), m.ctime_nsec()]), "update {i}");
    }
    for (q, want) in [("smaller of two integers", "beryl_added"), ("larger of two integers", "beryl_larger")] {
        let (code, out, err) = run(beryl().arg("search").arg(q).arg("--index").arg(&index).arg("--top").arg("20"));
        assert_eq!(code, 0, "{err}");
        assert!(out.contains(want), "{q}: {out}");
    }
    let (code, out, err) = search(&index);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("#1 score"), "{out}");
    let (code, _, err) = run(beryl().arg("verify").arg("--index").arg(&index));
    assert_eq!(code, 0, "{err}");

    // A damaged patch: searches and `verify` refuse it by name, `beryl index` builds anew.
    let gen = current(&index);
    let size = std::fs::metadata(gen.join("patch.bin")).unwrap().len() as usize;
    rot(&gen, "patch.bin", size / 2);
    let (code, _, err) = run(beryl().arg("verify").arg("--index").arg(&index));
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("patch.bin"), "{err}");
    let (code, _, err) = search(&index);
    assert_eq!(code, 3, "{err}");
    let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index).env("BERYL_PATCH_FROM", "0"));
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("up to date") && !out.contains("updated in"), "{out}");
    assert!(!current(&index).join("patch.bin").exists());
    let (code, out, err) = search(&index);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("#1 score"), "{out}");

    // A base file written to since it was summed is checked before a patch links it: found
    // damaged, the update builds anew instead of passing the damage on as verified.
    let p = current(&index).join("shapes.bin");
    let mut b = std::fs::read(&p).unwrap();
    let mid = b.len() / 2;
    b[mid] ^= 0x5a;
    std::fs::write(&p, &b).unwrap();
    let f = src.join("bellman_ford.c");
    let text = std::fs::read_to_string(&f).unwrap();
    std::fs::write(&f, format!("{text}\nint beryl_third(int a) {{ return a + 3; }}\n")).unwrap();
    let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&index).env("BERYL_PATCH_FROM", "0"));
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("updated in"), "{out}");
    let (code, _, err) = run(beryl().arg("verify").arg("--index").arg(&index));
    assert_eq!(code, 0, "{err}");
}
