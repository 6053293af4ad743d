//! The static token table (`models/static/table.bin`): the fast tokenizer agrees with
//! `tokenizers` on real code, a rebuild from the manifest's corpora gives the shipped rows,
//! and token vectors behave as the model's do.

use beryl::corpus::fetch::fetch;
use beryl::corpus::{self, WalkOptions};
use beryl::features::encoder::cosine;
use beryl::features::static_vec::StaticTable;
use beryl::features::wordpiece::WordPiece;
use beryl::features::{Encoder, EncoderOptions, Precision};
use beryl::graph::Lang;
use std::path::{Path, PathBuf};

fn table_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models/static/table.bin")
}

fn encoder() -> Encoder {
    Encoder::load_with(&Encoder::default_dir(), EncoderOptions { precision: Precision::F32, ..Default::default() }).expect("encoder")
}

#[test]
fn wordpiece_agrees_with_tokenizers_on_real_code() {
    let enc = encoder();
    let wp = WordPiece::from_vocab(enc.tokenizer_vocab().unwrap()).unwrap();
    let c = corpus::load(&[fetch("igraph").unwrap().join("src/paths")], &WalkOptions::default());
    let mut checked = 0;
    let mut ids = Vec::new();
    for n in c.icfg.graph.node_weights().filter(|n| n.text.is_ascii() && !n.text.is_empty()) {
        let want = enc.token_ids(&n.text).unwrap();
        if want.len() >= 256 {
            continue; // truncated by the model's reader
        }
        ids.clear();
        wp.ids(&n.text, &mut ids).unwrap();
        assert_eq!(ids, want[1..want.len() - 1], "{:?}", n.text);
        checked += 1;
    }
    assert!(checked > 2000, "{checked} statements");
}

#[test]
fn rebuild_from_the_manifest_gives_the_shipped_rows() {
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(table_path().with_file_name("manifest.json")).unwrap()).unwrap();
    // The manifest names the corpora by path; fetch them again by package.
    let roots: Vec<PathBuf> = manifest["frequency_corpora"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let p = p.as_str().unwrap();
            let pkg = p.split("/corpora/").nth(1).unwrap().split('/').next().unwrap();
            fetch(pkg).unwrap()
        })
        .collect();
    let enc = encoder();
    let c = corpus::load(&roots, &WalkOptions::default());
    // The table was distilled from the C, C++ and Java statements of these corpora, before
    // beryl read their Python, Rust and Go files.
    let texts: Vec<&str> = c
        .icfg
        .graph
        .node_weights()
        .filter(|n| matches!(n.lang, Lang::C | Lang::Cpp | Lang::Java))
        .map(|n| &*n.text)
        .filter(|t| !t.is_empty())
        .collect();
    assert_eq!(texts.len() as u64, manifest["statements"].as_u64().unwrap(), "the same statements were counted");
    let rebuilt = StaticTable::distill(&enc, &texts).unwrap();
    let shipped = StaticTable::load(&table_path(), &enc).unwrap();
    let wp = WordPiece::from_vocab(enc.tokenizer_vocab().unwrap()).unwrap();
    let mut worst = 1f32;
    for t in 0..wp.size as u32 {
        let (a, b) = (rebuilt.row(t), shipped.row(t));
        if a.iter().all(|x| *x == 0.0) && b.iter().all(|x| *x == 0.0) {
            continue;
        }
        worst = worst.min(cosine(&a, &b));
    }
    eprintln!("lowest row cosine, rebuilt against shipped: {worst:.6} (identical bytes: {})", rebuilt.hash() == shipped.hash());
    // The same CPU gives the same bytes; another CPU's float rounding may move an int8 step.
    assert!(worst > 0.999, "{worst}");
}

#[test]
fn token_vectors_behave_like_the_models() {
    let enc = encoder();
    let t = StaticTable::load(&table_path(), &enc).unwrap();
    let v = |s: &str| t.encode_all(&[s])[0];
    // A one-token text is its row, normalized.
    let wp = WordPiece::from_vocab(enc.tokenizer_vocab().unwrap()).unwrap();
    let mut ids = Vec::new();
    wp.ids("sort", &mut ids).unwrap();
    assert_eq!(ids.len(), 1);
    assert!((cosine(&v("sort"), &t.row(ids[0])) - 1.0).abs() < 1e-5);
    // Related statements are closer than unrelated ones, as with the model itself.
    let (a, b, c) = (v("dist[v] = dist[u] + weight(u, v)"), v("if (dist[u] + weight < dist[v]) dist[v] = dist[u] + weight;"), v("printf(\"usage: %s\\n\", argv[0])"));
    assert!(cosine(&a, &b) > cosine(&a, &c), "{} vs {}", cosine(&a, &b), cosine(&a, &c));
    // Empty and unknown texts give no direction, not a panic.
    assert!(v("").iter().all(|x| *x == 0.0));
    let _ = v("ünïcödé ≤ ∞");
}

#[test]
fn static_encoder_behind_the_encoder_api() {
    use beryl::features::{CacheAt, TextEncoders, TextModel};
    let st = TextModel::Static.load(None, &CacheAt::None).unwrap();
    assert!(st.is_static());
    let t = StaticTable::load(&table_path(), &encoder()).unwrap();
    let texts = ["dist[i][j] = dist[i][k] + dist[k][j]", "return heap_pop(h);", ""];
    let got = st.encode(&texts).unwrap();
    let mut ids = Vec::new();
    for (text, v) in texts.iter().zip(&got) {
        assert_eq!(v, &t.encode(text, &mut ids), "{text:?}");
    }
    // Its identity is neither MiniLM's nor the same across tables.
    assert_ne!(st.hash(), encoder().hash());
    assert_eq!(st.hash(), TextModel::Static.load(None, &CacheAt::None).unwrap().hash());
    // One model serving both levels is loaded once.
    let both = TextEncoders::new(TextModel::Static, TextModel::Static, None, CacheAt::None);
    assert!(std::ptr::eq(both.statements().unwrap(), both.functions().unwrap()));
    // A table that does not fit the vocabulary is refused with its path.
    let d = tempfile::tempdir().unwrap();
    let bad = d.path().join("table.bin");
    std::fs::write(&bad, b"BRYSTV01\x01\0\0\0\x80\x01\0\0").unwrap();
    let err = beryl::features::Encoder::load_static(&beryl::features::Encoder::default_dir(), &bad).err().unwrap().to_string();
    assert!(err.contains("table.bin"), "{err}");
}
