//! A BERT encoder forward pass on libtorch over Hugging Face safetensors weights
//! (`embeddings.*`, `encoder.layer.N.*`; a `bert.` prefix is accepted). Inference only.

use super::FeatureError;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tch::{Device, Kind, Tensor};

/// The fields of a Hugging Face `config.json` the forward pass needs.
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    pub hidden_size: i64,
    pub num_hidden_layers: usize,
    pub num_attention_heads: i64,
    pub intermediate_size: i64,
    pub max_position_embeddings: i64,
    pub vocab_size: i64,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
    #[serde(default = "default_act")]
    pub hidden_act: String,
    #[serde(default = "default_type_vocab")]
    pub type_vocab_size: i64,
}

fn default_eps() -> f64 {
    1e-12
}
fn default_act() -> String {
    "gelu".into()
}
fn default_type_vocab() -> i64 {
    2
}

impl BertConfig {
    pub fn read(path: &Path) -> Result<BertConfig, FeatureError> {
        let text = std::fs::read_to_string(path).map_err(|e| io_err(path, e))?;
        let c: BertConfig = serde_json::from_str(&text)
            .map_err(|e| FeatureError::Config { path: path.into(), msg: e.to_string() })?;
        let bad = |msg: String| Err(FeatureError::Config { path: path.into(), msg });
        if c.hidden_act != "gelu" {
            return bad(format!("hidden_act {:?} is not supported (only exact gelu)", c.hidden_act));
        }
        if c.num_attention_heads <= 0 || c.hidden_size % c.num_attention_heads != 0 {
            return bad(format!("hidden size {} is not a multiple of {} heads", c.hidden_size, c.num_attention_heads));
        }
        Ok(c)
    }
}

fn io_err(path: &Path, source: std::io::Error) -> FeatureError {
    if source.kind() == std::io::ErrorKind::NotFound {
        FeatureError::Missing { path: path.into() }
    } else {
        FeatureError::Io { path: path.into(), error: source }
    }
}

struct Layer {
    /// Query, key and value stacked into one [3h, h] projection: one matmul instead of three.
    qkv_w: Tensor,
    qkv_b: Tensor,
    attn_out_w: Tensor,
    attn_out_b: Tensor,
    ln1_w: Tensor,
    ln1_b: Tensor,
    inter_w: Tensor,
    inter_b: Tensor,
    out_w: Tensor,
    out_b: Tensor,
    ln2_w: Tensor,
    ln2_b: Tensor,
}

pub struct Bert {
    cfg: BertConfig,
    /// Linear layers run in bfloat16 (weights stored so): about twice as fast on CPUs with
    /// native bf16 dot products; embeddings, attention, layer norms and pooling stay f32.
    bf16: bool,
    word: Tensor,
    pos: Tensor,
    token_type0: Tensor,
    ln_w: Tensor,
    ln_b: Tensor,
    layers: Vec<Layer>,
}

/// Named f32 tensors of a safetensors buffer: an 8-byte header length, a JSON header of
/// `{name: {dtype, shape, data_offsets}}`, then the data.
/// Checks the layout of a safetensors file (header, and every float tensor inside the
/// data) without building the tensors: what loading does before the model is built.
pub fn check_safetensors(bytes: &[u8], path: &Path) -> Result<(), FeatureError> {
    walk_safetensors(bytes, path, &mut |_, _, _, _| Ok(()))
}

fn read_safetensors(bytes: &[u8], path: &Path) -> Result<HashMap<String, Tensor>, FeatureError> {
    let mut out = HashMap::new();
    walk_safetensors(bytes, path, &mut |name, raw, shape, kind| {
        let t = Tensor::f_from_data_size(raw, shape, kind)?.f_to_kind(Kind::Float)?;
        out.insert(name.strip_prefix("bert.").unwrap_or(name).to_string(), t);
        Ok(())
    })?;
    Ok(out)
}

pub(crate) type TensorVisit<'v> = dyn FnMut(&str, &[u8], &[i64], Kind) -> Result<(), FeatureError> + 'v;

pub(crate) fn walk_safetensors(bytes: &[u8], path: &Path, visit: &mut TensorVisit) -> Result<(), FeatureError> {
    let bad = |msg: String| FeatureError::Weights { path: path.into(), msg };
    #[derive(Deserialize)]
    struct Entry {
        dtype: String,
        shape: Vec<i64>,
        data_offsets: [usize; 2],
    }
    let n = bytes
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as usize)
        .ok_or_else(|| bad("shorter than a safetensors header".into()))?;
    let header = bytes.get(8..8usize.saturating_add(n)).ok_or_else(|| bad("truncated header".into()))?;
    let entries: HashMap<String, serde_json::Value> =
        serde_json::from_slice(header).map_err(|e| bad(format!("header: {e}")))?;
    let data = &bytes[8 + n..];
    for (name, v) in entries {
        if name == "__metadata__" {
            continue;
        }
        let e: Entry = serde_json::from_value(v).map_err(|e| bad(format!("{name}: {e}")))?;
        // position_ids (I64) is not needed; adapters ship in f16.
        let (kind, width) = match e.dtype.as_str() {
            "F32" => (Kind::Float, 4),
            "F16" => (Kind::Half, 2),
            _ => continue,
        };
        let [a, b] = e.data_offsets;
        let numel: i64 = e.shape.iter().product();
        let raw = data.get(a..b).filter(|r| r.len() as i64 == numel * width).ok_or_else(|| bad(format!("{name}: bad offsets")))?;
        visit(&name, raw, &e.shape, kind)?;
    }
    Ok(())
}

impl Bert {
    /// Builds the model from the bytes of `model.safetensors` (read once by the caller,
    /// which also hashes them), with LoRA adapters (`adapter`: the bytes and path of a
    /// safetensors file of `<linear>.lora_A` [r × in] and `<linear>.lora_B` [out × r], and
    /// the scale alpha / r) merged into the linear weights: W + scale · B A.
    pub fn from_bytes(cfg: BertConfig, bytes: &[u8], path: &Path, bf16: bool, adapter: Option<(&[u8], &Path, f64)>) -> Result<Bert, FeatureError> {
        let mut w = read_safetensors(bytes, path)?;
        if let Some((abytes, apath, scale)) = adapter {
            let mut lora = read_safetensors(abytes, apath)?;
            let names: Vec<String> = lora.keys().filter_map(|k| k.strip_suffix(".lora_A").map(str::to_string)).collect();
            if names.is_empty() {
                return Err(FeatureError::Weights { path: apath.into(), msg: "no LoRA tensors (`<name>.lora_A`)".into() });
            }
            for n in names {
                let bad = |msg: String| FeatureError::Weights { path: apath.into(), msg };
                let a = lora.remove(&format!("{n}.lora_A")).ok_or_else(|| bad(format!("{n}: no lora_A")))?;
                let b = lora.remove(&format!("{n}.lora_B")).ok_or_else(|| bad(format!("{n}: no lora_B")))?;
                let key = format!("{n}.weight");
                let base = w.get(&key).ok_or_else(|| bad(format!("{key} is not a weight of the base model")))?;
                let delta = b.f_matmul(&a)? * scale;
                if delta.size() != base.size() {
                    return Err(bad(format!("{n}: adapter shape {:?} against weight {:?}", delta.size(), base.size())));
                }
                let merged = base + delta;
                w.insert(key, merged);
            }
        }
        let path: PathBuf = path.into();
        let h = cfg.hidden_size;
        let mut take = |name: String, shape: &[i64]| -> Result<Tensor, FeatureError> {
            let t = w.remove(&name).ok_or_else(|| FeatureError::Weights { path: path.clone(), msg: format!("no tensor {name}") })?;
            if t.size() != shape {
                return Err(FeatureError::Weights {
                    path: path.clone(),
                    msg: format!("{name} has shape {:?}, config wants {shape:?}", t.size()),
                });
            }
            Ok(t)
        };
        let word = take("embeddings.word_embeddings.weight".into(), &[cfg.vocab_size, h])?;
        let pos = take("embeddings.position_embeddings.weight".into(), &[cfg.max_position_embeddings, h])?;
        let types = take("embeddings.token_type_embeddings.weight".into(), &[cfg.type_vocab_size, h])?;
        let ln_w = take("embeddings.LayerNorm.weight".into(), &[h])?;
        let ln_b = take("embeddings.LayerNorm.bias".into(), &[h])?;
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for i in 0..cfg.num_hidden_layers {
            let p = format!("encoder.layer.{i}.");
            let mut t = |s: &str, shape: &[i64]| take(format!("{p}{s}"), shape);
            let q_w = t("attention.self.query.weight", &[h, h])?;
            let k_w = t("attention.self.key.weight", &[h, h])?;
            let v_w = t("attention.self.value.weight", &[h, h])?;
            let q_b = t("attention.self.query.bias", &[h])?;
            let k_b = t("attention.self.key.bias", &[h])?;
            let v_b = t("attention.self.value.bias", &[h])?;
            let im = cfg.intermediate_size;
            layers.push(Layer {
                qkv_w: Tensor::cat(&[q_w, k_w, v_w], 0),
                qkv_b: Tensor::cat(&[q_b, k_b, v_b], 0),
                attn_out_w: t("attention.output.dense.weight", &[h, h])?,
                attn_out_b: t("attention.output.dense.bias", &[h])?,
                ln1_w: t("attention.output.LayerNorm.weight", &[h])?,
                ln1_b: t("attention.output.LayerNorm.bias", &[h])?,
                inter_w: t("intermediate.dense.weight", &[im, h])?,
                inter_b: t("intermediate.dense.bias", &[im])?,
                out_w: t("output.dense.weight", &[h, im])?,
                out_b: t("output.dense.bias", &[h])?,
                ln2_w: t("output.LayerNorm.weight", &[h])?,
                ln2_b: t("output.LayerNorm.bias", &[h])?,
            });
        }
        if bf16 {
            for l in &mut layers {
                for w in [&mut l.qkv_w, &mut l.qkv_b, &mut l.attn_out_w, &mut l.attn_out_b, &mut l.inter_w, &mut l.inter_b, &mut l.out_w, &mut l.out_b] {
                    *w = w.f_to_kind(Kind::BFloat16)?;
                }
            }
        }
        let token_type0 = types.get(0);
        Ok(Bert { cfg, bf16, word, pos, token_type0, ln_w, ln_b, layers })
    }

    /// `x · wᵀ + b`, in bf16 when the weights are (the result stays bf16: the callers
    /// convert where f32 matters, the residual stream and layer norms).
    fn linear(&self, x: &Tensor, w: &Tensor, b: &Tensor) -> Result<Tensor, FeatureError> {
        if self.bf16 {
            Ok(x.f_to_kind(Kind::BFloat16)?.f_linear(w, Some(b))?)
        } else {
            Ok(x.f_linear(w, Some(b))?)
        }
    }

    /// Sentence vectors of one padded batch: `ids` and `mask` are [batch, len] (mask 1 on
    /// real tokens). Mean of the last hidden states over the mask, then L2-normalized, as
    /// sentence-transformers' mean pooling + Normalize. Returns [batch, hidden].
    pub fn embed(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor, FeatureError> {
        tch::no_grad(|| self.embed_inner(ids, mask))
    }

    fn embed_inner(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor, FeatureError> {
        let c = &self.cfg;
        let (b, len) = ids.size2()?;
        let h = c.hidden_size;
        let heads = c.num_attention_heads;
        let eps = c.layer_norm_eps;
        let x = Tensor::f_embedding(&self.word, ids, -1, false, false)?;
        let x = x + self.pos.f_narrow(0, 0, len)? + &self.token_type0;
        let mut x = x.f_layer_norm([h], Some(&self.ln_w), Some(&self.ln_b), eps, false)?;
        let maskf = mask.f_to_kind(Kind::Float)?;
        // Additive attention bias: 0 on tokens, a large negative on padding.
        let bias = ((maskf.ones_like() - &maskf) * -1e9f64).f_view([b, 1, 1, len])?;
        let hd = h / heads;
        let bias_bf16 = bias.f_to_kind(Kind::BFloat16)?;
        for l in &self.layers {
            let qkv = self.linear(&x, &l.qkv_w, &l.qkv_b)?.f_view([b, len, 3, heads, hd])?.f_permute([2, 0, 3, 1, 4])?.f_contiguous()?;
            let (q, k, v) = (qkv.get(0), qkv.get(1), qkv.get(2));
            let ctx = if self.bf16 && len <= 128 {
                // Plain matmul–softmax–matmul in bf16: libtorch's fused CPU attention was
                // about twice as slow at head size 32 on short rows; on long ones it wins.
                let scores = (q.f_matmul(&k.f_transpose(-1, -2)?)? * (1.0 / (hd as f64).sqrt()) + &bias_bf16).f_softmax(-1, Kind::BFloat16)?;
                scores.f_matmul(&v)?
            } else {
                let bias = if self.bf16 { &bias_bf16 } else { &bias };
                Tensor::f_scaled_dot_product_attention(&q, &k, &v, Some(bias), 0.0, false, None, false)?
            };
            let ctx = ctx.f_transpose(1, 2)?.f_reshape([b, len, h])?;
            let a = self.linear(&ctx, &l.attn_out_w, &l.attn_out_b)?.f_to_kind(Kind::Float)? + &x;
            let a = a.f_layer_norm([h], Some(&l.ln1_w), Some(&l.ln1_b), eps, false)?;
            // The widest activation stays bf16 between the two linears: it would be rounded
            // to bf16 for the second one anyway.
            let i = self.linear(&a, &l.inter_w, &l.inter_b)?.f_gelu("none")?;
            let o = self.linear(&i, &l.out_w, &l.out_b)?.f_to_kind(Kind::Float)? + &a;
            x = o.f_layer_norm([h], Some(&l.ln2_w), Some(&l.ln2_b), eps, false)?;
        }
        let m = maskf.f_unsqueeze(-1)?;
        let sum = (x * &m).f_sum_dim_intlist([1i64].as_slice(), false, Kind::Float)?;
        let count = m.f_sum_dim_intlist([1i64].as_slice(), false, Kind::Float)?.f_clamp_min(1e-9)?;
        let mean = sum / count;
        let norm = mean.f_norm_scalaropt_dim(2, [1i64].as_slice(), true)?.f_clamp_min(1e-12)?;
        Ok(mean / norm)
    }
}

/// A [batch, len] i64 tensor from rows padded with `pad` to the longest row.
pub fn padded(rows: &[&[u32]], pad: i64) -> Result<(Tensor, Tensor), FeatureError> {
    let len = rows.iter().map(|r| r.len()).max().unwrap_or(0).max(1);
    let mut ids = vec![pad; rows.len() * len];
    let mut mask = vec![0i64; rows.len() * len];
    for (i, r) in rows.iter().enumerate() {
        for (j, &t) in r.iter().enumerate() {
            ids[i * len + j] = t as i64;
            mask[i * len + j] = 1;
        }
    }
    let shape = [rows.len() as i64, len as i64];
    let ids = Tensor::f_from_slice(&ids)?.f_view(shape)?.f_to_device(Device::Cpu)?;
    let mask = Tensor::f_from_slice(&mask)?.f_view(shape)?;
    Ok((ids, mask))
}
