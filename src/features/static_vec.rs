//! Static token vectors distilled from the text encoder, for the millions of short
//! statement texts of an index (the model2vec recipe, done here offline):
//!
//! 1. every vocabulary token goes through all-MiniLM-L6-v2 alone (`[CLS] t [SEP]`, mean
//!    pooled), in f32 so the table does not depend on the CPU's bf16 support;
//! 2. the vectors are centred on their mean weighted by token frequency in a code corpus
//!    (the direction all code shares, which otherwise dominates every cosine);
//! 3. each token is weighted by a / (a + p(t)) with p its corpus frequency (smooth inverse
//!    frequency, a = 1e-3): `(`, `;` and `=` weigh little, `dijkstra` much;
//! 4. rows are stored as int8 with one scale each.
//!
//! A text's vector is the normalized sum of its tokens' rows; tokens come from
//! [`WordPiece`] (ASCII; other characters are read as spaces).

use super::wordpiece::WordPiece;
use super::{Encoder, FeatureError, TextVec, DIM};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::Path;

const MAGIC: &[u8; 8] = b"BRYSTV01";
/// Smooth-inverse-frequency constant.
pub const SIF_A: f64 = 1e-3;

pub struct StaticTable {
    wp: WordPiece,
    /// `vocab × DIM` as stored (int8); a row is dequantized as it is added, so that a load
    /// makes no f32 copy of the table (four times its size).
    rows: Vec<i8>,
    /// One scale a row.
    scales: Vec<f32>,
    hash: String,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl StaticTable {
    /// Distills the table from `enc` and token frequencies of `corpus` texts.
    pub fn distill(enc: &Encoder, corpus: &[&str]) -> Result<StaticTable, FeatureError> {
        let wp = WordPiece::from_vocab(enc.tokenizer_vocab()?)?;
        let v = wp.size;
        let rows_ids: Vec<[u32; 3]> = (0..v as u32).map(|t| [wp.cls, t, wp.sep]).collect();
        let refs: Vec<&[u32]> = rows_ids.iter().map(|r| &r[..]).collect();
        let vecs = enc.encode_id_rows(&refs, 256)?;
        let mut count = vec![0u64; v];
        let mut ids = Vec::new();
        for t in corpus {
            ids.clear();
            wp.ids_lossy(t, &mut ids);
            for &i in &ids {
                count[i as usize] += 1;
            }
        }
        let total = count.iter().sum::<u64>().max(1) as f64;
        let mut mean = [0f64; DIM];
        for (t, c) in count.iter().enumerate() {
            if *c > 0 {
                for (m, x) in mean.iter_mut().zip(&vecs[t]) {
                    *m += *c as f64 / total * *x as f64;
                }
            }
        }
        let mut rows = vec![0f32; v * DIM];
        for t in 0..v {
            let p = count[t] as f64 / total;
            let w = SIF_A / (SIF_A + p);
            for d in 0..DIM {
                rows[t * DIM + d] = ((vecs[t][d] as f64 - mean[d]) * w) as f32;
            }
        }
        let bytes = encode_rows(&rows, v);
        StaticTable::from_bytes(&bytes, wp)
    }

    /// The stored table; `wp` must be the vocabulary it was distilled with.
    pub fn from_bytes(bytes: &[u8], wp: WordPiece) -> Result<StaticTable, FeatureError> {
        let bad = |m: &str| FeatureError::Config { path: "static table".into(), msg: m.to_string() };
        if bytes.len() < 16 || &bytes[..8] != MAGIC {
            return Err(bad("not a static vector table"));
        }
        let v = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
        let dim = u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes")) as usize;
        if dim != DIM || v != wp.size || bytes.len() != 16 + v * (4 + DIM) {
            return Err(bad(&format!("{v} × {dim} rows in {} bytes do not fit a {}-token vocabulary of {DIM}-d vectors", bytes.len(), wp.size)));
        }
        let mut rows = Vec::with_capacity(v * DIM);
        let mut scales = Vec::with_capacity(v);
        for t in 0..v {
            let at = 16 + t * (4 + DIM);
            scales.push(f32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")));
            rows.extend(bytes[at + 4..at + 4 + DIM].iter().map(|&b| b as i8));
        }
        Ok(StaticTable { wp, rows, scales, hash: hex(&Sha256::digest(bytes)) })
    }

    pub fn load(path: &Path, enc: &Encoder) -> Result<StaticTable, FeatureError> {
        StaticTable::read(path, enc.tokenizer_vocab()?)
    }

    /// The table stored at `path` over the tokenizer vocabulary `vocab`; errors name the file.
    pub fn read(path: &Path, vocab: HashMap<String, u32>) -> Result<StaticTable, FeatureError> {
        StaticTable::read_with(path, WordPiece::from_vocab(vocab)?)
    }

    /// As [`StaticTable::read`], over a tokenizer already made.
    pub fn read_with(path: &Path, wp: WordPiece) -> Result<StaticTable, FeatureError> {
        let bytes = std::fs::read(path).map_err(|e| FeatureError::Io { path: path.into(), error: e })?;
        StaticTable::from_bytes(&bytes, wp).map_err(|e| match e {
            FeatureError::Config { msg, .. } => FeatureError::Config { path: path.into(), msg },
            e => e,
        })
    }

    pub fn save(&self, path: &Path) -> Result<(), FeatureError> {
        let mut bytes = Vec::with_capacity(16 + self.scales.len() * (4 + DIM));
        bytes.extend(MAGIC);
        bytes.extend((self.scales.len() as u32).to_le_bytes());
        bytes.extend((DIM as u32).to_le_bytes());
        for (r, s) in self.rows.chunks_exact(DIM).zip(&self.scales) {
            bytes.extend(s.to_le_bytes());
            bytes.extend(r.iter().map(|&q| q as u8));
        }
        std::fs::write(path, bytes).map_err(|e| FeatureError::Io { path: path.into(), error: e })
    }

    /// sha256 of the stored table: the identity of this encoder.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// The row of token `t`, dequantized.
    pub fn row(&self, t: u32) -> TextVec {
        let mut v = [0f32; DIM];
        self.add_row(t, &mut v);
        v
    }

    /// Adds the row of token `t` to `v`.
    fn add_row(&self, t: u32, v: &mut TextVec) {
        let scale = self.scales[t as usize];
        for (o, &q) in v.iter_mut().zip(&self.rows[t as usize * DIM..(t as usize + 1) * DIM]) {
            *o += q as f32 * scale;
        }
    }

    /// Unit vector of `text` (zero for a text without tokens).
    pub fn encode(&self, text: &str, ids: &mut Vec<u32>) -> TextVec {
        ids.clear();
        self.wp.ids_lossy(text, ids);
        let mut v = [0f32; DIM];
        for &t in ids.iter() {
            self.add_row(t, &mut v);
        }
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if n > 0.0 {
            v.iter_mut().for_each(|x| *x /= n);
        }
        v
    }

    pub fn encode_all(&self, texts: &[&str]) -> Vec<TextVec> {
        let mut ids = Vec::new();
        texts.iter().map(|t| self.encode(t, &mut ids)).collect()
    }
}

/// int8 rows with a scale each: the largest magnitude maps to 127.
fn encode_rows(rows: &[f32], v: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + v * (4 + DIM));
    out.extend(MAGIC);
    out.extend((v as u32).to_le_bytes());
    out.extend((DIM as u32).to_le_bytes());
    for t in 0..v {
        let r = &rows[t * DIM..(t + 1) * DIM];
        let m = r.iter().fold(0f32, |a, x| a.max(x.abs()));
        let scale = if m > 0.0 { m / 127.0 } else { 1.0 };
        out.extend(scale.to_le_bytes());
        out.extend(r.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8 as u8));
    }
    out
}

impl WordPiece {
    pub fn from_vocab(vocab: HashMap<String, u32>) -> Result<WordPiece, FeatureError> {
        WordPiece::new(vocab).map_err(FeatureError::Tokenizer)
    }
}
