//! Exact CFG edge sets of small Rust functions: `while let` with labels, `for`, `loop`,
//! `match` arms with guards, `let … else`, `?`, `panic!`, and a body's value as its return.

mod common;
use beryl::graph::EdgeKind::*;
use common::{assert_edges, cfg_of};

const SRC: &str = r#"
impl Graph {
    /// Breadth-first distances from `s`.
    pub fn bfs(&self, s: usize) -> Vec<usize> {
        let mut dist = vec![usize::MAX; self.n];
        let mut q = VecDeque::new();
        q.push_back(s);
        'outer: while let Some(u) = q.pop_front() {
            for &v in &self.adj[u] {
                if dist[v] == usize::MAX {
                    dist[v] = dist[u] + 1;
                    q.push_back(v);
                } else if v == s {
                    continue 'outer;
                }
            }
        }
        dist
    }
}

pub fn gcd(mut a: u64, mut b: u64) -> u64 {
    loop {
        if b == 0 {
            break;
        }
        let t = b;
        b = a % b;
        a = t;
    }
    a
}

fn sign(x: i64) -> Result<&'static str, String> {
    let v = parse(x)?;
    let Some(w) = v.checked_add(1) else { return Err(String::new()) };
    let name = match w {
        0 => "zero",
        n if n < 0 => "neg",
        _ => {
            let s = gcd(3, 4);
            if s > 1 { "pos" } else { "one" }
        }
    };
    if name.is_empty() {
        panic!("empty");
    }
    if w > 10 { Ok("big") } else { Ok(name) }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    let odd = (0..a.len()).filter(|i| i % 2 == 1).count();
    a.iter().zip(b.iter()).map(|(x, y)| x * y).sum::<f64>() / odd as f64
}
"#;

#[test]
fn bfs_has_the_flow_a_reader_sees() {
    assert_edges(
        &cfg_of("lib.rs", SRC, "bfs"),
        &[
            ("ENTRY", "let mut dist = vec![usize::MAX; self.n];", Seq),
            ("let mut dist = vec![usize::MAX; self.n];", "let mut q = VecDeque::new();", Seq),
            ("let mut q = VecDeque::new();", "q.push_back(s)", Seq),
            ("q.push_back(s)", "let Some(u) = q.pop_front()", Seq),
            ("let Some(u) = q.pop_front()", "dist", False),
            ("let Some(u) = q.pop_front()", "&v in &self.adj[u]", True),
            ("&v in &self.adj[u]", "let Some(u) = q.pop_front()", Back),
            ("&v in &self.adj[u]", "dist[v] == usize::MAX", True),
            ("dist[v] == usize::MAX", "v == s", False),
            ("dist[v] == usize::MAX", "dist[v] = dist[u] + 1", True),
            ("dist[v] = dist[u] + 1", "q.push_back(v)", Seq),
            ("q.push_back(v)", "&v in &self.adj[u]", Back),
            ("v == s", "&v in &self.adj[u]", Back),
            ("v == s", "continue 'outer", True),
            ("continue 'outer", "let Some(u) = q.pop_front()", Jump),
            ("dist", "EXIT", Jump),
        ],
    );
}

#[test]
fn gcd_has_the_flow_a_reader_sees() {
    assert_edges(
        &cfg_of("lib.rs", SRC, "gcd"),
        &[
            ("ENTRY", "loop", Seq),
            ("loop", "b == 0", True),
            ("b == 0", "let t = b;", False),
            ("b == 0", "break", True),
            ("break", "a", Jump),
            ("let t = b;", "b = a % b", Seq),
            ("b = a % b", "a = t", Seq),
            ("a = t", "loop", Back),
            ("a", "EXIT", Jump),
        ],
    );
}

#[test]
fn sign_has_the_flow_a_reader_sees() {
    assert_edges(
        &cfg_of("lib.rs", SRC, "sign"),
        &[
            ("ENTRY", "let v = parse(x)?;", Seq),
            ("let v = parse(x)?;", "let Some(w) = v.checked_add(1)", Seq),
            ("let v = parse(x)?;", "EXIT", Jump),
            ("let Some(w) = v.checked_add(1)", "w", True),
            ("let Some(w) = v.checked_add(1)", "return Err(String::new())", False),
            ("return Err(String::new())", "EXIT", Jump),
            ("w", "_", True),
            ("w", "n if n < 0", True),
            ("w", "0", True),
            ("0", "\"zero\"", Seq),
            ("\"zero\"", "let name =", Seq),
            ("n if n < 0", "\"neg\"", Seq),
            ("\"neg\"", "let name =", Seq),
            ("_", "let s = gcd(3, 4);", Seq),
            ("let s = gcd(3, 4);", "s > 1", Seq),
            ("s > 1", "\"one\"", False),
            ("s > 1", "\"pos\"", True),
            ("\"pos\"", "let name =", Seq),
            ("\"one\"", "let name =", Seq),
            ("let name =", "name.is_empty()", Seq),
            ("name.is_empty()", "w > 10", False),
            ("name.is_empty()", "panic!(\"empty\")", True),
            ("panic!(\"empty\")", "EXIT", Jump),
            ("w > 10", "Ok(name)", False),
            ("w > 10", "Ok(\"big\")", True),
            ("Ok(\"big\")", "EXIT", Jump),
            ("Ok(name)", "EXIT", Jump),
        ],
    );
}

#[test]
fn consumed_iterator_chains_are_loops() {
    let cfg = cfg_of("a.rs", SRC, "dot");
    assert_edges(
        &cfg,
        &[
            ("ENTRY", "(0..a.len())", Seq),
            ("(0..a.len())", "i % 2 == 1", True),
            ("i % 2 == 1", "(0..a.len())", Back),
            ("(0..a.len())", "let odd = …;", False),
            ("let odd = …;", "a.iter()", Seq),
            ("a.iter()", "x * y", True),
            ("x * y", "a.iter()", Back),
            ("a.iter()", "… / odd as f64", False),
            ("… / odd as f64", "EXIT", Jump),
        ],
    );
    // The closures' calls are in the loops, not again in the statements.
    let calls: Vec<&str> = cfg.nodes.iter().flat_map(|n| n.calls.iter().map(|c| c.name.as_str())).collect();
    assert_eq!(calls.iter().filter(|&&c| c == "iter").count(), 2, "{calls:?}");
}

#[test]
fn impl_methods_modules_and_closures_are_scoped() {
    let src = "mod graph {\n    impl<N> Graph<N> {\n        pub fn edge(&mut self, a: usize, b: usize) { let f = |x: usize| x + 1; f(a); }\n    }\n    trait Walk { fn walk(&self) -> usize { 0 } }\n}\nfn free() {}\n";
    let f = beryl::lang::parse_file(std::path::Path::new("lib.rs"), src, 0).unwrap();
    let names: Vec<(String, Option<u32>)> = f.functions.iter().map(|(m, _)| (m.qualified(), m.arity)).collect();
    assert_eq!(
        names,
        [
            ("graph::Graph::edge".to_string(), Some(2)),
            ("graph::Graph::edge::lambda$0".to_string(), Some(1)),
            ("graph::Walk::walk".to_string(), Some(0)),
            ("free".to_string(), Some(0)),
        ]
    );
}
