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
