//! BERT's WordPiece tokenization for ASCII text, without the general machinery of the
//! `tokenizers` crate: lowercase, split at whitespace and punctuation (every punctuation
//! character is a word), then greedy longest-match-first pieces (`##` continues a word),
//! `[UNK]` for a word with no split or over 100 characters. This is what all-MiniLM-L6-v2's
//! `tokenizer.json` does to ASCII (its normalizer only lowercases, strips accents and
//! drops control characters); `tests/static_vec.rs` checks it against `tokenizers` on real
//! code. Text with any non-ASCII byte is left to the caller (`None`).

use serde::Deserialize;
use std::collections::HashMap;

pub struct WordPiece {
    vocab: HashMap<String, u32>,
    unk: u32,
    pub cls: u32,
    pub sep: u32,
    pub size: usize,
}

#[derive(Deserialize)]
struct TokJson {
    model: ModelJson,
}

#[derive(Deserialize)]
struct ModelJson {
    vocab: HashMap<String, u32>,
    unk_token: String,
}

const MAX_WORD: usize = 100;

impl WordPiece {
    /// From a Hugging Face `tokenizer.json` with a WordPiece model.
    pub fn from_json(bytes: &[u8]) -> Result<WordPiece, String> {
        let t: TokJson = serde_json::from_slice(bytes).map_err(|e| format!("tokenizer.json: {e}"))?;
        if t.model.unk_token != "[UNK]" {
            return Err(format!("tokenizer.json: unknown-token {:?}, expected [UNK]", t.model.unk_token));
        }
        WordPiece::new(t.model.vocab)
    }

    /// From a WordPiece vocabulary with `[UNK]`, `[CLS]` and `[SEP]`.
    pub fn new(vocab: HashMap<String, u32>) -> Result<WordPiece, String> {
        let get = |s: &str| vocab.get(s).copied().ok_or_else(|| format!("vocabulary has no {s} token"));
        let (unk, cls, sep) = (get("[UNK]")?, get("[CLS]")?, get("[SEP]")?);
        let size = vocab.values().map(|&v| v as usize + 1).max().unwrap_or(0);
        Ok(WordPiece { vocab, unk, cls, sep, size })
    }

    /// As [`WordPiece::ids`], reading every non-ASCII character as a space.
    pub fn ids_lossy(&self, text: &str, out: &mut Vec<u32>) {
        if text.is_ascii() {
            let _ = self.ids(text, out);
        } else {
            let t: String = text.chars().map(|c| if c.is_ascii() { c } else { ' ' }).collect();
            let _ = self.ids(&t, out);
        }
    }

    /// Appends the piece ids of `text` (no [CLS]/[SEP]); `None` for non-ASCII text.
    pub fn ids(&self, text: &str, out: &mut Vec<u32>) -> Option<()> {
        if !text.is_ascii() {
            return None;
        }
        let mut word = String::with_capacity(32);
        for c in text.chars() {
            if c.is_ascii_whitespace() {
                self.word(&word, out);
                word.clear();
            } else if c.is_ascii_control() {
                // The normalizer deletes control characters.
            } else if c.is_ascii_punctuation() {
                self.word(&word, out);
                word.clear();
                let mut b = [0u8; 4];
                self.word(c.encode_utf8(&mut b), out);
            } else {
                word.push(c.to_ascii_lowercase());
            }
        }
        self.word(&word, out);
        Some(())
    }

    fn word(&self, w: &str, out: &mut Vec<u32>) {
        if w.is_empty() {
            return;
        }
        if w.len() > MAX_WORD {
            out.push(self.unk);
            return;
        }
        let start_len = out.len();
        let mut piece = String::with_capacity(w.len() + 2);
        let mut start = 0;
        while start < w.len() {
            let mut end = w.len();
            let mut found = None;
            while end > start {
                piece.clear();
                if start > 0 {
                    piece.push_str("##");
                }
                piece.push_str(&w[start..end]);
                if let Some(&id) = self.vocab.get(piece.as_str()) {
                    found = Some(id);
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) => {
                    out.push(id);
                    start = end;
                }
                None => {
                    out.truncate(start_len);
                    out.push(self.unk);
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wp() -> WordPiece {
        let json = r###"{"model": {"unk_token": "[UNK]", "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "d": 3, "##ist": 4, "[": 5, "]": 6, "i": 7, "=": 8, "min": 9, "##imum": 10, "(": 11, ")": 12, ",": 13}}}"###;
        WordPiece::from_json(json.as_bytes()).unwrap()
    }

    #[test]
    fn splits_words_pieces_and_punctuation() {
        let mut v = Vec::new();
        wp().ids("Dist[i] = MINIMUM(d,i)", &mut v).unwrap();
        assert_eq!(v, [3, 4, 5, 7, 6, 8, 9, 10, 11, 3, 13, 7, 12]);
        v.clear();
        wp().ids("xyz dist", &mut v).unwrap();
        assert_eq!(v, [0, 3, 4], "a word with no split is [UNK] as a whole");
        assert!(wp().ids("ünïcode", &mut v).is_none());
    }
}
