//! GenCodeSearchNet runner on the real StatCodeSearch test file (R, 1,070 pairs).

use beryl_lab::clarc::Method;
use beryl_lab::gecs::{self, GecsOptions};
use beryl::features::Encoder;
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    beryl::shared_data("gecs").join(name)
}

fn encoder() -> Encoder {
    Encoder::load_cached(None).expect("encoder installed by scripts/setup.sh, and its vector cache")
}

#[test]
fn statcodesearch_ranges_and_determinism() {
    let (pairs, skipped) = gecs::load(&data("statcodesearch_test.jsonl")).expect("gecs/statcodesearch_test.jsonl in the benchmark data (BERYL_SHARED_DATA or ../shared/data)");
    assert_eq!((pairs.len(), skipped), (1070, 0));
    assert!(pairs.iter().all(|p| !p.comment.is_empty() && !p.code.is_empty()));
    let enc = encoder();
    let opts = GecsOptions { encoder: Some(&enc), seed: 20240601, progress: false };
    let s = gecs::evaluate("statcodesearch_test", &pairs, &[Method::Text, Method::Bm25], &opts).unwrap();
    let (text, bm25) = (&s[0], &s[1]);
    eprintln!("statcodesearch: text MRR {:.4} acc {:?}; bm25 MRR {:.4}", text.mrr, text.accuracy, bm25.mrr);
    assert_eq!((text.candidates, bm25.candidates), (100, 100));
    // Random ranking of 100 gives MRR ≈ 0.052. Measured (docs/eval/gecs.md): text 0.7290,
    // bm25 0.6836, accuracy 88.56 %; paper anchors 0.6311 (CodeT5+) and 0.7945 (Ada-2).
    assert!(text.mrr > 0.70 && bm25.mrr > 0.65 && text.mrr > bm25.mrr, "{s:?}");
    let acc = text.accuracy.expect("text reports accuracy");
    assert!(acc > 85.0 && acc <= 100.0, "{acc}");
    assert!(bm25.accuracy.is_none());
    assert_eq!(text.calibration + text.test, 2 * 1070);
    // Balanced halves: each holds about half of the examples.
    assert!(text.calibration.abs_diff(text.test) < 200, "{} vs {}", text.calibration, text.test);

    // The same seed gives the same numbers; another seed other draws but similar ones.
    let again = gecs::evaluate("statcodesearch_test", &pairs, &[Method::Bm25], &opts).unwrap();
    assert_eq!(again[0].mrr, bm25.mrr);
    let other = gecs::evaluate("statcodesearch_test", &pairs, &[Method::Bm25], &GecsOptions { seed: 1, ..opts }).unwrap();
    assert!(other[0].mrr != bm25.mrr && (other[0].mrr - bm25.mrr).abs() < 0.05, "{} vs {}", other[0].mrr, bm25.mrr);
}

#[test]
fn bad_files_are_errors() {
    assert!(gecs::load(&data("no_such_file.jsonl")).is_err());
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.jsonl");
    std::fs::write(&p, "{\"input\": \"a [CODESPLIT] b\", \"target\": 1}\n{\"target\": 1}\n").unwrap();
    let e = gecs::load(&p).unwrap_err().to_string();
    assert!(e.contains("bad.jsonl:2") && e.contains("input"), "{e}");
}
