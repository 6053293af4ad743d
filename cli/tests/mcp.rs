//! `beryl mcp` driven by a real MCP client, the official Python SDK (installed by
//! scripts/setup.sh): initialize, list tools, searches, show, status, the `index` tool with
//! progress, bad calls as tool errors, and a damaged index (scripts/mcp-client.py).

use beryl::corpus::fetch::fetch;
use std::path::PathBuf;
use std::process::Command;

fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("BERYL_PYTHON").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let native = std::env::var_os("BERYL_NATIVE").map_or_else(|| PathBuf::from("/opt/beryl"), PathBuf::from);
    native.join("py/bin/python")
}

#[test]
fn a_real_client_searches_igraph_through_the_protocol() {
    let py = python();
    assert!(py.exists(), "{} is missing: run scripts/setup.sh (it installs the MCP Python SDK)", py.display());
    let root = fetch("igraph").unwrap().join("src/paths");
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let bin = env!("CARGO_BIN_EXE_beryl");
    let o = Command::new(bin).arg("index").arg(&root).arg("--index").arg(&idx).output().unwrap();
    assert!(o.status.success(), "index: {}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new(&py)
        .arg(beryl::repo_path("scripts/mcp-client.py"))
        .arg("check")
        .arg(bin)
        .arg(&idx)
        .arg(beryl::repo_path("queries/floyd-warshall.txt"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    eprintln!("{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success() && out.contains("all passed"), "the MCP client check failed:\n{out}");
    // Every step printed its line.
    for step in ["initialize", "list_tools", "search_pseudocode", "search_text", "scoped search", "unknown language", "empty scope", "show", "status", "empty query", "bad p-code", "huge top", "index:", "damaged index"] {
        assert!(out.lines().any(|l| l.starts_with("ok") && l.contains(step)), "no `{step}` step in:\n{out}");
    }
}
