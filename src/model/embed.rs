//! Node vectors (Beryllium §4.2). Initial features are [scaled math-operator counts,
//! node-kind one-hot, text vector]; the final vector of a node is the GCN output
//! concatenated with its initial features. Source and p-code graphs go through the same
//! functions, so their vectors share one space.

use super::partition::Part;
use super::train::TrainGraph;
use super::{Model, PlainGcn};
use crate::features::{count_pcode, count_source, Encoder, FeatureError, DIM};
use crate::graph::{Csr, Icfg, Lang, Node, NodeKind};
use rayon::prelude::*;
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
    op_counts(node).scaled()
}

/// The math-operator counts of a node, as its initial features hold them (scaled).
pub fn op_counts(node: &Node) -> crate::features::OpCounts {
    match node.lang {
        Lang::Pcode => match node.kind {
            NodeKind::Math | NodeKind::Return | NodeKind::Call => count_pcode(&node.text, false),
            NodeKind::Condition | NodeKind::LoopHead => count_pcode(&node.text, true),
            _ => Default::default(),
        },
        l => match node.kind {
            NodeKind::Entry | NodeKind::Exit => Default::default(),
            _ => count_source(l, &node.text),
        },
    }
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

/// [`embed`], calling `progress(nodes done, nodes)` as it goes. The nodes of removed
/// functions keep zero rows.
pub fn embed_with_progress(
    model: &Model,
    icfg: &Icfg,
    enc: &Encoder,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<f32>, FeatureError> {
    let csr = Csr::within_files(icfg);
    let live: Vec<u32> = (0..icfg.graph.node_count() as u32).filter(|&n| !removed(icfg, n)).collect();
    let width = model.gcn.hidden as usize + IN_DIM;
    let rows = embed_nodes(model, icfg, &csr, enc, &live, progress)?;
    if live.len() == icfg.graph.node_count() {
        return Ok(rows);
    }
    let mut out = vec![0f32; icfg.graph.node_count() * width];
    for (i, &n) in live.iter().enumerate() {
        out[n as usize * width..(n as usize + 1) * width].copy_from_slice(&rows[i * width..(i + 1) * width]);
    }
    Ok(out)
}

fn removed(icfg: &Icfg, n: u32) -> bool {
    icfg.functions.get(icfg.graph[NodeIndex::new(n as usize)].function as usize).is_some_and(|f| f.removed)
}

/// Rows of texts encoded at once: bounds the memory of one encoder call.
const CHUNK: usize = 4096;

/// Final vectors of the nodes `targets` (row-major, `targets.len() × (hidden + IN_DIM)`),
/// from the GCN over the graph `csr` ([`Csr::within_files`] of the ICFG):
/// `Z = Â ReLU(Â X W1) W2` with `Â = D^-1/2 (A+I) D^-1/2`. A node's output depends only on
/// the graph within two edges of it, so an update recomputes the nodes near what changed
/// and gets what embedding the whole graph gets.
pub fn embed_nodes(
    model: &Model,
    icfg: &Icfg,
    csr: &Csr,
    enc: &Encoder,
    targets: &[u32],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<f32>, FeatureError> {
    embed_nodes_with(Weights::Torch(model), icfg, csr, enc, targets, progress)
}

/// Where the GCN's products run: on libtorch, or in plain Rust for a small batch (see
/// [`PlainGcn`]).
#[derive(Clone, Copy)]
pub enum Weights<'a> {
    Torch(&'a Model),
    Plain(&'a PlainGcn),
}

impl Weights<'_> {
    pub fn hidden(&self) -> usize {
        match self {
            Weights::Torch(m) => m.gcn.hidden as usize,
            Weights::Plain(p) => p.hidden,
        }
    }

    fn first(&self, x: &[f32], rows: usize) -> Result<Vec<f32>, FeatureError> {
        match self {
            Weights::Torch(m) => Ok(Vec::<f32>::try_from(&tch::no_grad(|| m.gcn.first_weights(&tensor(x, rows))).flatten(0, -1))?),
            Weights::Plain(p) => Ok(p.first_weights(x)),
        }
    }

    fn second(&self, h: &[f32], rows: usize) -> Result<Vec<f32>, FeatureError> {
        match self {
            Weights::Torch(m) => {
                let t = Tensor::from_slice(h).view([rows as i64, m.gcn.hidden]);
                Ok(Vec::<f32>::try_from(&tch::no_grad(|| m.gcn.second_weights(&t)).flatten(0, -1))?)
            }
            Weights::Plain(p) => Ok(p.second_weights(h)),
        }
    }
}

/// [`embed_nodes`] with the products where `weights` says.
pub fn embed_nodes_with(
    weights: Weights,
    icfg: &Icfg,
    csr: &Csr,
    enc: &Encoder,
    targets: &[u32],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<f32>, FeatureError> {
    let h = weights.hidden();
    let width = h + IN_DIM;
    // The first layer is needed on the targets and their neighbours; its input on those
    // and theirs. Sorted lists, looked up by binary search: nothing here grows with the
    // whole graph, so the nodes of a large corpus can be embedded a batch at a time.
    let grow = |set: &[u32]| -> Vec<u32> {
        let mut out: Vec<u32> = set.iter().flat_map(|&n| std::iter::once(n).chain(csr.neighbors(n).iter().copied())).collect();
        out.sort_unstable();
        out.dedup();
        out
    };
    let layer1 = grow(targets);
    let layer0 = grow(&layer1);
    let at = |list: &[u32], n: u32| list.binary_search(&n).expect("a grown layer holds every neighbour");
    let inv_sqrt_degree = |n: u32| 1.0 / ((csr.neighbors(n).len() + 1) as f32).sqrt();
    // Â M for the nodes `rows`, where M holds the rows of the nodes of `list`.
    let propagate = |rows: &[u32], m: &[f32], list: &[u32]| -> Vec<f32> {
        let mut out = vec![0f32; rows.len() * h];
        out.par_chunks_mut(h).zip(rows.par_iter()).for_each(|(o, &i)| {
            let di = inv_sqrt_degree(i);
            let own = at(list, i);
            for (o, v) in o.iter_mut().zip(&m[own * h..(own + 1) * h]) {
                *o = di * v;
            }
            for &j in csr.neighbors(i) {
                let dj = inv_sqrt_degree(j);
                let k = at(list, j);
                for (o, v) in o.iter_mut().zip(&m[k * h..(k + 1) * h]) {
                    *o += dj * v;
                }
            }
            o.iter_mut().for_each(|v| *v *= di);
        });
        out
    };
    // Initial features and X W1 of layer 0, a chunk at a time.
    let mut x0 = vec![0f32; layer0.len() * IN_DIM];
    let mut p = vec![0f32; layer0.len() * h];
    for (c, chunk) in layer0.chunks(CHUNK).enumerate() {
        let x = initial_features(icfg, chunk, enc)?;
        let xw = weights.first(&x, chunk.len())?;
        let at = c * CHUNK;
        x0[at * IN_DIM..(at + chunk.len()) * IN_DIM].copy_from_slice(&x);
        p[at * h..(at + chunk.len()) * h].copy_from_slice(&xw);
        progress((at + chunk.len()) * targets.len() / layer0.len().max(1), targets.len());
    }
    let mut hidden = propagate(&layer1, &p, &layer0);
    drop(p);
    hidden.iter_mut().for_each(|v| *v = v.max(0.0));
    let mut q = vec![0f32; layer1.len() * h];
    for (c, chunk) in hidden.chunks(CHUNK * h).enumerate() {
        let hw = weights.second(chunk, chunk.len() / h)?;
        q[c * CHUNK * h..c * CHUNK * h + hw.len()].copy_from_slice(&hw);
    }
    drop(hidden);
    let z = propagate(targets, &q, &layer1);
    drop(q);
    let mut out = vec![0f32; targets.len() * width];
    out.par_chunks_mut(width).zip(targets.par_iter()).enumerate().for_each(|(i, (row, &n))| {
        row[..h].copy_from_slice(&z[i * h..(i + 1) * h]);
        let k = at(&layer0, n);
        row[h..].copy_from_slice(&x0[k * IN_DIM..(k + 1) * IN_DIM]);
    });
    progress(targets.len(), targets.len());
    Ok(out)
}
