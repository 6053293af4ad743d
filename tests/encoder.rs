//! The text encoder against reference embeddings, batching, the vector cache.

use beryl::features::encoder::{cosine, MAX_TOKENS};
use beryl::features::{Encoder, EncoderOptions, FeatureError, Precision, DIM};
use std::path::PathBuf;

fn options(cache: Option<PathBuf>) -> EncoderOptions {
    // Two threads: the machine has two cores and other tests run beside this one. f32 unless
    // a test says otherwise, so that results do not depend on the CPU's bf16 support.
    EncoderOptions { threads: Some(2), cache, precision: Precision::F32, ..Default::default() }
}

fn load(cache: Option<PathBuf>) -> Encoder {
    Encoder::load_with(&Encoder::default_dir(), options(cache)).expect("encoder installed by scripts/setup.sh")
}

/// Largest difference between two lists of vectors: a text encoded in another batch may
/// differ in the last bits (matmul blocking depends on the batch shape).
fn max_diff(a: &[[f32; DIM]], b: &[[f32; DIM]]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).flat_map(|(x, y)| x.iter().zip(y).map(|(p, q)| (p - q).abs())).fold(0.0, f32::max)
}

fn reference() -> (Vec<String>, Vec<Vec<f32>>) {
    // Third-party reference vectors (sentence-transformers output), kept outside the checkout.
    let path = beryl::shared_data("encoder-reference.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reference embeddings {}: {e} (set BERYL_SHARED_DATA to the benchmark data folder)", path.display()));
    let v: serde_json::Value = serde_json::from_str(&text).expect("reference json");
    let texts: Vec<String> = serde_json::from_value(v["texts"].clone()).expect("texts");
    let embs: Vec<Vec<f32>> = serde_json::from_value(v["embeddings"].clone()).expect("embeddings");
    assert_eq!(texts.len(), embs.len());
    (texts, embs)
}

/// Both precisions against the sentence-transformers reference vectors.
#[test]
fn matches_reference_embeddings() {
    let (texts, want) = reference();
    assert_eq!(texts.len(), 16);
    let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
    for precision in [Precision::F32, Precision::Bf16] {
        let enc = Encoder::load_with(&Encoder::default_dir(), EncoderOptions { precision, ..options(None) }).unwrap();
        assert!(enc.identity().is_reference(), "{:?}", enc.identity());
        let got = enc.encode(&refs).unwrap();
        let mut min = f32::INFINITY;
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(w.len(), DIM);
            let c = cosine(g, w);
            min = min.min(c);
            let floor = if precision == Precision::F32 { 0.99999 } else { 0.999 };
            assert!(c >= floor, "{precision:?} text {i} {:?}: cosine {c}", texts[i]);
            let norm: f32 = g.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-4, "text {i} norm {norm}");
        }
        eprintln!("{precision:?}: min cosine to the reference over {} texts: {min:.6}", texts.len());
    }
}

/// A bf16 vector in the cache must never answer an f32 encoder, nor the other way round.
#[test]
fn precisions_keep_separate_cache_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.bin");
    let text = ["for (i = 0; i < n; i++) s += a[i];"];
    let mut bf = Encoder::load_with(&Encoder::default_dir(), EncoderOptions { precision: Precision::Bf16, ..options(None) }).unwrap();
    bf.attach_cache(&path).unwrap();
    bf.encode(&text).unwrap();
    assert_eq!(bf.stats().encoded, 1);
    drop(bf);
    let mut f = Encoder::load_with(&Encoder::default_dir(), EncoderOptions { precision: Precision::F32, ..options(None) }).unwrap();
    // The header names the key space: the f32 encoder starts the file afresh instead of reading it.
    f.attach_cache(&path).unwrap();
    f.encode(&text).unwrap();
    assert_eq!((f.stats().cache_hits, f.stats().encoded), (0, 1), "an f32 encoder took a bf16 vector from the cache");
    assert_ne!(
        Encoder::load_with(&Encoder::default_dir(), EncoderOptions { precision: Precision::Bf16, ..options(None) }).unwrap().default_cache_path(),
        Encoder::load_with(&Encoder::default_dir(), EncoderOptions { precision: Precision::F32, ..options(None) }).unwrap().default_cache_path()
    );
}

/// In f32 a text's vector does not depend on its batch beyond the last bits. In bf16 a
/// last-bit difference in f32 can round an activation the other way, so the bound is a cosine.
#[test]
fn batched_equals_one_at_a_time_and_repeats_encode_once() {
    // Sixteen texts of mixed length and kind, so that batches pad differently.
    let texts = [
        "sort the array in place by repeated insertion",
        "for (i = 1; i < n; i++) { key = a[i]; j = i - 1; }",
        "while j >= 0 and A[j] > key",
        "return the shortest path between every pair of vertices",
        "x",
        "dist[i][j] = min(dist[i][j], dist[i][k] + dist[k][j]);",
        "compute the greatest common divisor of two integers with Euclid's algorithm",
        "hash = hash * 31 + c",
        "if the queue is empty then report that the graph is disconnected and stop",
        "static int cmp(const void *a, const void *b)",
        "merge two sorted runs into one",
        "lo = mid + 1",
        "the Levenshtein distance counts insertions, deletions and substitutions needed to turn one string into another",
        "u = heap.pop_min()",
        "return -1;",
        "swap(a[i], a[j])",
    ];
    let mut refs: Vec<&str> = texts.to_vec();
    refs.push(refs[3]); // a repeat
    for precision in [Precision::F32, Precision::Bf16] {
        let enc = Encoder::load_with(&Encoder::default_dir(), EncoderOptions { precision, ..options(None) }).unwrap();
        let batched = enc.encode(&refs).unwrap();
        let s = enc.stats();
        assert_eq!(s.encoded, 16, "the repeated text is encoded once");
        assert!(s.batches < 16, "texts share forward passes: {s:?}");
        assert!(batched[3] == batched[16]);
        for (t, b) in refs.iter().zip(&batched) {
            let one = enc.encode_uncached(&[t], 1).unwrap();
            let diff = one[0].iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0f32, f32::max);
            match precision {
                Precision::F32 => assert!(diff < 1e-5, "{t:?}: batched differs from single by {diff}"),
                Precision::Bf16 => assert!(cosine(&one[0], b) > 0.9999, "{t:?}: bf16 batched against single: cosine {}", cosine(&one[0], b)),
            }
        }
    }
}

#[test]
fn truncates_at_256_tokens() {
    let enc = load(None);
    let long = "the quick brown fox jumps over the lazy dog ".repeat(60);
    assert_eq!(enc.token_count(&long).unwrap(), MAX_TOKENS);
    let longer = format!("{long} and then something else entirely different");
    let v = enc.encode(&[long.as_str(), longer.as_str(), "short text"]).unwrap();
    assert!(cosine(&v[0], &v[1]) > 0.99999, "text past the limit must not change the vector");
    assert!(cosine(&v[0], &v[2]) < 0.9);
}

#[test]
fn cache_hits_skip_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors.bin");
    let texts = ["for i in 1 to n", "x = y + 1;", "return gcd(b, a % b);", "sort the edges by weight"];
    let first = {
        let enc = load(Some(path.clone()));
        let v = enc.encode(&texts).unwrap();
        assert_eq!(enc.stats().encoded, 4);
        assert_eq!(enc.cached(), 4);
        // Within one process a repeat is answered by the cache too.
        let again = enc.encode(&texts[..2]).unwrap();
        assert_eq!(enc.stats().encoded, 4);
        assert_eq!(enc.stats().cache_hits, 2);
        assert!(again[..] == v[..2]);
        v
    };
    // A new process (a fresh encoder over the same file) re-indexing the same texts.
    let enc = load(Some(path.clone()));
    let v = enc.encode(&texts).unwrap();
    let s = enc.stats();
    assert_eq!((s.encoded, s.batches, s.cache_hits), (0, 0, 4), "{s:?}");
    assert!(v == first, "cached vectors are bit-identical");
    // A mix: only the new text reaches the model.
    let v = enc.encode(&["x = y + 1;", "a brand new text"]).unwrap();
    assert_eq!(enc.stats().encoded, 1);
    assert!(v[0] == first[1]);
}

#[test]
fn torn_or_corrupt_cache_is_recovered() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors.bin");
    let texts = ["alpha", "beta", "gamma"];
    let first = load(Some(path.clone())).encode(&texts).unwrap();

    // A crash in the middle of the last record.
    let len = std::fs::metadata(&path).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(len - 100).unwrap();
    let enc = load(Some(path.clone()));
    assert_eq!(enc.cached(), 2);
    assert!(max_diff(&enc.encode(&texts).unwrap(), &first) < 1e-5);
    assert_eq!(enc.stats().encoded, 1, "only the torn record is encoded again");
    drop(enc);
    assert_eq!(load(Some(path.clone())).cached(), 3);

    // A flipped byte inside a record: it and everything after it are dropped.
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() - 2000;
    bytes[at] ^= 0x55;
    std::fs::write(&path, &bytes).unwrap();
    let enc = load(Some(path.clone()));
    assert!(enc.cached() < 3);
    assert!(max_diff(&enc.encode(&texts).unwrap(), &first) < 1e-5);

    // Not a cache at all.
    std::fs::write(&path, b"garbage that is not a vector cache").unwrap();
    let enc = load(Some(path.clone()));
    assert_eq!(enc.cached(), 0);
    assert!(max_diff(&enc.encode(&texts).unwrap(), &first) < 1e-5);
    assert_eq!(enc.stats().encoded, 3);
}

#[test]
fn missing_files_name_the_setup_script() {
    let dir = tempfile::tempdir().unwrap();
    let err = match Encoder::load(dir.path()) {
        Err(e) => e,
        Ok(_) => panic!("loaded an encoder from an empty folder"),
    };
    assert!(matches!(err, FeatureError::Missing { .. }), "{err:?}");
    assert!(err.to_string().contains("scripts/setup.sh"), "{err}");
}

#[test]
fn damaged_weights_are_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let src = Encoder::default_dir();
    for f in ["config.json", "tokenizer.json"] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    // A broken header, and an empty file (the weights are mapped, not read).
    for bytes in [&b"\x10\0\0\0\0\0\0\0{not json}"[..], b""] {
        std::fs::write(dir.path().join("model.safetensors"), bytes).unwrap();
        assert!(matches!(Encoder::load(dir.path()), Err(FeatureError::Weights { .. })));
    }
}

/// The code-search adapters (models/code-encoder, the default, and the previous ones in
/// models/code-encoder-32k)
/// merged into the installed model give the vectors the training script computed with
/// PyTorch for the same texts.
#[test]
fn code_encoder_matches_its_training_runtime() {
    use beryl::features::encoder::code_adapter;
    adapters_match_their_reference(code_adapter());
    adapters_match_their_reference(beryl::repo_path("models/code-encoder-32k"));
}

fn adapters_match_their_reference(dir: std::path::PathBuf) {
    let reference: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("reference.json")).unwrap()).unwrap();
    let texts: Vec<&str> = reference["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    let enc = Encoder::load_with(&Encoder::default_dir(), EncoderOptions { precision: Precision::F32, adapter: Some(dir.clone()), ..Default::default() }).unwrap();
    let base = Encoder::load_with(&Encoder::default_dir(), EncoderOptions { precision: Precision::F32, ..Default::default() }).unwrap();
    assert_ne!(enc.hash(), base.hash(), "the adapted model has its own identity");
    let got = enc.encode_uncached(&texts, 8).unwrap();
    let plain = base.encode_uncached(&texts, 8).unwrap();
    let mut lowest = 1f32;
    for (i, want) in reference["vectors"].as_array().unwrap().iter().enumerate() {
        let want: Vec<f32> = want.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
        let c = cosine(&got[i], &want);
        lowest = lowest.min(c);
        // The adapters change the model: the plain one is measurably further away.
        assert!(cosine(&plain[i], &want) < c, "{}", texts[i]);
    }
    eprintln!("{}: lowest cosine to the PyTorch vectors: {lowest:.6}", dir.display());
    // The training run read the base weights in f16; beryl reads them in f32.
    assert!(lowest >= 0.999, "{}: {lowest}", dir.display());
}

/// `beryl search` loads the function encoder on a second thread while the retrievers that
/// need none run: a search that asks meanwhile waits for that load and gets the same
/// encoder, the one a plain load gives.
#[test]
fn an_encoder_asked_for_during_its_preload_is_the_preloaded_one() {
    use beryl::features::{CacheAt, TextEncoders, TextModel};
    let encs = TextEncoders::new(TextModel::Static, TextModel::Code, Some(2), CacheAt::None);
    let (mine, preloaded) = std::thread::scope(|s| {
        encs.preload_functions(s);
        let other = s.spawn(|| encs.functions().map(|e| e as *const Encoder as usize));
        let mine = encs.functions().expect("code encoder") as *const Encoder as usize;
        (mine, other.join().unwrap().expect("code encoder"))
    });
    assert_eq!(mine, preloaded, "one encoder for every caller");
    let plain = TextModel::Code.load(Some(2), &CacheAt::None).unwrap();
    assert_eq!(encs.functions().unwrap().hash(), plain.hash());
}
