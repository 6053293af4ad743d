//! Self-supervised link prediction (Beryllium §4.2): a graph's edges are positives, as many
//! sampled non-edges are negatives. Each subgraph's edges are split 80/20 into training
//! and validation; only training edges carry messages. Adam (lr 0.01), no dropout, edge
//! batches of 2048, and training stops when validation AUC stops improving.
//!
//! At a constant 0.01 the loss of full-size corpora oscillates and early stopping catches a
//! noisy peak. So 0.01 is the starting rate: each plateau restores the best weights and
//! halves it, down to 1 % of it.
//!
//! Validation edges carry no messages, but training edges did, so the model learned to
//! recognise edges it could see rather than predict unseen ones. Each step hides its own
//! positives (a quarter of the subgraph's training edges) from the adjacency, as PyTorch
//! Geometric's disjoint supervision edges do, so training asks what validation asks.

use super::gcn::{decode, normalized_adjacency, Gcn};
use std::collections::HashSet;
use tch::{nn, nn::OptimizerConfig, Reduction, Tensor};

/// One training unit: a subgraph small enough to embed at once.
pub struct TrainGraph {
    /// Initial node features, `n × in_dim`.
    pub x: Tensor,
    /// Edges between local node ids (direction ignored).
    pub edges: Vec<(u32, u32)>,
}

#[derive(Clone, Debug)]
pub struct TrainConfig {
    pub lr: f64,
    pub batch: usize,
    pub max_epochs: usize,
    /// Epochs without a better validation AUC before stopping.
    pub patience: usize,
    /// Epochs without a better validation AUC before the rate is cut by `decay`.
    pub plateau: usize,
    pub decay: f64,
    /// Share of a subgraph's training edges hidden from message passing while they are a
    /// step's positives (0: every training edge always carries messages).
    pub mask: f64,
    pub seed: u64,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            lr: 0.01,
            batch: 2048,
            max_epochs: 100,
            patience: 8,
            plateau: 2,
            decay: 0.5,
            mask: 0.25,
            seed: 7,
        }
    }
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct EpochStats {
    pub epoch: usize,
    pub loss: f64,
    pub val_auc: f64,
    /// Against negatives drawn from all subgraphs.
    pub val_auc_global: f64,
    pub lr: f64,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct TrainReport {
    pub epochs: Vec<EpochStats>,
    pub best_epoch: usize,
    pub best_val_auc: f64,
    pub train_edges: usize,
    pub val_edges: usize,
}

/// SplitMix64: a small, seedable generator so a fixed seed gives identical training.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
}

struct Prepared {
    x: Tensor,
    adj: Tensor,
    n: usize,
    train: Vec<(u32, u32)>,
    val: Vec<(u32, u32)>,
    all: HashSet<(u32, u32)>,
}

fn undirected(edges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut v: Vec<(u32, u32)> = edges
        .iter()
        .filter(|e| e.0 != e.1)
        .map(|&(a, b)| (a.min(b), a.max(b)))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn prepare(g: &TrainGraph, rng: &mut Rng) -> Prepared {
    let n = g.x.size()[0] as usize;
    let mut e = undirected(&g.edges);
    let all: HashSet<(u32, u32)> = e.iter().copied().collect();
    rng.shuffle(&mut e);
    let cut = (e.len() * 4).div_ceil(5);
    let val = e.split_off(cut.min(e.len()));
    Prepared {
        x: g.x.shallow_clone(),
        adj: normalized_adjacency(n, &e),
        n,
        train: e,
        val,
        all,
    }
}

/// `k` node pairs that are not edges (nor self-pairs), sampled uniformly.
fn negatives(p: &Prepared, k: usize, rng: &mut Rng) -> Vec<(u32, u32)> {
    let mut out = Vec::with_capacity(k);
    let mut tries = 0;
    while out.len() < k && tries < k * 20 && p.n > 1 {
        tries += 1;
        let a = rng.below(p.n) as u32;
        let b = rng.below(p.n) as u32;
        if a != b && !p.all.contains(&(a.min(b), a.max(b))) {
            out.push((a, b));
        }
    }
    out
}

fn pair_tensors(pairs: &[(u32, u32)]) -> (Tensor, Tensor) {
    let s: Vec<i64> = pairs.iter().map(|p| p.0 as i64).collect();
    let d: Vec<i64> = pairs.iter().map(|p| p.1 as i64).collect();
    (Tensor::from_slice(&s), Tensor::from_slice(&d))
}

/// Area under the ROC curve of positive vs negative scores (Mann–Whitney, ties halved).
pub fn auc(pos: &[f32], neg: &[f32]) -> f64 {
    if pos.is_empty() || neg.is_empty() {
        return 0.5;
    }
    let mut all: Vec<(f32, bool)> = pos
        .iter()
        .map(|&s| (s, true))
        .chain(neg.iter().map(|&s| (s, false)))
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut rank_sum = 0.0;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j < all.len() && all[j].0 == all[i].0 {
            j += 1;
        }
        let avg = (i + j + 1) as f64 / 2.0; // ranks i+1 ..= j
        rank_sum += avg * all[i..j].iter().filter(|x| x.1).count() as f64;
        i = j;
    }
    let (np, nn) = (pos.len() as f64, neg.len() as f64);
    (rank_sum - np * (np + 1.0) / 2.0) / (np * nn)
}

/// Validation AUC twice over the same positives: against non-edges inside each subgraph
/// (mostly pairs of one file, the harder test) and against non-edges drawn from all
/// nodes, as PyTorch Geometric's negative sampling over a whole graph does.
fn validate(model: &Gcn, prepared: &[Prepared], seed: u64) -> (f64, f64) {
    // Fixed negatives for validation so epochs compare on the same pairs.
    let mut rng = Rng::new(seed ^ 0x5A5A);
    let (mut pos, mut neg) = (Vec::new(), Vec::new());
    let mut global = Vec::new();
    tch::no_grad(|| {
        let zs: Vec<Tensor> = prepared
            .iter()
            .map(|p| model.forward(&p.adj, &p.x))
            .collect();
        let starts: Vec<usize> = prepared
            .iter()
            .scan(0, |acc, p| {
                let s = *acc;
                *acc += p.n;
                Some(s)
            })
            .collect();
        let total: usize = prepared.iter().map(|p| p.n).sum();
        let locate = |k: usize| {
            let g = starts.partition_point(|&s| s <= k) - 1;
            (g, (k - starts[g]) as i64)
        };
        for (gi, p) in prepared.iter().enumerate() {
            pos.extend(scores_z(&zs[gi], &p.val));
            let ns = negatives(p, p.val.len(), &mut rng);
            neg.extend(scores_z(&zs[gi], &ns));
            for _ in 0..p.val.len() {
                let mut tries = 0;
                let (a, b) = loop {
                    let (a, b) = (locate(rng.below(total)), locate(rng.below(total)));
                    let edge = a.0 == b.0
                        && (a.1 == b.1
                            || prepared[a.0]
                                .all
                                .contains(&((a.1.min(b.1)) as u32, (a.1.max(b.1)) as u32)));
                    tries += 1;
                    if !edge || tries > 20 {
                        break (a, b);
                    }
                };
                let dot = (zs[a.0].get(a.1) * zs[b.0].get(b.1)).sum(tch::Kind::Float);
                global.push(f64::try_from(&dot).unwrap_or(0.0) as f32);
            }
        }
    });
    (auc(&pos, &neg), auc(&pos, &global))
}

fn scores_z(z: &Tensor, pairs: &[(u32, u32)]) -> Vec<f32> {
    if pairs.is_empty() {
        return Vec::new();
    }
    let (s, d) = pair_tensors(pairs);
    Vec::<f32>::try_from(&decode(z, &s, &d)).unwrap_or_default()
}

fn restore(vs: &nn::VarStore, weights: &[(String, Tensor)]) {
    let vars = vs.variables();
    tch::no_grad(|| {
        for (k, v) in weights {
            if let Some(mut t) = vars.get(k).map(Tensor::shallow_clone) {
                t.copy_(v);
            }
        }
    });
}

/// Trains `model` (whose variables live in `vs`) on `graphs`; keeps the weights of the
/// epoch with the best validation AUC. `progress` sees every epoch.
pub fn train(
    vs: &mut nn::VarStore,
    model: &Gcn,
    graphs: &[TrainGraph],
    cfg: &TrainConfig,
    mut progress: impl FnMut(&EpochStats),
) -> Result<TrainReport, tch::TchError> {
    tch::manual_seed(cfg.seed as i64);
    let mut rng = Rng::new(cfg.seed);
    let prepared: Vec<Prepared> = graphs.iter().map(|g| prepare(g, &mut rng)).collect();
    let mut opt = nn::Adam::default().build(vs, cfg.lr)?;
    let mut best = (f64::NEG_INFINITY, 0usize);
    let (mut lr, mut last_cut) = (cfg.lr, 0usize);
    let mut best_weights: Vec<(String, Tensor)> = Vec::new();
    let mut epochs = Vec::new();
    let mut order: Vec<usize> = (0..prepared.len()).collect();
    for epoch in 1..=cfg.max_epochs {
        rng.shuffle(&mut order);
        let (mut loss_sum, mut batches) = (0.0, 0usize);
        for &gi in &order {
            let p = &prepared[gi];
            let mut edges = p.train.clone();
            rng.shuffle(&mut edges);
            // A step's positives carry no messages in that step, like validation edges.
            let size = if cfg.mask > 0.0 {
                ((edges.len() as f64 * cfg.mask).ceil() as usize).clamp(1, cfg.batch)
            } else {
                cfg.batch
            };
            for (ci, chunk) in edges.chunks(size).enumerate() {
                let neg = negatives(p, chunk.len(), &mut rng);
                let pairs: Vec<(u32, u32)> = chunk.iter().chain(neg.iter()).copied().collect();
                let labels: Vec<f32> = (0..pairs.len())
                    .map(|i| if i < chunk.len() { 1.0 } else { 0.0 })
                    .collect();
                let (s, d) = pair_tensors(&pairs);
                let masked;
                let adj = if cfg.mask > 0.0 {
                    let rest: Vec<(u32, u32)> = edges[..ci * size]
                        .iter()
                        .chain(&edges[(ci * size + chunk.len())..])
                        .copied()
                        .collect();
                    masked = normalized_adjacency(p.n, &rest);
                    &masked
                } else {
                    &p.adj
                };
                let z = model.forward(adj, &p.x);
                let logits = decode(&z, &s, &d);
                let loss = logits.binary_cross_entropy_with_logits::<Tensor>(
                    &Tensor::from_slice(&labels),
                    None,
                    None,
                    Reduction::Mean,
                );
                opt.backward_step(&loss);
                loss_sum += f64::try_from(&loss)?;
                batches += 1;
            }
        }
        let (val_auc, val_auc_global) = validate(model, &prepared, cfg.seed);
        let stats = EpochStats {
            epoch,
            loss: loss_sum / batches.max(1) as f64,
            val_auc,
            val_auc_global,
            lr,
        };
        progress(&stats);
        epochs.push(stats);
        if val_auc > best.0 {
            best = (val_auc, epoch);
            best_weights = vs
                .variables()
                .into_iter()
                .map(|(k, v)| (k, v.detach().copy()))
                .collect();
            last_cut = epoch;
        } else if epoch - best.1 >= cfg.patience {
            break;
        } else if epoch - last_cut >= cfg.plateau {
            if lr * cfg.decay < cfg.lr / 100.0 {
                break;
            }
            restore(vs, &best_weights);
            lr *= cfg.decay;
            opt.set_lr(lr);
            last_cut = epoch;
        }
    }
    restore(vs, &best_weights);
    Ok(TrainReport {
        epochs,
        best_epoch: best.1,
        best_val_auc: best.0,
        train_edges: prepared.iter().map(|p| p.train.len()).sum(),
        val_edges: prepared.iter().map(|p| p.val.len()).sum(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auc_of_hand_rankings() {
        assert_eq!(auc(&[3.0, 4.0], &[1.0, 2.0]), 1.0);
        assert_eq!(auc(&[1.0, 2.0], &[3.0, 4.0]), 0.0);
        assert_eq!(auc(&[1.0], &[1.0]), 0.5);
        // pos {1, 3}, neg {2}: one of two pairs ordered correctly.
        assert_eq!(auc(&[1.0, 3.0], &[2.0]), 0.5);
        assert!((auc(&[2.0, 3.0, 1.5], &[1.0, 2.5]) - 4.0 / 6.0).abs() < 1e-12);
    }

    #[test]
    fn rng_is_deterministic() {
        let (mut a, mut b) = (Rng::new(3), Rng::new(3));
        let va: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..5).map(|_| b.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(Rng::new(4).next_u64(), va[0]);
    }
}
