//! Malformed p-code: typed errors with line, column, offending text and expectation;
//! never a panic.

#[path = "pcode/mod.rs"]
mod pcommon;
use pcommon as common;
use beryl::pcode::{self, PcodeError, SyntaxError};

fn err(src: &str) -> SyntaxError {
    match pcode::graphs(src, 0) {
        Err(PcodeError::Syntax(s)) => *s,
        Err(e) => panic!("not a syntax error: {e}"),
        Ok(_) => panic!("accepted malformed input:\n{src}"),
    }
}

#[test]
fn unclosed_math() {
    let e = err("F(x)\n    $y = x + 1\n");
    assert_eq!((e.line, e.col), (2, 5));
    assert_eq!(e.line_text, "    $y = x + 1");
    assert!(
        e.expected.iter().any(|x| x.contains("math")),
        "{:?}",
        e.expected
    );
    assert!(e.found.starts_with("$y"));
}

#[test]
fn loop_without_body() {
    let e = err("F(x)\n    while @x is big@\n    $y$\n");
    assert_eq!((e.line, e.col), (3, 5));
    assert!(
        e.expected.iter().any(|x| x.contains("suite")),
        "{:?}",
        e.expected
    );
}

#[test]
fn else_without_if() {
    let e = err("F(x)\n    $a$\n    else\n        $b$\n");
    assert_eq!(e.line, 3);
    assert_eq!(e.found, "else");
}

#[test]
fn for_range_needs_a_bound() {
    let e = err("F(n)\n    for $i = 1$ to\n        $s$\n");
    assert_eq!(e.line, 2);
    assert!(
        e.expected
            .iter()
            .any(|x| x.contains("math") || x.contains("natural")),
        "{:?}",
        e.expected
    );
}

#[test]
fn repeat_without_until() {
    let e = err("F(x)\n    repeat\n        $x = x - 1$\n    $y$\n");
    assert_eq!(e.line, 4);
    assert!(
        e.expected.iter().any(|x| x.contains("until")),
        "{:?}",
        e.expected
    );
}

#[test]
fn unbalanced_brace_and_bad_indentation() {
    let e = err("F(x) {\n  $a$\n");
    assert_eq!(e.line, 3);
    let e = err("F(x)\n        $a$\n    $b$\n");
    assert_eq!((e.line, e.col), (3, 5));
}

#[test]
fn missing_header() {
    let e = err("    $a = 1$\n");
    assert_eq!(e.line, 1);
    assert!(
        e.expected.iter().any(|x| x.contains("procedure")),
        "{:?}",
        e.expected
    );
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    let deep = format!("F(x)\n    $a$ {}\n", "(".repeat(100_000));
    let e = err(&deep);
    assert!(e.message.unwrap().contains("nested"));
    let mut s = String::from("F(x)\n");
    for i in 1..200 {
        s.push_str(&" ".repeat(i));
        s.push_str("while $x$\n");
    }
    assert!(err(&s).message.unwrap().contains("nested"));
    // Long `not` chains parse without recursion and are then refused.
    let nots = format!(
        "F(x)\n    while {}$x$\n        $y$\n",
        "not ".repeat(50_000)
    );
    assert!(err(&nots).message.unwrap().contains("nested"));
    let few = format!("F(x)\n    while {}$x$\n        $y$\n", "not ".repeat(3));
    assert!(pcode::graphs(&few, 0).is_ok());
}

/// Plain pseudocode goes through the converter's own suite tree before the p-code parser
/// sees it: deep indentation must be refused there too.
#[test]
fn deeply_indented_plain_pseudocode_is_refused_not_overflowed() {
    let clf = common::classifier();
    let mut s = String::from("SEARCH(A, x)\n");
    for i in 1..4_000 {
        s.push_str(&" ".repeat(i));
        s.push_str("while x > 0\n");
    }
    s.push_str(&" ".repeat(4_000));
    s.push_str("x = x - 1\n");
    // The main thread's stack is larger than a search's worker threads' may be.
    let e = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || pcode::convert(&s, &clf).map(|_| ()))
        .unwrap()
        .join()
        .unwrap();
    match e {
        Err(PcodeError::Syntax(e)) => assert!(e.message.clone().unwrap_or_default().contains("nested"), "{e:?}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn display_is_file_line_col() {
    let e = pcode::graphs("F(x)\n    $y\n", 0)
        .unwrap_err()
        .with_file("q.p");
    let shown = e.to_string();
    assert!(shown.starts_with("q.p:2:5: expected "), "{shown}");
    assert!(shown.contains("found `$y`"), "{shown}");
    assert!(shown.contains("\n  |     $y\n  |     ^"), "{shown}");
}

/// Deterministic mutations of every query (deletions, duplications, byte swaps,
/// truncations at every char boundary of a few files) never panic, and every error
/// points inside the input.
#[test]
fn mutations_never_panic() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut rand = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let dir = common::root().join("queries");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut checked = 0;
    for path in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "p"))
    {
        let src = std::fs::read_to_string(path).unwrap();
        let bytes = src.as_bytes();
        for _ in 0..60 {
            let mut m = bytes.to_vec();
            let i = (rand() as usize) % m.len();
            let j = (rand() as usize) % m.len();
            match rand() % 4 {
                0 => {
                    m.drain(i.min(j)..i.max(j).min(i.min(j) + 8));
                }
                1 => m.insert(i, b"$@{}()\n \t"[(rand() % 9) as usize]),
                2 => m.swap(i, j),
                _ => m.truncate(i),
            }
            let Ok(text) = String::from_utf8(m) else {
                continue;
            };
            if let Err(e) = pcode::graphs(&text, 0) {
                let s = e.syntax().expect("syntax error");
                assert!(
                    s.line >= 1 && s.line as usize <= text.split('\n').count(),
                    "{e}"
                );
                assert!(s.col >= 1);
            }
            checked += 1;
        }
    }
    assert!(checked > 1000);
}

/// The converter on mutated plain pseudocode: an error or valid p-code, never a panic.
#[test]
fn converter_mutations_never_panic() {
    let clf = common::classifier();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut rand = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let dir = common::root().join("queries");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut checked = 0;
    for path in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
    {
        let src = std::fs::read_to_string(path).unwrap();
        for _ in 0..6 {
            let mut m = src.as_bytes().to_vec();
            let i = (rand() as usize) % m.len();
            let j = (rand() as usize) % m.len();
            match rand() % 4 {
                0 => {
                    m.drain(i.min(j)..i.max(j).min(i.min(j) + 12));
                }
                1 => m.insert(i, b"$@()\n \t:"[(rand() % 8) as usize]),
                2 => m.swap(i, j),
                _ => m.truncate(i),
            }
            let Ok(text) = String::from_utf8(m) else {
                continue;
            };
            if let Ok(conv) = pcode::convert(&text, &clf) {
                assert!(pcode::parse(&conv.pcode).is_ok());
            }
            checked += 1;
        }
    }
    assert!(checked > 150);
}
