//! Training data and training of the code-search adapters on a real package (yaml-cpp):
//! the pair list rebuilds exactly the pairs it lists, and an interrupted training run
//! resumes to the very weights of an unbroken one. The training script runs in the
//! environment `scripts/setup.sh` installs (`$BERYL_NATIVE/train`, PyTorch on the CPU).
//! Run with `cargo test --release --test train_encoder`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const PACKAGE: &str = "yaml-cpp";

fn beryl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_beryl"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn python() -> PathBuf {
    let native = std::env::var_os("BERYL_NATIVE").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/opt/beryl"));
    let p = native.join("train/bin/python");
    assert!(p.exists(), "{} is missing: run scripts/setup.sh (it installs the training environment)", p.display());
    p
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("spawn");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

/// Pairs as a set of canonical JSON lines (key order fixed by serde_json's map).
fn pair_set(path: &Path) -> BTreeSet<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap().to_string())
        .collect()
}

/// The package mined once for all tests of this file (they run in parallel and would
/// otherwise fetch and cache the same package at once).
fn mined() -> (&'static PathBuf, &'static PathBuf) {
    static MINED: std::sync::OnceLock<(tempfile::TempDir, PathBuf, PathBuf)> = std::sync::OnceLock::new();
    let (_, out, list) = MINED.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let (out, list) = (dir.path().join("pairs.jsonl"), dir.path().join("pairs.tsv.gz"));
        run(beryl().args(["mine-pairs", PACKAGE, "--out"]).arg(&out).arg("--list").arg(&list));
        (dir, out, list)
    });
    (out, list)
}

#[test]
fn pair_list_rebuilds_exactly_the_listed_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let (out, list) = mined();
    let mined = pair_set(out);
    assert!(mined.len() >= 20, "only {} pairs from {PACKAGE}", mined.len());
    // Mined pairs are cached per package version; drop the cache so that the rebuild
    // really mines the package again.
    let cache = beryl::corpus::fetch::cache_dir().join("pairs");
    if let Ok(rd) = std::fs::read_dir(&cache) {
        for v in rd.flatten() {
            for f in std::fs::read_dir(v.path()).into_iter().flatten().flatten() {
                if f.file_name().to_string_lossy().starts_with(&format!("{PACKAGE}_")) {
                    std::fs::remove_file(f.path()).unwrap();
                }
            }
        }
    }
    let again = dir.path().join("again.jsonl");
    let msg = run(beryl().args(["mine-pairs", "--rebuild"]).arg(list).arg("--out").arg(&again));
    assert!(msg.contains(&format!("rebuilt {n} of {n} listed pairs", n = mined.len())), "{msg}");
    assert_eq!(pair_set(&again), mined);

    // The list holds places and hashes, not texts; a wrong hash is reported, not rebuilt.
    let refs = beryl_lab::pairs::read_list(list).unwrap();
    assert_eq!(refs.len(), mined.len());
    assert!(refs.iter().all(|r| r.package == PACKAGE && !r.version.is_empty() && r.hash.len() == 16 && r.lines.0 <= r.lines.1));
    let mut bad = refs.clone();
    bad[0].hash = "0000000000000000".into();
    let bad_list = dir.path().join("bad.tsv");
    beryl_lab::pairs::write_list(&bad_list, &bad).unwrap();
    let msg = run(beryl().args(["mine-pairs", "--rebuild"]).arg(&bad_list).arg("--out").arg(dir.path().join("bad.jsonl")));
    assert!(msg.contains(&format!("rebuilt {} of {} listed pairs", mined.len() - 1, mined.len())) && msg.contains("(1 missing"), "{msg}");
}

#[test]
fn benchmark_packages_are_never_mined() {
    let out = beryl().args(["mine-pairs", "igraph", "--out", "/dev/null"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("must not be mined"));
}

/// The trainer's Python, script and base model, with a bundle of yaml-cpp's pairs (short
/// inputs, so that a few steps run in seconds) in a fresh folder.
struct Trainer {
    py: PathBuf,
    script: PathBuf,
    enc: PathBuf,
    dir: tempfile::TempDir,
    bundle: PathBuf,
}

fn trainer() -> Trainer {
    let py = python();
    let dir = tempfile::tempdir().unwrap();
    let (pairs, _) = mined();
    let script = repo().join("scripts/train-encoder.py");
    let enc = std::env::var_os("BERYL_ENCODER_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/opt/beryl/encoder"));
    let bundle = dir.path().join("bundle.xz");
    run(Command::new(&py).arg(&script).args(["prepare", "--max-len", "48", "--pairs"]).arg(pairs).arg("--base").arg(&enc).arg("--out").arg(&bundle));
    Trainer { py, script, enc, dir, bundle }
}

#[test]
fn interrupted_training_resumes_to_the_same_weights() {
    let Trainer { py, script, enc, dir, bundle } = trainer();
    let train = |run_dir: &Path, extra: &[&str]| {
        let mut c = Command::new(&py);
        c.arg(&script).arg("train").arg("--bundle").arg(&bundle).arg("--base").arg(&enc);
        c.arg("--init").arg(repo().join("models/code-encoder/adapter.safetensors"));
        // Every part of the recipe on, gradient caching with chunks smaller than a batch.
        c.args(["--steps", "6", "--batch", "8", "--grad-cache", "--chunk", "5", "--bf16", "off", "--threads", "2", "--eval-every", "0"]);
        c.arg("--run").arg(run_dir).args(extra);
        run(&mut c)
    };
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    // Hard negatives are mined in blocks of 7 pairs, each saved: run b is first cut off
    // while mining, then after 3 of its 6 steps.
    train(&a, &["--mining-block", "7"]);
    let mining = train(&b, &["--mining-block", "7", "--stop-mining-after", "2"]);
    assert!(mining.contains("mining stopped after 2 blocks"), "{mining}");
    assert_eq!(std::fs::read_dir(b.join("mining")).unwrap().count(), 2);
    assert!(!b.join("mined.pt").exists());
    let first = train(&b, &["--mining-block", "7", "--stop-after", "3"]);
    assert!(first.contains("mining: 2 blocks from an earlier process"), "{first}");
    assert!(first.contains("stopped at step 3/6"), "{first}");
    assert!(b.join("checkpoint.pt").exists());
    assert!(b.join("mined.pt").exists() && !b.join("mining").exists());
    let second = train(&b, &["--mining-block", "7"]);
    assert!(second.contains("resumed at step 3 of 6") && second.contains("finished at step 6/6"), "{second}");
    let same = run(Command::new(&py).arg(&script).arg("compare").arg(a.join("last.safetensors")).arg(b.join("last.safetensors")));
    assert!(same.contains("largest difference 0"), "{same}");
    // The run moved the weights: the comparison can fail.
    let moved = Command::new(&py).arg(&script).arg("compare").arg(a.join("last.safetensors")).arg(repo().join("models/code-encoder/adapter.safetensors")).output().unwrap();
    assert!(!moved.status.success(), "training changed nothing");
}

#[test]
fn packed_inputs_are_rebuilt_on_the_other_side_and_train() {
    let Trainer { py, script, enc, dir, bundle } = trainer();
    let init = repo().join("models/code-encoder/adapter.safetensors");
    let packed = dir.path().join("packed");
    run(Command::new(&py).arg(&script).arg("pack").arg("--bundle").arg(&bundle).arg("--base").arg(&enc).arg("--init").arg(&init)
        .args(["--half", "--limit-mb", "20", "--out"]).arg(&packed));
    // The f16 base (about 45 MB) does not fit one folder: its bytes are cut across several.
    let mut parts: Vec<PathBuf> = std::fs::read_dir(&packed).unwrap().map(|e| e.unwrap().path()).collect();
    parts.sort();
    assert!(parts.len() >= 3, "{parts:?}");
    for p in &parts {
        let bytes: u64 = std::fs::read_dir(p).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum();
        assert!(bytes <= 20 << 20, "{} holds {bytes} bytes", p.display());
    }
    // Each folder unpacks with its own copy of the script, in any order; only the last completes.
    let stage = dir.path().join("stage");
    for (i, p) in parts.iter().rev().enumerate() {
        let out = Command::new(&py).arg(p.join("train-encoder.py")).arg("unpack").arg(p).arg("--into").arg(&stage).output().unwrap();
        let last = i + 1 == parts.len();
        assert_eq!(out.status.code(), Some(if last { 0 } else { 3 }), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert_eq!(std::fs::read(stage.join("bundle.xz")).unwrap(), std::fs::read(&bundle).unwrap());
    assert_eq!(std::fs::read(stage.join("init.safetensors")).unwrap(), std::fs::read(&init).unwrap());
    let base = std::fs::metadata(stage.join("base/model.safetensors")).unwrap().len();
    let full = std::fs::metadata(enc.join("model.safetensors")).unwrap().len();
    assert!(base * 10 < full * 6, "f16 base {base} bytes against {full}");
    // Unpacking again (a retried call) finds the files whole.
    let again = run(Command::new(&py).arg(&script).arg("unpack").arg(&parts[0]).arg("--into").arg(&stage));
    assert!(again.contains("already rebuilt and checked"), "{again}");
    // A folder that holds a pack is not packed into again.
    let refused = Command::new(&py).arg(&script).arg("pack").arg("--bundle").arg(&bundle).arg("--base").arg(&enc).arg("--out").arg(&packed).output().unwrap();
    assert!(!refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("is not empty"));
    // The f16 base gives the f32 base's vectors, to within a rounding far below bf16's.
    let (r16, r32) = (dir.path().join("r16.json"), dir.path().join("r32.json"));
    run(Command::new(&py).arg(&script).arg("reference").arg("--base").arg(stage.join("base")).arg("--adapter").arg(&init).arg("--out").arg(&r16));
    run(Command::new(&py).arg(&script).arg("reference").arg("--base").arg(&enc).arg("--adapter").arg(&init).arg("--out").arg(&r32));
    let vectors = |p: &Path| -> Vec<Vec<f64>> {
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        serde_json::from_value(v["vectors"].clone()).unwrap()
    };
    for (x, y) in vectors(&r16).iter().zip(vectors(&r32).iter()) {
        let cos: f64 = x.iter().zip(y).map(|(a, b)| a * b).sum();
        assert!(cos > 0.99999, "cosine {cos}");
    }
    // A damaged piece is refused where it arrives, naming the part to send again.
    let bad = dir.path().join("bad");
    let first = &parts[0];
    let piece = std::fs::read_dir(first).unwrap().map(|e| e.unwrap().path()).find(|p| p.extension().is_some_and(|e| e == "piece")).unwrap();
    let mut bytes = std::fs::read(&piece).unwrap();
    bytes[100] ^= 1;
    std::fs::write(&piece, bytes).unwrap();
    let damaged = Command::new(&py).arg(&script).arg("unpack").arg(first).arg("--into").arg(&bad).output().unwrap();
    let msg = String::from_utf8_lossy(&damaged.stderr);
    assert!(!damaged.status.success() && msg.contains("damaged piece") && msg.contains("send part 1 again"), "{msg}");
    // The staged inputs train (the f16 base loads as the f32 one does).
    let out = run(Command::new(&py).arg(stage.join("train-encoder.py")).arg("train").arg("--bundle").arg(stage.join("bundle.xz"))
        .arg("--base").arg(stage.join("base")).arg("--init").arg(stage.join("init.safetensors")).arg("--run").arg(stage.join("run"))
        .args(["--steps", "2", "--batch", "8", "--bf16", "off", "--threads", "2", "--eval-every", "0"]));
    assert!(out.contains("finished at step 2/2"), "{out}");
}
