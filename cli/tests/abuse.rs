//! The fault and abuse suite: `beryl` as a hostile client or a planted index folder would
//! drive it. An MCP client the user does not control, an index folder that arrived with a
//! cloned repository, a damaged database, queries of any size. Each probe is run against
//! the real binary on real igraph files; `scripts/abuse.sh` runs this suite with the fuzz
//! targets.

mod common;

use beryl::corpus::fetch::fetch;
use common::forge_meta;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

fn beryl() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_beryl"));
    c.env("NO_COLOR", "1");
    c
}

fn run(c: &mut Command) -> (i32, String, String) {
    let o = c.output().expect("running beryl");
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Three real C files of igraph in `dir`.
fn corpus(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let root = fetch("igraph").expect("fetching igraph");
    for f in ["floyd_warshall.c", "bellman_ford.c", "unweighted.c"] {
        std::fs::copy(root.join("src/paths").join(f), dir.join(f)).unwrap();
    }
}

fn index(src: &Path, idx: &Path) {
    let (code, out, err) = run(beryl().arg("index").arg(src).arg("--index").arg(idx));
    assert_eq!(code, 0, "{out}{err}");
}

fn generation(idx: &Path) -> PathBuf {
    idx.join(std::fs::read_link(idx.join("current")).unwrap())
}

fn search(idx: &Path) -> (i32, String, String) {
    run(beryl().arg("search").arg("--pseudo").arg(beryl::repo_path("queries/floyd-warshall.p")).arg("--index").arg(idx).arg("--top").arg("3"))
}

/// A `beryl mcp` server driven line by line, as any client (or attacker) may.
struct Mcp {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next: u64,
}

impl Mcp {
    fn start(args: &[&str], cwd: &Path) -> Mcp {
        let mut child = beryl()
            .arg("mcp")
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for l in out.lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let mut m = Mcp { child, stdin, lines, next: 1 };
        let init = m.request("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "abuse", "version": "1"}}));
        assert!(init.get("result").is_some(), "{init}");
        m.send_line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        m
    }

    fn send_line(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message from the server; none within the time is a failure.
    fn receive(&mut self) -> Value {
        match self.lines.recv_timeout(Duration::from_secs(300)) {
            Ok(l) => serde_json::from_str(&l).unwrap_or_else(|e| panic!("the server wrote a line that is not JSON ({e}): {l}")),
            Err(RecvTimeoutError::Timeout) => panic!("no answer from the server"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server ended"),
        }
    }

    /// The answer with id `id`, skipping notifications.
    fn answer(&mut self, id: &Value) -> Value {
        loop {
            let m = self.receive();
            if m.get("id") == Some(id) {
                return m;
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.next);
        self.next += 1;
        self.send_line(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        self.answer(&id)
    }

    /// A tool call's result: (is it an error, structured content, text).
    fn call(&mut self, tool: &str, args: Value) -> (bool, Value, String) {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let r = r.get("result").unwrap_or_else(|| panic!("{tool}: not a tool result: {r}")).clone();
        let text = r["content"].as_array().map(|c| c.iter().filter_map(|b| b["text"].as_str()).collect::<String>()).unwrap_or_default();
        (r["isError"].as_bool().unwrap_or(false), r["structuredContent"].clone(), text)
    }

    /// A tool error of `kind`; its message.
    fn refused(&mut self, tool: &str, args: Value, kind: &str) -> String {
        let (err, v, text) = self.call(tool, args.clone());
        assert!(err, "{tool} {args}: expected a tool error, got {text}");
        assert_eq!(v["error"], kind, "{tool} {args}: {v}");
        v["message"].as_str().unwrap().to_string()
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_reader_that_leaves_early_ends_the_output_quietly() {
    // `beryl graph … | head`: the pipe's read end closes before the output is written.
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    for args in [&["--format", "dot", "--function", "igraph_distances_floyd_warshall"][..], &["--format", "stats"][..]] {
        let mut child = beryl()
            .arg("graph")
            .arg(dir.path())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("running beryl");
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("waiting for beryl");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked") && out.status.code() != Some(101), "{args:?}: {:?}\n{err}", out.status);
    }
}

// 1 and the smaller `show` probes: an index built with `cd proj && beryl index .` is read
// from anywhere, and serves only its own files.
#[test]
fn show_serves_only_indexed_files_whatever_the_working_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    corpus(&proj.join("src"));
    std::fs::create_dir_all(proj.join(".git")).unwrap();
    std::fs::write(proj.join(".git/config"), "[remote \"origin\"] url = secret\n").unwrap();
    std::fs::write(proj.join("notes.txt"), "not indexed\n").unwrap();
    let elsewhere = tmp.path().join("home");
    std::fs::create_dir_all(elsewhere.join(".ssh")).unwrap();
    std::fs::write(elsewhere.join(".ssh/id_rsa"), "-----BEGIN KEY-----\n").unwrap();
    std::fs::create_dir_all(elsewhere.join("src")).unwrap();
    std::fs::write(elsewhere.join("src/floyd_warshall.c"), "int not_the_indexed_one(void) { return 0; }\n").unwrap();

    let (code, out, err) = run(beryl().arg("index").arg(".").current_dir(&proj));
    assert_eq!(code, 0, "{out}{err}");
    let gen = generation(&proj.join(".beryl"));
    let meta: Value = serde_json::from_str(&std::fs::read_to_string(gen.join("meta.json")).unwrap()).unwrap();
    let root = proj.canonicalize().unwrap();
    assert_eq!(meta["roots"], json!([root.to_str().unwrap()]), "roots are recorded absolute and canonical");

    let idx = proj.join(".beryl");
    // Results print relative to the working directory below it, absolute elsewhere and in
    // JSON.
    let (code, out, err) = run(beryl().args(["search", "all-pairs shortest path lengths", "--top", "2"]).current_dir(&proj));
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("src/") && !out.contains(root.to_str().unwrap()), "{out}");
    let (code, out, err) = run(beryl().args(["search", "all-pairs shortest path lengths", "--top", "2", "--index"]).arg(&idx).current_dir(&elsewhere));
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with(root.to_str().unwrap()), "{out}");
    let (_, out, _) = run(beryl().args(["search", "all-pairs shortest path lengths", "--top", "2", "--json"]).current_dir(&proj));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["fragments"][0]["spans"][0]["path"].as_str().unwrap().starts_with(root.to_str().unwrap()), "{v}");

    let mut s = Mcp::start(&["--index", idx.to_str().unwrap()], &elsewhere);
    let (err, st, text) = s.call("status", json!({}));
    assert!(!err, "{text}");
    assert_eq!(st["indexes"][0]["changed_since"]["removed"], 0, "{st}");
    assert_eq!(st["indexes"][0]["files"], 3, "{st}");

    for p in [".ssh/id_rsa", ".git/config", "notes.txt", "/etc/passwd", "../proj/src/floyd_warshall.c", "./src/floyd_warshall.c", ""] {
        let m = s.refused("show", json!({"path": p, "lines": "1"}), "path");
        assert!(m.contains("not a file of an open index"), "{p}: {m}");
    }
    let abs = root.join(".git/config");
    s.refused("show", json!({"path": abs.to_str().unwrap()}), "path");

    // Relative to the root, or as results name it (absolute): the indexed file, not the
    // one under the server's working directory.
    let (err, v, text) = s.call("show", json!({"path": "src/floyd_warshall.c", "lines": "1-400"}));
    assert!(!err, "{text}");
    assert!(text.contains("igraph") && !text.contains("not_the_indexed_one"), "{text}");
    assert_eq!(v["path"], root.join("src/floyd_warshall.c").to_str().unwrap());
    assert_eq!(v["changed_since_indexing"], false);
    let file = root.join("src/floyd_warshall.c");
    let (err, _, _) = s.call("show", json!({"path": file.to_str().unwrap(), "lines": "3"}));
    assert!(!err);

    // Changed since indexing: shown, with a note.
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.insert_str(0, "/* edited */\n");
    std::fs::write(&file, &text).unwrap();
    let (err, v, shown) = s.call("show", json!({"path": file.to_str().unwrap(), "lines": "1-2"}));
    assert!(!err, "{shown}");
    assert_eq!(v["changed_since_indexing"], true, "{v}");
    assert!(shown.starts_with("note: ") && shown.contains("/* edited */"), "{shown}");

    // An indexed file swapped for a link out of the root: refused.
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(elsewhere.join(".ssh/id_rsa"), &file).unwrap();
    let m = s.refused("show", json!({"path": file.to_str().unwrap()}), "path");
    assert!(m.contains("outside its indexed root"), "{m}");
}

// 2: the `index` tool works only under what the user allowed.
#[test]
fn the_index_tool_stays_inside_the_allowed_folders() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    corpus(&src);
    let other = tmp.path().join("other");
    corpus(&other);
    let idx = tmp.path().join("idx");
    index(&src, &idx);

    // Default: the open index's own roots.
    let mut s = Mcp::start(&["--index", idx.to_str().unwrap()], tmp.path());
    for p in ["/", "/etc", other.to_str().unwrap(), tmp.path().to_str().unwrap()] {
        let m = s.refused("index", json!({"path": p}), "path");
        assert!(m.contains("outside the folders this server may index") && m.contains("--allow-index"), "{p}: {m}");
    }
    // Inside a root, but writing the index elsewhere: refused.
    let m = s.refused("index", json!({"path": src.to_str().unwrap(), "index": tmp.path().join("elsewhere").to_str().unwrap()}), "path");
    assert!(m.contains("outside"), "{m}");
    assert!(!tmp.path().join("elsewhere").exists());
    // The index it has open may be updated.
    let (err, _, text) = s.call("index", json!({"path": src.to_str().unwrap(), "index": idx.to_str().unwrap()}));
    assert!(!err, "{text}");
    // `show` after a refused index: still only the open index's files.
    s.refused("show", json!({"path": other.join("floyd_warshall.c").to_str().unwrap()}), "path");
    drop(s);

    // Allowed by the user: folders under it, but not guarded ones it does not name.
    let mut s = Mcp::start(&["--index", idx.to_str().unwrap(), "--allow-index", tmp.path().to_str().unwrap(), "--allow-index", "/"], tmp.path());
    let (err, _, text) = s.call("index", json!({"path": other.to_str().unwrap()}));
    assert!(!err, "{text}");
    assert!(other.join(".beryl/current").exists());
    let (err, v, text) = s.call("show", json!({"path": other.canonicalize().unwrap().join("bellman_ford.c").to_str().unwrap(), "lines": "1"}));
    assert!(!err, "{text} {v}");
    // `/` itself is named, so allowed; what is guarded under it is not.
    for p in ["/etc", "/usr", "/home", "/root", "/proc/self", "/var"].into_iter().filter(|p| Path::new(p).exists()) {
        let m = s.refused("index", json!({"path": p}), "path");
        assert!(m.contains("--allow-index"), "{p}: {m}");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|h| Path::new(h).is_dir()) {
        let m = s.refused("index", json!({"path": home.to_str().unwrap()}), "path");
        assert!(m.contains("home folder"), "{m}");
    }
}

// 3, 9 and the left-over scratch folders: nothing is written through a link, and an index
// folder that holds anything beryl did not write is refused, not cleaned.
#[test]
fn planted_links_and_foreign_entries_in_an_index_folder_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    corpus(&src);
    let victim = tmp.path().join("victim.txt");
    std::fs::write(&victim, "precious\n").unwrap();

    // A `lock` link planted in a repository's `.beryl`, with and without an index there.
    for with_index in [false, true] {
        let idx = tmp.path().join(format!("planted-{with_index}"));
        if with_index {
            index(&src, &idx);
            std::fs::remove_file(idx.join("lock")).unwrap();
        } else {
            std::fs::create_dir(&idx).unwrap();
        }
        std::os::unix::fs::symlink(&victim, idx.join("lock")).unwrap();
        let (code, _, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&idx).arg("--force"));
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("\"lock\"") && err.contains("did not write"), "{err}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
        assert!(idx.join("lock").is_symlink(), "the planted link was removed");
    }

    // The same with `.beryl` inside the indexed folder, as `beryl index .` finds it.
    let repo = tmp.path().join("repo");
    corpus(&repo);
    std::fs::create_dir(repo.join(".beryl")).unwrap();
    std::os::unix::fs::symlink(&victim, repo.join(".beryl/lock")).unwrap();
    let (code, _, err) = run(beryl().arg("index").arg(".").current_dir(&repo));
    assert_eq!(code, 1, "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");

    // Entries of the user's: planted links where beryl writes, a `current` or `gen-*` of
    // their own, any other file. Each is refused and stays as it was.
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("keep.txt"), "keep\n").unwrap();
    let cases: Vec<(&str, Box<dyn Fn(&Path)>)> = vec![
        ("current", Box::new(|d: &Path| std::fs::write(d.join("current"), "my notes\n").unwrap())),
        ("current", Box::new(|d: &Path| std::os::unix::fs::symlink("/etc", d.join("current")).unwrap())),
        ("gen-000001", Box::new(|d: &Path| {
            std::fs::create_dir(d.join("gen-000001")).unwrap();
            std::fs::write(d.join("gen-000001/thesis.tex"), "mine\n").unwrap();
        })),
        ("gen-000001.tmp-12", Box::new({
            let o = outside.clone();
            move |d: &Path| std::os::unix::fs::symlink(&o, d.join("gen-000001.tmp-12")).unwrap()
        })),
        ("gen-7", Box::new(|d: &Path| std::fs::create_dir(d.join("gen-7")).unwrap())),
        ("gen-copy.tmp-12", Box::new(|d: &Path| {
            std::fs::create_dir(d.join("gen-copy.tmp-12")).unwrap();
            std::fs::write(d.join("gen-copy.tmp-12/thesis.tex"), "mine\n").unwrap();
        })),
        ("report.pdf", Box::new(|d: &Path| std::fs::write(d.join("report.pdf"), "pdf\n").unwrap())),
    ];
    for (i, (entry, plant)) in cases.iter().enumerate() {
        let idx = tmp.path().join(format!("users-{i}"));
        std::fs::create_dir(&idx).unwrap();
        plant(&idx);
        let before: Vec<String> = std::fs::read_dir(&idx).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        let (code, _, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&idx));
        assert_eq!(code, 1, "{entry}: {err}");
        assert!(err.contains(&format!("{entry:?}")) && err.contains("did not write"), "{entry}: {err}");
        let after: Vec<String> = std::fs::read_dir(&idx).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(before, after, "{entry}");
    }
    assert_eq!(std::fs::read_to_string(outside.join("keep.txt")).unwrap(), "keep\n");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);

    // A scratch generation left by a killed build goes with the next run, even one that
    // finds the index up to date, and even when its process id is in use again.
    let idx = tmp.path().join("idx");
    index(&src, &idx);
    let left = idx.join("gen-000009.tmp-1");
    std::fs::create_dir(&left).unwrap();
    std::fs::write(left.join("nodes.faiss"), "partial").unwrap();
    std::os::unix::fs::symlink("gen-000009", idx.join("current.tmp-1")).unwrap();
    // An update's early copy of the database, killed before it was moved into place.
    let copy = idx.join("gen-copy.tmp-1");
    std::fs::create_dir(&copy).unwrap();
    std::fs::write(copy.join("index.sqlite"), "partial").unwrap();
    let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&idx));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("up to date"), "{out}");
    assert!(!left.exists() && !idx.join("current.tmp-1").exists() && !copy.exists());
}

// 4: a flipped bit in the database is noticed on open and before "up to date", and a
// build replaces the damaged database.
#[test]
fn a_flipped_bit_in_the_database_is_noticed_and_rebuilt() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    corpus(&src);
    let idx = tmp.path().join("idx");
    index(&src, &idx);
    let (code, good, err) = search(&idx);
    assert_eq!(code, 0, "{err}");

    let flip = |needle: &[u8], to: u8| {
        let db = generation(&idx).join("index.sqlite");
        let mut b = std::fs::read(&db).unwrap();
        let at = b.windows(needle.len()).position(|w| w == needle).expect("the text is in the database");
        b[at + needle.len() - 1] = to;
        std::fs::write(&db, b).unwrap();
    };
    // A function's name, and a file's path (a phantom file).
    for (needle, to) in [(&b"igraph_distances_floyd_warshall"[..], b'X'), (b"bellman_ford.c", b'x')] {
        flip(needle, to);
        let (code, _, err) = search(&idx);
        assert_eq!(code, 3, "{err}");
        assert!(err.contains("index.sqlite") && err.contains("damaged"), "{err}");
        let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&idx));
        assert_eq!(code, 0, "{err}");
        assert!(!out.contains("up to date") && out.contains("damaged"), "{out}");
        let (code, again, err) = search(&idx);
        assert_eq!(code, 0, "{err}");
        let strip = |s: &str| s.lines().filter(|l| !l.contains(" ms (")).collect::<Vec<_>>().join("\n");
        assert_eq!(strip(&good), strip(&again));
        let (code, out, _) = run(beryl().arg("index").arg(&src).arg("--index").arg(&idx));
        assert_eq!(code, 0);
        assert!(out.contains("up to date") && out.contains("3 files"), "{out}");
    }
}

// 5: edited roots in `meta.json` are a damaged index, not a licence to read `/`.
#[test]
fn edited_roots_are_a_damaged_index() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    corpus(&src);
    let idx = tmp.path().join("idx");
    index(&src, &idx);
    let meta = generation(&idx).join("meta.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&meta).unwrap()).unwrap();
    v["roots"] = json!(["/"]);
    std::fs::write(&meta, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let (code, _, err) = search(&idx);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("meta.json") && err.contains("damaged"), "{err}");

    let mut s = Mcp::start(&["--index", idx.to_str().unwrap()], tmp.path());
    let (err, st, text) = s.call("status", json!({}));
    assert!(!err, "{text}");
    assert_eq!(st["indexes"], json!([]), "{st}");
    assert!(st["broken"][0]["error"].as_str().unwrap().contains("meta.json"), "{st}");
    s.refused("show", json!({"path": "/etc/passwd"}), "path");
    s.refused("show", json!({"path": "etc/passwd"}), "path");
    s.refused("search_text", json!({"query": "shortest paths"}), "index");
    drop(s);

    // Relative roots (an older beryl's, or edited consistently): refused with the reason.
    forge_meta(&generation(&idx), |m| m["roots"] = json!(["src"]));
    let (code, _, err) = search(&idx);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("not an absolute path") && err.contains("rebuild"), "{err}");
    let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&idx));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("indexed anew"), "{out}");
    assert_eq!(search(&idx).0, 0);
}

// 6: queries are bounded in bytes, lines, nodes and nesting, on the CLI and over MCP, and
// reading stops at the limit.
#[test]
fn queries_are_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    corpus(&src);
    let idx = tmp.path().join("idx");
    index(&src, &idx);
    let q = |args: &[&str]| run(beryl().arg("search").args(args).arg("--index").arg(&idx));

    let long = tmp.path().join("long.txt");
    std::fs::write(&long, format!("SORT(A)\n{}", "x\n".repeat(20_000))).unwrap();
    let (code, _, err) = q(&["--pseudo", long.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("query too large: 20001 lines, limit 1000"), "{err}");

    // A device that never ends, and a pipe: read up to the limit, then refused.
    let (code, _, err) = q(&["--pseudo", "/dev/zero"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("query too large: more than 65536 bytes, limit 65536"), "{err}");
    let mut child = beryl().arg("search").arg("--pseudo").arg("-").arg("--index").arg(&idx).stdin(Stdio::piped()).stderr(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let chunk = vec![b'a'; 1 << 16];
        // Written until the reader stops reading: the pipe breaks.
        for _ in 0..1024 {
            if stdin.write_all(&chunk).is_err() {
                return true;
            }
        }
        false
    });
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("more than 65536 bytes"), "{err}");
    assert!(feeder.join().unwrap(), "all of 64 MiB was read");

    // Configurable, each bound.
    let fw = beryl::repo_path("queries/floyd-warshall.txt");
    let fw = fw.to_str().unwrap();
    for (flag, what) in [("--max-query-bytes", "bytes"), ("--max-query-lines", "lines"), ("--max-query-nodes", "nodes"), ("--max-query-depth", "nesting levels")] {
        let (code, _, err) = q(&["--pseudo", fw, flag, "2"]);
        assert_eq!(code, 1, "{flag}: {err}");
        assert!(err.contains("query too large") && err.contains(what) && err.contains(flag), "{flag}: {err}");
    }
    std::fs::write(&long, format!("SORT(A)\n{}", "    x = x + 1\n".repeat(200))).unwrap();
    let (code, _, err) = q(&["--pseudo", long.to_str().unwrap(), "--max-query-nodes", "10"]);
    assert_eq!(code, 1);
    assert!(err.contains("nodes, limit 10"), "{err}");
    let (code, _, err) = q(&["shortest paths", "--max-query-bytes", "5"]);
    assert_eq!(code, 1);
    assert!(err.contains("query too large: 14 bytes, limit 5"), "{err}");

    // Over MCP: a 520 KB query is refused at once, the server stays small and answers.
    let mut s = Mcp::start(&["--index", idx.to_str().unwrap()], tmp.path());
    let big = "  x = x + 1\n".repeat(45_000);
    for tool in ["search_pseudocode", "search_text"] {
        let m = s.refused(tool, json!({"query": format!("F(x)\n{big}")}), "query");
        assert!(m.starts_with("query too large: 540005 bytes, limit 65536"), "{m}");
    }
    // Past the line bound of the protocol itself: answered, not read.
    s.send_line(&json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {"name": "search_text", "arguments": {"query": "y".repeat(1 << 21)}}}).to_string());
    let r = s.receive();
    assert_eq!(r["error"]["code"], -32600, "{r}");
    let (err, _, text) = s.call("search_text", json!({"query": "shortest paths", "top": 3}));
    assert!(!err, "{text}");
    let rss = std::fs::read_to_string(format!("/proc/{}/status", s.child.id())).unwrap();
    let kb: u64 = rss.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)).unwrap().parse().unwrap();
    eprintln!("server peak RSS after the large queries: {} MB", kb / 1024);
}

// 7: a server started on a damaged index answers once a build has written a good one.
#[test]
fn the_server_follows_a_rebuilt_index() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    corpus(&src);
    let idx = tmp.path().join("idx");
    index(&src, &idx);
    let graph = generation(&idx).join("graph.bin");
    let mut b = std::fs::read(&graph).unwrap();
    let mid = b.len() / 2;
    b[mid] ^= 0xff;
    std::fs::write(&graph, b).unwrap();

    let mut s = Mcp::start(&["--index", idx.to_str().unwrap()], tmp.path());
    let m = s.refused("search_text", json!({"query": "shortest paths"}), "index");
    assert!(m.contains("graph.bin"), "{m}");
    let (code, out, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&idx));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("damaged"), "{out}");
    let (err, v, text) = s.call("search_text", json!({"query": "shortest paths", "top": 3}));
    assert!(!err, "{text}");
    assert_eq!(v["fragments"].as_array().unwrap().len(), 3);
    let (_, st, _) = s.call("status", json!({}));
    assert_eq!(st["broken"], json!([]), "{st}");
    // And a generation damaged later is never answered from: the newest good one is.
    let gen = generation(&idx);
    std::fs::write(gen.join("shapes.bin"), b"garbage").unwrap();
    let (code, _, err) = run(beryl().arg("index").arg(&src).arg("--index").arg(&idx));
    assert_eq!(code, 0, "{err}");
    let (err, _, text) = s.call("search_pseudocode", json!({"query": std::fs::read_to_string(beryl::repo_path("queries/floyd-warshall.txt")).unwrap(), "top": 3}));
    assert!(!err, "{text}");
    assert!(text.contains("floyd_warshall"), "{text}");
}

// The protocol's own errors: malformed JSON, arguments that are not an object, arguments
// of the wrong type.
#[test]
fn malformed_requests_get_protocol_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    corpus(&src);
    let idx = tmp.path().join("idx");
    index(&src, &idx);
    let mut s = Mcp::start(&["--index", idx.to_str().unwrap()], tmp.path());
    s.send_line("{\"jsonrpc\": \"2.0\", \"id\": 5, \"method\": \"tools/call\", \"params\": {");
    let r = s.receive();
    assert_eq!((r["error"]["code"].as_i64(), r["id"].is_null()), (Some(-32700), true), "{r}");
    s.send_line("\u{7f}not json at all");
    assert_eq!(s.receive()["error"]["code"], -32700);

    for args in [json!("query"), json!([1, 2]), json!(7)] {
        let r = s.request("tools/call", json!({"name": "search_text", "arguments": args}));
        assert_eq!(r["error"]["code"], -32602, "{r}");
        assert!(r["error"]["message"].as_str().unwrap().contains("must be an object"), "{r}");
    }
    for (tool, args) in [
        ("search_text", json!({"query": "sort", "top": "five"})),
        ("search_pseudocode", json!({"query": 42})),
        ("search_pseudocode", json!({"query": "F(x)\n  return x", "method": "fastest"})),
        ("show", json!({"path": ["a"]})),
        ("show", json!({})),
        ("status", json!({"verbose": true})),
        ("search_text", json!({"query": "sort", "topp": 3})),
    ] {
        let m = s.refused(tool, args.clone(), "arguments");
        assert!(m.contains("do not fit"), "{tool} {args}: {m}");
    }
    // Still serving.
    let (err, _, text) = s.call("search_text", json!({"query": "shortest paths", "top": 2}));
    assert!(!err, "{text}");
}

// The CLI's silent no-ops: `--top 0`, `--method` with English, `--fragments` with pseudocode.
#[test]
fn contradictory_search_flags_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    corpus(&src);
    let idx = tmp.path().join("idx");
    index(&src, &idx);
    let fw = beryl::repo_path("queries/floyd-warshall.txt");
    let (code, _, err) = run(beryl().args(["search", "shortest paths", "--top", "0", "--index"]).arg(&idx));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--top") && err.contains("at least 1"), "{err}");
    let (code, _, err) = run(beryl().args(["search", "shortest paths", "--method", "bm25", "--index"]).arg(&idx));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--method") && err.contains("--pseudo"), "{err}");
    let (code, _, err) = run(beryl().args(["search", "--fragments", "--pseudo"]).arg(&fw).arg("--index").arg(&idx));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--fragments") && err.contains("--pseudo"), "{err}");
    let (code, out, err) = run(beryl().args(["search", "--pseudo"]).arg(&fw).args(["--method", "bm25", "--top", "1", "--index"]).arg(&idx));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("#1 ") && !out.contains("#2 "), "{out}");
}

/// Runs `c` to its end; its exit code, stderr and peak resident memory in MB (the kernel's
/// count for that one process).
fn run_measured(c: &mut Command) -> (i32, String, u64) {
    let child = c.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let mut stderr = child.stderr.unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut s).unwrap();
        s
    });
    let mut status = 0;
    // SAFETY: plain out-parameters; the pid is our own child, waited for once.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid);
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -1 };
    (code, reader.join().unwrap(), usage.ru_maxrss as u64 / 1024)
}

// One generated file of 200,000 functions is a logged skip, not gigabytes and minutes.
#[test]
fn a_generated_file_of_many_functions_is_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    corpus(&src);
    let mut text = String::with_capacity(7 << 20);
    for i in 0..200_000 {
        text.push_str(&format!("int f{i}(int a){{return a+{};}}\n", i % 97));
    }
    assert!(text.len() > 6_000_000);
    std::fs::write(src.join("table.c"), &text).unwrap();
    let idx = tmp.path().join("idx");
    let (code, err, peak_mb) = run_measured(beryl().arg("index").arg(&src).arg("--index").arg(&idx).arg("--max-file-size").arg("10000000").arg("--json"));
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(generation(&idx).join("meta.json")).unwrap()).unwrap();
    assert_eq!(report["files"], 3, "{report}");
    assert_eq!(report["skipped"], 1, "{report}");
    eprintln!("index of 3 files and a generated one of 200,000 functions: peak RSS {peak_mb} MB");
    // Without the skip it took 5.2 GB; the three real files alone take well under one.
    assert!(peak_mb < 1500, "peak RSS {peak_mb} MB");
}
