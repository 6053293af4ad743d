//! Search vectors of nodes and the FAISS indexes that hold them.
//!
//! A node's embedding row is [GCN output | math counts | kind one-hot | text vector]
//! (model::embed). Each block is L2-normalized and weighted before the whole is
//! normalized, so the inner product of two search vectors is a weighted mean of the
//! per-block cosines: no block wins by its raw scale, and an ablation is a block left out.

use super::IndexError;
use crate::features::DIM as TEXT_DIM;
use crate::graph::NodeKind;
use faiss::index::autotune::ParameterSpace;
use faiss::index::IndexImpl;
use faiss::{Index, MetricType};
use serde::{Deserialize, Serialize};
use std::path::Path;

const MATH: usize = 7;
const KINDS: usize = NodeKind::ALL.len();

/// Block weights; the cosine of each block counts with the square of its weight.
const W_TEXT: f32 = 1.0;
const W_GRAPH: f32 = 0.8;
const W_MATH: f32 = 0.6;
const W_KIND: f32 = 0.4;

/// Which ingredients of a node vector are searched (`--features text,graph,math`).
/// The node-kind one-hot goes with `graph`: both describe a node's place in the CFG.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureSet {
    pub text: bool,
    pub graph: bool,
    pub math: bool,
}

impl Default for FeatureSet {
    fn default() -> Self {
        FeatureSet { text: true, graph: true, math: true }
    }
}

impl FeatureSet {
    pub fn parse(s: &str) -> Result<FeatureSet, String> {
        let mut f = FeatureSet { text: false, graph: false, math: false };
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "text" => f.text = true,
                "graph" => f.graph = true,
                "math" => f.math = true,
                other => return Err(format!("unknown feature {other:?} (expected text, graph, math)")),
            }
        }
        if !(f.text || f.graph || f.math) {
            return Err("no features selected".into());
        }
        Ok(f)
    }

    pub fn name(&self) -> String {
        let mut v = Vec::new();
        for (on, n) in [(self.text, "text"), (self.graph, "graph"), (self.math, "math")] {
            if on {
                v.push(n);
            }
        }
        v.join(",")
    }

    /// Width of a search vector for a model with `hidden` GCN outputs.
    pub fn dim(&self, hidden: usize) -> usize {
        let mut d = 0;
        if self.graph {
            d += hidden + KINDS;
        }
        if self.math {
            d += MATH;
        }
        if self.text {
            d += TEXT_DIM;
        }
        d
    }

    /// The search vector of one embedding row (`hidden + IN_DIM` wide).
    pub fn search_vector(&self, row: &[f32], hidden: usize, out: &mut Vec<f32>) {
        let (z, rest) = row.split_at(hidden);
        let (math, rest) = rest.split_at(MATH);
        let (kind, text) = rest.split_at(KINDS);
        let start = out.len();
        let mut push = |block: &[f32], w: f32| {
            let norm = block.iter().map(|v| v * v).sum::<f32>().sqrt();
            let s = if norm > 0.0 { w / norm } else { 0.0 };
            out.extend(block.iter().map(|v| v * s));
        };
        if self.graph {
            push(z, W_GRAPH);
            push(kind, W_KIND);
        }
        if self.math {
            push(math, W_MATH);
        }
        if self.text {
            push(text, W_TEXT);
        }
        normalize(&mut out[start..]);
    }
}

pub fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

/// Kinds that enter the node index. EXIT carries no text and matches only other EXITs.
pub fn searchable(kind: NodeKind) -> bool {
    kind != NodeKind::Exit
}

/// Width the node vectors are projected to before they are stored.
pub const PCA_DIM: usize = 128;

/// Whether `n` node vectors are enough to estimate the projection (see `project`).
pub fn projects(n: usize) -> bool {
    n >= 8 * PCA_DIM
}

/// How the node index is laid out, chosen by size unless the user names a FAISS factory.
/// Up to `flat_max` vectors every one is compared (8-bit codes, a quarter of the floats'
/// size); above, IVF lists with product-quantized residuals, 32 bytes a vector, which
/// keeps the index below the source size on large corpora.
pub fn factory_for(n: usize, flat_max: usize, user: Option<&str>) -> String {
    if let Some(f) = user {
        return f.to_string();
    }
    if !projects(n) {
        "Flat".into()
    } else if n <= flat_max {
        "SQ8".into()
    } else {
        let lists = (n as f64).sqrt().clamp(64.0, 65536.0) as usize;
        // `np`: no polysemous training, which FAISS otherwise runs for IVF-PQ (simulated
        // annealing over codes, over ten minutes on 400k vectors; we never use Hamming filtering).
        format!("IVF{lists},PQ{}np", PCA_DIM / 4)
    }
}

/// Functions from which the function index is split into IVF lists: below, a search
/// compares every vector (under 25 ms on two cores); above, that scan grows past an
/// interactive query's budget (60 ms at 650k functions), and a probe of an eighth of the
/// lists costs an eighth of it.
pub const FUNCTION_IVF_MIN: usize = 1 << 18;

/// The function index holds 384-d text vectors: 6-bit codes (8-bit codes make the index
/// about twice the size of the source it indexes), flat below 256 functions, in about
/// √n IVF lists from [`FUNCTION_IVF_MIN`] on.
pub fn function_factory(n: usize) -> String {
    if n < 256 {
        "Flat".into()
    } else if n < FUNCTION_IVF_MIN {
        "SQ6".into()
    } else {
        format!("IVF{},SQ6", (n as f64).sqrt() as usize)
    }
}

/// Lists a search of an index laid out as `factory` probes, at least `nprobe`: an eighth
/// of a function index's lists, whose dense retrieval wants a long list of hits.
pub fn function_probes(factory: &str, nprobe: usize) -> usize {
    let lists: usize = factory.strip_prefix("IVF").and_then(|r| r.split(',').next()?.parse().ok()).unwrap_or(0);
    nprobe.max(lists / 8)
}

/// Whether a factory's index stores ids itself (IVF lists do); others are wrapped in an
/// id map, so that every layout adds and removes vectors by id.
fn stores_ids(factory: &str) -> bool {
    factory.starts_with("IVF") || factory.starts_with("IDMap")
}

/// Builds an inner-product index over `rows` (row-major, `dim` wide), vector `i` under id
/// `ids[i]` (node or function ids: searches return them, updates remove them).
pub fn build_with_ids(factory: &str, dim: usize, rows: &[f32], ids: &[u64]) -> Result<IndexImpl, IndexError> {
    let full = if stores_ids(factory) { factory.to_string() } else { format!("IDMap2,{factory}") };
    let mut index = trained(&full, dim, rows)?;
    add(&mut index, rows, ids)?;
    Ok(index)
}

/// An empty index laid out as [`build_with_ids`] lays it out, trained on `rows`: the
/// quantizers of a sharded corpus, trained once, to which each shard adds its vectors.
pub fn trained_with_ids(factory: &str, dim: usize, rows: &[f32]) -> Result<IndexImpl, IndexError> {
    let full = if stores_ids(factory) { factory.to_string() } else { format!("IDMap2,{factory}") };
    trained(&full, dim, rows)
}

/// Adds `rows` under `ids` to an index [`build_with_ids`] made.
pub fn add(index: &mut IndexImpl, rows: &[f32], ids: &[u64]) -> Result<(), IndexError> {
    if ids.is_empty() {
        return Ok(());
    }
    let ids: Vec<faiss::Idx> = ids.iter().map(|&i| faiss::Idx::new(i)).collect();
    index.add_with_ids(rows, &ids).map_err(|e| IndexError::Faiss(format!("adding vectors: {e}")))
}

/// Removes the vectors of `ids` (absent ones are passed over); returns how many went.
pub fn remove(index: &mut IndexImpl, ids: &[u64]) -> Result<usize, IndexError> {
    if ids.is_empty() {
        return Ok(0);
    }
    let ids: Vec<faiss::Idx> = ids.iter().map(|&i| faiss::Idx::new(i)).collect();
    let fe = |e: faiss::error::Error| IndexError::Faiss(format!("removing vectors: {e}"));
    let sel = faiss::selector::IdSelector::batch(&ids).map_err(fe)?;
    index.remove_ids(&sel).map_err(fe)
}

/// Builds an inner-product index over `rows` (row-major, `dim` wide), vectors numbered
/// 0.. in order (for indexes no update touches: CLARC's, say).
pub fn build(factory: &str, dim: usize, rows: &[f32]) -> Result<IndexImpl, IndexError> {
    let mut index = trained(factory, dim, rows)?;
    if !rows.is_empty() {
        index.add(rows).map_err(|e| IndexError::Faiss(format!("{factory}: {e}")))?;
    }
    Ok(index)
}

/// The rows that train an index of `factory` over `n` vectors: evenly spaced, which bounds
/// the cost: 64 vectors per IVF list (FAISS asks for 39), at least 25,000 for the product
/// quantizer's 256 codes per block.
pub fn training_rows(factory: &str, n: usize) -> super::spill::Every {
    let lists: usize = factory.strip_prefix("IVF").and_then(|r| r.split(',').next()?.parse().ok()).unwrap_or(0);
    let take = (64 * lists).clamp(25_000, 100_000).min(n);
    super::spill::Every { step: (n / take.max(1)).max(1), take }
}

fn trained(factory: &str, dim: usize, rows: &[f32]) -> Result<IndexImpl, IndexError> {
    let fe = |e: faiss::error::Error| IndexError::Faiss(format!("{factory}: {e}"));
    let mut index = faiss::index_factory(dim as u32, factory, MetricType::InnerProduct).map_err(fe)?;
    let n = rows.len() / dim.max(1);
    if !index.is_trained() {
        // A sample that `training_rows` took already is taken whole again (step 1).
        let every = training_rows(factory, n);
        let mut sample = Vec::with_capacity(every.take * dim);
        for i in (0..n).step_by(every.step).take(every.take) {
            sample.extend_from_slice(&rows[i * dim..(i + 1) * dim]);
        }
        index.train(&sample).map_err(fe)?;
    }
    Ok(index)
}

pub fn write(index: &IndexImpl, path: &Path) -> Result<(), IndexError> {
    faiss::write_index(index, path.to_string_lossy().as_ref()).map_err(|e| IndexError::Faiss(format!("writing {}: {e}", path.display())))
}

pub fn read(path: &Path, nprobe: usize) -> Result<IndexImpl, IndexError> {
    if !path.is_file() {
        return Err(IndexError::Corrupt(format!("{} is missing", path.display())));
    }
    let index = faiss::read_index(path.to_string_lossy().as_ref())
        .map_err(|e| IndexError::Corrupt(format!("{}: {e}", path.display())))?;
    Ok(probing(index, nprobe))
}

/// `index` set to probe `nprobe` lists: only IVF indexes know nprobe; for the others
/// setting it fails harmlessly.
fn probing(index: IndexImpl, nprobe: usize) -> IndexImpl {
    if let Ok(ps) = ParameterSpace::new() {
        let _ = ps.set_index_parameter(&index, "nprobe", nprobe as f64);
    }
    index
}

/// FAISS's flags that map a file instead of reading it, read-only: an IVF index's inverted
/// lists (`IO_FLAG_MMAP`), and a flat index's codes (`IO_FLAG_MMAP_IFC`). Each layout takes
/// only its own: given the other, FAISS fails or reads the whole file.
const MAP_IVF: std::os::raw::c_int = 0x646f_0000 | 8 | 2;
const MAP_FLAT: std::os::raw::c_int = (1 << 9) | 2;

/// [`read`], mapping what FAISS can map: opening then reads the quantizers alone, and a
/// search pages in the lists it scans. Read whole where this FAISS cannot map the layout.
pub fn read_mapped(path: &Path, nprobe: usize) -> Result<IndexImpl, IndexError> {
    if !path.is_file() {
        return Err(IndexError::Corrupt(format!("{} is missing", path.display())));
    }
    let Ok(name) = std::ffi::CString::new(path.to_string_lossy().as_bytes()) else { return read(path, nprobe) };
    // IVF layouts begin `Iw` (FAISS's fourcc of each index type).
    let mut head = [0u8; 2];
    let ivf = std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head)).is_ok() && &head == b"Iw";
    let flags = if ivf { MAP_IVF } else { MAP_FLAT };
    let mut inner = std::ptr::null_mut();
    // SAFETY: a valid C string and an out pointer FAISS fills on success (code 0).
    let code = unsafe { faiss_sys::faiss_read_index_fname(name.as_ptr(), flags, &mut inner) };
    if code != 0 || inner.is_null() {
        log::debug!("{} not mapped with FAISS flags {flags:#x} (code {code}): read whole", path.display());
        return read(path, nprobe);
    }
    // SAFETY: FAISS handed over a fresh index that nothing else owns.
    let index = unsafe { <IndexImpl as faiss::index::FromInnerPtr>::from_inner_ptr(inner) };
    if ivf {
        // SAFETY: a live index, which the call only reads the type of and sets a field of.
        let done = unsafe { beryl_ivf_no_prefetch(index.inner_ptr().cast()) };
        if done != 1 {
            log::debug!("{}: FAISS's read-ahead of mapped lists left on ({done})", path.display());
        }
    }
    Ok(probing(index, nprobe))
}

extern "C" {
    /// `src/index/faiss_shim.cpp`.
    fn beryl_ivf_no_prefetch(index: *mut std::ffi::c_void) -> std::os::raw::c_int;
}

/// Orders hits best first, equal scores by id: FAISS leaves the order of equal scores to
/// its heap, and results merged from shards must come out as one index gives them.
pub fn canonical(hits: &mut [(u64, f32)]) {
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
}

/// The `k` nearest vector numbers of each query row with their inner products, best first.
///
/// Equal scores are ordered by id, and where equal scores straddle the k-th place the
/// lowest ids are the ones kept: copies of one function (an amalgamated source beside its
/// parts) score alike, and which of them FAISS keeps is up to its heap, while one index
/// and the shards of the same corpus must keep the same ones.
pub fn search(index: &mut IndexImpl, queries: &[f32], dim: usize, k: usize) -> Result<Vec<Vec<(u64, f32)>>, IndexError> {
    search_in(index, queries, dim, k, None)
}

/// As [`search`], among the ids whose bit is set in `allowed` (bit `i % 8` of byte `i / 8`;
/// ids past its end are left out): FAISS skips the others while it scans, so the `k` hits
/// are the best `k` of the subset, not what of a corpus-wide top `k` falls inside it.
pub fn search_in(index: &mut IndexImpl, queries: &[f32], dim: usize, k: usize, allowed: Option<&[u8]>) -> Result<Vec<Vec<(u64, f32)>>, IndexError> {
    let total = match allowed {
        Some(bits) => bits.iter().map(|b| b.count_ones() as usize).sum::<usize>().min(index.ntotal() as usize),
        None => index.ntotal() as usize,
    };
    // Ties longer than this are cut where FAISS cuts them (copies of one function rarely
    // number more).
    let most = k.saturating_mul(16).max(k.saturating_add(1024)).min(total.max(1));
    let mut wide = k.saturating_mul(2).max(k.saturating_add(8)).min(most);
    loop {
        let mut r = search_raw(index, queries, dim, wide, allowed)?;
        // A list whose k-th score is also its last may hold only some of a tie.
        let cut = |l: &Vec<(u64, f32)>| l.len() == wide && l.len() > k && l.get(k.saturating_sub(1)).map(|x| x.1) == l.last().map(|x| x.1);
        if wide >= most || !r.iter().any(cut) {
            if wide >= most && wide < total && r.iter().any(cut) {
                log::debug!("a tie runs past {wide} vector hits: its order is FAISS's");
            }
            for l in &mut r {
                canonical(l);
                l.truncate(k);
            }
            return Ok(r);
        }
        wide = wide.saturating_mul(2).min(most);
    }
}

fn search_raw(index: &mut IndexImpl, queries: &[f32], dim: usize, k: usize, allowed: Option<&[u8]>) -> Result<Vec<Vec<(u64, f32)>>, IndexError> {
    let nq = queries.len() / dim.max(1);
    if nq == 0 || index.ntotal() == 0 || allowed.is_some_and(|b| b.iter().all(|&x| x == 0)) {
        return Ok(vec![Vec::new(); nq]);
    }
    let k = k.min(index.ntotal() as usize).max(1);
    let (labels, distances) = match allowed {
        None => {
            let r = index.search(queries, k).map_err(|e| IndexError::Faiss(e.to_string()))?;
            (r.labels.iter().map(|l| l.get()).collect::<Vec<_>>(), r.distances)
        }
        Some(bits) => match selected(index, &queries[..nq * dim], nq, k, bits, false) {
            // A layout may also pass the selector over without a word.
            Ok(r) if r.0.iter().flatten().all(|&id| in_bits(bits, id)) => r,
            Ok(_) => {
                log::debug!("the subset selector was not applied: filtering");
                filtered(index, &queries[..nq * dim], nq, k, bits)?
            }
            // Layouts whose search takes no selector (a pre-transform, bare PQ) are
            // searched wider and filtered: slower, same kind of answer.
            Err(e) => {
                log::debug!("searching the subset by filtering: {e}");
                filtered(index, &queries[..nq * dim], nq, k, bits)?
            }
        },
    };
    Ok((0..nq)
        .map(|q| {
            (0..k)
                .filter_map(|j| labels[q * k + j].map(|id| (id, distances[q * k + j])))
                .collect()
        })
        .collect())
}

/// Whether `id` is set in the selector bitmap `bits`.
fn in_bits(bits: &[u8], id: u64) -> bool {
    bits.get((id / 8) as usize).is_some_and(|b| b >> (id % 8) & 1 == 1)
}

/// The best `k` ids set in `bits`, found by searching ever wider and dropping the others,
/// for layouts that take no selector.
fn filtered(index: &mut IndexImpl, queries: &[f32], nq: usize, k: usize, bits: &[u8]) -> Result<(Vec<Option<u64>>, Vec<f32>), IndexError> {
    let total = index.ntotal() as usize;
    let set = |id: u64| in_bits(bits, id);
    let mut wide = k.saturating_mul(8).min(total).max(1);
    loop {
        let r = index.search(queries, wide).map_err(|e| IndexError::Faiss(e.to_string()))?;
        let mut labels = vec![None; nq * k];
        let mut distances = vec![0f32; nq * k];
        let mut short = false;
        for q in 0..nq {
            let kept = (0..wide).filter_map(|j| r.labels[q * wide + j].get().filter(|&id| set(id)).map(|id| (id, r.distances[q * wide + j])));
            let mut n = 0;
            for (j, (id, d)) in kept.take(k).enumerate() {
                labels[q * k + j] = Some(id);
                distances[q * k + j] = d;
                n = j + 1;
            }
            short |= n < k;
        }
        if !short || wide >= total {
            return Ok((labels, distances));
        }
        wide = wide.saturating_mul(4).min(total);
    }
}

/// `rows` (of `dim` values each) as `index` would give them back once added: encoded by
/// its trained codec and decoded. A patch keeps its vectors beside the base's, and passing
/// them through the base's codec makes them what adding them to the base would, so a
/// patched index scores as the updated base does. `None` where the layout has no codec of
/// its own to apply (FAISS refuses).
pub fn through_codec(index: &IndexImpl, rows: &[f32], dim: usize) -> Option<Vec<f32>> {
    use faiss_sys as sys;
    let n = rows.len() / dim.max(1);
    if n == 0 {
        return Some(Vec::new());
    }
    // SAFETY: casts that answer null for other types; the sub-index is owned by the map
    // and outlives these calls; the buffers hold n codes and n × dim values.
    unsafe {
        let mut inner = index.inner_ptr();
        let map2 = sys::faiss_IndexIDMap2_cast(inner);
        if !map2.is_null() {
            inner = sys::faiss_IndexIDMap2_sub_index(map2);
        } else {
            let map = sys::faiss_IndexIDMap_cast(inner);
            if !map.is_null() {
                inner = sys::faiss_IndexIDMap_sub_index(map);
            }
        }
        let mut size = 0usize;
        if inner.is_null() || sys::faiss_Index_sa_code_size(inner, &mut size) != 0 || size == 0 {
            return None;
        }
        let mut codes = vec![0u8; n * size];
        if sys::faiss_Index_sa_encode(inner, n as sys::idx_t, rows.as_ptr(), codes.as_mut_ptr()) != 0 {
            return None;
        }
        let mut out = vec![0f32; n * dim];
        if sys::faiss_Index_sa_decode(inner, n as sys::idx_t, codes.as_ptr(), out.as_mut_ptr()) != 0 {
            return None;
        }
        Some(out)
    }
}

/// Inner products of `query` with the vectors stored under `ids` (those the index holds),
/// in one search restricted to `ids` (every list of an IVF index probed). One call, not one
/// per id: FAISS opens a parallel region per call, and waking its threads for each of a
/// pool's hundreds of vectors costs far more than the products. `None` where the layout
/// does not apply the selector (the caller reconstructs by id).
pub fn scores_of(index: &mut IndexImpl, query: &[f32], ids: &[u64]) -> Result<Option<Vec<(u64, f32)>>, IndexError> {
    let Some(&top) = ids.iter().max() else { return Ok(Some(Vec::new())) };
    let mut bits = vec![0u8; top as usize / 8 + 1];
    for &id in ids {
        bits[id as usize / 8] |= 1 << (id % 8);
    }
    let (labels, distances) = match selected(index, query, 1, ids.len(), &bits, true) {
        Ok(r) => r,
        Err(e) => {
            log::debug!("scoring chosen ids by reconstruction: {e}");
            return Ok(None);
        }
    };
    if labels.iter().flatten().any(|&id| !in_bits(&bits, id)) {
        return Ok(None);
    }
    Ok(Some(labels.into_iter().zip(distances).filter_map(|(l, d)| Some((l?, d))).collect()))
}

/// One FAISS search restricted to the ids set in `bits`. IVF lists take their own kind of
/// parameters (FAISS refuses the plain kind) and are probed as the index is set to, or
/// every one with `every_list`; an id map translates the selector itself.
fn selected(index: &mut IndexImpl, queries: &[f32], nq: usize, k: usize, bits: &[u8], every_list: bool) -> Result<(Vec<Option<u64>>, Vec<f32>), IndexError> {
    use faiss_sys as sys;
    let fail = |what: &str| {
        // SAFETY: FAISS keeps the last error of this thread as a NUL-terminated string.
        let msg = unsafe {
            let p = sys::faiss_get_last_error();
            if p.is_null() { String::new() } else { std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned() }
        };
        IndexError::Faiss(format!("{what}: {msg}"))
    };
    let sel = faiss::selector::IdSelector::bitmap(bits).map_err(|e| IndexError::Faiss(format!("selector: {e}")))?;
    let mut distances = vec![0f32; nq * k];
    let mut labels = vec![-1 as sys::idx_t; nq * k];
    // SAFETY: `sel` borrows `bits` and outlives the parameters that point at it; the
    // parameters are freed before return; the output buffers hold nq × k entries.
    unsafe {
        let ivf = sys::faiss_IndexIVF_cast(index.inner_ptr());
        let params: *mut sys::FaissSearchParameters = if ivf.is_null() {
            let mut p = std::ptr::null_mut();
            if sys::faiss_SearchParameters_new(&mut p, sel.inner_ptr()) != 0 {
                return Err(fail("search parameters"));
            }
            p
        } else {
            let mut p = std::ptr::null_mut();
            let probes = if every_list { sys::faiss_IndexIVF_nlist(ivf) } else { sys::faiss_IndexIVF_nprobe(ivf) };
            if sys::faiss_SearchParametersIVF_new_with(&mut p, sel.inner_ptr(), probes, 0) != 0 {
                return Err(fail("IVF search parameters"));
            }
            p as *mut sys::FaissSearchParameters
        };
        let rc = sys::faiss_Index_search_with_params(index.inner_ptr(), nq as sys::idx_t, queries.as_ptr(), k as sys::idx_t, params, distances.as_mut_ptr(), labels.as_mut_ptr());
        sys::faiss_SearchParameters_free(params);
        if rc != 0 {
            return Err(fail("search"));
        }
    }
    Ok((labels.into_iter().map(|l| u64::try_from(l).ok()).collect(), distances))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_sets() {
        assert_eq!(FeatureSet::parse("text, graph").unwrap().name(), "text,graph");
        assert!(FeatureSet::parse("").is_err());
        assert!(FeatureSet::parse("text,colour").is_err());
        assert_eq!(FeatureSet::default().dim(512), 512 + KINDS + MATH + TEXT_DIM);
        assert_eq!(FeatureSet::parse("text").unwrap().dim(512), TEXT_DIM);
    }

    #[test]
    fn blocks_are_weighted_cosines() {
        let hidden = 2;
        let mut a = vec![0f32; hidden + MATH + KINDS + TEXT_DIM];
        let mut b = a.clone();
        a[0] = 3.0; // graph block
        b[1] = 5.0; // orthogonal graph block
        a[hidden + MATH + KINDS] = 1.0; // same text
        b[hidden + MATH + KINDS] = 2.0;
        let (mut va, mut vb) = (Vec::new(), Vec::new());
        let fs = FeatureSet { text: true, graph: true, math: false };
        fs.search_vector(&a, hidden, &mut va);
        fs.search_vector(&b, hidden, &mut vb);
        let dot: f32 = va.iter().zip(&vb).map(|(x, y)| x * y).sum();
        // Text agrees (cos 1), graph is orthogonal (cos 0), kind blocks are empty.
        let expect = W_TEXT * W_TEXT / (W_TEXT * W_TEXT + W_GRAPH * W_GRAPH);
        assert!((dot - expect).abs() < 1e-5, "{dot} vs {expect}");
    }

    #[test]
    fn function_layouts_grow_into_lists() {
        assert_eq!(function_factory(100), "Flat");
        assert_eq!(function_factory(FUNCTION_IVF_MIN - 1), "SQ6");
        assert_eq!(function_factory(650_986), "IVF806,SQ6");
        assert_eq!(function_probes("IVF806,SQ6", 32), 100);
        assert_eq!(function_probes("IVF806,SQ6", 256), 256);
        assert_eq!(function_probes("SQ6", 32), 32);
    }

    #[test]
    fn chosen_ids_are_scored_in_one_search_in_every_layout() {
        let (d, n) = (16, 3000);
        let rows = scattered(n, d, 11);
        let ids: Vec<u64> = (0..n as u64).map(|i| 3 * i + 1).collect();
        let mut ix = build_with_ids("IVF40,Flat", d, &rows, &ids).unwrap();
        let q = &rows[5 * d..6 * d];
        let want = [1u64, 3 * 7 + 1, 3 * 500 + 1, 3 * 2999 + 1, 3 * 1234 + 1, 2];
        // One list probed as the index is set, yet every chosen id is scored; 2 is no id.
        let mut got = scores_of(&mut ix, q, &want).unwrap().unwrap();
        got.sort_by_key(|h| h.0);
        assert_eq!(got.iter().map(|h| h.0).collect::<Vec<_>>(), [1, 22, 1501, 3703, 8998]);
        for (id, s) in got {
            let r = &rows[(id as usize - 1) / 3 * d..][..d];
            let dot: f32 = r.iter().zip(q).map(|(a, b)| a * b).sum();
            assert!((s - dot).abs() < 1e-5, "{id}: {s} vs {dot}");
        }
        // A layout without lists scores the same ids in one search, as the products with
        // the vectors it gives back by id.
        let mut flat = build_with_ids("SQ8", d, &rows, &ids).unwrap();
        let mut got = scores_of(&mut flat, q, &want).unwrap().unwrap();
        got.sort_by_key(|h| h.0);
        assert_eq!(got.iter().map(|h| h.0).collect::<Vec<_>>(), [1, 22, 1501, 3703, 8998]);
        for (id, s) in got {
            let mut v = vec![0f32; d];
            faiss::Index::reconstruct(&flat, faiss::Idx::new(id), &mut v).unwrap();
            let dot: f32 = v.iter().zip(q).map(|(a, b)| a * b).sum();
            assert!((s - dot).abs() < 1e-5, "{id}: {s} vs {dot}");
        }
        assert!(scores_of(&mut flat, q, &[]).unwrap().unwrap().is_empty());
    }

    #[test]
    fn rows_through_a_codec_are_what_the_index_gives_back() {
        let (d, n) = (16, 3000);
        let rows = scattered(n, d, 5);
        let ids: Vec<u64> = (0..n as u64).collect();
        let fresh = scattered(3, d, 99);
        for factory in ["SQ6", "IVF40,SQ6", "Flat"] {
            let mut ix = build_with_ids(factory, d, &rows, &ids).unwrap();
            let through = through_codec(&ix, &fresh, d).unwrap_or_else(|| panic!("{factory}: no codec"));
            add(&mut ix, &fresh, &[7000, 7001, 7002]).unwrap();
            for (k, id) in [7000u64, 7001, 7002].into_iter().enumerate() {
                let want: Vec<f32> = fresh[k * d..][..d].to_vec();
                let q = &want;
                let got = scores_of(&mut ix, q, &[id]).unwrap().map(|h| h[0].1).unwrap_or_else(|| {
                    let mut v = vec![0f32; d];
                    faiss::Index::reconstruct(&ix, faiss::Idx::new(id), &mut v).unwrap();
                    v.iter().zip(q).map(|(a, b)| a * b).sum()
                });
                let via: f32 = through[k * d..][..d].iter().zip(q).map(|(a, b)| a * b).sum();
                assert!((got - via).abs() < 1e-5, "{factory} {id}: stored {got}, through the codec {via}");
                if factory == "Flat" {
                    assert_eq!(&through[k * d..][..d], &want[..], "a flat layout keeps vectors exactly");
                }
            }
        }
        assert_eq!(through_codec(&build_with_ids("SQ6", d, &rows, &ids).unwrap(), &[], d), Some(Vec::new()));
    }

    /// `n` scattered unit vectors of `d` dimensions (a fixed pseudo-random sequence).
    fn scattered(n: usize, d: usize, seed: u64) -> Vec<f32> {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        (0..n)
            .flat_map(|_| {
                let mut v: Vec<f32> = (0..d).map(|_| next()).collect();
                normalize(&mut v);
                v
            })
            .collect()
    }

    #[test]
    fn every_layout_adds_and_removes_by_id() {
        const D: usize = 16;
        let rows = scattered(2000, D, 12345);
        let ids: Vec<u64> = (0..2000).map(|i| 10 + 3 * i as u64).collect();
        for factory in ["Flat", "SQ8", "IVF8,Flat"] {
            let mut index = build_with_ids(factory, D, &rows, &ids).unwrap();
            let q = &rows[D * 700..D * 701];
            // Quantized layouts rank near neighbours in any order: look among the first few.
            let top = |index: &mut IndexImpl, k: usize| -> Vec<u64> { search(index, q, D, k).unwrap()[0].iter().map(|h| h.0).collect() };
            assert!(top(&mut index, 8).contains(&ids[700]), "{factory}");
            assert_eq!(remove(&mut index, &[ids[700], 99_999]).unwrap(), 1, "{factory}");
            assert!(!top(&mut index, 2000).contains(&ids[700]), "{factory}");
            add(&mut index, q, &[7]).unwrap();
            assert!(top(&mut index, 8).contains(&7), "{factory}");
            assert_eq!(index.ntotal(), 2000, "{factory}");
        }
    }

    #[test]
    fn a_subset_search_finds_the_best_of_the_subset() {
        const D: usize = 16;
        let rows = scattered(3000, D, 777);
        let ids: Vec<u64> = (0..3000).collect();
        // Every third id; the query is an id outside the subset, so its own vector is not it.
        let mut bits = vec![0u8; 3000usize.div_ceil(8)];
        for i in (0..3000).step_by(3) {
            bits[i / 8] |= 1 << (i % 8);
        }
        let q = &rows[D * 1001..D * 1002];
        // The last two take no selector: searched wider and filtered.
        for factory in ["Flat", "SQ8", "IVF8,Flat", "PCA8,IVF8,Flat", "PQ4"] {
            let mut index = build_with_ids(factory, D, &rows, &ids).unwrap();
            if factory.contains("IVF") {
                let ps = ParameterSpace::new().unwrap();
                ps.set_index_parameter(&index, "nprobe", 8.0).unwrap();
            }
            let hits = search_in(&mut index, q, D, 10, Some(&bits)).unwrap();
            assert_eq!(hits[0].len(), 10, "{factory}");
            assert!(hits[0].iter().all(|h| h.0 % 3 == 0), "{factory}: {:?}", hits[0]);
            // Exactly the best ten of the subset, by brute force (Flat only: codes are lossy).
            if factory == "Flat" {
                let mut all: Vec<(u64, f32)> = (0..3000u64)
                    .filter(|i| i % 3 == 0)
                    .map(|i| (i, rows[D * i as usize..D * (i as usize + 1)].iter().zip(q).map(|(a, b)| a * b).sum()))
                    .collect();
                canonical(&mut all);
                let want: Vec<u64> = all[..10].iter().map(|h| h.0).collect();
                assert_eq!(hits[0].iter().map(|h| h.0).collect::<Vec<_>>(), want);
            }
            assert!(search_in(&mut index, q, D, 10, Some(&[0u8; 4])).unwrap()[0].is_empty(), "{factory}");
        }
    }

    #[test]
    fn flat_index_finds_nearest() {
        let rows = vec![1.0, 0.0, 0.0, 1.0, 0.6, 0.8];
        let mut index = build("Flat", 2, &rows).unwrap();
        let hits = search(&mut index, &[0.0, 1.0], 2, 2).unwrap();
        assert_eq!(hits[0][0].0, 1);
        assert_eq!(hits[0][1].0, 2);
    }
}
