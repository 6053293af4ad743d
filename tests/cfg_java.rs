//! Exact CFG edge sets of small Java methods.

mod common;
use beryl::graph::EdgeKind::*;
use common::{assert_edges, cfg_of};

#[test]
fn labelled_break_and_continue_over_for_each() {
    let src = r#"
class A {
    int find(int[][] m, int t) {
        int r = -1;
        outer:
        for (int i = 0; i < m.length; i++) {
            for (int v : m[i]) {
                if (v == t) { r = i; break outer; }
                if (v < 0) continue outer;
            }
        }
        return r;
    }
}
"#;
    assert_edges(
        &cfg_of("A.java", src, "find"),
        &[
            ("ENTRY", "int r = -1;", Seq),
            ("int r = -1;", "outer:", Seq),
            ("outer:", "int i = 0;", Seq),
            ("int i = 0;", "i < m.length", Seq),
            ("i < m.length", "int v : m[i]", True),
            ("int v : m[i]", "v == t", True),
            ("v == t", "r = i;", True),
            ("r = i;", "break outer;", Seq),
            ("break outer;", "return r;", Jump),
            ("v == t", "v < 0", False),
            ("v < 0", "continue outer;", True),
            ("continue outer;", "i++", Jump),
            ("v < 0", "int v : m[i]", Back),
            ("int v : m[i]", "i++", False),
            ("i++", "i < m.length", Back),
            ("i < m.length", "return r;", False),
            ("return r;", "EXIT", Jump),
        ],
    );
}

#[test]
fn try_catch_finally_with_return_and_throw() {
    let src = r#"
class B {
    int t(String s) {
        try {
            int x = Integer.parseInt(s);
            if (x > 0) return x;
            throw new IllegalStateException();
        } catch (NumberFormatException e) {
            log(e);
        } finally {
            close();
        }
        return 0;
    }
}
"#;
    assert_edges(
        &cfg_of("B.java", src, "t"),
        &[
            ("ENTRY", "try", Seq),
            ("try", "int x = Integer.parseInt(s);", Seq),
            ("try", "catch NumberFormatException e", Exception),
            ("int x = Integer.parseInt(s);", "x > 0", Seq),
            ("x > 0", "return x;", True),
            ("return x;", "finally", Jump),
            ("x > 0", "throw new IllegalStateException();", False),
            ("throw new IllegalStateException();", "catch NumberFormatException e", Exception),
            ("catch NumberFormatException e", "log(e);", Seq),
            ("log(e);", "finally", Seq),
            ("finally", "close();", Seq),
            ("close();", "EXIT", Jump),
            ("close();", "return 0;", Seq),
            ("return 0;", "EXIT", Jump),
        ],
    );
}

#[test]
fn switch_groups_fall_through_and_rules_do_not() {
    let src = r#"
class C {
    int s(int k) {
        int r = 0;
        switch (k) {
            case 1:
            case 2:
                r = 1;
            case 3:
                r++;
                break;
        }
        switch (k) {
            case 4 -> r = 4;
            default -> r = 5;
        }
        return r;
    }
}
"#;
    assert_edges(
        &cfg_of("C.java", src, "s"),
        &[
            ("ENTRY", "int r = 0;", Seq),
            ("int r = 0;", "k", Seq),
            ("k", "case 1", True),
            ("k", "case 2", True),
            ("k", "case 3", True),
            ("case 1", "case 2", Seq),
            ("case 2", "r = 1;", Seq),
            ("r = 1;", "case 3", Seq),
            ("case 3", "r++;", Seq),
            ("r++;", "break;", Seq),
            ("break;", "k", Jump),
            ("k", "k", False),
            ("k", "case 4", True),
            ("k", "default", True),
            ("case 4", "r = 4;", Seq),
            ("default", "r = 5;", Seq),
            ("r = 4;", "return r;", Seq),
            ("r = 5;", "return r;", Seq),
            ("return r;", "EXIT", Jump),
        ],
    );
}

#[test]
fn synchronized_while_and_lambda_as_own_function() {
    let src = r#"
class D {
    void run(java.util.List<Integer> xs) {
        synchronized (this) {
            while (xs.isEmpty()) wait();
        }
        xs.forEach(x -> { if (x > 0) print(x); });
    }
}
"#;
    assert_edges(
        &cfg_of("D.java", src, "run"),
        &[
            ("ENTRY", "synchronized (this)", Seq),
            ("synchronized (this)", "xs.isEmpty()", Seq),
            ("xs.isEmpty()", "wait();", True),
            ("wait();", "xs.isEmpty()", Back),
            ("xs.isEmpty()", "xs.forEach(x -> { if (x > 0) print(x); });", False),
            ("xs.forEach(x -> { if (x > 0) print(x); });", "EXIT", Seq),
        ],
    );
    assert_edges(
        &cfg_of("D.java", src, "lambda$0"),
        &[
            ("ENTRY", "x > 0", Seq),
            ("x > 0", "print(x);", True),
            ("x > 0", "EXIT", False),
            ("print(x);", "EXIT", Seq),
        ],
    );
}

#[test]
fn constructors_anonymous_and_local_classes_are_functions() {
    let src = r#"
package p.q;
class E {
    E(int a) { this(a, 0); }
    E(int a, int b) { }
    Runnable r() {
        class Local { void go() { } }
        return new Runnable() { public void run() { new Local().go(); } };
    }
}
"#;
    let f = beryl::lang::parse_file(std::path::Path::new("E.java"), src, 0).unwrap();
    let mut names: Vec<String> = f.functions.iter().map(|(m, _)| m.qualified()).collect();
    names.sort();
    assert_eq!(names, ["p.q.E.E", "p.q.E.E", "p.q.E.r", "p.q.E.r.Local.go", "p.q.E.r.Runnable$anon.run"]);
    assert_eq!(f.unit.package, "p.q");
}
