//! Front ends never panic: every prefix cut and byte-level damage of real-looking
//! sources still parses (with error regions) or is rejected cleanly.

use beryl::lang::parse_file;
use std::path::Path;

const SOURCES: [(&str, &str); 3] = [
    ("a.c", "int f(int n) { int s = 0; for (int i = 0; i < n; i++) { switch (i) { case 1: s++; default: break; } } again: if (s) goto again; return s; }\n"),
    ("a.cpp", "namespace n { template <class T> struct A { T v; T get() const { try { return v; } catch (...) { throw; } } }; }\nauto l = [](int x) { for (auto y : {1, 2}) x += y; return x; };\n"),
    ("A.java", "package p; class A { int f(int[] a) { outer: for (int x : a) { synchronized (this) { if (x > 0) continue outer; else break outer; } } try { return a[0]; } finally { g(() -> { return; }); } } }\n"),
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
    let junk = ["{", "}", "(", ")", ";", "case", "else", "try", ":", "->", "\"", "'", "/*", "#if", "\n", "goto", "break"];
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
