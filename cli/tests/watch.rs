//! `beryl watch` as a user runs it: a saved change reaches searches within seconds, a
//! deleted file leaves them, and killing the watcher leaves a searchable index.

use beryl::corpus::fetch::fetch;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn beryl() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_beryl"));
    c.env("NO_COLOR", "1");
    c
}

fn search(index: &Path, query: &str) -> String {
    let o = beryl().arg("search").arg(query).arg("--index").arg(index).arg("--top").arg("20").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Polls `check` until it holds or `limit` passes; the time it took.
fn until(limit: Duration, mut check: impl FnMut() -> bool) -> Option<Duration> {
    let t = Instant::now();
    while t.elapsed() < limit {
        if check() {
            return Some(t.elapsed());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

#[test]
fn watched_changes_reach_searches_and_a_kill_leaves_the_index() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    let root = fetch("igraph").expect("fetching igraph");
    for f in ["floyd_warshall.c", "bellman_ford.c", "unweighted.c"] {
        std::fs::copy(root.join("src/paths").join(f), src.join(f)).unwrap();
    }
    let index = tmp.path().join("idx");
    let mut child = beryl().arg("watch").arg(&src).arg("--index").arg(&index).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("indexed anew") && first.contains("watching"), "{first}");

    // A saved function is found.
    let f = src.join("unweighted.c");
    let mut text = std::fs::read_to_string(&f).unwrap();
    text.push_str("\nint beryl_probe_gcd(int a, int b) { while (b != 0) { int t = a % b; a = b; b = t; } return a; }\n");
    std::fs::write(&f, text).unwrap();
    let took = until(Duration::from_secs(60), || search(&index, "greatest common divisor of two integers").contains("beryl_probe_gcd"));
    assert!(took.is_some(), "the saved function never reached a search");
    eprintln!("save to search: {:.2} s", took.unwrap().as_secs_f64());
    let update = lines.next().unwrap().unwrap();
    assert!(update.contains("1 changed, 0 new, 0 removed files; updated"), "{update}");

    // A deleted file leaves the results.
    std::fs::remove_file(src.join("bellman_ford.c")).unwrap();
    let gone = until(Duration::from_secs(60), || !search(&index, "shortest paths with the Bellman-Ford algorithm").contains("bellman_ford.c"));
    assert!(gone.is_some(), "the deleted file stayed in the results");
    let update = lines.next().unwrap().unwrap();
    assert!(update.contains("0 changed, 0 new, 1 removed files; updated"), "{update}");

    // A root's `.beryl.toml` is watched: mapping an extension reads its files, and later
    // saves of them are seen.
    std::fs::write(src.join("probe.tpl"), "int beryl_probe_lcm(int a, int b) { int m = a; while (m % b != 0) m += a; return m; }\n").unwrap();
    std::fs::write(src.join(".beryl.toml"), "type-add = [\"tpl:c\"]\n").unwrap();
    let seen = until(Duration::from_secs(60), || search(&index, "least common multiple of two integers").contains("beryl_probe_lcm"));
    assert!(seen.is_some(), "the mapped extension was never read");
    let update = lines.next().unwrap().unwrap();
    assert!(update.contains("0 changed, 1 new, 0 removed files; updated"), "{update}");
    std::fs::write(src.join("probe.tpl"), "int beryl_probe_square(int x) { return x * x; }\n").unwrap();
    let seen = until(Duration::from_secs(60), || search(&index, "square of an integer").contains("beryl_probe_square"));
    assert!(seen.is_some(), "a save of a mapped file was not seen");
    let update = lines.next().unwrap().unwrap();
    assert!(update.contains("1 changed, 0 new, 0 removed files; updated"), "{update}");

    // Killed while idle or mid-update: the index in place answers.
    std::fs::write(src.join("extra.c"), "int beryl_probe_twice(int x) { return 2 * x; }\n").unwrap();
    std::thread::sleep(Duration::from_millis(250));
    child.kill().unwrap();
    child.wait().unwrap();
    let out = search(&index, "greatest common divisor of two integers");
    assert!(out.contains("beryl_probe_gcd"), "{out}");
}

#[test]
fn a_root_removed_and_made_again_is_watched_again() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    let root = fetch("igraph").expect("fetching igraph");
    std::fs::copy(root.join("src/paths/floyd_warshall.c"), src.join("floyd_warshall.c")).unwrap();
    let index = tmp.path().join("idx");
    let mut child = beryl().arg("watch").arg(&src).arg("--index").arg(&index).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("watching"), "{first}");

    // Removed (a checkout switching branches, a restore), then made again with new code.
    std::fs::remove_dir_all(&src).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    std::fs::create_dir(&src).unwrap();
    std::fs::copy(root.join("src/paths/floyd_warshall.c"), src.join("floyd_warshall.c")).unwrap();
    std::fs::write(src.join("gcd.c"), "int beryl_probe_again(int a, int b) { while (b != 0) { int t = a % b; a = b; b = t; } return a; }\n").unwrap();
    let seen = until(Duration::from_secs(60), || search(&index, "greatest common divisor of two integers").contains("beryl_probe_again"));
    assert!(seen.is_some(), "files in the root made again never reached a search");

    // And later saves in it too.
    std::fs::write(src.join("twice.c"), "int beryl_probe_doubled(int x) { return 2 * x; }\n").unwrap();
    let seen = until(Duration::from_secs(60), || search(&index, "double an integer").contains("beryl_probe_doubled"));
    assert!(seen.is_some(), "a save after the root was made again never reached a search");
    child.kill().unwrap();
    child.wait().unwrap();
}
