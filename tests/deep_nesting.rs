//! Deeply nested sources: a file past the nesting bounds is refused on its own (and a
//! corpus skips it with its reason), files within them are read on a thread with half a
//! rayon worker's stack, and no walk overflows the stack on the way.

use beryl::corpus::{self, SkipReason, WalkOptions};
use beryl::lang::{parse_file, ParseError, MAX_STATEMENT_NESTING, MAX_SYNTAX_DEPTH};
use std::path::Path;

/// Runs `f` on a thread with a 1 MiB stack: half what rayon's workers get.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(1 << 20).spawn(f).unwrap().join().unwrap()
}

/// `open` `n` times, `middle`, `close` `n` times, 100 to a line (long lines are skipped as
/// generated before they are parsed).
fn nest(head: &str, open: &str, middle: &str, close: &str, n: usize, tail: &str) -> String {
    let lines = |s: &str| (0..n).map(|i| if i % 100 == 99 { format!("{s}\n") } else { s.to_string() }).collect::<String>();
    format!("{head}{}{middle}{}{tail}", lines(open), lines(close))
}

fn blocks(n: usize) -> String {
    nest("void f(void) {", "{", "int x = 1;", "}", n, "}\n")
}

fn parens(n: usize) -> String {
    nest("int g(int a) { return ", "(", "a", ")", n, "; }\n")
}

fn parse(name: &str, src: String) -> Result<usize, ParseError> {
    let name = name.to_string();
    on_small_stack(move || parse_file(Path::new(&name), &src, 0).map(|f| f.functions.len()))
}

#[test]
fn files_past_the_bounds_are_refused() {
    assert_eq!(parse("blocks.c", blocks(5_000)), Err(ParseError::TooDeep(MAX_SYNTAX_DEPTH)));
    assert_eq!(parse("parens.c", parens(10_000)), Err(ParseError::TooDeep(MAX_SYNTAX_DEPTH)));
    // Nested statements are bounded well before the syntax is: two levels an `if` block.
    let ifs = nest("void h(int x) {\n", "if (x) { ", "x--;", "}", MAX_STATEMENT_NESTING / 2 + 1, "}\n");
    assert_eq!(parse("ifs.c", ifs), Err(ParseError::TooNested(MAX_STATEMENT_NESTING)));
    let java = nest("class C { void m(int x) {\n", "while (x > 0) { ", "x--;", "}", MAX_STATEMENT_NESTING / 2 + 1, "} }\n");
    assert_eq!(parse("C.java", java), Err(ParseError::TooNested(MAX_STATEMENT_NESTING)));
}

#[test]
fn files_within_the_bounds_are_read_on_a_small_stack() {
    let n = MAX_STATEMENT_NESTING / 2 - 1;
    for (name, open) in [
        ("ifs.c", "if (x) { "),
        ("loops.c", "for (int i = 0; i < x; i++) { "),
        ("whiles.cpp", "while (x > 0) { "),
        ("switches.c", "switch (x) { case 1: "),
    ] {
        let src = nest("int h(int x) {\n", open, "x--;", "}", n, "return x; }\n");
        let got = parse(name, src);
        assert_eq!(got, Ok(1), "{name}");
    }
    let tries = nest("class T { void m(int x) {\n", "try { ", "x--;", "} finally { x++; }", n, "} }\n");
    assert_eq!(parse("T.java", tries), Ok(1));
    // An else-if chain is a sequence, however long, not a nesting.
    let mut chain = String::from("int k(int x) {\n  if (x == 0) return 0;\n");
    for i in 1..700 {
        chain.push_str(&format!("  else if (x == {i}) return {i};\n"));
    }
    chain.push_str("  return -1;\n}\n");
    assert_eq!(parse("chain.c", chain), Ok(1));
    // Expressions nested as deep as the syntax bound allows, and subscripts in subscripts.
    assert_eq!(parse("parens.c", parens(MAX_SYNTAX_DEPTH - 100)), Ok(1));
    let subs = nest("int s(int *a) { return ", "a[", "0", "]", 1_500, "; }\n");
    assert_eq!(parse("subs.c", subs), Ok(1));
    // Operator counts and shapes read statement texts with walks of their own.
    let statement = nest("x = ", "a[", "0", "]", 1_500, ";");
    let counts = on_small_stack(move || beryl::features::count_source(beryl::graph::Lang::C, &statement));
    assert_eq!(counts.0[2], 1_500, "{counts:?}");
}

/// Python blocks nested `n` deep by indentation: `if x:` at each level.
fn python_ifs(n: usize) -> String {
    let mut s = String::from("def h(x):\n");
    for i in 0..n {
        s.push_str(&" ".repeat(4 * (i + 1)));
        s.push_str("if x:\n");
    }
    s.push_str(&" ".repeat(4 * (n + 1)));
    s.push_str("x -= 1\n    return x\n");
    s
}

#[test]
fn python_rust_and_go_nest_within_the_same_bounds() {
    let n = MAX_STATEMENT_NESTING / 2 - 1;
    assert_eq!(parse("ifs.py", python_ifs(n)), Ok(1));
    let rust = nest("fn h(mut x: i32) -> i32 {\n", "if x > 0 { ", "x -= 1;", "}", n, " x }\n");
    assert_eq!(parse("ifs.rs", rust), Ok(1));
    let go = nest("package p\nfunc h(x int) int {\n", "for x > 0 { ", "x--", "}", n, "\nreturn x }\n");
    assert_eq!(parse("fors.go", go), Ok(1));
    // Past the bound: refused, not overflowing the stack.
    assert_eq!(parse("ifs.py", python_ifs(MAX_STATEMENT_NESTING + 1)), Err(ParseError::TooNested(MAX_STATEMENT_NESTING)));
    let rust = nest("fn h(x: i32) {\n", "loop { ", "break;", "}", MAX_STATEMENT_NESTING + 1, "}\n");
    assert_eq!(parse("loops.rs", rust), Err(ParseError::TooNested(MAX_STATEMENT_NESTING)));
    let go = nest("package p\nfunc h(x int) {\n", "if x > 0 { ", "x--", "}", MAX_STATEMENT_NESTING / 2 + 1, "}\n");
    assert_eq!(parse("ifs.go", go), Err(ParseError::TooNested(MAX_STATEMENT_NESTING)));
    // Expressions past the syntax bound.
    let parens = nest("x = ", "(", "1", ")", 5_000, "\n");
    assert_eq!(parse("parens.py", parens), Err(ParseError::TooDeep(MAX_SYNTAX_DEPTH)));
}

#[test]
fn a_corpus_skips_deep_files_and_keeps_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    let igraph = corpus::fetch::fetch("igraph").expect("fetching igraph");
    std::fs::copy(igraph.join("src/paths/floyd_warshall.c"), tmp.path().join("floyd_warshall.c")).unwrap();
    std::fs::write(tmp.path().join("blocks.c"), blocks(5_000)).unwrap();
    std::fs::write(tmp.path().join("parens.c"), parens(10_000)).unwrap();
    let ifs = nest("void h(int x) {\n", "if (x) { ", "x--;", "}", 2_000, "}\n");
    std::fs::write(tmp.path().join("ifs.c"), ifs).unwrap();
    // Parsed on rayon's workers, as `beryl index` and `beryl graph` do.
    let c = corpus::load(&[tmp.path().to_path_buf()], &WalkOptions::default());
    let mut skipped: Vec<_> = c.skipped.iter().map(|s| (s.path.file_name().unwrap().to_string_lossy().into_owned(), s.reason.clone())).collect();
    skipped.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        skipped,
        [("blocks.c".to_string(), SkipReason::TooDeep), ("ifs.c".to_string(), SkipReason::TooDeep), ("parens.c".to_string(), SkipReason::TooDeep)]
    );
    assert!(c.skipped.iter().all(|s| s.detail.contains("nested more than")), "{:?}", c.skipped);
    assert_eq!(c.icfg.files.len(), 1);
    assert!(c.icfg.functions_named("igraph_distances_floyd_warshall").next().is_some());
    assert_eq!(c.stats().skipped.get("too_deep"), Some(&3));
}

#[test]
fn anonymizing_deep_files_does_not_overflow() {
    // A syntax error at the bottom makes every level an erroneous region to descend into.
    let broken = nest("void f(void) {", "{", "int x = = 1 +;", "}", 50_000, "}\n");
    for src in [blocks(5_000), parens(10_000), broken] {
        let out = beryl::anonymize::anonymize_str(beryl::graph::Lang::C, &src, beryl::anonymize::Mode::Neutral, 0);
        assert!(out.unwrap().contains("func_0"));
    }
}
