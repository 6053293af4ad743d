//! The classifier's model file, training determinism and conversion behaviour.

#[path = "pcode/mod.rs"]
mod pcommon;
use pcommon as common;
use beryl::pcode::{self, Classifier, LineClass, LineLabel, TrainConfig};
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pcode-dev-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A tiny synthetic C and Java corpus written by the test itself.
fn synthetic_corpus(root: &Path) -> (PathBuf, PathBuf) {
    let c = root.join("c");
    let java = root.join("java");
    std::fs::create_dir_all(&c).unwrap();
    std::fs::create_dir_all(&java).unwrap();
    let mut csrc =
        String::from("/* licence words that must be skipped entirely */\n#include <stdio.h>\n");
    let mut jsrc = String::from("package p;\nclass K {\n");
    for i in 0..40 {
        csrc.push_str(&format!(
            "int f{i}(int n) {{\n  /* compute the running total of the first values */\n  s{i} = s{i} + a[{i}] * n;\n  // walk over every element of the array again\n  x = y[{i}] - {i};\n}}\n"
        ));
        jsrc.push_str(&format!(
            "  /** Returns the number of rows in this matrix {i}. */\n  int g{i}() {{ return r{i} * c + {i}; }}\n  // move on to the next column of the table\n  double h{i} = m[i][{i}] / q;\n"
        ));
    }
    jsrc.push_str("}\n");
    std::fs::write(c.join("a.c"), csrc).unwrap();
    std::fs::write(java.join("K.java"), jsrc).unwrap();
    (c, java)
}

#[test]
fn training_is_deterministic_and_round_trips() {
    let dir = scratch("train");
    let (c, java) = synthetic_corpus(&dir);
    let cfg = TrainConfig {
        c_corpus: c,
        java_corpus: java,
        per_class: 30,
        holdout: 10,
        ..Default::default()
    };
    let (a, report) = pcode::train(&cfg).unwrap();
    let (b, _) = pcode::train(&cfg).unwrap();
    a.save(&dir.join("a.bin")).unwrap();
    b.save(&dir.join("b.bin")).unwrap();
    let bytes = std::fs::read(dir.join("a.bin")).unwrap();
    assert_eq!(
        bytes,
        std::fs::read(dir.join("b.bin")).unwrap(),
        "same seed, same model"
    );
    assert_eq!(report.corpora.len(), 2);
    assert!(report
        .corpora
        .iter()
        .all(|c| c.sampled_code_lines > 0 && c.sampled_comment_lines > 0));
    let loaded = Classifier::load(&dir.join("a.bin")).unwrap();
    assert_eq!(loaded.len(), a.len());
    let items = ["x = y + 2 * z", "walk over every element of the table"];
    assert_eq!(loaded.classify(&items), a.classify(&items));
    assert_eq!(a.classify(&items), vec![LineClass::Math, LineClass::Text]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn corrupt_models_are_errors() {
    let dir = scratch("corrupt");
    let path = dir.join("m.bin");
    std::fs::write(&path, b"not a model").unwrap();
    assert!(Classifier::load(&path).is_err());
    let good = std::fs::read(Classifier::default_path()).unwrap();
    std::fs::write(&path, &good[..good.len() / 2]).unwrap();
    assert!(Classifier::load(&path).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shipped_model_separates_obvious_lines() {
    let clf = common::classifier();
    let got = clf.classify(&[
        "C[i][j] = C[i][j] + A[i][k] · B[k][j]",
        "let C be a new n × n matrix",
        "key ← A[j]",
        "insert v into the queue Q",
    ]);
    assert_eq!(
        got,
        vec![
            LineClass::Math,
            LineClass::Text,
            LineClass::Math,
            LineClass::Text
        ]
    );
}

#[test]
fn conversion_of_textbook_input() {
    let clf = common::classifier();
    let text = "1  MATRIX-MULTIPLY(A, B)\n2      n = A.rows\n3      let C be a new n × n matrix   // result\n4      for i = 1 to n\n5          for j = 1 to n\n6              C[i][j] = 0\n7              for k = 1 to n\n8                  C[i][j] = C[i][j] + A[i][k] · B[k][j]\n9      return C\n";
    let conv = pcode::convert(text, &clf).unwrap();
    let want = "MATRIX-MULTIPLY(A, B)\n    $n = A.rows$\n    @let C be a new n × n matrix@\n    for $i = 1$ to $n$\n        for $j = 1$ to $n$\n            $C[i][j] = 0$\n            for $k = 1$ to $n$\n                $C[i][j] = C[i][j] + A[i][k] · B[k][j]$\n    return $C$\n\n";
    assert_eq!(conv.pcode, want);
    let labels: Vec<LineLabel> = conv.lines.iter().map(|d| d.label).collect();
    use LineLabel::*;
    assert_eq!(
        labels,
        vec![Control, Math, Text, Control, Control, Math, Control, Math, Control]
    );
}

#[test]
fn conversion_handles_inline_else_if_and_repeat() {
    let clf = common::classifier();
    let text = "F(x)\n    if x > 0 then y ← 1\n    else if x == 0\n        y ← 0\n    else y ← -1\n    repeat\n        x ← x - 1\n    until x ≤ 0\n";
    let conv = pcode::convert(text, &clf).unwrap();
    let want = "F(x)\n    if $x > 0$\n        $y ← 1$\n    elseif $x == 0$\n        $y ← 0$\n    else\n        $y ← -1$\n    repeat\n        $x ← x - 1$\n    until $x ≤ 0$\n\n";
    assert_eq!(conv.pcode, want);
}

#[test]
fn conversion_errors_point_at_the_line() {
    let clf = common::classifier();
    for (text, line) in [
        ("F(x)\n    repeat\n        x = 1\n    y = 2\n", 2),
        ("F(x)\n    else\n        x = 1\n", 2),
        ("x = 1\n", 1),
        ("F(x)\n", 1),
    ] {
        match pcode::convert(text, &clf) {
            Err(e) => assert_eq!(e.syntax().map(|s| s.line), Some(line), "{e}"),
            Ok(c) => panic!("accepted:\n{}", c.pcode),
        }
    }
}
