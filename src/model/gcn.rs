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

/// The GCN's two products in plain Rust, over weights read from `weights.safetensors`
/// without libtorch. For a batch of a few thousand nodes (an update's) they cost less than
/// loading libtorch would (a quarter of a second of CPU). The arithmetic is [`Gcn`]'s, up
/// to the order in which f32 sums are taken.
#[derive(Debug)]
pub struct PlainGcn {
    mu: Vec<f32>,
    sigma: Vec<f32>,
    /// `in_dim × hidden`, row-major.
    w1: Vec<f32>,
    /// `hidden × hidden`, row-major.
    w2: Vec<f32>,
    pub in_dim: usize,
    pub hidden: usize,
}

impl PlainGcn {
    /// The weights [`Gcn::new`] names (`mu`, `sigma`, `w1`, `w2`), as f32 tensors of the
    /// shapes `in_dim` and `hidden` give, from a safetensors file: a little-endian u64
    /// length, a JSON header of that length, then the data.
    pub fn read(path: &std::path::Path, in_dim: usize, hidden: usize) -> Result<PlainGcn, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        // Each tensor's shape, and its values when they are f32.
        let mut found: std::collections::HashMap<String, (Vec<i64>, Option<Vec<f32>>)> = Default::default();
        crate::features::bert::walk_safetensors(&bytes, path, &mut |name, raw, shape, kind| {
            let values = (kind == Kind::Float).then(|| raw.chunks_exact(4).map(|w| f32::from_le_bytes(w.try_into().expect("4 bytes"))).collect());
            found.insert(name.to_string(), (shape.to_vec(), values));
            Ok(())
        })
        .map_err(|e| e.to_string())?;
        let mut tensor = |name: &str, shape: &[usize]| -> Result<Vec<f32>, String> {
            let want: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
            match found.remove(name) {
                Some((got, Some(values))) if got == want => Ok(values),
                Some((got, values)) => Err(format!("{}: {name} is {} {got:?}, not F32 {shape:?}", path.display(), if values.is_some() { "F32" } else { "F16" })),
                None => Err(format!("{}: no tensor {name}", path.display())),
            }
        };
        Ok(PlainGcn {
            mu: tensor("mu", &[in_dim])?,
            sigma: tensor("sigma", &[in_dim])?,
            w1: tensor("w1", &[in_dim, hidden])?,
            w2: tensor("w2", &[hidden, hidden])?,
            in_dim,
            hidden,
        })
    }

    /// [`Gcn::first_weights`] of row-major `x` (`in_dim` wide).
    pub fn first_weights(&self, x: &[f32]) -> Vec<f32> {
        let bound = (4.0 / (self.in_dim as f64).sqrt()) as f32;
        self.product(x, self.in_dim, &self.w1, |k, v| ((v - self.mu[k]) / self.sigma[k]).clamp(-bound, bound))
    }

    /// [`Gcn::second_weights`] of row-major `h` (`hidden` wide).
    pub fn second_weights(&self, h: &[f32]) -> Vec<f32> {
        self.product(h, self.hidden, &self.w2, |_, v| v)
    }

    /// `f(x) W` row by row, `W` being `width × hidden`: each output row a sum of rows of
    /// `W`, which the compiler vectorizes.
    fn product(&self, x: &[f32], width: usize, w: &[f32], f: impl Fn(usize, f32) -> f32 + Sync) -> Vec<f32> {
        use rayon::prelude::*;
        let h = self.hidden;
        let mut out = vec![0f32; x.len() / width * h];
        out.par_chunks_mut(h).zip(x.par_chunks_exact(width)).for_each(|(o, x)| {
            for (k, &v) in x.iter().enumerate() {
                let s = f(k, v);
                if s != 0.0 {
                    for (o, w) in o.iter_mut().zip(&w[k * h..(k + 1) * h]) {
                        *o += s * w;
                    }
                }
            }
        });
        out
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

    #[test]
    fn plain_products_are_libtorchs() {
        // The shipped model's weights, and features spread over several deviations.
        let dir = crate::repo_path("models/default");
        let man: crate::model::Manifest = serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
        let m = crate::model::Model::load(&dir, man.feature_schema, &man.encoder).unwrap();
        let (d, h) = (m.gcn.in_dim as usize, m.gcn.hidden as usize);
        let p = PlainGcn::read(&dir.join("weights.safetensors"), d, h).unwrap();
        let mu = Vec::<f32>::try_from(&m.gcn.mu).unwrap();
        let x: Vec<f32> = (0..7 * d).map(|i| mu[i % d] + ((i * 7919 % 1000) as f32 / 250.0 - 2.0)).collect();
        let torch = Vec::<f32>::try_from(&tch::no_grad(|| m.gcn.first_weights(&Tensor::from_slice(&x).view([7, d as i64]))).flatten(0, -1)).unwrap();
        let plain = p.first_weights(&x);
        let close = |a: &[f32], b: &[f32]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-4 * (1.0 + x.abs()));
        assert!(close(&torch, &plain), "{:?} against {:?}", &torch[..4], &plain[..4]);
        assert!(torch.iter().any(|v| v.abs() > 0.1), "the products are not all near zero");
        let torch2 = Vec::<f32>::try_from(&tch::no_grad(|| m.gcn.second_weights(&Tensor::from_slice(&torch).view([7, h as i64]))).flatten(0, -1)).unwrap();
        assert!(close(&torch2, &p.second_weights(&torch)));
        // Files that are not these weights are errors, not panics.
        let tmp = tempfile::tempdir().unwrap();
        let w = std::fs::read(dir.join("weights.safetensors")).unwrap();
        for (name, bytes) in [("short", &w[..5]), ("cut", &w[..w.len() - 4]), ("header", &b"\xff\xff\xff\xff\x00\x00\x00\x00{}"[..])] {
            let f = tmp.path().join(name);
            std::fs::write(&f, bytes).unwrap();
            assert!(PlainGcn::read(&f, d, h).is_err(), "{name}");
        }
        assert!(PlainGcn::read(&dir.join("weights.safetensors"), d + 1, h).unwrap_err().contains("not F32"));
    }

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
