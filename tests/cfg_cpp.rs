//! Exact CFG edge sets of small C++ functions, and C++ naming.

mod common;
use beryl::graph::EdgeKind::*;
use common::{assert_edges, cfg_of};

#[test]
fn range_for_try_catch_and_throw() {
    let src = r#"
#include <vector>
int total(const std::vector<int>& v) {
    int s = 0;
    try {
        for (int x : v) {
            if (x < 0) throw std::invalid_argument("neg");
            s += x;
        }
    } catch (const std::exception& e) {
        s = -1;
    }
    return s;
}
"#;
    assert_edges(
        &cfg_of("a.cpp", src, "total"),
        &[
            ("ENTRY", "int s = 0;", Seq),
            ("int s = 0;", "try", Seq),
            ("try", "int x : v", Seq),
            ("try", "catch (const std::exception& e)", Exception),
            ("int x : v", "x < 0", True),
            ("x < 0", "throw std::invalid_argument(\"neg\");", True),
            ("throw std::invalid_argument(\"neg\");", "catch (const std::exception& e)", Exception),
            ("x < 0", "s += x;", False),
            ("s += x;", "int x : v", Back),
            ("int x : v", "return s;", False),
            ("catch (const std::exception& e)", "s = -1;", Seq),
            ("s = -1;", "return s;", Seq),
            ("return s;", "EXIT", Jump),
        ],
    );
}

#[test]
fn methods_namespaces_lambdas_and_static_scope() {
    let src = r#"
namespace geo {
struct Pt { int x; int norm() const { return x * x; } };
int Pt2::area(int w, int h = 1) { return w * h; }
namespace { int hidden(int a) { return a; } }
}
static int util(int a, ...) { return a; }
void each(std::vector<int>& v) { std::for_each(v.begin(), v.end(), [](int& y) { y++; }); }
"#;
    let f = beryl::lang::parse_file(std::path::Path::new("g.cpp"), src, 0).unwrap();
    let got: Vec<(String, Option<u32>, u32, bool)> = f
        .functions
        .iter()
        .map(|(m, _)| (m.qualified(), m.arity, m.min_arity, m.file_local))
        .collect();
    assert_eq!(
        got,
        [
            ("geo::Pt::norm".to_string(), Some(0), 0, false),
            ("geo::Pt2::area".to_string(), Some(2), 1, false),
            ("geo::hidden".to_string(), Some(1), 1, true),
            ("util".to_string(), None, 1, true),
            ("each".to_string(), Some(1), 1, false),
            ("each::lambda$0".to_string(), Some(1), 1, true),
        ]
    );
}
