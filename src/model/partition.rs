//! Splitting a corpus ICFG into subgraphs of bounded size for training and embedding.
//! Whole files stay together, in path order, so most call edges (same file or same
//! directory) stay inside a subgraph; edges between subgraphs carry no messages.

use crate::graph::Icfg;
use petgraph::visit::EdgeRef;

pub struct Part {
    /// Corpus node indices; a node's local id is its position here.
    pub nodes: Vec<u32>,
    /// Edges between local ids.
    pub edges: Vec<(u32, u32)>,
}

pub fn partition(icfg: &Icfg, max_nodes: usize) -> Vec<Part> {
    // Nodes of a file are contiguous: functions are added file by file.
    let mut bounds: Vec<(usize, usize)> = Vec::new();
    let mut start = 0usize;
    for (i, f) in icfg.functions.iter().enumerate() {
        let next_file = icfg.functions.get(i + 1).map(|g| g.meta.file);
        if next_file != Some(f.meta.file) {
            let end = icfg.function_nodes(i as u32).end;
            bounds.push((start, end));
            start = end;
        }
    }
    let mut parts: Vec<(usize, usize)> = Vec::new();
    for (s, e) in bounds {
        match parts.last_mut() {
            Some(last) if e - last.0 <= max_nodes => last.1 = e,
            _ => parts.push((s, e)),
        }
    }
    parts
        .into_iter()
        .map(|(s, e)| {
            let mut edges = Vec::new();
            for n in s..e {
                for ed in icfg.graph.edges(petgraph::graph::NodeIndex::new(n)) {
                    let t = ed.target().index();
                    if (s..e).contains(&t) {
                        edges.push(((n - s) as u32, (t - s) as u32));
                    }
                }
            }
            Part {
                nodes: (s as u32..e as u32).collect(),
                edges,
            }
        })
        .collect()
}
