//! Feature vectors for the math / natural-language classifier.
//!
//! A line becomes a sparse, L2-normalized vector in a hashed space made of four blocks,
//! each normalized on its own and then weighted (see [`FeatureParams`]):
//! * **words** — lower-cased alphabetic words: English function words ("the", "into",
//!   "each", "be") mark prose in comments and pseudocode alike;
//! * **shapes** — bigrams and trigrams of token shapes (`v` short identifier, `w` long
//!   word, `0` number, operators kept as themselves): `v [ v ] = v` looks the same in
//!   Java and in a textbook, whatever the names, which bridges the two domains;
//! * **chars** — character 3-grams with digits folded, for morphology ("ing", "ed ");
//! * **stats** — operator density, share of long words, bracket/assignment presence and
//!   a length bucket, a handful of dense dimensions that carry the coarse signal.
//!
//! Textbook symbols are first mapped to the ASCII operators code uses (`←` → `=`,
//! `≤` → `<=`, `·` → `*`, …) so that both sides share operator features.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FeatureParams {
    /// log2 of the hashed dimension.
    pub bits: u32,
    pub w_words: f32,
    pub w_shapes: f32,
    pub w_chars: f32,
    pub w_stats: f32,
}

impl Default for FeatureParams {
    fn default() -> Self {
        FeatureParams {
            bits: 14,
            w_words: 1.0,
            w_shapes: 1.0,
            w_chars: 0.6,
            w_stats: 1.2,
        }
    }
}

/// Sparse vector: sorted, distinct indices.
pub type Sparse = Vec<(u16, f32)>;

pub fn dot(a: &Sparse, dense: &[f32]) -> f32 {
    a.iter()
        .map(|&(i, v)| v * dense.get(i as usize).copied().unwrap_or(0.0))
        .sum()
}

pub fn to_dense(a: &Sparse, dim: usize) -> Vec<f32> {
    let mut d = vec![0.0; dim];
    for &(i, v) in a {
        if let Some(x) = d.get_mut(i as usize) {
            *x = v;
        }
    }
    d
}

/// Replaces textbook symbols by the operators source code would use.
pub fn ascii_ops(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let rep = match c {
            '←' | '≔' | '⟵' => "=",
            '≤' | '⩽' => "<=",
            '≥' | '⩾' => ">=",
            '≠' => "!=",
            '·' | '×' | '∗' | '⋅' => "*",
            '÷' => "/",
            '∧' => "&&",
            '∨' => "||",
            '¬' => "!",
            '⌊' | '⌈' => "floor(",
            '⌋' | '⌉' => ")",
            '∞' => "inf",
            '∈' | '∉' | '⊆' | '⊂' => "<",
            '∪' => "|",
            '∩' => "&",
            '∅' => "0",
            '−' | '–' => "-",
            '√' => "sqrt",
            '∑' | 'Σ' => "sum",
            'α'..='ω' | 'Α'..='Ω' => "x",
            _ => {
                out.push(c);
                continue;
            }
        };
        out.push_str(rep);
    }
    out
}

#[derive(Debug, PartialEq)]
enum Tok<'a> {
    Word(&'a str),
    Num,
    Op(&'a str),
}

const OP_CHARS: &str = "=+-*/%<>!&|^~?:";

fn tokens(s: &str) -> Vec<Tok<'_>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        let start = i;
        if c.is_ascii_alphabetic() || c == '_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Word(&s[start..i]));
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            out.push(Tok::Num);
        } else if OP_CHARS.contains(c) {
            while i < b.len() && OP_CHARS.contains(b[i] as char) && i - start < 3 {
                i += 1;
            }
            out.push(Tok::Op(&s[start..i]));
        } else if c.is_ascii_punctuation() {
            i += 1;
            out.push(Tok::Op(&s[start..i]));
        } else {
            // Whitespace and any other character (non-ASCII letters) separate tokens.
            i += s[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    out
}

fn shape<'a>(t: &'a Tok<'a>) -> &'a str {
    match t {
        Tok::Word(w) => {
            let letters = w.chars().filter(|c| c.is_ascii_alphabetic()).count();
            let lower = w.chars().all(|c| c.is_ascii_lowercase());
            let upper = w.chars().all(|c| !c.is_ascii_lowercase());
            if letters <= 2 {
                "v"
            } else if lower {
                "w"
            } else if upper {
                "P"
            } else if w.contains('_') || w.chars().skip(1).any(|c| c.is_ascii_uppercase()) {
                "c"
            } else {
                "W"
            }
        }
        Tok::Num => "0",
        Tok::Op(o) => o,
    }
}

fn fnv(seed: u64, parts: &[&str]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed;
    for p in parts {
        for &b in p.as_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x1000_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x1000_0000_01b3);
    }
    h
}

/// Number of dense stat dimensions, placed at the start of the space.
const STATS: usize = 12;

/// The feature vector of one line (an instruction, a test, a comment or a code line).
pub fn featurize(line: &str, p: &FeatureParams) -> Sparse {
    let dim = 1usize << p.bits.clamp(8, 16);
    let norm = ascii_ops(line.trim());
    let toks = tokens(&norm);
    let mut acc: std::collections::BTreeMap<u16, f32> = std::collections::BTreeMap::new();
    let bucket =
        |seed: u64, parts: &[&str]| ((fnv(seed, parts) as usize % (dim - STATS)) + STATS) as u16;

    let mut words: Vec<u16> = Vec::new();
    for t in &toks {
        if let Tok::Word(w) = t {
            if w.len() >= 2 && w.chars().all(|c| c.is_ascii_alphabetic()) {
                words.push(bucket(1, &[&w.to_ascii_lowercase()]));
            }
        }
    }
    let shapes: Vec<&str> = std::iter::once("^")
        .chain(toks.iter().map(shape))
        .chain(std::iter::once("$"))
        .collect();
    let mut shape_ids = Vec::new();
    for w in shapes.windows(2) {
        shape_ids.push(bucket(2, w));
    }
    for w in shapes.windows(3) {
        shape_ids.push(bucket(3, w));
    }
    let folded: Vec<char> = std::iter::once(' ')
        .chain(norm.chars().map(|c| {
            if c.is_ascii_digit() {
                '0'
            } else {
                c.to_ascii_lowercase()
            }
        }))
        .chain(std::iter::once(' '))
        .collect();
    let mut char_ids = Vec::new();
    for w in folded.windows(3) {
        let g: String = w.iter().collect();
        char_ids.push(bucket(4, &[&g]));
    }

    add_block(&mut acc, &words, p.w_words);
    add_block(&mut acc, &shape_ids, p.w_shapes);
    add_block(&mut acc, &char_ids, p.w_chars);
    let stats = stats(&norm, &toks);
    let sn = stats.iter().map(|v| v * v).sum::<f32>().sqrt();
    if sn > 0.0 {
        for (i, v) in stats.iter().enumerate() {
            if *v != 0.0 {
                *acc.entry(i as u16).or_insert(0.0) += p.w_stats * v / sn;
            }
        }
    }
    let total = acc.values().map(|v| v * v).sum::<f32>().sqrt();
    if total == 0.0 {
        return Vec::new();
    }
    acc.into_iter().map(|(i, v)| (i, v / total)).collect()
}

/// Adds a bag of hashed ids as a log-tf block of unit length times `weight`.
fn add_block(acc: &mut std::collections::BTreeMap<u16, f32>, ids: &[u16], weight: f32) {
    let mut counts: std::collections::BTreeMap<u16, f32> = std::collections::BTreeMap::new();
    for &i in ids {
        *counts.entry(i).or_insert(0.0) += 1.0;
    }
    let vals: Vec<(u16, f32)> = counts.into_iter().map(|(i, c)| (i, 1.0 + c.ln())).collect();
    let n = vals.iter().map(|(_, v)| v * v).sum::<f32>().sqrt();
    if n == 0.0 {
        return;
    }
    for (i, v) in vals {
        *acc.entry(i).or_insert(0.0) += weight * v / n;
    }
}

fn stats(norm: &str, toks: &[Tok]) -> [f32; STATS] {
    let visible = norm.chars().filter(|c| !c.is_whitespace()).count().max(1) as f32;
    let ops = norm.chars().filter(|c| OP_CHARS.contains(*c)).count() as f32;
    let n = toks.len().max(1) as f32;
    let long_words = toks
        .iter()
        .filter(|t| matches!(t, Tok::Word(w) if w.len() >= 3 && w.chars().all(|c| c.is_ascii_lowercase())))
        .count() as f32;
    let short_ids = toks
        .iter()
        .filter(|t| matches!(t, Tok::Word(w) if w.len() <= 2))
        .count() as f32;
    let len_bucket = (toks.len() as f32 + 1.0).log2().min(6.0) / 6.0;
    let trimmed = norm.trim_end();
    [
        ops / visible,
        long_words / n,
        short_ids / n,
        f32::from(norm.contains('[')),
        f32::from(norm.contains('=')),
        f32::from(norm.contains('(')),
        f32::from(trimmed.ends_with('.')),
        f32::from(
            norm.trim_start()
                .starts_with(|c: char| c.is_ascii_uppercase()),
        ),
        len_bucket,
        f32::from(long_words >= 3.0),
        f32::from(ops == 0.0),
        toks.iter().filter(|t| matches!(t, Tok::Num)).count() as f32 / n,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_length_and_sorted() {
        let v = featurize(
            "C[i][j] = C[i][j] + A[i][k] · B[k][j]",
            &FeatureParams::default(),
        );
        let n: f32 = v.iter().map(|(_, x)| x * x).sum();
        assert!((n - 1.0).abs() < 1e-4);
        assert!(v.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn textbook_operators_match_code_operators() {
        let p = FeatureParams::default();
        let a = featurize("x ← y ≤ z", &p);
        let b = featurize("x = y <= z", &p);
        let dim = 1 << p.bits;
        assert!(dot(&a, &to_dense(&b, dim)) > 0.99);
    }
}
