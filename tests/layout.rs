//! The layout's rules (docs/architecture.md), checked on the source tree: the library
//! depends on neither the command line nor the lab, parses no arguments, prints nothing to
//! stdout, and names no project of the algorithm benchmark.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn library_sources() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    files.sort();
    assert!(files.len() > 50, "the library's sources are under src/");
    files.into_iter().map(|p| (p.clone(), std::fs::read_to_string(&p).unwrap())).collect()
}

/// The `[dependencies]` table of a manifest, as the names it lists.
fn dependencies(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let mut in_deps = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            in_deps = l == "[dependencies]";
            continue;
        }
        if in_deps && !l.is_empty() && !l.starts_with('#') {
            out.push(l.split(['=', '.', ' ']).next().unwrap().to_string());
        }
    }
    out
}

#[test]
fn dependencies_run_one_way() {
    let lib = dependencies(&root().join("Cargo.toml"));
    assert!(lib.contains(&"tch".to_string()) && lib.contains(&"faiss".to_string()), "{lib:?}");
    for banned in ["beryl-lab", "beryl-cli", "clap", "anyhow", "indicatif", "env_logger"] {
        assert!(!lib.iter().any(|d| d == banned), "the library must not depend on {banned}");
    }
    let lab = dependencies(&root().join("lab/Cargo.toml"));
    assert!(lab.contains(&"beryl".to_string()), "the lab is built on the library");
    assert!(!lab.iter().any(|d| d == "beryl-cli"), "the lab must not depend on the command line");
    let cli = dependencies(&root().join("cli/Cargo.toml"));
    assert!(cli.contains(&"beryl".to_string()) && cli.contains(&"beryl-lab".to_string()));
}

#[test]
fn the_library_neither_parses_arguments_nor_prints() {
    for (path, text) in library_sources() {
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for banned in ["clap::", "beryl_lab", "anyhow::", "println!(", "print!("] {
                assert!(!code.contains(banned), "{}:{}: `{banned}` in the library: {line}", path.display(), i + 1);
            }
        }
    }
}

#[test]
fn the_library_names_no_benchmark_project() {
    let truth: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(root().join("bench/algo/truth.json")).unwrap()).unwrap();
    let mut names: Vec<String> = Vec::new();
    for c in truth["corpora"].as_array().expect("corpora") {
        for key in ["name", "debian_source_package"] {
            // A corpus from another registry has no Debian package name.
            if let Some(n) = c[key].as_str().filter(|n| !n.is_empty()) {
                names.push(n.to_lowercase());
            }
        }
    }
    assert!(names.len() > 10, "{names:?}");
    // Tools and formats that share a project's name.
    let generic = ["graphviz dot", "grep-style"];
    let word = |c: char| c.is_alphanumeric() || c == '_';
    for (path, text) in library_sources() {
        for (i, line) in text.lines().enumerate() {
            let mut l = line.to_lowercase();
            for g in generic {
                l = l.replace(g, "");
            }
            for n in &names {
                let hit = l.match_indices(n.as_str()).any(|(at, _)| {
                    let before = l[..at].chars().next_back();
                    let after = l[at + n.len()..].chars().next();
                    !before.is_some_and(|c| word(c) || c == '-') && !after.is_some_and(word)
                });
                assert!(!hit, "{}:{}: the library names benchmark project `{n}`: {line}", path.display(), i + 1);
            }
        }
    }
}
