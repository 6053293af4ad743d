//! The native runtimes later stages stand on: libtorch (through `tch`) for the graph model
//! and text encoder, FAISS for the vector index. `check` proves both load and compute.

use faiss::{index_factory, Index, MetricType};
use tch::{Kind, Tensor};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum NativeError {
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
    #[error("faiss: {0}")]
    Faiss(#[from] faiss::error::Error),
    #[error("{0}")]
    Wrong(String),
}

/// A 2×3 by 3×2 product on libtorch, returned row-major.
pub fn torch_matmul() -> Result<Vec<f32>, NativeError> {
    let a = Tensor::from_slice(&[1f32, 2., 3., 4., 5., 6.]).view([2, 3]);
    let b = Tensor::from_slice(&[7f32, 8., 9., 10., 11., 12.]).view([3, 2]);
    let c = a.f_matmul(&b)?.to_kind(Kind::Float).flatten(0, -1);
    Ok(Vec::<f32>::try_from(&c)?)
}

/// Inner-product search over four 4-d unit vectors; returns the id nearest to `query`.
pub fn faiss_nearest(query: [f32; 4]) -> Result<(u64, f32), NativeError> {
    let mut index = index_factory(4, "Flat", MetricType::InnerProduct)?;
    let base: [f32; 16] = [
        1., 0., 0., 0., //
        0., 1., 0., 0., //
        0., 0., 1., 0., //
        0., 0., 0., 1.,
    ];
    index.add(&base)?;
    let r = index.search(&query, 1)?;
    let id = r.labels[0].get().ok_or_else(|| NativeError::Wrong("faiss returned no neighbour".into()))?;
    Ok((id, r.distances[0]))
}

/// Runs both checks and says what each computed.
pub fn check() -> Result<Vec<String>, NativeError> {
    let m = torch_matmul()?;
    if m != [58., 64., 139., 154.] {
        return Err(NativeError::Wrong(format!("libtorch computed {m:?}")));
    }
    let (id, d) = faiss_nearest([0.1, 0.2, 0.9, 0.1])?;
    if id != 2 {
        return Err(NativeError::Wrong(format!("faiss returned id {id}")));
    }
    Ok(vec![
        format!("libtorch ok: [1 2 3; 4 5 6] x [7 8; 9 10; 11 12] = {m:?} (threads {})", tch::get_num_threads()),
        format!("faiss ok: nearest of 4 vectors is #{id} at inner product {d:.2}"),
    ])
}
