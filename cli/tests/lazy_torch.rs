//! libtorch is loaded by the first call that needs it, not at every start: a command that
//! runs no model never loads it, and one that needs it and cannot load it stops with the
//! reason. `BERYL_TCH_LIB` pointing nowhere makes any load fail, so a command that
//! succeeds under it did not load libtorch.

use beryl::corpus::fetch::fetch;
use std::process::Command;

fn beryl() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_beryl"));
    c.env("NO_COLOR", "1");
    c
}

fn without_torch() -> Command {
    let mut c = beryl();
    c.env("BERYL_TCH_LIB", "/nonexistent/libberyl_tch.so");
    c
}

fn ok(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn commands_without_a_model_never_load_libtorch() {
    let o = without_torch().arg("--version").output().unwrap();
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).starts_with("beryl "), "{o:?}");

    // An index with static text vectors at both levels: a full build runs the GCN on
    // libtorch; an update of one function computes its few vectors without it.
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let root = fetch("igraph").expect("fetching igraph");
    for f in ["floyd_warshall.c", "dijkstra.c", "bellman_ford.c"] {
        std::fs::copy(root.join("src/paths").join(f), src.join(f)).unwrap();
    }
    let idx = tmp.path().join("idx");
    let index = |c: &mut Command| c.arg("index").arg(&src).arg("--index").arg(&idx).args(["--function-encoder", "static", "--json"]).output().unwrap();
    let r = ok(&index(&mut beryl()));
    assert!(r["functions"].as_u64().unwrap() > 3, "{r}");
    let f = src.join("dijkstra.c");
    let mut text = std::fs::read_to_string(&f).unwrap();
    text.push_str("\nint beryl_added(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i] * a[i]; return s; }\n");
    std::fs::write(&f, text).unwrap();
    let r = ok(&index(&mut without_torch()));
    assert_eq!((r["updated"].as_bool(), r["changed_files"].as_u64()), (Some(true), Some(1)), "{r}");
    // An English query over static function vectors embeds only its own text.
    let o = without_torch().args(["search", "--json", "sum of the squares of an array"]).arg("--index").arg(&idx).output().unwrap();
    let r = ok(&o);
    assert!(r["fragments"].as_array().is_some_and(|f| !f.is_empty()), "{r}");
    // An error exit of a command that loads no model is the error, not an abort.
    let o = beryl().args(["search", "--lang", "java", "sum of squares"]).arg("--index").arg(&idx).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");

    // A pseudocode query runs the GCN on its graph: without libtorch it stops, saying why.
    let query = tmp.path().join("q.p");
    std::fs::write(&query, "procedure sumsq(a, n)\n  s = 0\n  for i = 0 to n - 1\n    s = s + a[i] * a[i]\n  return s\n").unwrap();
    let search = |c: &mut Command| c.args(["search", "--json", "--pseudo"]).arg(&query).arg("--index").arg(&idx).output().unwrap();
    let o = search(&mut without_torch());
    assert_eq!(o.status.code(), Some(70), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("libtorch could not be loaded from /nonexistent/libberyl_tch.so") && err.contains("scripts/setup.sh"), "{err}");
    // With libtorch, the updated index finds the function the update added.
    let r = ok(&search(&mut beryl()));
    assert!(r.to_string().contains("beryl_added"), "{r}");
}
