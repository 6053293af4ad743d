//! `lexical.bin`: a BM25F inverted index over functions, with four fields per function:
//! its name (qualified, split at camelCase and snake_case, with the initials of word runs:
//! `breadthFirstSearch` also reads `bfs`), the comment above it, its body (identifiers
//! split the same way, string literals, comments inside), and the words of its string
//! literals alone (weightless in BM25F, as the body holds them: the field says where a
//! procedure-name word occurs, since messages name algorithms that identifiers do not).
//! Terms are those of [`crate::features::words`].
//!
//! Layout (little-endian): `BRYLEX03`, documents `n` (u32), terms `t` (u32), `n` × 4 field
//! lengths (u16; all four `u16::MAX` for the slot of a removed function, which no
//! statistic counts), then per term (sorted): length (u8), bytes, document frequency (u32),
//! posting bytes (u32), postings. A posting is the document's distance to the previous
//! one (LEB128) and its term frequency in name, comment, body and strings (one byte each,
//! saturating).

use crate::features::words::{acronyms, tokens};
use crate::graph::{Icfg, Lang};
use rayon::prelude::*;
use std::collections::HashMap;

const MAGIC: &[u8; 8] = b"BRYLEX03";
pub const FIELDS: usize = 4;
/// Field weights of BM25F: a name word says more than a word of the body; string words
/// are already body words.
const WEIGHT: [f32; FIELDS] = [3.0, 1.5, 1.0, 0.0];
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
    out.extend(joined(&own));
    out.extend(own);
    out
}

/// Adjacent words written as one (`quick sort` → `quicksort`), as names often are.
fn joined(words: &[String]) -> Vec<String> {
    words.windows(2).filter(|w| w[0].chars().all(char::is_alphabetic) && w[1].chars().all(char::is_alphabetic)).map(|w| format!("{}{}", w[0], w[1])).collect()
}

/// The documents of the functions `fns` of `icfg`: `sources[file]` is the file's text and
/// `comment(f)` the comment above function `f`.
pub fn documents_of(icfg: &Icfg, fns: std::ops::Range<u32>, sources: &[String], comment: &(dyn Fn(u32) -> String + Sync)) -> Vec<Doc> {
    fns.into_par_iter()
        .map(|f| {
            let m = &icfg.functions[f as usize].meta;
            let src = &sources[m.file as usize];
            let body = src.get(m.bytes.0 as usize..(m.bytes.1 as usize).min(src.len())).unwrap_or("");
            Doc { fields: [name_terms(m.lang, &m.scope, &m.name), tokens(&comment(f)), tokens(body), tokens(&string_literals(body))] }
        })
        .collect()
}

/// The contents of the double-quoted string literals of C, C++ or Java source, one per
/// line; comments and character literals are passed over.
pub fn string_literals(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => i = src[i..].find('\n').map_or(b.len(), |k| i + k),
            b'/' if b.get(i + 1) == Some(&b'*') => i = src[i + 2..].find("*/").map_or(b.len(), |k| i + 2 + k + 2),
            q @ (b'"' | b'\'') => {
                let start = i + 1;
                i = start;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if q == b'"' {
                    out.push_str(src.get(start..i.min(b.len())).unwrap_or(""));
                    out.push('\n');
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
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

/// Field lengths of a removed function's slot: it counts in no statistic.
const REMOVED: [u16; FIELDS] = [u16::MAX; FIELDS];

type Posting = (u32, [u8; FIELDS]);

fn lengths(doc: &Doc) -> [u16; FIELDS] {
    std::array::from_fn(|f| doc.fields[f].len().min(u16::MAX as usize - 1) as u16)
}

/// The postings of `doc` numbered `d`, per term.
fn postings_of<'d>(d: u32, doc: &'d Doc, into: &mut HashMap<&'d str, Vec<Posting>>) {
    let mut tf: HashMap<&str, [u8; FIELDS]> = HashMap::new();
    for (f, terms) in doc.fields.iter().enumerate() {
        for t in terms {
            let e = tf.entry(t.as_str()).or_default();
            e[f] = e[f].saturating_add(1);
        }
    }
    for (t, counts) in tf {
        into.entry(t).or_default().push((d, counts));
    }
}

pub fn encode(docs: &[Doc]) -> Vec<u8> {
    let mut b = Builder::default();
    b.add(docs);
    let mut out = Vec::new();
    b.write_to(&mut out).expect("writing to memory");
    out
}

/// `lexical.bin` built a chunk of documents at a time, as [`encode`] builds it from all of
/// them: a term's postings are kept as the bytes the file holds (about 5 a posting), so
/// what grows with the corpus is those bytes and the vocabulary, not the documents' terms.
#[derive(Default)]
pub struct Builder {
    lens: Vec<[u16; FIELDS]>,
    terms: HashMap<Box<str>, Postings>,
}

/// One term's posting list as written: document frequency, last document, bytes.
#[derive(Default)]
struct Postings {
    count: u32,
    last: u32,
    bytes: Vec<u8>,
}

impl Builder {
    /// Adds `docs` as the next documents.
    pub fn add(&mut self, docs: &[Doc]) {
        let base = self.lens.len() as u32;
        let mut fresh: HashMap<&str, Vec<Posting>> = HashMap::new();
        for (i, doc) in docs.iter().enumerate() {
            self.lens.push(lengths(doc));
            postings_of(base + i as u32, doc, &mut fresh);
        }
        for (t, list) in fresh {
            // Terms past 255 bytes have no record (their length is one byte).
            if t.len() > 255 {
                continue;
            }
            let p = match self.terms.get_mut(t) {
                Some(p) => p,
                None => self.terms.entry(t.into()).or_default(),
            };
            for (d, counts) in list {
                put_varint(&mut p.bytes, d - p.last);
                p.last = d;
                p.bytes.extend(counts);
                p.count += 1;
            }
        }
    }

    /// Writes the index: header, field lengths, then the term records in term order.
    pub fn write_to(self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut terms: Vec<(Box<str>, Postings)> = self.terms.into_iter().collect();
        terms.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        out.write_all(MAGIC)?;
        out.write_all(&(self.lens.len() as u32).to_le_bytes())?;
        out.write_all(&(terms.len() as u32).to_le_bytes())?;
        let lens: Vec<u8> = self.lens.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
        out.write_all(&lens)?;
        for (t, p) in terms {
            out.write_all(&[t.len() as u8])?;
            out.write_all(t.as_bytes())?;
            out.write_all(&p.count.to_le_bytes())?;
            out.write_all(&(p.bytes.len() as u32).to_le_bytes())?;
            out.write_all(&p.bytes)?;
        }
        Ok(())
    }
}

/// One term's record: length, bytes, document frequency, posting bytes, postings (`buf`
/// is scratch). Nothing for an empty list; returns how many records it wrote.
fn put_term(body: &mut Vec<u8>, buf: &mut Vec<u8>, term: &str, list: &[Posting]) -> u32 {
    if list.is_empty() {
        return 0;
    }
    buf.clear();
    let mut prev = 0u32;
    for &(d, counts) in list {
        put_varint(buf, d - prev);
        prev = d;
        buf.extend(counts);
    }
    body.push(term.len() as u8);
    body.extend(term.as_bytes());
    body.extend((list.len() as u32).to_le_bytes());
    body.extend((buf.len() as u32).to_le_bytes());
    body.extend(buf.iter());
    1
}

/// The header (magic, slot and term counts, field lengths) before the term records.
fn assemble(lens: &[[u16; FIELDS]], terms: u32, body: Vec<u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + lens.len() * 2 * FIELDS + body.len());
    out.extend(MAGIC);
    out.extend((lens.len() as u32).to_le_bytes());
    out.extend(terms.to_le_bytes());
    for l in lens {
        for v in l {
            out.extend(v.to_le_bytes());
        }
    }
    out.extend(body);
    out
}

/// `old` (an encoded index) with the slots `removed` emptied and `added` appended: slot
/// `old slots + i` holds `added[i]`. Statistics then count the live slots only, as an
/// index of the live documents alone would. Terms no change touches keep their bytes.
pub fn update(old: &Lexical, removed: &[u32], added: &[Doc]) -> Vec<u8> {
    let gone: std::collections::HashSet<u32> = removed.iter().copied().collect();
    let mut lens = old.lens.clone();
    for &d in removed {
        if let Some(l) = lens.get_mut(d as usize) {
            *l = REMOVED;
        }
    }
    let base = lens.len() as u32;
    let mut fresh: HashMap<&str, Vec<Posting>> = HashMap::new();
    for (i, doc) in added.iter().enumerate() {
        lens.push(lengths(doc));
        postings_of(base + i as u32, doc, &mut fresh);
    }
    let mut new_terms: Vec<&str> = fresh.keys().copied().filter(|t| t.len() <= 255).collect();
    new_terms.sort_unstable();
    // Old terms in file order, which is sorted order.
    let old_terms: Vec<(&str, usize, usize, usize)> = old.entries().map(|(t, start, e)| (t, start, e.a, e.b)).collect();
    let mut body = Vec::with_capacity(old.bytes.len());
    let mut count = 0u32;
    let mut buf = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < old_terms.len() || j < new_terms.len() {
        let take_old = j >= new_terms.len() || (i < old_terms.len() && old_terms[i].0 <= new_terms[j]);
        let take_new = i >= old_terms.len() || (j < new_terms.len() && new_terms[j] <= old_terms[i].0);
        let extra: &[Posting] = if take_new { &fresh[new_terms[j]] } else { &[] };
        if take_old {
            let (term, start, a, b) = old_terms[i];
            let touched = !gone.is_empty() && old.postings(a, b).any(|(d, _)| gone.contains(&d));
            if !touched && extra.is_empty() {
                body.extend(&old.bytes[start..b]);
                count += 1;
            } else {
                let mut list: Vec<Posting> = old.postings(a, b).filter(|(d, _)| !gone.contains(d)).collect();
                list.extend_from_slice(extra);
                count += put_term(&mut body, &mut buf, term, &list);
            }
            i += 1;
        } else {
            count += put_term(&mut body, &mut buf, new_terms[j], extra);
        }
        if take_new {
            j += 1;
        }
    }
    assemble(&lens, count, body)
}

/// One query term with its weight (how often the query says it).
#[derive(Clone, Debug)]
pub struct QueryTerm {
    pub term: String,
    pub weight: f32,
    /// Its bit in the masks of [`LexScores`], when it is a procedure-name term.
    pub name: Option<u8>,
}

/// A procedure name of the query: its words, and other spellings of the whole name
/// (initials, the words run together), as bits of the name masks.
#[derive(Clone, Debug, Default)]
pub struct ProcName {
    pub words: Vec<u8>,
    pub whole: Vec<u8>,
}

#[derive(Clone, Debug, Default)]
pub struct QueryTerms {
    pub terms: Vec<QueryTerm>,
    pub procedures: Vec<ProcName>,
}

impl QueryTerms {
    /// How much of a procedure name a mask holds: the share of its words, or 1 for another
    /// spelling of the whole; the best procedure counts, the main one fully, others at 3/4.
    pub fn coverage(&self, mask: u32, main: usize) -> f32 {
        let has = |b: &u8| mask & (1u32 << b) != 0;
        let mut best = 0f32;
        for (i, p) in self.procedures.iter().enumerate() {
            let share = if p.whole.iter().any(has) {
                1.0
            } else if p.words.is_empty() {
                0.0
            } else {
                p.words.iter().filter(|b| has(b)).count() as f32 / p.words.len() as f32
            };
            best = best.max(if i == main { share } else { 0.75 * share });
        }
        best
    }

    /// The name mask of other words than an indexed name (a file's stem): the bits of the
    /// procedure-name terms among `words`.
    pub fn name_mask_of(&self, words: &[String]) -> u32 {
        self.terms.iter().filter(|t| words.contains(&t.term)).filter_map(|t| t.name).fold(0, |m, b| m | 1u32 << b)
    }
}

/// Per-function results of a lexical query.
#[derive(Clone, Debug, Default)]
pub struct LexScores {
    /// BM25F score of each function.
    pub score: Vec<f32>,
    /// Procedure-name terms of the query found in each function's name field (bits as in
    /// [`QueryTerm::name`]) …
    pub name_mask: Vec<u32>,
    /// … in its comment …
    pub comment_mask: Vec<u32>,
    /// … and in its string literals.
    pub string_mask: Vec<u32>,
}

/// The corpus statistics of BM25F. Summed over the shards of a corpus they let every shard
/// score its functions exactly as one index of the whole corpus would (scores of shards
/// are then comparable and merge into one ranking).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LexStats {
    /// Functions (documents).
    pub docs: u64,
    /// Summed length of each field.
    pub len_sums: [u64; FIELDS],
    /// Documents holding each term.
    pub df: HashMap<String, u64>,
}

const STATS_MAGIC: &[u8; 8] = b"BRYLST01";

impl LexStats {
    pub fn add(&mut self, o: &LexStats) {
        self.docs += o.docs;
        for f in 0..FIELDS {
            self.len_sums[f] += o.len_sums[f];
        }
        for (t, d) in &o.df {
            *self.df.entry(t.clone()).or_default() += d;
        }
    }

    fn avg(&self) -> [f32; FIELDS] {
        self.len_sums.map(|s| if self.docs == 0 { 1.0 } else { (s as f64 / self.docs as f64).max(1.0) as f32 })
    }

    /// Terms in byte order, so that equal statistics give equal files.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(STATS_MAGIC);
        b.extend_from_slice(&self.docs.to_le_bytes());
        for s in self.len_sums {
            b.extend_from_slice(&s.to_le_bytes());
        }
        let mut terms: Vec<(&String, &u64)> = self.df.iter().collect();
        terms.sort();
        b.extend_from_slice(&(terms.len() as u64).to_le_bytes());
        for (t, d) in terms {
            b.push(t.len().min(255) as u8);
            b.extend_from_slice(&t.as_bytes()[..t.len().min(255)]);
            b.extend_from_slice(&d.to_le_bytes());
        }
        b
    }

    pub fn from_bytes(b: &[u8]) -> Result<LexStats, String> {
        let bad = || "lexical statistics: truncated or not a statistics file".to_string();
        if b.len() < 8 || &b[..8] != STATS_MAGIC {
            return Err(bad());
        }
        let mut at = 8;
        let u64_next = |at: &mut usize| -> Result<u64, String> {
            let v = u64::from_le_bytes(b.get(*at..*at + 8).ok_or_else(bad)?.try_into().map_err(|_| bad())?);
            *at += 8;
            Ok(v)
        };
        let docs = u64_next(&mut at)?;
        let mut len_sums = [0u64; FIELDS];
        for s in &mut len_sums {
            *s = u64_next(&mut at)?;
        }
        let n = u64_next(&mut at)?;
        let mut df = HashMap::with_capacity(n.min(1 << 24) as usize);
        for _ in 0..n {
            let len = *b.get(at).ok_or_else(bad)? as usize;
            let t = std::str::from_utf8(b.get(at + 1..at + 1 + len).ok_or_else(bad)?).map_err(|_| bad())?.to_string();
            at += 1 + len;
            df.insert(t, u64_next(&mut at)?);
        }
        if at != b.len() {
            return Err(bad());
        }
        Ok(LexStats { docs, len_sums, df })
    }
}

pub struct Lexical {
    n: usize,
    /// Slots that hold a function (not removed): the document count of BM25F.
    live: usize,
    lens: Vec<[u16; FIELDS]>,
    avg: [f32; FIELDS],
    /// Summed field lengths of the live slots.
    sums: [u64; FIELDS],
    /// Statistics of the whole corpus this index is a shard of, when given: they replace
    /// the index's own in scoring.
    global: Option<LexStats>,
    /// Where each term's record starts in `bytes`, in the file's (sorted) order: a term is
    /// found by binary search, so opening makes no map of the vocabulary.
    terms: Vec<usize>,
    bytes: crate::mapped::Bytes,
    /// Documents an update removed or added over this file's ([`Lexical::with_patch`]).
    patch: Option<Box<Patch>>,
}

/// What an update changed over a base file: its slots `dead` removed, and the slots from
/// the base's last on held by an index of their own.
struct Patch {
    /// Base slots removed, ascending, and the same as bits.
    dead: Vec<u32>,
    dead_bits: Vec<u64>,
    /// Slots `base n ..`, numbered from 0.
    added: Lexical,
}

const PATCH_MAGIC: &[u8; 8] = b"BRYLEXP1";

/// A patch over a base of `base_n` slots: the base slots `dead` removed and `added` (an
/// encoded index whose slot `i` is slot `base_n + i`) appended.
pub fn patch_bytes(base_n: usize, dead: &[u32], added: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(24 + 4 * dead.len() + added.len());
    out.extend(PATCH_MAGIC);
    out.extend((base_n as u64).to_le_bytes());
    out.extend((dead.len() as u64).to_le_bytes());
    for d in dead {
        out.extend(d.to_le_bytes());
    }
    out.extend(added);
    out
}

/// The parts of [`patch_bytes`]'s `b`: the base's slots, those removed, and the index of
/// the slots added.
pub fn patch_parts(b: &[u8]) -> Result<(usize, Vec<u32>, Lexical), String> {
    let bad = || "lexical patch: damaged".to_string();
    if b.len() < 24 || &b[..8] != PATCH_MAGIC {
        return Err(bad());
    }
    let base_n = u64::from_le_bytes(b[8..16].try_into().expect("8 bytes")) as usize;
    let k = u64::from_le_bytes(b[16..24].try_into().expect("8 bytes")) as usize;
    let end = k.checked_mul(4).and_then(|x| x.checked_add(24)).filter(|&e| e <= b.len()).ok_or_else(bad)?;
    let dead: Vec<u32> = b[24..end].chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    if !dead.windows(2).all(|w| w[0] < w[1]) {
        return Err(bad());
    }
    Ok((base_n, dead, Lexical::from_bytes(b[end..].to_vec())?))
}

/// One term's record: the term, its document frequency, its postings' byte range.
struct Entry<'a> {
    term: &'a [u8],
    df: u32,
    a: usize,
    b: usize,
}

impl Lexical {
    /// Checks the layout (every term and posting list in bounds, terms in order).
    pub fn from_bytes(bytes: impl Into<crate::mapped::Bytes>) -> Result<Lexical, String> {
        let bytes = bytes.into();
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
        let mut sum = [0u64; FIELDS];
        let mut live = 0usize;
        for d in 0..n {
            let mut l = [0u16; FIELDS];
            for (f, v) in l.iter_mut().enumerate() {
                let p = at + (d * FIELDS + f) * 2;
                *v = u16::from_le_bytes([bytes[p], bytes[p + 1]]);
            }
            if l != REMOVED {
                live += 1;
                for f in 0..FIELDS {
                    sum[f] += u64::from(l[f]);
                }
            }
            lens.push(l);
        }
        at = lens_end;
        // A term takes at least nine bytes: a count the bytes cannot hold reserves nothing.
        let mut terms = Vec::with_capacity(t.min((bytes.len() - at) / 9));
        let mut last: &[u8] = &[];
        for _ in 0..t {
            let start = at;
            let len = *bytes.get(at).ok_or_else(|| bad("truncated"))? as usize;
            let term = bytes.get(at + 1..at + 1 + len).ok_or_else(|| bad("truncated"))?;
            if !terms.is_empty() && term <= last {
                return Err(bad("terms out of order"));
            }
            last = term;
            at += 1 + len;
            let plen = u32_at(at + 4).ok_or_else(|| bad("truncated"))? as usize;
            at += 8;
            if at + plen > bytes.len() {
                return Err(bad("truncated"));
            }
            terms.push(start);
            at += plen;
        }
        if at != bytes.len() {
            return Err(bad("trailing bytes"));
        }
        let avg = LexStats { docs: live as u64, len_sums: sum, df: HashMap::new() }.avg();
        Ok(Lexical { n, live, lens, avg, sums: sum, global: None, terms, bytes, patch: None })
    }

    /// This index with [`patch_bytes`]'s `b` over it: its statistics then count the live
    /// slots of both, as one index of the same documents would.
    pub fn with_patch(mut self, b: &[u8]) -> Result<Lexical, String> {
        let (base_n, dead, added) = patch_parts(b)?;
        if base_n != self.n || dead.last().is_some_and(|&d| d as usize >= base_n) {
            return Err("lexical patch: not over this index".into());
        }
        let mut dead_bits = vec![0u64; base_n.div_ceil(64)];
        for &d in &dead {
            dead_bits[d as usize / 64] |= 1 << (d % 64);
            let l = self.lens[d as usize];
            if l != REMOVED {
                self.live -= 1;
                for f in 0..FIELDS {
                    self.sums[f] -= u64::from(l[f]);
                }
            }
        }
        self.live += added.live;
        for f in 0..FIELDS {
            self.sums[f] += added.sums[f];
        }
        self.avg = LexStats { docs: self.live as u64, len_sums: self.sums, df: HashMap::new() }.avg();
        self.patch = Some(Box::new(Patch { dead, dead_bits, added }));
        Ok(self)
    }

    /// Whether base slot `d` was removed by a patch.
    fn dead(&self, d: u32) -> bool {
        self.patch.as_ref().is_some_and(|p| p.dead_bits.get(d as usize / 64).is_some_and(|w| w >> (d % 64) & 1 == 1))
    }

    /// Document frequency of `term` over the live slots of base and patch.
    fn df_of(&self, term: &str) -> u32 {
        let base = self.find(term).map_or(0, |e| {
            if self.patch.as_ref().is_none_or(|p| p.dead.is_empty()) {
                e.df
            } else {
                e.df.saturating_sub(self.postings(e.a, e.b).filter(|(d, _)| self.dead(*d)).count() as u32)
            }
        });
        base + self.patch.as_ref().and_then(|p| p.added.find(term)).map_or(0, |e| e.df)
    }

    /// The record starting at `start` (checked in bounds by `from_bytes`).
    fn entry(&self, start: usize) -> Entry<'_> {
        let b = &self.bytes;
        let len = b[start] as usize;
        let at = start + 1 + len;
        let word = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let (df, plen) = (word(at), word(at + 4) as usize);
        Entry { term: &b[start + 1..at], df, a: at + 8, b: at + 8 + plen }
    }

    /// The record of `term`, if the index has it.
    fn find(&self, term: &str) -> Option<Entry<'_>> {
        let i = self.terms.binary_search_by(|&s| self.entry(s).term.cmp(term.as_bytes())).ok()?;
        Some(self.entry(self.terms[i]))
    }

    /// Every record, in order: the term, where its record starts, and its postings' range.
    fn entries(&self) -> impl Iterator<Item = (&str, usize, Entry<'_>)> + '_ {
        self.terms.iter().map(|&s| {
            let e = self.entry(s);
            (std::str::from_utf8(e.term).unwrap_or(""), s, e)
        })
    }

    /// This index's own statistics (its live functions).
    pub fn stats(&self) -> LexStats {
        let mut terms: Vec<&str> = self.entries().map(|(t, _, _)| t).collect();
        if let Some(p) = &self.patch {
            terms.extend(p.added.entries().map(|(t, _, _)| t));
        }
        let df = terms.into_iter().map(|t| (t.to_string(), u64::from(self.df_of(t)))).filter(|(_, d)| *d > 0).collect();
        LexStats { docs: self.live as u64, len_sums: self.sums, df }
    }

    /// Scores with the statistics of a whole corpus this index is part of.
    pub fn use_global(&mut self, g: LexStats) {
        self.avg = g.avg();
        self.global = Some(g);
    }

    /// Slots, removed functions' included: function ids run below this.
    pub fn len(&self) -> usize {
        self.n + self.patch.as_ref().map_or(0, |p| p.added.n)
    }

    /// The postings between byte offsets `a` and `b`, documents in order.
    fn postings(&self, a: usize, b: usize) -> impl Iterator<Item = Posting> + '_ {
        let mut at = a;
        let mut doc = 0u32;
        std::iter::from_fn(move || {
            if at >= b {
                return None;
            }
            let delta = get_varint(&self.bytes, &mut at)?;
            doc = doc.saturating_add(delta);
            if at + FIELDS > b {
                return None;
            }
            let tf: [u8; FIELDS] = self.bytes[at..at + FIELDS].try_into().ok()?;
            at += FIELDS;
            Some((doc, tf))
        })
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// BM25F scores of every function, and where the query's procedure-name words occur.
    pub fn search(&self, query: &[QueryTerm]) -> LexScores {
        let total = self.len();
        let mut out = LexScores { score: vec![0.0; total], name_mask: vec![0; total], comment_mask: vec![0; total], string_mask: vec![0; total] };
        let n = self.global.as_ref().map_or(self.live as f32, |g| g.docs as f32);
        for q in query {
            let here = self.find(&q.term);
            let added = self.patch.as_ref().and_then(|p| Some((&p.added, p.added.find(&q.term)?)));
            if here.is_none() && added.is_none() {
                continue;
            }
            let df = match &self.global {
                Some(g) => g.df.get(&q.term).copied().unwrap_or(u64::from(self.df_of(&q.term))) as f32,
                None => self.df_of(&q.term) as f32,
            };
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            let mut score = |lex: &Lexical, e: Entry<'_>, first: usize, skip: &dyn Fn(u32) -> bool| {
                let mut at = e.a;
                let mut doc = 0u32;
                while at < e.b {
                    let Some(delta) = get_varint(&lex.bytes, &mut at) else { break };
                    doc = doc.saturating_add(delta);
                    if at + FIELDS > e.b || doc as usize >= lex.n {
                        break;
                    }
                    let tf = &lex.bytes[at..at + FIELDS];
                    at += FIELDS;
                    if skip(doc) {
                        continue;
                    }
                    let mut t = 0.0;
                    for f in 0..FIELDS {
                        if tf[f] > 0 {
                            let norm = 1.0 - B + B * lex.lens[doc as usize][f] as f32 / self.avg[f];
                            t += WEIGHT[f] * tf[f] as f32 / norm;
                        }
                    }
                    let d = first + doc as usize;
                    out.score[d] += q.weight * idf * t / (K1 + t);
                    if let Some(b) = q.name {
                        out.name_mask[d] |= u32::from(tf[0] > 0) << b;
                        out.comment_mask[d] |= u32::from(tf[1] > 0) << b;
                        out.string_mask[d] |= u32::from(tf[3] > 0) << b;
                    }
                }
            };
            if let Some(e) = here {
                score(self, e, 0, &|d| self.dead(d));
            }
            if let Some((lex, e)) = added {
                score(lex, e, self.n, &|_| false);
            }
        }
        out
    }
}

/// Query terms of pseudocode: its words, and its procedure names (split, initials, run
/// together) counted twice.
pub fn query_terms(text: &str, procedures: &[String]) -> QueryTerms {
    let mut weight: HashMap<String, f32> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut add = |t: &str, w: f32, order: &mut Vec<String>| {
        if !weight.contains_key(t) {
            order.push(t.to_string());
        }
        *weight.entry(t.to_string()).or_default() += w;
    };
    for t in tokens(text) {
        add(&t, 1.0, &mut order);
    }
    let mut names: Vec<String> = Vec::new();
    let bit = |t: &str, names: &mut Vec<String>| -> Option<u8> {
        if let Some(i) = names.iter().position(|n| n == t) {
            return Some(i as u8);
        }
        (names.len() < 32).then(|| {
            names.push(t.to_string());
            (names.len() - 1) as u8
        })
    };
    let mut procs = Vec::new();
    for p in procedures {
        let ws = tokens(p);
        let mut pn = ProcName::default();
        for w in &ws {
            pn.words.extend(bit(w, &mut names));
        }
        let mut whole: Vec<String> = acronyms(&ws).into_iter().filter(|a| a.len() == ws.len()).collect();
        if ws.len() >= 2 && ws.iter().all(|w| w.chars().all(char::is_alphabetic)) {
            whole.push(ws.concat());
        }
        for w in &whole {
            pn.whole.extend(bit(w, &mut names));
        }
        procs.push(pn);
    }
    for t in &names {
        add(t, 2.0, &mut order);
    }
    let terms = order
        .into_iter()
        .map(|t| QueryTerm { weight: weight[&t].min(4.0), name: names.iter().position(|n| *n == t).map(|i| i as u8), term: t })
        .collect();
    QueryTerms { terms, procedures: procs }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str, comment: &str, body: &str) -> Doc {
        Doc { fields: [name_terms(Lang::C, &[], name), tokens(comment), tokens(body), tokens(&string_literals(body))] }
    }

    /// Four functions of a vector and a heap sort.
    fn four_docs() -> Vec<Doc> {
        vec![
            doc("vector_init", "allocates a vector", "v->data = malloc(n); v->size = 0;"),
            doc("heap_sort", "sorts in place", "while (n > 1) { swap(a, 0, --n); sift_down(a, 0, n); }"),
            doc("vector_free", "", "free(v->data); v->size = 0; puts(\"freed vector\")"),
            doc("sift_down", "restores the heap", "while (2 * i + 1 < n) { c = 2 * i + 1; if (a[c] < a[c + 1]) c++; }"),
        ]
    }

    #[test]
    fn a_patched_index_scores_as_the_index_rewritten_with_its_change() {
        let docs = four_docs();
        let added = [doc("insertion_sort", "sorts a vector", "for (i = 1; i < n; i++) { key = a[i]; }"), doc("vector_push", "", "v->data[v->size++] = x;")];
        let base = Lexical::from_bytes(encode(&docs)).unwrap();
        // First patch: slot 1 removed, one function added; second: slot 3 and the first
        // patch's function removed, another added.
        let rewritten = Lexical::from_bytes(update(&Lexical::from_bytes(update(&base, &[1], &added[..1])).unwrap(), &[3, 4], &added[1..])).unwrap();
        let first = update(&Lexical::from_bytes(encode(&[])).unwrap(), &[], &added[..1]);
        let second = update(&Lexical::from_bytes(first).unwrap(), &[0], &added[1..]);
        let patched = Lexical::from_bytes(encode(&docs)).unwrap().with_patch(&patch_bytes(4, &[1, 3], &second)).unwrap();
        assert_eq!(patched.len(), rewritten.len());
        for q in ["vector", "sort", "heap", "data", "size", "push", "missing"] {
            let terms = [QueryTerm { term: q.to_string(), weight: 1.0, name: Some(0) }];
            let (a, b) = (patched.search(&terms), rewritten.search(&terms));
            assert_eq!(a.score, b.score, "{q}");
            assert_eq!(a.name_mask, b.name_mask, "{q}");
        }
        assert_eq!(patched.stats().df, rewritten.stats().df);
        assert_eq!(patched.stats().docs, rewritten.stats().docs);
        // A patch over another base, or damaged, is refused.
        assert!(Lexical::from_bytes(encode(&docs[..3])).unwrap().with_patch(&patch_bytes(4, &[1], &second)).is_err());
        assert!(base.with_patch(&patch_bytes(4, &[3, 1], &second)).is_err());
    }

    #[test]
    fn a_build_in_chunks_writes_what_appending_writes() {
        let docs = four_docs();
        let mut chunks = Builder::default();
        chunks.add(&docs[..1]);
        chunks.add(&docs[1..3]);
        chunks.add(&docs[3..]);
        let mut out = Vec::new();
        chunks.write_to(&mut out).unwrap();
        // `update` appends through its own writer: slots 2 and 3 added to an index of 0 and 1.
        let first = Lexical::from_bytes(encode(&docs[..2])).unwrap();
        assert_eq!(out, update(&first, &[], &docs[2..]));
        assert_eq!(out, encode(&docs));
        let lex = Lexical::from_bytes(out).unwrap();
        assert_eq!(lex.len(), 4);
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
        assert!(q.terms.iter().any(|t| t.term == "floyd" && t.name.is_some() && t.weight == 2.0));
        let r = lex.search(&q.terms);
        let best = (0..4).max_by(|&a, &b| r.score[a].total_cmp(&r.score[b])).unwrap();
        assert_eq!(best, 1, "{:?}", r.score);
        assert_eq!((q.coverage(r.name_mask[1], 0), q.coverage(r.name_mask[3], 0)), (1.0, 0.0));
        // Initials: BFS meets breadthFirstSearch, and the other way round.
        let q = query_terms("", &["BFS".into()]);
        let r = lex.search(&q.terms);
        assert!(r.score[2] > 0.0 && r.score[0] == 0.0);
        assert_eq!(q.coverage(r.name_mask[2], 0), 1.0);
        let q = query_terms("", &["BREADTH-FIRST-SEARCH".into(), "ENQUEUE".into()]);
        let r = lex.search(&q.terms);
        assert_eq!(q.coverage(r.name_mask[2], 0), 1.0);
        assert_eq!(q.coverage(r.name_mask[2], 1), 0.75, "a helper's name counts less");
        // Words run together: QUICKSORT meets quickSort, RADIX-SORT meets radixsort.
        let lex = Lexical::from_bytes(encode(&[doc("quickSort1", "", ""), doc("radixsort", "", "")])).unwrap();
        let q = query_terms("", &["QUICKSORT".into()]);
        assert_eq!(q.coverage(lex.search(&q.terms).name_mask[0], 0), 1.0);
        let q = query_terms("", &["RADIX-SORT".into()]);
        assert_eq!(q.coverage(lex.search(&q.terms).name_mask[1], 0), 1.0);
        // UNION, though a C keyword, is a word of names: it meets UF_union, not set_rank.
        let lex = Lexical::from_bytes(encode(&[doc("UF_union", "", "if (u == v) return u;"), doc("set_rank", "", "")])).unwrap();
        let q = query_terms("", &["UNION".into(), "FIND-SET".into(), "MAKE-SET".into()]);
        let r = lex.search(&q.terms);
        assert_eq!((q.coverage(r.name_mask[0], 0), q.coverage(r.name_mask[1], 0)), (1.0, 0.375));
    }

    #[test]
    fn string_literals_are_read_apart_from_comments_and_characters() {
        let src = "if (neg) IGRAPH_ERROR(\"Negative cycle found with Floyd-Warshall.\", E); // \"not this\"\n\
                   /* nor \"this\" */ c = '\"'; puts(\"a \\\"quoted\\\" word\");";
        assert_eq!(string_literals(src), "Negative cycle found with Floyd-Warshall.\na \\\"quoted\\\" word\n");
        assert_eq!(string_literals("s = \"unterminated\nx = 1;"), "unterminated\n");
        let lex = Lexical::from_bytes(encode(&[doc("f1", "", src), doc("floyd", "", "x = 1;")])).unwrap();
        let q = query_terms("", &["FLOYD-WARSHALL".into()]);
        let r = lex.search(&q.terms);
        assert_eq!((q.coverage(r.string_mask[0], 0), q.coverage(r.string_mask[1], 0)), (1.0, 0.0));
        assert_eq!((q.coverage(r.name_mask[0], 0), q.coverage(r.name_mask[1], 0)), (0.0, 0.5));
    }

    #[test]
    fn file_stems_cover_procedure_names_as_names_do() {
        let q = query_terms("for k = 1 to n: relax the matrix", &["FLOYD-WARSHALL".into(), "PRINT-PATH".into()]);
        let stem = |s: &str| q.coverage(q.name_mask_of(&name_terms(Lang::C, &[], s)), 0);
        assert_eq!(stem("floyd_warshall"), 1.0);
        assert_eq!(stem("floydWarshall"), 1.0);
        assert_eq!(stem("warshall"), 0.5);
        assert_eq!(stem("print"), 0.375, "a helper's words count less");
        assert_eq!(stem("paths"), 0.375, "plurals as in names");
        assert_eq!(stem("distances"), 0.0);
        // Other words of the query are no name: `matrix` in a stem covers nothing.
        assert_eq!(stem("matrix"), 0.0);
    }

    #[test]
    fn an_update_scores_as_an_index_of_the_live_documents() {
        let d = |name: &str, body: &str| doc(name, "", body);
        let all = vec![d("quick_sort", "swap pivot"), d("heap_sort", "sift down heap"), d("merge", "merge halves"), d("bfs", "queue visit")];
        let old = Lexical::from_bytes(encode(&all[..3])).unwrap();
        // Slot 1 (heap_sort) removed, bfs added as slot 3.
        let updated = Lexical::from_bytes(update(&old, &[1], &all[3..])).unwrap();
        let fresh = Lexical::from_bytes(encode(&[all[0].clone(), all[2].clone(), all[3].clone()])).unwrap();
        assert_eq!(updated.len(), 4);
        for q in ["sort heap", "queue visit merge", "pivot"] {
            let t = query_terms(q, &[]).terms;
            let (u, f) = (updated.search(&t), fresh.search(&t));
            assert_eq!(u.score[1], 0.0, "a removed slot scores nothing");
            for (slot, live) in [(0, 0), (2, 1), (3, 2)] {
                assert!((u.score[slot] - f.score[live]).abs() < 1e-6, "{q}: slot {slot} {} vs {}", u.score[slot], f.score[live]);
            }
        }
    }

    #[test]
    fn damaged_files_are_refused() {
        let bytes = encode(&[doc("a_b", "", "x y")]);
        assert!(Lexical::from_bytes(bytes.clone()).is_ok());
        assert!(Lexical::from_bytes(bytes[..bytes.len() - 1].to_vec()).is_err());
        assert!(Lexical::from_bytes(b"BRYLEX02\xff\xff\xff\xff\x00\x00\x00\x00".to_vec()).is_err());
        assert!(Lexical::from_bytes(Vec::new()).is_err());
        let empty = Lexical::from_bytes(encode(&[])).unwrap();
        assert!(empty.search(&query_terms("x", &[]).terms).score.is_empty());
        // A term count of billions (found by the fuzzer) reserves nothing and is refused.
        let mut huge = encode(&[doc("a_b", "", "x y")]);
        huge[12..16].copy_from_slice(&0xf000_0000u32.to_le_bytes());
        assert!(Lexical::from_bytes(huge).is_err());
    }
}
