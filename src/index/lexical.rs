//! `lexical.bin`: a BM25F inverted index over functions, with three fields per function:
//! its name (qualified, split at camelCase and snake_case, with the initials of word runs:
//! `breadthFirstSearch` also reads `bfs`), the comment above it, and its body (identifiers
//! split the same way, string literals, comments inside). Terms are those of
//! [`crate::features::words`].
//!
//! Layout (little-endian): `BRYLEX01`, documents `n` (u32), terms `t` (u32), `n` × 3 field
//! lengths (u16), then per term (sorted): length (u8), bytes, document frequency (u32),
//! posting bytes (u32), postings. A posting is the document's distance to the previous
//! one (LEB128) and its term frequency in name, comment and body (one byte each, saturating).

use crate::features::words::{acronyms, tokens};
use crate::graph::{Icfg, Lang};
use rayon::prelude::*;
use std::collections::HashMap;

const MAGIC: &[u8; 8] = b"BRYLEX01";
pub const FIELDS: usize = 3;
/// Field weights of BM25F: a name word says more than a word of the body.
const WEIGHT: [f32; FIELDS] = [3.0, 1.5, 1.0];
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// Terms of one function, per field.
#[derive(Clone, Debug, Default)]
pub struct Doc {
    pub fields: [Vec<String>; FIELDS],
}

/// Name-field terms: the qualified name without Java package parts, and initials.
pub fn name_terms(lang: Lang, scope: &[String], name: &str) -> Vec<String> {
    let mut parts: Vec<&str> = scope.iter().map(String::as_str).collect();
    if lang == Lang::Java {
        while parts.first().is_some_and(|p| p.chars().next().is_some_and(char::is_lowercase)) {
            parts.remove(0);
        }
    }
    let mut out: Vec<String> = parts.iter().flat_map(|p| tokens(p)).collect();
    let own = tokens(name);
    out.extend(acronyms(&own));
    out.extend(own);
    out
}

/// The documents of every function of `icfg`; `sources[file]` is the file's text and
/// `comment(f)` the comment above function `f`.
pub fn documents(icfg: &Icfg, sources: &[String], comment: &(dyn Fn(u32) -> String + Sync)) -> Vec<Doc> {
    (0..icfg.functions.len() as u32)
        .into_par_iter()
        .map(|f| {
            let m = &icfg.functions[f as usize].meta;
            let src = &sources[m.file as usize];
            let body = src.get(m.bytes.0 as usize..(m.bytes.1 as usize).min(src.len())).unwrap_or("");
            Doc { fields: [name_terms(m.lang, &m.scope, &m.name), tokens(&comment(f)), tokens(body)] }
        })
        .collect()
}

fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(b: &[u8], at: &mut usize) -> Option<u32> {
    let mut v = 0u32;
    for shift in (0..35).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= ((byte & 0x7f) as u32) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

pub fn encode(docs: &[Doc]) -> Vec<u8> {
    let mut postings: HashMap<&str, Vec<(u32, [u8; FIELDS])>> = HashMap::new();
    for (d, doc) in docs.iter().enumerate() {
        let mut tf: HashMap<&str, [u8; FIELDS]> = HashMap::new();
        for (f, terms) in doc.fields.iter().enumerate() {
            for t in terms {
                let e = tf.entry(t.as_str()).or_default();
                e[f] = e[f].saturating_add(1);
            }
        }
        for (t, counts) in tf {
            postings.entry(t).or_default().push((d as u32, counts));
        }
    }
    let mut terms: Vec<&str> = postings.keys().copied().filter(|t| t.len() <= 255).collect();
    terms.sort_unstable();
    let mut out = Vec::new();
    out.extend(MAGIC);
    out.extend((docs.len() as u32).to_le_bytes());
    out.extend((terms.len() as u32).to_le_bytes());
    for d in docs {
        for f in &d.fields {
            out.extend((f.len().min(u16::MAX as usize) as u16).to_le_bytes());
        }
    }
    let mut buf = Vec::new();
    for t in terms {
        let list = &postings[t];
        buf.clear();
        let mut prev = 0u32;
        for &(d, counts) in list {
            put_varint(&mut buf, d - prev);
            prev = d;
            buf.extend(counts);
        }
        out.push(t.len() as u8);
        out.extend(t.as_bytes());
        out.extend((list.len() as u32).to_le_bytes());
        out.extend((buf.len() as u32).to_le_bytes());
        out.extend(&buf);
    }
    out
}

/// One query term with its weight (how often the query says it).
#[derive(Clone, Debug)]
pub struct QueryTerm {
    pub term: String,
    pub weight: f32,
    /// A word of the query's procedure names.
    pub name: bool,
}

/// Per-function results of a lexical query.
#[derive(Clone, Debug, Default)]
pub struct LexScores {
    /// BM25F score of each function.
    pub score: Vec<f32>,
    /// Procedure-name words of the query found in each function's name field.
    pub name_hits: Vec<u8>,
    /// … and in its comment.
    pub comment_hits: Vec<u8>,
    /// Distinct procedure-name words the query has.
    pub name_words: usize,
}

pub struct Lexical {
    n: usize,
    lens: Vec<[u16; FIELDS]>,
    avg: [f32; FIELDS],
    /// term → (document frequency, posting range in `bytes`).
    terms: HashMap<String, (u32, usize, usize)>,
    bytes: Vec<u8>,
}

impl Lexical {
    /// Checks the layout (every term and posting list in bounds).
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Lexical, String> {
        let bad = |m: &str| format!("lexical index: {m}");
        if bytes.len() < 16 || &bytes[..8] != MAGIC {
            return Err(bad("not a lexical index"));
        }
        let u32_at = |at: usize| -> Option<u32> { Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?)) };
        let n = u32_at(8).ok_or_else(|| bad("truncated"))? as usize;
        let t = u32_at(12).ok_or_else(|| bad("truncated"))? as usize;
        let mut at = 16;
        let lens_end = at + n * FIELDS * 2;
        if bytes.len() < lens_end {
            return Err(bad("truncated"));
        }
        let mut lens = Vec::with_capacity(n);
        let mut sum = [0f64; FIELDS];
        for d in 0..n {
            let mut l = [0u16; FIELDS];
            for (f, v) in l.iter_mut().enumerate() {
                let p = at + (d * FIELDS + f) * 2;
                *v = u16::from_le_bytes([bytes[p], bytes[p + 1]]);
                sum[f] += *v as f64;
            }
            lens.push(l);
        }
        at = lens_end;
        let mut terms = HashMap::with_capacity(t);
        for _ in 0..t {
            let len = *bytes.get(at).ok_or_else(|| bad("truncated"))? as usize;
            let term = bytes.get(at + 1..at + 1 + len).ok_or_else(|| bad("truncated"))?;
            let term = std::str::from_utf8(term).map_err(|_| bad("a term is not UTF-8"))?.to_string();
            at += 1 + len;
            let df = u32_at(at).ok_or_else(|| bad("truncated"))?;
            let plen = u32_at(at + 4).ok_or_else(|| bad("truncated"))? as usize;
            at += 8;
            if at + plen > bytes.len() {
                return Err(bad("truncated"));
            }
            terms.insert(term, (df, at, at + plen));
            at += plen;
        }
        if at != bytes.len() {
            return Err(bad("trailing bytes"));
        }
        let avg = sum.map(|s| if n == 0 { 1.0 } else { (s / n as f64).max(1.0) as f32 });
        Ok(Lexical { n, lens, avg, terms, bytes })
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// BM25F scores of every function, and where the query's procedure-name words occur.
    pub fn search(&self, query: &[QueryTerm]) -> LexScores {
        let mut out = LexScores {
            score: vec![0.0; self.n],
            name_hits: vec![0; self.n],
            comment_hits: vec![0; self.n],
            name_words: query.iter().filter(|q| q.name).count(),
        };
        let n = self.n as f32;
        for q in query {
            let Some(&(df, a, b)) = self.terms.get(&q.term) else { continue };
            let idf = (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln();
            let mut at = a;
            let mut doc = 0u32;
            while at < b {
                let Some(delta) = get_varint(&self.bytes, &mut at) else { break };
                doc = doc.saturating_add(delta);
                if at + FIELDS > b || doc as usize >= self.n {
                    break;
                }
                let tf = &self.bytes[at..at + FIELDS];
                at += FIELDS;
                let d = doc as usize;
                let mut t = 0.0;
                for f in 0..FIELDS {
                    if tf[f] > 0 {
                        let norm = 1.0 - B + B * self.lens[d][f] as f32 / self.avg[f];
                        t += WEIGHT[f] * tf[f] as f32 / norm;
                    }
                }
                out.score[d] += q.weight * idf * t / (K1 + t);
                if q.name {
                    out.name_hits[d] += u8::from(tf[0] > 0);
                    out.comment_hits[d] += u8::from(tf[1] > 0);
                }
            }
        }
        out
    }
}

/// Query terms of pseudocode: its words, and its procedure names (split, with initials)
/// counted twice.
pub fn query_terms(text: &str, procedures: &[String]) -> Vec<QueryTerm> {
    let mut weight: HashMap<String, f32> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut add = |t: String, w: f32, order: &mut Vec<String>| {
        if !weight.contains_key(&t) {
            order.push(t.clone());
        }
        *weight.entry(t).or_default() += w;
    };
    for t in tokens(text) {
        add(t, 1.0, &mut order);
    }
    let mut names: Vec<String> = Vec::new();
    for p in procedures {
        let ws = tokens(p);
        for t in acronyms(&ws).into_iter().take(1).chain(ws) {
            if !names.contains(&t) {
                names.push(t);
            }
        }
    }
    for t in &names {
        add(t.clone(), 2.0, &mut order);
    }
    order
        .into_iter()
        .map(|t| QueryTerm { weight: weight[&t].min(4.0), name: names.contains(&t), term: t })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str, comment: &str, body: &str) -> Doc {
        Doc { fields: [name_terms(Lang::C, &[], name), tokens(comment), tokens(body)] }
    }

    #[test]
    fn ranks_name_matches_first_and_round_trips() {
        let docs = vec![
            doc("vector_init", "allocates a vector", "v->data = malloc(n); v->size = 0;"),
            doc("shortest_paths_floyd_warshall", "all pairs shortest paths", "for (k = 0; k < n; k++) dist[i][j] = min"),
            doc("breadthFirstSearch", "", "queue_push(q, s); while (!queue_empty(q))"),
            doc("print_matrix", "", "printf(\"floyd\")"),
        ];
        let lex = Lexical::from_bytes(encode(&docs)).unwrap();
        assert_eq!(lex.len(), 4);
        let q = query_terms("D = W for k = 1 to n D[i][j] = min(D[i][j], D[i][k] + D[k][j])", &["FLOYD-WARSHALL".into()]);
        assert!(q.iter().any(|t| t.term == "floyd" && t.name && t.weight == 2.0));
        let r = lex.search(&q);
        let best = (0..4).max_by(|&a, &b| r.score[a].total_cmp(&r.score[b])).unwrap();
        assert_eq!(best, 1, "{:?}", r.score);
        assert_eq!((r.name_words, r.name_hits[1], r.name_hits[3]), (2, 2, 0));
        // Initials: BFS meets breadthFirstSearch.
        let r = lex.search(&query_terms("", &["BFS".into()]));
        assert!(r.score[2] > 0.0 && r.score[0] == 0.0);
        let r = lex.search(&query_terms("", &["BREADTH-FIRST-SEARCH".into()]));
        assert_eq!(r.name_hits[2], 4);
    }

    #[test]
    fn damaged_files_are_refused() {
        let bytes = encode(&[doc("a_b", "", "x y")]);
        assert!(Lexical::from_bytes(bytes.clone()).is_ok());
        assert!(Lexical::from_bytes(bytes[..bytes.len() - 1].to_vec()).is_err());
        assert!(Lexical::from_bytes(b"BRYLEX01\xff\xff\xff\xff\x00\x00\x00\x00".to_vec()).is_err());
        assert!(Lexical::from_bytes(Vec::new()).is_err());
        let empty = Lexical::from_bytes(encode(&[])).unwrap();
        assert!(empty.search(&query_terms("x", &[])).score.is_empty());
    }
}
