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
            ("v in r", "odd = [v * v for v in r if v % 2]", False),
            ("v in r", "v % 2", True),
            ("v % 2", "v * v", True),
            ("v % 2", "v in r", Back),
            ("v * v", "v in r", Back),
            ("odd = [v * v for v in r if v % 2]", "return odd", Seq),
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
            ("raise KeyError(s) from e", "EXIT", Jump),
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
