//! Exact CFG edge sets of small C functions, one construct family each.

mod common;
use beryl::graph::EdgeKind::*;
use common::{assert_edges, cfg_of};

#[test]
fn nested_loops_with_break_and_continue() {
    let src = r#"
int f(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        if (i % 2) continue;
        while (s < 100) {
            s += i;
            if (s > 50) break;
        }
    }
    return s;
}
"#;
    assert_edges(
        &cfg_of("a.c", src, "f"),
        &[
            ("ENTRY", "int s = 0;", Seq),
            ("int s = 0;", "int i = 0;", Seq),
            ("int i = 0;", "i < n", Seq),
            ("i < n", "i % 2", True),
            ("i % 2", "continue;", True),
            ("continue;", "i++", Jump),
            ("i % 2", "s < 100", False),
            ("s < 100", "s += i;", True),
            ("s += i;", "s > 50", Seq),
            ("s > 50", "break;", True),
            ("s > 50", "s < 100", Back),
            ("break;", "i++", Jump),
            ("s < 100", "i++", False),
            ("i++", "i < n", Back),
            ("i < n", "return s;", False),
            ("return s;", "EXIT", Jump),
        ],
    );
}

#[test]
fn switch_with_fall_through_and_default() {
    let src = r#"
int g(int x) {
    int r = 0;
    switch (x) {
    case 1:
        r = 1;
    case 2:
        r += 2;
        break;
    default:
        r = -1;
    }
    return r;
}
"#;
    assert_edges(
        &cfg_of("a.c", src, "g"),
        &[
            ("ENTRY", "int r = 0;", Seq),
            ("int r = 0;", "x", Seq),
            ("x", "case 1", True),
            ("x", "case 2", True),
            ("x", "default", True),
            ("case 1", "r = 1;", Seq),
            ("r = 1;", "case 2", Seq),
            ("case 2", "r += 2;", Seq),
            ("r += 2;", "break;", Seq),
            ("break;", "return r;", Jump),
            ("default", "r = -1;", Seq),
            ("r = -1;", "return r;", Seq),
            ("return r;", "EXIT", Jump),
        ],
    );
}

#[test]
fn switch_without_default_falls_out() {
    let src = "void s(int x) { switch (x) { case 0: x++; } x--; }";
    assert_edges(
        &cfg_of("a.c", src, "s"),
        &[
            ("ENTRY", "x", Seq),
            ("x", "case 0", True),
            ("case 0", "x++;", Seq),
            ("x++;", "x--;", Seq),
            ("x", "x--;", False),
            ("x--;", "EXIT", Seq),
        ],
    );
}

#[test]
fn return_inside_loop_and_goto() {
    let src = r#"
int h(int *a, int n) {
    int i = 0;
again:
    while (i < n) {
        if (a[i] < 0) return i;
        i++;
    }
    if (n > 0) { n--; goto again; }
    return -1;
}
"#;
    assert_edges(
        &cfg_of("a.c", src, "h"),
        &[
            ("ENTRY", "int i = 0;", Seq),
            ("int i = 0;", "again:", Seq),
            ("again:", "i < n", Seq),
            ("i < n", "a[i] < 0", True),
            ("a[i] < 0", "return i;", True),
            ("return i;", "EXIT", Jump),
            ("a[i] < 0", "i++;", False),
            ("i++;", "i < n", Back),
            ("i < n", "n > 0", False),
            ("n > 0", "n--;", True),
            ("n--;", "goto again;", Seq),
            ("goto again;", "again:", Jump),
            ("n > 0", "return -1;", False),
            ("return -1;", "EXIT", Jump),
        ],
    );
}

#[test]
fn do_while_and_else_if_chain() {
    let src = r#"
void d(int n) {
    do { n--; } while (n > 0);
    if (n < 0) n = 0; else if (n == 0) n = 1; else n = 2;
}
"#;
    assert_edges(
        &cfg_of("a.c", src, "d"),
        &[
            ("ENTRY", "n--;", Seq),
            ("n--;", "n > 0", Seq),
            ("n > 0", "n--;", Back),
            ("n > 0", "n < 0", False),
            ("n < 0", "n = 0;", True),
            ("n < 0", "n == 0", False),
            ("n == 0", "n = 1;", True),
            ("n == 0", "n = 2;", False),
            ("n = 0;", "EXIT", Seq),
            ("n = 1;", "EXIT", Seq),
            ("n = 2;", "EXIT", Seq),
        ],
    );
}

#[test]
fn infinite_for_leaves_only_by_break() {
    let src = "int w(int n) { int k; for (;;) { if (n-- == 0) break; } return n; }";
    assert_edges(
        &cfg_of("a.c", src, "w"),
        &[
            ("ENTRY", "for", Seq),
            ("for", "n-- == 0", True),
            ("n-- == 0", "break;", True),
            ("n-- == 0", "for", Back),
            ("break;", "return n;", Jump),
            ("return n;", "EXIT", Jump),
        ],
    );
}

#[test]
fn nodes_keep_spans_text_and_callees() {
    let src = "int f(int x) {\n  int y = g(x, 1) + h();\n  return y;\n}\n";
    let cfg = cfg_of("a.c", src, "f");
    let n = cfg.nodes.iter().find(|n| n.text.starts_with("int y")).unwrap();
    assert_eq!(n.lines, (2, 2));
    assert_eq!(&src[n.bytes.0 as usize..n.bytes.1 as usize], "int y = g(x, 1) + h();");
    let calls: Vec<_> = n.calls.iter().map(|c| (c.name.as_str(), c.argc)).collect();
    assert_eq!(calls, [("g", 2), ("h", 0)]);
}

#[test]
fn broken_code_still_yields_cfgs() {
    let src = "int ok(int a) { return a + 1; }\nint bad(int b) { if (b > ) { b = 2; } return b; }\nint ok2(void) { return 3; }\n";
    let f = beryl::lang::parse_file(std::path::Path::new("x.c"), src, 0).unwrap();
    assert!(f.error_regions > 0);
    let names: Vec<_> = f.functions.iter().map(|(m, _)| m.name.as_str()).collect();
    assert_eq!(names, ["ok", "bad", "ok2"]);
    let bad = &f.functions[1].1;
    assert!(bad.nodes.iter().any(|n| &*n.text == "b = 2;"), "recovered statements keep their nodes");
}
