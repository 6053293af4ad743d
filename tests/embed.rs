//! The real feature pipeline: the shipped model embeds source and p-code graphs into one
//! space, and training with real features (encoder + math + kinds) learns links.

use beryl::corpus::{fetch::fetch, load, WalkOptions};
use beryl::features::{CacheAt, Encoder, TextModel};
use beryl::model::embed::{embed, initial_features, FEATURE_SCHEMA, IN_DIM};
use beryl::model::fit::{fit, FitConfig, HIDDEN};
use beryl::model::train::TrainConfig;
use beryl::model::Model;
use std::path::Path;

/// The statement encoder `models/default` was trained on.
fn encoder() -> Encoder {
    TextModel::Static.load(Some(1), &CacheAt::None).expect("tokenizer installed by scripts/setup.sh, models/static shipped")
}

fn cos(a: &[f32], b: &[f32]) -> f32 {
    let d: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    d / (a.iter().map(|x| x * x).sum::<f32>().sqrt() * b.iter().map(|x| x * x).sum::<f32>().sqrt()).max(1e-12)
}

#[test]
fn shipped_model_embeds_source_and_pcode_in_one_space() {
    let enc = encoder();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/default");
    let model = Model::load(&dir, FEATURE_SCHEMA, enc.hash()).expect("models/default matches this beryl");
    assert_eq!(model.manifest.in_dim as usize, IN_DIM);

    let q = Path::new(env!("CARGO_MANIFEST_DIR")).join("queries/insertion-sort.p");
    let pq = beryl::pcode::icfg(&std::fs::read_to_string(&q).unwrap(), &q).unwrap();
    let src = "void insertion_sort(int *a, int n) {\n  for (int i = 1; i < n; i++) {\n    int key = a[i];\n    int j = i - 1;\n    \
               while (j >= 0 && a[j] > key) { a[j + 1] = a[j]; j = j - 1; }\n    a[j + 1] = key;\n  }\n}\n\
               int count_words(const char *s) { int n = 0; while (*s) { if (*s == ' ') n++; s++; } return n; }\n";
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("s.c"), src).unwrap();
    let sc = load(&[d.path().to_path_buf()], &WalkOptions::default()).icfg;

    let width = HIDDEN as usize + IN_DIM;
    let qv = embed(&model, &pq, &enc).unwrap();
    let sv = embed(&model, &sc, &enc).unwrap();
    assert_eq!(qv.len(), pq.graph.node_count() * width);
    assert_eq!(sv.len(), sc.graph.node_count() * width);
    assert!(qv.iter().chain(&sv).all(|v| v.is_finite()));

    // The p-code statement `A[j + 1] = A[j]` is nearer to its C counterpart than to an
    // unrelated statement of another function.
    let row = |v: &[f32], i: usize| v[i * width..(i + 1) * width].to_vec();
    let qi = pq.graph.node_indices().find(|&n| &*pq.graph[n].text == "A[j + 1] = A[j]").expect("query node").index();
    let si = sc.graph.node_indices().find(|&n| &*sc.graph[n].text == "a[j + 1] = a[j];").unwrap().index();
    let other = sc.graph.node_indices().find(|&n| &*sc.graph[n].text == "s++;").unwrap().index();
    let (near, far) = (cos(&row(&qv, qi), &row(&sv, si)), cos(&row(&qv, qi), &row(&sv, other)));
    assert!(near > far, "near {near} far {far}");
}

#[test]
fn initial_features_have_the_documented_layout() {
    let enc = encoder();
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f.c"), "int f(int *a, int i) { return a[i] % 2 + (i << 1); }\n").unwrap();
    let icfg = load(&[d.path().to_path_buf()], &WalkOptions::default()).icfg;
    let ret = icfg.graph.node_indices().find(|&n| icfg.graph[n].kind == beryl::graph::NodeKind::Return).unwrap();
    let x = initial_features(&icfg, &[ret.index() as u32], &enc).unwrap();
    assert_eq!(x.len(), IN_DIM);
    let ln2 = (2f32).ln();
    // add/sub, mul/div, indexing, modulo, bit, logical, relational
    let want = [ln2, 0.0, ln2, ln2, ln2, 0.0, 0.0];
    for (g, w) in x[..7].iter().zip(want) {
        assert!((g - w).abs() < 1e-6, "{:?}", &x[..7]);
    }
    let kinds = &x[7..7 + beryl::graph::NodeKind::ALL.len()];
    assert_eq!(kinds.iter().sum::<f32>(), 1.0);
    let text = &x[7 + beryl::graph::NodeKind::ALL.len()..];
    let norm: f32 = text.iter().map(|v| v * v).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4);
}

#[test]
fn training_with_real_features_learns_links() {
    tch::set_num_threads(1);
    let enc = encoder();
    let root = fetch("igraph").expect("igraph corpus");
    let cfg = FitConfig {
        corpora: vec![root.join("src/paths")],
        walk: WalkOptions::default(),
        lang: "c".into(),
        max_nodes: 8000,
        train: TrainConfig { max_epochs: 40, patience: 10, seed: 3, ..TrainConfig::default() },
    };
    let mut first = None;
    let model = fit(&cfg, &enc, |_, _| {}, |e| {
        first.get_or_insert(e.val_auc);
    })
    .unwrap();
    eprintln!("val AUC {:.3} (first epoch {:.3})", model.manifest.val_auc, first.unwrap());
    assert!(model.manifest.val_auc > 0.7, "{}", model.manifest.val_auc);
    assert!(model.manifest.val_auc > first.unwrap());
}
