//! `scripts/eval-algo.sh` on a real project: every setting's pools are written first, and
//! each setting is then ranked with the other three settings' pools as extra training data.

use std::path::PathBuf;
use std::process::Command;

use beryl::corpus::fetch::fetch;

fn repo() -> PathBuf {
    beryl::repo_path("")
}

#[test]
fn each_setting_is_ranked_with_the_other_settings_pools() {
    fetch("java-string-similarity").expect("fetching java-string-similarity");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = Command::new("bash")
        .arg(repo().join("scripts/eval-algo.sh"))
        .arg(&out)
        .args(["--projects", "java-string-similarity", "--threads", "2", "--work"])
        .arg(tmp.path().join("work"))
        .env("BERYL", env!("CARGO_BIN_EXE_beryl"))
        .env("METHODS", "hybrid,name")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    let settings = ["one", "ren", "multi", "mixed"];
    // One pool per query of the project's algorithms in every setting.
    let pools: Vec<usize> = settings
        .iter()
        .map(|s| std::fs::read_to_string(out.join(format!("{s}.jsonl"))).unwrap().lines().filter(|l| !l.trim().is_empty()).count())
        .collect();
    assert!(pools.iter().all(|&n| n == pools[0] && n >= 2), "{pools:?}");
    for (i, s) in settings.iter().enumerate() {
        let report = std::fs::read_to_string(out.join(format!("{s}.txt"))).unwrap();
        let others: usize = pools.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, n)| n).sum();
        assert!(report.contains(&format!("of {others} pools given by --train-pools")), "{s}: {report}");
        assert!(report.lines().any(|l| l.split_whitespace().nth(1) == Some("name")), "{s}: the second pass's methods");
        // Each setting's hybrid summary row reaches standard output, as the report has it.
        let line = stdout.lines().find(|l| l.starts_with(&format!("{s}  "))).unwrap_or_else(|| panic!("{s}: {stdout}"));
        let row = &line[s.len() + 2..];
        assert_eq!(row.split_whitespace().nth(1), Some("hybrid"), "{line}");
        assert!(report.lines().any(|l| l == row), "{s}: {row} not in the report");
    }
}
