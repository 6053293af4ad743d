//! Corpus statistics: what `beryl graph --format stats` prints.

use super::icfg::Icfg;
use super::node::{EdgeKind, Lang};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Default, Serialize)]
pub struct Stats {
    pub files: usize,
    pub files_by_lang: BTreeMap<String, usize>,
    pub lines: u64,
    pub bytes: u64,
    pub functions: usize,
    pub nodes: usize,
    pub edges: usize,
    pub edges_by_kind: BTreeMap<String, usize>,
    pub call_sites: usize,
    pub resolved_call_sites: usize,
    pub external_call_sites: usize,
    pub call_edges: usize,
    pub files_with_errors: usize,
    pub error_regions: u64,
    pub skipped: BTreeMap<String, usize>,
    pub parse_seconds: f64,
    pub link_seconds: f64,
}

impl Stats {
    pub fn of(icfg: &Icfg) -> Stats {
        let mut s = Stats {
            files: icfg.files.len(),
            functions: icfg.functions.len(),
            nodes: icfg.graph.node_count(),
            edges: icfg.graph.edge_count(),
            call_sites: icfg.calls.len(),
            ..Stats::default()
        };
        for f in &icfg.files {
            *s.files_by_lang.entry(f.lang.name().to_string()).or_default() += 1;
            s.lines += f.lines as u64;
            s.bytes += f.bytes;
            s.error_regions += f.error_regions as u64;
            s.files_with_errors += (f.error_regions > 0) as usize;
        }
        for k in EdgeKind::ALL {
            s.edges_by_kind.insert(k.name().to_string(), 0);
        }
        for e in icfg.graph.edge_weights() {
            *s.edges_by_kind.entry(e.name().to_string()).or_default() += 1;
        }
        s.call_edges = s.edges_by_kind.get("call").copied().unwrap_or(0);
        s.resolved_call_sites = icfg.calls.iter().filter(|c| !c.targets.is_empty()).count();
        s.external_call_sites = s.call_sites - s.resolved_call_sites;
        s
    }

    pub fn files_in(&self, lang: Lang) -> usize {
        self.files_by_lang.get(lang.name()).copied().unwrap_or(0)
    }
}
