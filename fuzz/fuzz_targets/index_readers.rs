//! Damaged or forged index files: every reader of a generation's own formats must refuse
//! them with an error, never panic, and what it accepts must answer queries without
//! panicking. (Opening an index checks each file's sum first; these readers are what a
//! forged index with matching sums would reach. FAISS files are read by FAISS itself, only
//! after their sum matched.) The first byte picks the reader.
#![no_main]

use beryl::graph::csr::Csr;
use beryl::index::{icfg_file, lexical, project::Projection, IndexMeta};
use beryl::shape::store::Shapes;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, bytes)) = data.split_first() else { return };
    match which % 6 {
        0 => {
            if let Some(g) = Csr::from_bytes(bytes) {
                for n in 0..g.node_count().min(10_000) as u32 {
                    let _ = g.neighbors(n);
                }
            }
        }
        1 => {
            if let Ok(s) = Shapes::from_bytes(bytes.to_vec()) {
                for f in 0..s.len().min(10_000) as u32 {
                    let _ = s.get(f).map(|x| x.profile());
                }
            }
        }
        2 => {
            if let Ok(l) = lexical::Lexical::from_bytes(bytes.to_vec()) {
                let q = lexical::query_terms("shortest path distance matrix", &["FLOYD-WARSHALL".to_string()]);
                let _ = l.search(&q.terms);
            }
        }
        3 => {
            if let Ok(icfg) = icfg_file::decode(bytes) {
                let _ = Csr::from_icfg(&icfg);
                let _ = icfg_file::encode(&icfg);
            }
        }
        4 => {
            if let Some(p) = Projection::from_bytes(bytes) {
                let _ = p.apply(&vec![0.5; p.d_in.min(4096)]);
            }
        }
        _ => {
            let _ = serde_json::from_slice::<IndexMeta>(bytes);
        }
    }
});
