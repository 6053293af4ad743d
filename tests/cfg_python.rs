//! Exact CFG edge sets of small Python functions: loops with `else`, `elif` chains,
//! comprehensions as loops, `try`/`except`/`else`/`finally`, `with` and `match`.

mod common;
use beryl::graph::EdgeKind::*;
use common::{assert_edges, cfg_of};

const SRC: &str = r#"
class Sorter:
    def insertion(self, a):
        """Sorts a in place."""
        for i in range(1, len(a)):
            x = a[i]
            j = i - 1
            while j >= 0 and a[j] > x:
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = x
        else:
            self.done = True
        return a

def find(rows, t):
    for r in rows:
        if r is None:
            continue
        elif t in r:
            break
    else:
        return None
    odd = [v * v for v in r if v % 2]
    return odd

def parse(s):
    try:
        n = int(s)
    except ValueError as e:
        raise KeyError(s) from e
    except TypeError:
        n = 0
    else:
        n += 1
    finally:
        log(s)
    with open(s) as f:
        f.write(n)
    match n:
        case 0 | 1:
            return "small"
        case int(k) if k > 9:
            pass
        case _:
            return None
    return n

def drain(q):
    while q:
        try:
            x = q.pop()
            if x < 0:
                break
            if x == 0:
                continue
            risky(x)
        finally:
            q.done()
    return 0

def guarded(q):
    try:
        try:
            risky(q)
            raise ValueError(q)
        finally:
            undo(q)
    except OSError:
        return -1
    return 0

def total(rows):
    return sum(cost(v) * 2 for v in rows if keep(v))
"#;

#[test]
fn insertion_has_the_flow_a_reader_sees() {
    assert_edges(
        &cfg_of("a.py", SRC, "insertion"),
        &[
            ("ENTRY", "i in range(1, len(a))", Seq),
            ("i in range(1, len(a))", "self.done = True", False),
            ("i in range(1, len(a))", "x = a[i]", True),
            ("x = a[i]", "j = i - 1", Seq),
            ("j = i - 1", "j >= 0 and a[j] > x", Seq),
            ("j >= 0 and a[j] > x", "a[j + 1] = x", False),
            ("j >= 0 and a[j] > x", "a[j + 1] = a[j]", True),
            ("a[j + 1] = a[j]", "j -= 1", Seq),
            ("j -= 1", "j >= 0 and a[j] > x", Back),
            ("a[j + 1] = x", "i in range(1, len(a))", Back),
            ("self.done = True", "return a", Seq),
            ("return a", "EXIT", Jump),
        ],
    );
}

#[test]
fn find_has_the_flow_a_reader_sees() {
    assert_edges(
        &cfg_of("a.py", SRC, "find"),
        &[
            ("ENTRY", "r in rows", Seq),
            ("r in rows", "return None", False),
            ("r in rows", "r is None", True),
            ("r is None", "t in r", False),
            ("r is None", "continue", True),
            ("continue", "r in rows", Jump),
            ("t in r", "r in rows", Back),
            ("t in r", "break", True),
            ("break", "v in r", Jump),
            ("return None", "EXIT", Jump),
            ("v in r", "odd = […]", False),
            ("v in r", "v % 2", True),
            ("v % 2", "v * v", True),
            ("v % 2", "v in r", Back),
            ("v * v", "v in r", Back),
            ("odd = […]", "return odd", Seq),
            ("return odd", "EXIT", Jump),
        ],
    );
}

#[test]
fn parse_has_the_flow_a_reader_sees() {
    assert_edges(
        &cfg_of("a.py", SRC, "parse"),
        &[
            ("ENTRY", "try", Seq),
            ("try", "n = int(s)", Seq),
            ("try", "except TypeError", Exception),
            ("try", "except ValueError as e", Exception),
            ("except ValueError as e", "raise KeyError(s) from e", Seq),
            ("except TypeError", "n = 0", Seq),
            ("n = int(s)", "n += 1", Seq),
            ("n += 1", "finally", Seq),
            // A raise in a handler runs the finally, then leaves the function.
            ("raise KeyError(s) from e", "finally", Jump),
            ("log(s)", "EXIT", Jump),
            ("n = 0", "finally", Seq),
            ("finally", "log(s)", Seq),
            ("log(s)", "with open(s) as f", Seq),
            ("with open(s) as f", "f.write(n)", Seq),
            ("f.write(n)", "n", Seq),
            ("n", "case _", True),
            ("n", "case int(k) if k > 9", True),
            ("n", "case 0 | 1", True),
            ("case 0 | 1", "return \"small\"", Seq),
            ("return \"small\"", "EXIT", Jump),
            ("case int(k) if k > 9", "return n", Seq),
            ("case _", "return None", Seq),
            ("return None", "EXIT", Jump),
            ("return n", "EXIT", Jump),
        ],
    );
}

#[test]
fn break_and_continue_leave_a_try_through_its_finally() {
    assert_edges(
        &cfg_of("a.py", SRC, "drain"),
        &[
            ("ENTRY", "q", Seq),
            ("q", "try", True),
            ("q", "return 0", False),
            ("try", "x = q.pop()", Seq),
            ("x = q.pop()", "x < 0", Seq),
            ("x < 0", "break", True),
            ("x < 0", "x == 0", False),
            ("x == 0", "continue", True),
            ("x == 0", "risky(x)", False),
            ("risky(x)", "finally", Seq),
            ("break", "finally", Jump),
            ("continue", "finally", Jump),
            ("finally", "q.done()", Seq),
            // The finally's end goes on where each way in was going.
            ("q.done()", "q", Back),
            ("q.done()", "q", Jump),
            ("q.done()", "return 0", Jump),
            ("return 0", "EXIT", Jump),
        ],
    );
}

#[test]
fn a_raise_runs_the_finally_then_reaches_the_outer_handler() {
    assert_edges(
        &cfg_of("a.py", SRC, "guarded"),
        &[
            ("ENTRY", "try", Seq),
            ("try", "try", Seq),
            ("try", "except OSError", Exception),
            ("try", "risky(q)", Seq),
            ("risky(q)", "raise ValueError(q)", Seq),
            ("raise ValueError(q)", "finally", Jump),
            ("finally", "undo(q)", Seq),
            ("undo(q)", "return 0", Seq),
            ("undo(q)", "except OSError", Exception),
            ("except OSError", "return -1", Seq),
            ("return -1", "EXIT", Jump),
            ("return 0", "EXIT", Jump),
        ],
    );
}

#[test]
fn a_comprehension_is_counted_once() {
    let cfg = cfg_of("a.py", SRC, "total");
    let texts: Vec<&str> = cfg.nodes.iter().map(|n| &*n.text).collect();
    assert!(texts.contains(&"return sum(…)"), "{texts:?}");
    let mut calls: Vec<&str> = cfg.nodes.iter().flat_map(|n| n.calls.iter().map(|c| c.name.as_str())).collect();
    calls.sort_unstable();
    assert_eq!(calls, ["cost", "keep", "sum"]);
}

#[test]
fn methods_nested_functions_and_lambdas_are_functions() {
    let src = "class A:\n    def m(self, x, y=1, *rest):\n        def inner(z):\n            return z\n        return sorted(x, key=lambda v: -v)\n    @staticmethod\n    def s(a, b):\n        return a\n";
    let f = beryl::lang::parse_file(std::path::Path::new("a.py"), src, 0).unwrap();
    let names: Vec<(String, Option<u32>, u32)> = f.functions.iter().map(|(m, _)| (m.qualified(), m.arity, m.min_arity)).collect();
    assert_eq!(
        names,
        [
            ("A.m".to_string(), None, 1),
            ("A.m.inner".to_string(), Some(1), 1),
            ("A.m.lambda$0".to_string(), Some(1), 1),
            ("A.s".to_string(), Some(2), 2),
        ]
    );
}
