//! A full build that works in small batches makes the index that the default batches make.
//! What a build holds besides the corpus's graphs is set by its batch sizes; the result
//! must not depend on them. On igraph, with batches about a hundredth of the corpus (the GCN,
//! the function encoder, shapes, BM25F and the FAISS fills each run many times), every file the
//! generations hold is the same to the byte.

use beryl::corpus::fetch::fetch;
use beryl::features::{CacheAt, TextEncoders};
use beryl::index::{self, Batches, BuildReport, IndexOptions};
use std::path::{Path, PathBuf};

fn build(root: &Path, dir: &Path, enc: &TextEncoders, batches: Batches) -> BuildReport {
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/default");
    let opts = IndexOptions { batches, ..IndexOptions::default() };
    index::build(&[root.to_path_buf()], dir, &opts, &model, enc, &mut |_, _, _| {}).expect("index")
}

fn generation(dir: &Path) -> PathBuf {
    index::current_generation(dir).expect("a generation")
}

#[test]
fn small_batches_build_the_same_index() {
    let src = fetch("igraph").unwrap();
    let work = tempfile::tempdir().unwrap();
    let enc = TextEncoders::defaults(None, CacheAt::Default);
    let (whole, small) = (work.path().join("default"), work.path().join("small"));
    let a = build(&src, &whole, &enc, Batches::default());
    let tiny = Batches { nodes: 1000, functions: 50, rows: 1000 };
    let b = build(&src, &small, &enc, tiny);
    assert!(a.nodes > 50 * tiny.nodes && a.functions > 50 * tiny.functions, "{} nodes, {} functions", a.nodes, a.functions);
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
    // Nothing the batches spilled stays beside the index.
    let left: Vec<String> = std::fs::read_dir(&small).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.contains(".rows-")).collect();
    assert!(left.is_empty(), "{left:?}");
}
