//! The graph autoencoder of Beryllium §4.2: two GCN layers over `Â = D^-1/2 (A+I) D^-1/2`,
//! `H = ReLU(Â X W1)` and `Z = Â H W2`, and an inner-product decoder `sigmoid(z_i · z_j)`.
//!
//! The output layer has no ReLU, as in the PyTorch Geometric GAE encoder the paper used:
//! with ReLU there, every logit is ≥ 0, negatives can only be pushed to exactly zero, and
//! training on real features collapsed to dead units (validation AUC 0.50, loss ln 2).

use tch::{nn, Device, Kind, Tensor};

pub struct Gcn {
    /// Per-feature mean and spread of the training nodes (not trained by gradient):
    /// inputs are standardized first, so the text vectors' shared direction and the
    /// different feature scales do not swamp the first layer.
    pub mu: Tensor,
    pub sigma: Tensor,
    pub w1: Tensor,
    pub w2: Tensor,
    pub in_dim: i64,
    pub hidden: i64,
}

/// Glorot-uniform bound for a `fan_in × fan_out` weight.
fn glorot(fan_in: i64, fan_out: i64) -> nn::Init {
    let a = (6.0 / (fan_in + fan_out) as f64).sqrt();
    nn::Init::Uniform { lo: -a, up: a }
}

impl Gcn {
    pub fn new(vs: &nn::Path, in_dim: i64, hidden: i64) -> Gcn {
        Gcn {
            mu: vs.zeros_no_train("mu", &[in_dim]),
            sigma: vs.ones_no_train("sigma", &[in_dim]),
            w1: vs.var("w1", &[in_dim, hidden], glorot(in_dim, hidden)),
            w2: vs.var("w2", &[hidden, hidden], glorot(hidden, hidden)),
            in_dim,
            hidden,
        }
    }

    /// Node embeddings `Z` for features `x` (n × in_dim) and normalized adjacency `adj`.
    /// Sets the standardization from training features `x` (n × in_dim).
    pub fn fit_standardization(&mut self, xs: &[&Tensor]) {
        let all = Tensor::cat(xs, 0);
        let mu = all.mean_dim(0, false, Kind::Float);
        // Constant columns (a node kind absent from training) keep unit spread.
        let sd = all.std_dim(0, false, false);
        let sd = sd.where_self(&sd.gt(1e-4), &Tensor::ones_like(&sd));
        // Rows of unit norm on average: logits start near zero instead of in the hundreds.
        let sd = sd * (self.in_dim as f64).sqrt();
        tch::no_grad(|| {
            self.mu.copy_(&mu);
            self.sigma.copy_(&sd);
        });
    }

    pub fn forward(&self, adj: &Tensor, x: &Tensor) -> Tensor {
        let h = adj.mm(&self.first_weights(x)).relu();
        adj.mm(&h.mm(&self.w2))
    }

    /// `X W1` for standardized features: what the first layer propagates.
    pub fn first_weights(&self, x: &Tensor) -> Tensor {
        // Clipped, so a rare feature (a node kind seen a few times in training, with a tiny
        // spread) cannot blow up to hundreds of standard deviations.
        let bound = 4.0 / (self.in_dim as f64).sqrt();
        let x = ((x - &self.mu) / &self.sigma).clamp(-bound, bound);
        x.mm(&self.w1)
    }

    /// `H W2`: what the second layer propagates.
    pub fn second_weights(&self, h: &Tensor) -> Tensor {
        h.mm(&self.w2)
    }
}

/// Decoder logits `z_i · z_j` for the pairs `(src[k], dst[k])`.
pub fn decode(z: &Tensor, src: &Tensor, dst: &Tensor) -> Tensor {
    (z.index_select(0, src) * z.index_select(0, dst)).sum_dim_intlist(1, false, Kind::Float)
}

/// `D^-1/2 (A+I) D^-1/2` as a sparse tensor, treating `edges` as undirected.
pub fn normalized_adjacency(n: usize, edges: &[(u32, u32)]) -> Tensor {
    let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(edges.len() * 2 + n);
    for &(a, b) in edges {
        if a != b {
            pairs.push((a, b));
            pairs.push((b, a));
        }
    }
    pairs.extend((0..n as u32).map(|i| (i, i)));
    pairs.sort_unstable();
    pairs.dedup();
    let mut deg = vec![0f32; n];
    for &(a, _) in &pairs {
        deg[a as usize] += 1.0;
    }
    let rows: Vec<i64> = pairs.iter().map(|p| p.0 as i64).collect();
    let cols: Vec<i64> = pairs.iter().map(|p| p.1 as i64).collect();
    let vals: Vec<f32> = pairs
        .iter()
        .map(|&(a, b)| 1.0 / (deg[a as usize] * deg[b as usize]).sqrt())
        .collect();
    let idx = Tensor::stack(&[Tensor::from_slice(&rows), Tensor::from_slice(&cols)], 0);
    Tensor::sparse_coo_tensor_indices_size(
        &idx,
        &Tensor::from_slice(&vals),
        [n as i64, n as i64],
        (Kind::Float, Device::Cpu),
        true,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(t: &Tensor) -> Vec<f32> {
        Vec::<f32>::try_from(&t.to_dense(None, false).flatten(0, -1)).unwrap()
    }

    #[test]
    fn forward_matches_a_hand_computation() {
        tch::set_num_threads(1);
        // Path 0 - 1 - 2. Degrees with self-loops: 2, 3, 2.
        let adj = normalized_adjacency(3, &[(0, 1), (1, 2)]);
        let a = values(&adj);
        let (s2, s6) = (1.0 / 2.0f32, 1.0 / 6.0f32.sqrt());
        let expect = [s2, s6, 0.0, s6, 1.0 / 3.0, s6, 0.0, s6, s2];
        for (x, y) in a.iter().zip(expect) {
            assert!((x - y).abs() < 1e-6, "{a:?}");
        }
        let vs = nn::VarStore::new(Device::Cpu);
        let mut g = Gcn::new(&vs.root(), 2, 2);
        tch::no_grad(|| {
            g.w1.copy_(&Tensor::from_slice(&[1f32, 0., 0., 1.]).view([2, 2]));
            g.w2.copy_(&Tensor::from_slice(&[1f32, -1., 0., 1.]).view([2, 2]));
        });
        let x = Tensor::from_slice(&[1f32, 0., 0., 1., 1., 1.]).view([3, 2]);
        let z = Vec::<f32>::try_from(&g.forward(&adj, &x).flatten(0, -1)).unwrap();
        // By hand: H = ReLU(Â X) (W1 = I); Z = Â H W2.
        let ahat = [[s2, s6, 0.0], [s6, 1.0 / 3.0, s6], [0.0, s6, s2]];
        let xs = [[1.0f32, 0.0], [0.0, 1.0], [1.0, 1.0]];
        let mm = |a: &[[f32; 3]; 3], b: &[[f32; 2]; 3]| {
            let mut o = [[0f32; 2]; 3];
            for i in 0..3 {
                for j in 0..2 {
                    o[i][j] = (0..3).map(|k| a[i][k] * b[k][j]).sum();
                }
            }
            o
        };
        let h = mm(&ahat, &xs).map(|r| r.map(|v| v.max(0.0)));
        let hw = h.map(|r| [r[0], -r[0] + r[1]]);
        let want = mm(&ahat, &hw);
        assert!(want.iter().flatten().any(|&v| v < 0.0), "the example exercises a negative output");
        for (i, w) in want.iter().flatten().enumerate() {
            assert!((z[i] - w).abs() < 1e-5, "z {z:?} want {want:?}");
        }
        let logits = decode(&g.forward(&adj, &x), &Tensor::from_slice(&[0i64]), &Tensor::from_slice(&[2i64]));
        let l = f32::try_from(&logits.sum(Kind::Float)).unwrap();
        assert!((l - (want[0][0] * want[2][0] + want[0][1] * want[2][1])).abs() < 1e-5);
    }
}
