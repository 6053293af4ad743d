//! The centred principal-component projection applied to node vectors before FAISS.
//!
//! The component every node shares (the mean direction) would otherwise dominate the
//! cosine and hide what sets one statement apart. FAISS's own `PCA` transform stores the
//! full `d × d` eigenvector matrix (3.4 MB at d = 924, as large as the source of a
//! mid-sized library); this file holds only the kept rows.

use super::IndexError;
use std::path::Path;
use tch::{Kind, Tensor};

const MAGIC: &[u8; 8] = b"BRYLPCA1";

#[derive(Clone, Debug, PartialEq)]
pub struct Projection {
    pub d_in: usize,
    pub d_out: usize,
    mean: Vec<f32>,
    /// `d_out × d_in`, row-major: the top principal directions, largest first.
    rows: Vec<f32>,
}

/// Every how many rows of `n` the projection's sample takes one: 50k rows pin down a
/// 924-d covariance well; more only costs time.
pub fn sample_step(n: usize) -> usize {
    n.div_ceil(50_000).max(1)
}

impl Projection {
    /// Fits on `data` (row-major, `d_in` wide) from at most 50,000 evenly spaced rows.
    pub fn fit(data: &[f32], d_in: usize, d_out: usize) -> Result<Projection, IndexError> {
        let n = data.len() / d_in.max(1);
        if d_in == 0 || d_out == 0 || d_out > d_in || n < 2 {
            return Err(IndexError::Faiss(format!("cannot project {n} vectors of width {d_in} to {d_out}")));
        }
        let step = sample_step(n);
        let mut sample = Vec::with_capacity(n.div_ceil(step) * d_in);
        for i in (0..n).step_by(step) {
            sample.extend_from_slice(&data[i * d_in..(i + 1) * d_in]);
        }
        Projection::fit_sample(&sample, d_in, d_out)
    }

    /// [`Projection::fit`] from its sample alone: rows `0, s, 2s, …` of the data, `s` its
    /// [`sample_step`].
    pub fn fit_sample(sample: &[f32], d_in: usize, d_out: usize) -> Result<Projection, IndexError> {
        let m = (sample.len() / d_in.max(1)) as i64;
        if d_in == 0 || d_out == 0 || d_out > d_in || m < 2 {
            return Err(IndexError::Faiss(format!("cannot project {m} vectors of width {d_in} to {d_out}")));
        }
        let torch = |e: tch::TchError| IndexError::Faiss(format!("projection: {e}"));
        let (mean, rows) = tch::no_grad(|| -> Result<(Vec<f32>, Vec<f32>), tch::TchError> {
            // Centred and multiplied in f32 (in double the product takes about a third of
            // a whole index build), eigen-decomposed in double.
            let x = Tensor::from_slice(sample).view([m, d_in as i64]);
            let mean = x.mean_dim(0, true, Kind::Float);
            let c = &x - &mean;
            let cov = c.transpose(0, 1).mm(&c).to_kind(Kind::Double) / (m - 1).max(1) as f64;
            // Eigenvalues ascending: the last d_out columns, reversed, are the top ones.
            let (_, vecs) = cov.f_linalg_eigh("L")?;
            let top = vecs.narrow(1, (d_in - d_out) as i64, d_out as i64).flip([1]).transpose(0, 1).contiguous();
            let mean = Vec::<f32>::try_from(&mean.to_kind(Kind::Float).flatten(0, -1))?;
            let rows = Vec::<f32>::try_from(&top.to_kind(Kind::Float).flatten(0, -1))?;
            Ok((mean, rows))
        })
        .map_err(torch)?;
        Ok(Projection { d_in, d_out, mean, rows })
    }

    /// Rows projected by one matrix product in [`Projection::apply`]; data applied in blocks
    /// of this many rows gives what it gives whole.
    pub const BLOCK: usize = 65_536;

    /// Projects row-major `data` (`d_in` wide) to `d_out` wide rows.
    pub fn apply(&self, data: &[f32]) -> Result<Vec<f32>, IndexError> {
        let n = data.len() / self.d_in.max(1);
        let mut out = Vec::with_capacity(n * self.d_out);
        let (d_in, d_out) = (self.d_in as i64, self.d_out as i64);
        let mean = Tensor::from_slice(&self.mean).view([1, d_in]);
        let a = Tensor::from_slice(&self.rows).view([d_out, d_in]).transpose(0, 1);
        // One matrix product per block (a plain loop took a minute on 431k vectors).
        for block in data[..n * self.d_in].chunks(Self::BLOCK * self.d_in) {
            let rows = (block.len() / self.d_in) as i64;
            // Centred in place: a block is 242 MB of a large build's peak, a copy as much again.
            let y = tch::no_grad(|| -> Result<Tensor, tch::TchError> {
                let mut x = Tensor::from_slice(block).view([rows, d_in]);
                let _ = x.f_sub_(&mean)?;
                x.f_mm(&a)
            })
            .map_err(|e| IndexError::Faiss(format!("projection: {e}")))?;
            out.extend(Vec::<f32>::try_from(&y.flatten(0, -1)).map_err(|e| IndexError::Faiss(format!("projection: {e}")))?);
        }
        Ok(out)
    }

    /// [`Projection::apply`] in plain loops, without libtorch: for a few thousand rows (an
    /// update's) they cost less than loading libtorch would. Equal to `apply` up to the
    /// order of f32 sums, so a build uses one or the other throughout.
    pub fn apply_plain(&self, data: &[f32]) -> Vec<f32> {
        use rayon::prelude::*;
        let d_in = self.d_in.max(1);
        let n = data.len() / d_in;
        let mut out = vec![0f32; n * self.d_out];
        out.par_chunks_mut(self.d_out.max(1)).zip(data[..n * d_in].par_chunks_exact(d_in)).for_each(|(y, x)| {
            let c: Vec<f32> = x.iter().zip(&self.mean).map(|(x, m)| x - m).collect();
            for (y, r) in y.iter_mut().zip(self.rows.chunks_exact(d_in)) {
                *y = c.iter().zip(r).map(|(a, b)| a * b).sum();
            }
        });
        out
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(16 + 4 * (self.mean.len() + self.rows.len()));
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&(self.d_in as u32).to_le_bytes());
        b.extend_from_slice(&(self.d_out as u32).to_le_bytes());
        for v in self.mean.iter().chain(&self.rows) {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b
    }

    pub fn from_bytes(b: &[u8]) -> Option<Projection> {
        let rest = b.strip_prefix(MAGIC)?;
        let word = |i: usize| rest.get(i * 4..i * 4 + 4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as usize);
        let (d_in, d_out) = (word(0)?, word(1)?);
        let floats: Vec<f32> = rest[8..].chunks_exact(4).map(|w| f32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
        if d_out == 0 || d_out > d_in || rest.len() != 8 + 4 * d_in * (1 + d_out) || floats.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let rows = floats[d_in..].to_vec();
        Some(Projection { d_in, d_out, mean: floats[..d_in].to_vec(), rows })
    }

    pub fn write(&self, path: &Path) -> Result<(), IndexError> {
        std::fs::write(path, self.to_bytes()).map_err(|e| IndexError::Io { path: path.into(), error: e })
    }

    pub fn read(path: &Path) -> Result<Projection, IndexError> {
        let b = std::fs::read(path).map_err(|e| IndexError::Corrupt(format!("{}: {e}", path.display())))?;
        Projection::from_bytes(&b).ok_or_else(|| IndexError::Corrupt(format!("{} is not a projection", path.display())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_main_direction_and_round_trips() {
        // Points along (1, 1, 0) around (5, 0, 2), with a little spread along z.
        let mut data = Vec::new();
        for i in 0..50 {
            let t = i as f32 - 24.5;
            let z = if i % 2 == 0 { 0.1 } else { -0.1 };
            data.extend_from_slice(&[5.0 + t, t, 2.0 + z]);
        }
        let p = Projection::fit(&data, 3, 1).unwrap();
        let dir = &p.rows;
        assert!((dir[0].abs() - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-3 && (dir[1].abs() - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-3 && dir[2].abs() < 1e-3, "{dir:?}");
        // The centre projects to zero; the projection is the coordinate along the line.
        assert!(p.apply(&[5.0, 0.0, 2.0]).unwrap()[0].abs() < 1e-4);
        assert!((p.apply(&[6.0, 1.0, 2.0]).unwrap()[0].abs() - 2f32.sqrt()).abs() < 1e-4);
        let q = Projection::from_bytes(&p.to_bytes()).unwrap();
        assert_eq!(p, q);
        // Plain loops give what libtorch's product gives.
        let (a, b) = (p.apply(&data).unwrap(), p.apply_plain(&data));
        assert_eq!(a.len(), b.len());
        assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-4), "{a:?} {b:?}");
        let b = p.to_bytes();
        assert!(Projection::from_bytes(&b[..b.len() - 4]).is_none());
        assert!(Projection::from_bytes(b"BRYLPCA1").is_none());
    }
}
