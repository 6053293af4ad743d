//! The graph autoencoder on real code: training lifts validation AUC, a fixed seed
//! reproduces training, and save/load keeps outputs identical.

use beryl::corpus::{fetch::fetch, load, WalkOptions};
use beryl::graph::{Icfg, NodeKind};
use beryl::model::partition::partition;
use beryl::model::train::{train, TrainConfig, TrainGraph};
use beryl::model::{Manifest, Model};
use tch::Tensor;

/// A real slice: igraph's shortest-path sources.
fn slice() -> Icfg {
    let root = fetch("igraph").expect("igraph corpus");
    load(&[root.join("src/paths")], &WalkOptions::default()).icfg
}

const HASHED: usize = 64;

/// Node-kind one-hot plus hashed identifier tokens: cheap stand-ins for the real features,
/// enough to test the training machinery on its own.
fn graphs(icfg: &Icfg) -> Vec<TrainGraph> {
    partition(icfg, 4000)
        .into_iter()
        .map(|p| {
            let k = NodeKind::ALL.len() + HASHED;
            let mut x = vec![0f32; p.nodes.len() * k];
            for (i, &n) in p.nodes.iter().enumerate() {
                let node = &icfg.graph[petgraph::graph::NodeIndex::new(n as usize)];
                x[i * k + NodeKind::ALL.iter().position(|&q| q == node.kind).unwrap()] = 1.0;
                for tok in node.text.split(|c: char| !c.is_alphanumeric() && c != '_').filter(|t| t.len() > 1) {
                    let h = tok.bytes().fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
                    x[i * k + NodeKind::ALL.len() + h as usize % HASHED] += 1.0;
                }
            }
            TrainGraph { x: Tensor::from_slice(&x).view([p.nodes.len() as i64, k as i64]), edges: p.edges }
        })
        .collect()
}

fn manifest(in_dim: i64) -> Manifest {
    let mut m = Manifest::untrained("none", in_dim, 64, 11, "c");
    m.feature_schema = 0;
    m
}

fn run(gs: &[TrainGraph], seed: u64) -> (Model, f64, Vec<f64>) {
    let in_dim = gs[0].x.size()[1];
    tch::manual_seed(seed as i64);
    let mut m = Model::new(in_dim, 64, manifest(in_dim));
    let cfg = TrainConfig { max_epochs: 150, patience: 15, seed, ..TrainConfig::default() };
    let r = train(&mut m.vs, &m.gcn, gs, &cfg, |_| {}).unwrap();
    let losses = r.epochs.iter().map(|e| e.loss).collect();
    (m, r.best_val_auc, losses)
}

#[test]
fn training_on_real_code_learns_links_reproducibly_and_round_trips() {
    tch::set_num_threads(1);
    let icfg = slice();
    assert!(icfg.graph.node_count() > 2000, "{} nodes", icfg.graph.node_count());
    let gs = graphs(&icfg);
    let (m, auc, losses) = run(&gs, 11);
    eprintln!("val AUC {auc:.3}, losses {losses:?}");
    assert!(auc > 0.8, "validation AUC {auc}");

    let (_, auc2, losses2) = run(&gs, 11);
    assert_eq!(losses, losses2, "a fixed seed gives identical training");
    assert_eq!(auc, auc2);

    let dir = tempfile::tempdir().unwrap();
    m.save(dir.path()).unwrap();
    let back = Model::load(dir.path(), 0, "none").unwrap();
    let p = &gs[0];
    let adj = beryl::model::gcn::normalized_adjacency(p.x.size()[0] as usize, &p.edges);
    let a = m.gcn.forward(&adj, &p.x);
    let b = back.gcn.forward(&adj, &p.x);
    assert!(a.equal(&b), "save/load changes outputs");

    assert!(matches!(Model::load(dir.path(), 1, "none"), Err(beryl::model::ModelError::Schema { .. })));
    assert!(matches!(Model::load(dir.path(), 0, "other"), Err(beryl::model::ModelError::Encoder { .. })));
    std::fs::write(dir.path().join("manifest.json"), "{ not json").unwrap();
    assert!(matches!(Model::load(dir.path(), 0, "none"), Err(beryl::model::ModelError::Manifest { .. })));
}
