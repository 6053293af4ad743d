//! Front ends never panic: every prefix cut and byte-level damage of real-looking
//! sources still parses (with error regions) or is rejected cleanly.

use beryl::lang::parse_file;
use std::path::Path;

const SOURCES: [(&str, &str); 6] = [
    ("a.c", "int f(int n) { int s = 0; for (int i = 0; i < n; i++) { switch (i) { case 1: s++; default: break; } } again: if (s) goto again; return s; }\n"),
    ("a.cpp", "namespace n { template <class T> struct A { T v; T get() const { try { return v; } catch (...) { throw; } } }; }\nauto l = [](int x) { for (auto y : {1, 2}) x += y; return x; };\n"),
    ("A.java", "package p; class A { int f(int[] a) { outer: for (int x : a) { synchronized (this) { if (x > 0) continue outer; else break outer; } } try { return a[0]; } finally { g(() -> { return; }); } } }\n"),
    ("a.py", "class A:\n    def f(self, a):\n        for x in a:\n            if x > 0:\n                continue\n            elif x < 0:\n                break\n        else:\n            pass\n        try:\n            return [y * 2 for y in a if y]\n        except KeyError as e:\n            raise ValueError() from e\n        finally:\n            g(lambda: 1)\n        match a:\n            case [1, *rest]:\n                return rest\n"),
    ("a.rs", "impl A { fn f(&self, a: &[i32]) -> Result<i32, E> { 'o: for x in a { match x { 0 => continue 'o, n if *n < 0 => break, _ => {} } } let Some(y) = a.first() else { return Err(E) }; let v = g(|z| z + 1)?; if v > 0 { Ok(*y) } else { loop { panic!(); } } } }\n"),
    ("a.go", "package p\nfunc (r *A) F(a []int) (int, error) {\nouter:\n\tfor _, x := range a {\n\t\tswitch {\n\t\tcase x > 0:\n\t\t\tcontinue outer\n\t\tcase x < 0:\n\t\t\tfallthrough\n\t\tdefault:\n\t\t\tbreak outer\n\t\t}\n\t}\n\tdefer func() { recover() }()\n\tselect {\n\tcase v := <-r.c:\n\t\treturn v, nil\n\t}\n\tpanic(\"x\")\n}\n"),
];

/// A small deterministic generator, so failures reproduce.
fn lcg(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *seed >> 33
}

#[test]
fn every_prefix_parses() {
    for (name, src) in SOURCES {
        for cut in (0..=src.len()).filter(|&i| src.is_char_boundary(i)) {
            let _ = parse_file(Path::new(name), &src[..cut], 0);
        }
    }
}

#[test]
fn damaged_sources_parse() {
    let mut seed = 7;
    let junk = [
        "{", "}", "(", ")", ";", "case", "else", "try", ":", "->", "\"", "'", "/*", "#if", "\n", "goto", "break", "    ", "def ", "elif",
        "fn ", "=>", "?", "'a:", "func ", ":=", "match ", "\t",
    ];
    for (name, src) in SOURCES {
        for _ in 0..3000 {
            let mut s = src.to_string();
            for _ in 0..(1 + lcg(&mut seed) % 4) {
                let mut at = (lcg(&mut seed) as usize) % (s.len() + 1);
                while !s.is_char_boundary(at) {
                    at -= 1;
                }
                s.insert_str(at, junk[(lcg(&mut seed) as usize) % junk.len()]);
            }
            let f = parse_file(Path::new(name), &s, 0).expect("tree");
            for (_, cfg) in &f.functions {
                assert_eq!(cfg.nodes[0].kind, beryl::graph::NodeKind::Entry);
                assert_eq!(cfg.nodes[1].kind, beryl::graph::NodeKind::Exit);
            }
        }
    }
}
