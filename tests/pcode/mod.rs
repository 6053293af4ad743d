//! Helpers shared by the integration tests.
#![allow(dead_code)]

use beryl::pcode::{classify_lines, Classifier, LineLabel};
use std::collections::BTreeMap;
use std::path::PathBuf;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn classifier() -> Classifier {
    Classifier::load(&Classifier::default_path()).expect("models/pcode-classifier.bin loads")
}

/// (algorithm, gold label, line) rows of the labeled evaluation set.
pub fn labeled_set() -> Vec<(String, LineLabel, String)> {
    let text =
        std::fs::read_to_string(root().join("data/pcode-lines/lines.tsv")).expect("labeled set");
    text.lines()
        .skip(1)
        .map(|l| {
            let mut cols = l.splitn(3, '\t');
            let algo = cols.next().unwrap_or_default().to_string();
            let label = match cols.next() {
                Some("control") => LineLabel::Control,
                Some("math") => LineLabel::Math,
                Some("nl") => LineLabel::Text,
                other => panic!("bad label {other:?} in {l}"),
            };
            (algo, label, cols.next().unwrap_or_default().to_string())
        })
        .collect()
}

/// Confusion counts `(gold, predicted) → n`, classifying each algorithm's lines
/// together, as a conversion of that algorithm would.
pub fn evaluate(clf: &Classifier) -> BTreeMap<(LineLabel, LineLabel), usize> {
    let rows = labeled_set();
    let mut by_algo: BTreeMap<&str, Vec<&(String, LineLabel, String)>> = BTreeMap::new();
    for r in &rows {
        by_algo.entry(r.0.as_str()).or_default().push(r);
    }
    let mut confusion = BTreeMap::new();
    for lines in by_algo.values() {
        let text: Vec<&str> = lines.iter().map(|r| r.2.as_str()).collect();
        let decided = classify_lines(&text.join("\n"), clf);
        assert_eq!(decided.len(), lines.len(), "one decision per line");
        for (d, r) in decided.iter().zip(lines) {
            *confusion.entry((r.1, d.label)).or_insert(0) += 1;
        }
    }
    confusion
}

/// Lines whose predicted label differs from the gold one: (algorithm, gold, predicted, line).
pub fn mistakes(clf: &Classifier) -> Vec<(String, LineLabel, LineLabel, String)> {
    let rows = labeled_set();
    let mut by_algo: BTreeMap<&str, Vec<&(String, LineLabel, String)>> = BTreeMap::new();
    for r in &rows {
        by_algo.entry(r.0.as_str()).or_default().push(r);
    }
    let mut out = Vec::new();
    for lines in by_algo.values() {
        let text: Vec<&str> = lines.iter().map(|r| r.2.as_str()).collect();
        for (d, r) in classify_lines(&text.join("\n"), clf).iter().zip(lines) {
            if d.label != r.1 {
                out.push((r.0.clone(), r.1, d.label, r.2.clone()));
            }
        }
    }
    out
}
