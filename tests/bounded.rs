//! A full build that works in small batches makes the index that the default batches make.
//! What a build holds besides the corpus's graphs is set by its batch sizes; the result
//! must not depend on them. On igraph, built under the smallest `--memory` budget (64 MiB:
//! the GCN, the function encoder, shapes, BM25F, the projection and the FAISS fills each run
//! many times, and the graphs alone leave no room, so the GCN takes its smallest batch),
//! every file the generations hold is the same to the byte, and so is every database row.

use beryl::corpus::fetch::fetch;
use beryl::features::{CacheAt, TextEncoders};
use beryl::index::{self, Batches, BuildReport, IndexOptions};
use std::path::{Path, PathBuf};

fn build(root: &Path, dir: &Path, enc: &TextEncoders, memory: u64) -> BuildReport {
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/default");
    let opts = IndexOptions { batches: Batches::for_memory(memory), memory, ..IndexOptions::default() };
    index::build(&[root.to_path_buf()], dir, &opts, &model, enc, &mut |_, _, _| {}).expect("index")
}

/// The latest change time of anything under `p`.
fn last_change(p: &Path) -> std::time::SystemTime {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(p).unwrap();
    let mut t = std::time::UNIX_EPOCH + std::time::Duration::new(m.ctime().max(0) as u64, m.ctime_nsec().max(0) as u32);
    if m.is_dir() {
        for e in std::fs::read_dir(p).unwrap().flatten() {
            t = t.max(last_change(&e.path()));
        }
    }
    t
}

/// A build stamps only files that last changed a few seconds before it began (their
/// times are not trusted sooner), so a corpus this run has just unpacked is waited for:
/// both builds must stamp every file for their stamps to be compared.
fn settle(root: &Path) {
    let ready = last_change(root) + std::time::Duration::from_secs(4);
    if let Ok(wait) = ready.duration_since(std::time::SystemTime::now()) {
        std::thread::sleep(wait);
    }
}

fn generation(dir: &Path) -> PathBuf {
    index::current_generation(dir).expect("a generation")
}

#[test]
fn small_batches_build_the_same_index() {
    let src = fetch("igraph").unwrap();
    settle(&src);
    let work = tempfile::tempdir().unwrap();
    let enc = TextEncoders::defaults(None, CacheAt::Default);
    let (whole, small) = (work.path().join("default"), work.path().join("small"));
    let a = build(&src, &whole, &enc, index::DEFAULT_MEMORY);
    let budget = 64 << 20;
    let tiny = Batches::for_memory(budget);
    let b = build(&src, &small, &enc, budget);
    assert!(a.nodes > 50 * tiny.nodes && a.functions > 10 * tiny.functions && a.nodes > 10 * tiny.rows, "{} nodes, {} functions, {tiny:?}", a.nodes, a.functions);
    assert!(a.nodes < Batches::default().nodes * 10, "the default batches split igraph a few times at most");
    assert_eq!((a.files, a.functions, a.nodes), (b.files, b.functions, b.nodes));
    let (ga, gb) = (generation(&whole), generation(&small));
    let meta = std::fs::read_to_string(ga.join("meta.json")).unwrap();
    assert!(meta.contains("\"node_factory\": \"IVF"), "the node index is trained on a sample: {meta}");
    for name in ["nodes.faiss", "nodes.pca", "functions.faiss", "shapes.bin", "lexical.bin", "graph.bin", "icfg.bin"] {
        let (x, y) = (std::fs::read(ga.join(name)).unwrap(), std::fs::read(gb.join(name)).unwrap());
        assert!(!x.is_empty(), "{name} is empty");
        assert!(x == y, "{name} differs: {} bytes in the default batches, {} in small ones", x.len(), y.len());
    }
    // The database's rows too (its `meta` differs: the build's time is in it).
    let rows = |dir: &Path, table: &str| -> Vec<Vec<String>> {
        let file = if table == "nodes" { "nodes.sqlite" } else { "index.sqlite" };
        let db = rusqlite::Connection::open(generation(dir).join(file)).unwrap();
        let mut st = db.prepare(&format!("SELECT * FROM {table} ORDER BY 1")).unwrap();
        let n = st.column_count();
        let got = st
            .query_map([], |r| (0..n).map(|i| r.get_ref(i).map(|v| format!("{v:?}"))).collect::<Result<Vec<String>, _>>())
            .unwrap()
            .map(Result::unwrap)
            .collect();
        got
    };
    for table in ["files", "functions", "nodes", "skipped", "stamps"] {
        let (x, y) = (rows(&whole, table), rows(&small, table));
        assert!(!x.is_empty() || table == "skipped", "no {table} rows");
        assert!(x == y, "the {table} rows differ");
    }
    // Nothing the batches spilled stays beside the index.
    let left: Vec<String> = std::fs::read_dir(&small).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.contains(".rows-")).collect();
    assert!(left.is_empty(), "{left:?}");
}
