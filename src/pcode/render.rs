//! Text forms of p-code graphs for `pcode graph`: Graphviz DOT and JSON.

use super::cfg::{ProcCall, ProcGraph};
use crate::graph::{EdgeKind, NodeKind, ENTRY, EXIT};
use serde::Serialize;

#[derive(Serialize)]
struct GraphJson<'a> {
    procedures: &'a [ProcGraph],
    calls: &'a [ProcCall],
}

pub fn to_json(procs: &[ProcGraph], calls: &[ProcCall]) -> String {
    // Serializing plain data into a String cannot fail; keep an empty object if it ever did.
    serde_json::to_string_pretty(&GraphJson {
        procedures: procs,
        calls,
    })
    .unwrap_or_else(|_| "{}".into())
}

/// One cluster per procedure; inter-procedure call and return edges are dashed.
pub fn to_dot(procs: &[ProcGraph], calls: &[ProcCall]) -> String {
    let mut s = String::from("digraph pcode {\n  node [shape=box, fontname=\"monospace\"];\n");
    for (p, g) in procs.iter().enumerate() {
        s.push_str(&format!(
            "  subgraph cluster_{p} {{\n    label=\"{}\";\n",
            esc(&g.meta.name)
        ));
        for (i, n) in g.cfg.nodes.iter().enumerate() {
            let label = match n.kind {
                NodeKind::Entry => format!("ENTRY {}", g.meta.name),
                NodeKind::Exit => format!("EXIT {}", g.meta.name),
                k => format!("{}: {}", k.name(), n.text),
            };
            let shape = match n.kind {
                NodeKind::Condition | NodeKind::LoopHead => "diamond",
                NodeKind::Entry | NodeKind::Exit => "oval",
                _ => "box",
            };
            s.push_str(&format!(
                "    p{p}_{i} [label=\"{}\", shape={shape}];\n",
                esc(&label)
            ));
        }
        for &(a, b, k) in &g.cfg.edges {
            s.push_str(&format!(
                "    p{p}_{a} -> p{p}_{b} [label=\"{}\"];\n",
                k.name()
            ));
        }
        s.push_str("  }\n");
    }
    for c in calls {
        let (p, q) = (c.caller, c.callee);
        s.push_str(&format!(
            "  p{p}_{} -> p{q}_{ENTRY} [label=\"call\", style=dashed];\n",
            c.node
        ));
        let succ: Vec<u32> = procs[p].cfg.succ(c.node).map(|(n, _)| n).collect();
        for n in succ {
            let kind = EdgeKind::Return.name();
            s.push_str(&format!(
                "  p{q}_{EXIT} -> p{p}_{n} [label=\"{kind}\", style=dashed];\n"
            ));
        }
    }
    s.push_str("}\n");
    s
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}
