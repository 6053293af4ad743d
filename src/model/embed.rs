//! Node vectors (Beryllium §4.2). Initial features are [scaled math-operator counts,
//! node-kind one-hot, text vector]; the final vector of a node is the GCN output
//! concatenated with its initial features. Source and p-code graphs go through the same
//! functions, so their vectors share one space.

use super::gcn::normalized_adjacency;
use super::partition::{partition, Part};
use super::train::TrainGraph;
use super::Model;
use crate::features::{count_pcode, count_source, Encoder, FeatureError, DIM};
use crate::graph::{Icfg, Lang, Node, NodeKind};
use petgraph::graph::NodeIndex;
use tch::Tensor;

/// Version of the feature layout below; models record it and refuse another.
pub const FEATURE_SCHEMA: u32 = 2;
const MATH: usize = 7;
const KINDS: usize = NodeKind::ALL.len();
/// Width of the initial features.
pub const IN_DIM: usize = MATH + KINDS + DIM;
/// Nodes per subgraph when training or embedding.
pub const PART_NODES: usize = 4000;

/// The text the encoder reads for a node: its code, English or math as written. ENTRY and
/// EXIT carry the function's name, often the best hint of what it does; it also ties them
/// to the call sites their call and return edges lead to (in C code a large share of edges),
/// which an empty EXIT could not be told apart from any other.
pub fn node_text<'a>(icfg: &'a Icfg, node: &'a Node) -> &'a str {
    match node.kind {
        NodeKind::Entry | NodeKind::Exit => &icfg.functions[node.function as usize].meta.name,
        _ => &node.text,
    }
}

fn math(node: &Node) -> [f32; MATH] {
    let counts = match node.lang {
        Lang::Pcode => match node.kind {
            NodeKind::Math | NodeKind::Return | NodeKind::Call => count_pcode(&node.text, false),
            NodeKind::Condition | NodeKind::LoopHead => count_pcode(&node.text, true),
            _ => Default::default(),
        },
        l => match node.kind {
            NodeKind::Entry | NodeKind::Exit => Default::default(),
            _ => count_source(l, &node.text),
        },
    };
    counts.scaled()
}

/// Initial features of the given corpus nodes, row-major `nodes.len() × IN_DIM`.
pub fn initial_features(icfg: &Icfg, nodes: &[u32], enc: &Encoder) -> Result<Vec<f32>, FeatureError> {
    let ns: Vec<&Node> = nodes.iter().map(|&n| &icfg.graph[NodeIndex::new(n as usize)]).collect();
    let texts: Vec<&str> = ns.iter().map(|n| node_text(icfg, n)).collect();
    let vecs = enc.encode(&texts)?;
    let mut x = vec![0f32; nodes.len() * IN_DIM];
    for (i, (n, v)) in ns.iter().zip(&vecs).enumerate() {
        let row = &mut x[i * IN_DIM..(i + 1) * IN_DIM];
        row[..MATH].copy_from_slice(&math(n));
        let k = NodeKind::ALL.iter().position(|&q| q == n.kind).unwrap_or(0);
        row[MATH + k] = 1.0;
        // Unit-norm text vectors have entries near 0.05; scaled by √DIM they reach unit
        // variance like the other features, so the first layer does not ignore them.
        let scale = 1.0f32;
        for (o, t) in row[MATH + KINDS..].iter_mut().zip(v.iter()) {
            *o = t * scale;
        }
    }
    Ok(x)
}

fn tensor(x: &[f32], rows: usize) -> Tensor {
    Tensor::from_slice(x).view([rows as i64, IN_DIM as i64])
}

/// Training units of a corpus: subgraphs with their initial features.
pub fn train_graphs(icfg: &Icfg, parts: &[Part], enc: &Encoder) -> Result<Vec<TrainGraph>, FeatureError> {
    parts
        .iter()
        .map(|p| {
            let x = initial_features(icfg, &p.nodes, enc)?;
            Ok(TrainGraph { x: tensor(&x, p.nodes.len()), edges: p.edges.clone() })
        })
        .collect()
}

/// Final vectors of every node of `icfg`, row-major `node_count × (hidden + IN_DIM)`.
pub fn embed(model: &Model, icfg: &Icfg, enc: &Encoder) -> Result<Vec<f32>, FeatureError> {
    embed_with_progress(model, icfg, enc, &mut |_, _| {})
}

/// [`embed`], calling `progress(nodes done, nodes)` after each subgraph.
pub fn embed_with_progress(
    model: &Model,
    icfg: &Icfg,
    enc: &Encoder,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<f32>, FeatureError> {
    let width = model.gcn.hidden as usize + IN_DIM;
    let total = icfg.graph.node_count();
    let mut out = vec![0f32; total * width];
    let mut done = 0;
    for p in partition(icfg, PART_NODES) {
        let x = initial_features(icfg, &p.nodes, enc)?;
        let xt = tensor(&x, p.nodes.len());
        let z = tch::no_grad(|| model.gcn.forward(&normalized_adjacency(p.nodes.len(), &p.edges), &xt));
        let z = Vec::<f32>::try_from(&z.flatten(0, -1))?;
        let h = model.gcn.hidden as usize;
        for (i, &n) in p.nodes.iter().enumerate() {
            let row = &mut out[n as usize * width..(n as usize + 1) * width];
            row[..h].copy_from_slice(&z[i * h..(i + 1) * h]);
            row[h..].copy_from_slice(&x[i * IN_DIM..(i + 1) * IN_DIM]);
        }
        done += p.nodes.len();
        progress(done, total);
    }
    Ok(out)
}
