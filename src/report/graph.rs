//! Printing CFGs (DOT, JSON) and corpus statistics.

use crate::graph::stats::Stats;
use crate::graph::{EdgeKind, Icfg};
use petgraph::visit::EdgeRef;
use serde::Serialize;
use std::fmt::Write;

#[derive(Serialize)]
struct JsonNode<'a> {
    id: usize,
    kind: &'a str,
    lines: (u32, u32),
    bytes: (u32, u32),
    text: &'a str,
    calls: Vec<&'a str>,
}

#[derive(Serialize)]
struct JsonEdge {
    from: usize,
    to: usize,
    kind: &'static str,
    /// For call/return edges: the other function's qualified name.
    #[serde(skip_serializing_if = "Option::is_none")]
    function: Option<String>,
}

#[derive(Serialize)]
struct JsonFunction<'a> {
    name: String,
    file: String,
    lang: &'a str,
    lines: (u32, u32),
    arity: Option<u32>,
    nodes: Vec<JsonNode<'a>>,
    edges: Vec<JsonEdge>,
}

fn local(icfg: &Icfg, f: u32, n: petgraph::graph::NodeIndex) -> Option<usize> {
    let r = icfg.function_nodes(f);
    r.contains(&n.index()).then(|| n.index() - r.start)
}

/// Edges of function `f`: its own, plus call edges out of it (to other functions).
fn edges_of(icfg: &Icfg, f: u32) -> Vec<JsonEdge> {
    let mut v = Vec::new();
    let range = icfg.function_nodes(f);
    for i in range.clone() {
        let a = petgraph::graph::NodeIndex::new(i);
        for e in icfg.graph.edges(a) {
            let from = i - range.start;
            match local(icfg, f, e.target()) {
                Some(to) if !matches!(e.weight(), EdgeKind::Call | EdgeKind::Return) => {
                    v.push(JsonEdge { from, to, kind: e.weight().name(), function: None })
                }
                _ => {
                    let callee = icfg.graph[e.target()].function;
                    v.push(JsonEdge {
                        from,
                        to: e.target().index(),
                        kind: e.weight().name(),
                        function: Some(icfg.functions[callee as usize].meta.qualified()),
                    })
                }
            }
        }
    }
    v
}

fn json_function(icfg: &Icfg, f: u32) -> JsonFunction<'_> {
    let func = &icfg.functions[f as usize];
    let nodes = icfg
        .function_nodes(f)
        .enumerate()
        .map(|(id, i)| {
            let n = &icfg.graph[petgraph::graph::NodeIndex::new(i)];
            JsonNode {
                id,
                kind: n.kind.name(),
                lines: n.lines,
                bytes: n.bytes,
                text: &n.text,
                calls: n.calls.iter().map(|c| c.name.as_str()).collect(),
            }
        })
        .collect();
    JsonFunction {
        name: func.meta.qualified(),
        file: icfg.files[func.meta.file as usize].path.display().to_string(),
        lang: func.meta.lang.name(),
        lines: func.meta.lines,
        arity: func.meta.arity,
        nodes,
        edges: edges_of(icfg, f),
    }
}

pub fn functions_json(icfg: &Icfg, fs: &[u32]) -> String {
    let v: Vec<_> = fs.iter().map(|&f| json_function(icfg, f)).collect();
    serde_json::to_string_pretty(&v).unwrap_or_default()
}

fn dot_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars().take(80) {
        match c {
            '"' | '\\' => {
                o.push('\\');
                o.push(c)
            }
            '\n' => o.push(' '),
            _ => o.push(c),
        }
    }
    o
}

pub fn functions_dot(icfg: &Icfg, fs: &[u32]) -> String {
    let mut s = String::from("digraph cfg {\n  node [shape=box, fontname=monospace];\n");
    for &f in fs {
        let jf = json_function(icfg, f);
        let _ = writeln!(s, "  subgraph cluster_{f} {{\n    label=\"{}\";", dot_escape(&jf.name));
        for n in &jf.nodes {
            let label = if n.text.is_empty() { n.kind.to_uppercase() } else { format!("{}: {}", n.lines.0, n.text) };
            let _ = writeln!(s, "    f{f}_{} [label=\"{}\"];", n.id, dot_escape(&label));
        }
        for e in &jf.edges {
            match &e.function {
                None => {
                    let style = match e.kind {
                        "back" => ", style=dashed",
                        "jump" => ", style=dotted",
                        "exception" => ", color=red",
                        _ => "",
                    };
                    let _ = writeln!(s, "    f{f}_{} -> f{f}_{} [label=\"{}\"{style}];", e.from, e.to, e.kind);
                }
                Some(other) => {
                    let _ = writeln!(s, "    f{f}_{} -> \"{}\" [label=\"{}\", style=bold];", e.from, dot_escape(other), e.kind);
                }
            }
        }
        s.push_str("  }\n");
    }
    s.push_str("}\n");
    s
}

pub fn stats_text(s: &Stats) -> String {
    let mut o = String::new();
    let langs: Vec<String> = s.files_by_lang.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let _ = writeln!(o, "files          {} ({})", s.files, langs.join(", "));
    let _ = writeln!(o, "lines          {}", s.lines);
    let _ = writeln!(o, "functions      {}", s.functions);
    let _ = writeln!(o, "nodes          {}", s.nodes);
    let _ = writeln!(o, "edges          {}", s.edges);
    for (k, v) in &s.edges_by_kind {
        let _ = writeln!(o, "  {k:<12} {v}");
    }
    let _ = writeln!(
        o,
        "call sites     {} ({} resolved, {} external)",
        s.call_sites, s.resolved_call_sites, s.external_call_sites
    );
    let _ = writeln!(o, "error regions  {} in {} files (recovered, not fatal)", s.error_regions, s.files_with_errors);
    let skipped: Vec<String> = s.skipped.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let total: usize = s.skipped.values().sum();
    let _ = writeln!(o, "files skipped  {total}{}", if skipped.is_empty() { String::new() } else { format!(" ({})", skipped.join(", ")) });
    let _ = writeln!(o, "parse + CFG    {:.2} s ({:.0} lines/s)", s.parse_seconds, s.lines as f64 / s.parse_seconds.max(1e-9));
    let _ = writeln!(o, "call linking   {:.2} s", s.link_seconds);
    o
}
