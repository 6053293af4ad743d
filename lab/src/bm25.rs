//! Okapi BM25 over a fixed set of documents (already tokenized, see [`crate::tokenize`]).
//!
//! score(q, d) = Σ over query terms t (repeats count) of
//!   idf(t) · tf(t,d)·(k1 + 1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl)),
//! with the non-negative idf of Lucene, `ln(1 + (N − df + 0.5)/(df + 0.5))`, so a term in
//! more than half the documents still helps a little instead of hurting.

use std::collections::HashMap;

pub const K1: f32 = 1.2;
pub const B: f32 = 0.75;

pub struct Bm25 {
    k1: f32,
    b: f32,
    /// term → (document, term frequency) postings.
    postings: HashMap<String, Vec<(u32, u32)>>,
    doc_len: Vec<f32>,
    avgdl: f32,
}

impl Bm25 {
    /// An index with the usual k1 = 1.2, b = 0.75.
    pub fn new<S: AsRef<str>>(docs: &[Vec<S>]) -> Bm25 {
        Bm25::with_params(docs, K1, B)
    }

    pub fn with_params<S: AsRef<str>>(docs: &[Vec<S>], k1: f32, b: f32) -> Bm25 {
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut doc_len = Vec::with_capacity(docs.len());
        for (d, terms) in docs.iter().enumerate() {
            let mut tf: HashMap<&str, u32> = HashMap::new();
            for t in terms {
                *tf.entry(t.as_ref()).or_default() += 1;
            }
            for (t, n) in tf {
                postings.entry(t.to_string()).or_default().push((d as u32, n));
            }
            doc_len.push(terms.len() as f32);
        }
        let avgdl = if docs.is_empty() { 1.0 } else { (doc_len.iter().sum::<f32>() / docs.len() as f32).max(1e-6) };
        Bm25 { k1, b, postings, doc_len, avgdl }
    }

    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    fn idf(&self, df: usize) -> f32 {
        let n = self.len() as f32;
        (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln()
    }

    /// The score of every document for `query`, in document order.
    pub fn scores<S: AsRef<str>>(&self, query: &[S]) -> Vec<f32> {
        let mut out = vec![0f32; self.len()];
        for t in query {
            let Some(post) = self.postings.get(t.as_ref()) else { continue };
            let idf = self.idf(post.len());
            for &(d, tf) in post {
                let tf = tf as f32;
                let norm = self.k1 * (1.0 - self.b + self.b * self.doc_len[d as usize] / self.avgdl);
                out[d as usize] += idf * tf * (self.k1 + 1.0) / (tf + norm);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(texts: &[&str]) -> Vec<Vec<String>> {
        texts.iter().map(|t| t.split_whitespace().map(str::to_string).collect()).collect()
    }

    #[test]
    fn hand_computed_score() {
        // N = 2, avgdl = (2 + 4)/2 = 3. "apple" is in doc 0 only (df 1):
        // idf = ln(1 + (2 − 1 + 0.5)/(1 + 0.5)) = ln 2.
        // doc 0: tf 1, |d| = 2: norm = 1.2·(0.25 + 0.75·2/3) = 0.9;
        // score = ln2 · 2.2/(1 + 0.9) = 0.80257.
        let idx = Bm25::new(&docs(&["apple pie", "banana split banana cream"]));
        let s = idx.scores(&["apple"]);
        assert!((s[0] - 2f32.ln() * 2.2 / 1.9).abs() < 1e-6, "{s:?}");
        assert_eq!(s[1], 0.0);
        // "banana" twice in doc 1 (|d| = 4): norm = 1.2·(0.25 + 0.75·4/3) = 1.5;
        // score = ln2 · 2·2.2/(2 + 1.5).
        let s = idx.scores(&["banana"]);
        assert!((s[1] - 2f32.ln() * 4.4 / 3.5).abs() < 1e-6, "{s:?}");
    }

    #[test]
    fn ranks_matching_document_first_and_handles_empty() {
        let idx = Bm25::new(&docs(&["sort array quick pivot", "hash table insert", "binary search array"]));
        let s = idx.scores(&["binary", "search"]);
        assert!(s[2] > s[0] && s[2] > s[1]);
        assert_eq!(idx.scores(&["absent"]), vec![0.0; 3]);
        let empty = Bm25::new::<String>(&[]);
        assert!(empty.scores(&["x"]).is_empty());
    }
}
