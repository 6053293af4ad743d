//! Exact CFG edge sets of small Go functions: the three `for` forms, labelled `break` and
//! `continue`, switches with `fallthrough`, type switches, `select`, `defer` and `panic`.

mod common;
use beryl::graph::EdgeKind::*;
use common::{assert_edges, cfg_of};

const SRC: &str = r#"
package sorting

func (h *Heap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h.a[p] <= h.a[i] {
			break
		}
		h.a[p], h.a[i] = h.a[i], h.a[p]
		i = p
	}
}

func Classify(xs []int) int {
	total := 0
outer:
	for _, x := range xs {
		switch {
		case x < 0:
			continue outer
		case x == 0:
			fallthrough
		case x == 1:
			total++
		default:
			if y := x % 6; y > 1 {
				break outer
			}
		}
	}
	defer done()
	if total > 10 {
		panic("too many")
	}
	for j := 0; j < 3; j++ {
		total += j
	}
	return total
}

func Wait(c chan int, v interface{}) {
	for {
		select {
		case x := <-c:
			use(x)
		default:
			return
		}
		switch t := v.(type) {
		case int:
			use(t)
		}
	}
}
"#;

#[test]
fn up_has_the_flow_a_reader_sees() {
    assert_edges(
        &cfg_of("a.go", SRC, "up"),
        &[
            ("ENTRY", "i > 0", Seq),
            ("i > 0", "EXIT", False),
            ("i > 0", "p := (i - 1) / 2", True),
            ("p := (i - 1) / 2", "h.a[p] <= h.a[i]", Seq),
            ("h.a[p] <= h.a[i]", "h.a[p], h.a[i] = h.a[i], h.a[p]", False),
            ("h.a[p] <= h.a[i]", "break", True),
            ("break", "EXIT", Jump),
            ("h.a[p], h.a[i] = h.a[i], h.a[p]", "i = p", Seq),
            ("i = p", "i > 0", Back),
        ],
    );
}

#[test]
fn classify_has_the_flow_a_reader_sees() {
    assert_edges(
        &cfg_of("a.go", SRC, "Classify"),
        &[
            ("ENTRY", "total := 0", Seq),
            ("total := 0", "outer:", Seq),
            ("outer:", "_, x := range xs", Seq),
            ("_, x := range xs", "defer done()", False),
            ("_, x := range xs", "switch", True),
            ("switch", "default", True),
            ("switch", "case x == 1", True),
            ("switch", "case x == 0", True),
            ("switch", "case x < 0", True),
            ("case x < 0", "continue outer", Seq),
            ("continue outer", "_, x := range xs", Jump),
            ("case x == 0", "case x == 1", Seq),
            ("case x == 1", "total++", Seq),
            ("total++", "_, x := range xs", Back),
            ("default", "y := x % 6", Seq),
            ("y := x % 6", "y > 1", Seq),
            ("y > 1", "_, x := range xs", Back),
            ("y > 1", "break outer", True),
            ("break outer", "defer done()", Jump),
            ("defer done()", "total > 10", Seq),
            ("total > 10", "j := 0", False),
            ("total > 10", "panic(\"too many\")", True),
            ("panic(\"too many\")", "EXIT", Jump),
            ("j := 0", "j < 3", Seq),
            ("j < 3", "return total", False),
            ("j < 3", "total += j", True),
            ("j++", "j < 3", Back),
            ("total += j", "j++", Seq),
            ("return total", "EXIT", Jump),
        ],
    );
}

#[test]
fn wait_has_the_flow_a_reader_sees() {
    assert_edges(
        &cfg_of("a.go", SRC, "Wait"),
        &[
            ("ENTRY", "for", Seq),
            ("for", "select", True),
            ("select", "default", True),
            ("select", "case x := <-c", True),
            ("case x := <-c", "use(x)", Seq),
            ("use(x)", "t := v.(type)", Seq),
            ("default", "return", Seq),
            ("return", "EXIT", Jump),
            ("t := v.(type)", "for", Back),
            ("t := v.(type)", "case int", True),
            ("case int", "use(t)", Seq),
            ("use(t)", "for", Back),
        ],
    );
}

#[test]
fn receivers_scope_methods_and_literals_are_functions() {
    let src = "package g\n\nfunc (g *Graph[K]) Add(a, b K, w ...int) { f := func(x int) int { return x }; f(1) }\nfunc Top(xs []int) int { return xs[0] }\n";
    let f = beryl::lang::parse_file(std::path::Path::new("g.go"), src, 0).unwrap();
    let names: Vec<(String, Option<u32>, u32)> = f.functions.iter().map(|(m, _)| (m.qualified(), m.arity, m.min_arity)).collect();
    assert_eq!(
        names,
        [
            ("Graph.Add".to_string(), None, 2),
            ("Graph.Add.lambda$0".to_string(), Some(1), 1),
            ("Top".to_string(), Some(1), 1),
        ]
    );
    assert_eq!(f.unit.package, "g");
}
