#![allow(dead_code)]
use beryl::graph::{EdgeKind, FnCfg};
use beryl::lang::parse_file;
use std::path::Path;

/// The CFG of function `name` in `src`, parsed as the language of `file_name`.
pub fn cfg_of(file_name: &str, src: &str, name: &str) -> FnCfg {
    let f = parse_file(Path::new(file_name), src, 0).expect("parses");
    f.functions
        .into_iter()
        .find(|(m, _)| m.name == name)
        .unwrap_or_else(|| panic!("no function {name}"))
        .1
}

/// Expected edges written as `(from, to, kind)` over node texts.
pub fn edges(v: &[(&str, &str, EdgeKind)]) -> Vec<(String, String, EdgeKind)> {
    let mut e: Vec<_> = v.iter().map(|(a, b, k)| (a.to_string(), b.to_string(), *k)).collect();
    e.sort();
    e
}

pub fn assert_edges(cfg: &FnCfg, expected: &[(&str, &str, EdgeKind)]) {
    let got = cfg.edge_triples();
    let want = edges(expected);
    let missing: Vec<_> = want.iter().filter(|e| !got.contains(e)).collect();
    let extra: Vec<_> = got.iter().filter(|e| !want.contains(e)).collect();
    assert!(missing.is_empty() && extra.is_empty(), "missing {missing:#?}\nextra {extra:#?}");
}
