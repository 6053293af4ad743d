//! CLARC (C/C++ code search from English queries): read a file in either public format,
//! rank the file's whole candidate pool for each query by one method, and score the
//! rankings with [`crate::metrics`].
//!
//! Formats: a dict `{"query": {qid: text}, "corpus": {cid: code}, "qrel": {qid: {cid: label}}}`,
//! or a list of `{"query_id", "query_text", "code_id", "code_text", "relevance"}` pairs whose
//! pool is every `code_text` of the file (a code id listed twice is one candidate).
//!
//! Methods:
//! - `bm25`: Okapi BM25 over [`crate::tokenize`] terms of each candidate.
//! - `text`: cosine of the MiniLM vectors of the query and the whole candidate.
//! - `beryl`: text plus structure. Three signals, each z-scored over the pool, are added
//!   with weights 1, 0.25, 0.25: (1) the function-level cosine, the best of the whole
//!   snippet and each of its functions (so a primary function is not cut off by the
//!   encoder's 256 tokens when helpers come first); (2) node alignment: C/C++ candidates
//!   go through the CFG front end, and each query sentence is matched to its most similar
//!   CFG node text (statement, condition, function name), averaged over sentences; for
//!   assembly and Wasm, which have no names, the node is an English description of what
//!   the instructions do ([`crate::profile::Profile::describe`]); (3) the structure
//!   agreement of [`crate::profile`] (loops, recursion, operator families the query asks for).
//! - `fusion`: reciprocal-rank fusion (k = 60) of `bm25` and `text`, equal weights.

use crate::bm25::Bm25;
use crate::metrics::{query_metrics, Metrics};
use crate::profile::{self, code_kind, CodeKind};
use crate::rank::{dot, encode_all, order, rrf, zfuse};
use crate::tokenize::tokens;
use crate::EvalError;
use beryl::features::{Encoder, TextVec};
use beryl::graph::NodeKind;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    Bm25,
    Text,
    Beryl,
    Fusion,
}

impl Method {
    pub const ALL: [Method; 4] = [Method::Bm25, Method::Text, Method::Beryl, Method::Fusion];

    pub fn name(self) -> &'static str {
        match self {
            Method::Bm25 => "bm25",
            Method::Text => "text",
            Method::Beryl => "beryl",
            Method::Fusion => "fusion",
        }
    }

    fn needs_encoder(self) -> bool {
        self != Method::Bm25
    }
}

#[derive(Clone, Debug)]
pub struct Query {
    pub id: String,
    pub text: String,
}

#[derive(Clone, Debug)]
pub struct Candidate {
    pub id: String,
    pub code: String,
}

/// One CLARC file, whichever format it came in.
#[derive(Clone, Debug)]
pub struct ClarcFile {
    /// File stem, e.g. `group1_original`.
    pub name: String,
    pub queries: Vec<Query>,
    pub pool: Vec<Candidate>,
    /// Query id → candidate id → label; absent candidates are 0.
    pub qrels: HashMap<String, HashMap<String, u32>>,
}

/// Settings named by the last part of a file name.
const SETTINGS: [&str; 6] = ["original", "neutralized", "randomized", "asm_short", "asm_long", "wasm"];

impl ClarcFile {
    pub fn load(path: &Path) -> Result<ClarcFile, EvalError> {
        let bytes = std::fs::read(path).map_err(|e| EvalError::Io { path: path.into(), source: e })?;
        let v: Value = serde_json::from_slice(&bytes).map_err(|e| EvalError::Json { path: path.into(), source: e })?;
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        ClarcFile::from_value(name, path, &v)
    }

    /// Reads either format from parsed JSON; `path` only names the file in errors.
    pub fn from_value(name: String, path: &Path, v: &Value) -> Result<ClarcFile, EvalError> {
        let bad = |msg: String| EvalError::Format { path: path.into(), msg };
        match v {
            Value::Object(o) => {
                let (Some(q), Some(c), Some(r)) = (o.get("query"), o.get("corpus"), o.get("qrel")) else {
                    return Err(bad("expected the keys \"query\", \"corpus\" and \"qrel\" (or a list of query-code pairs)".into()));
                };
                let as_obj = |x: &Value, key: &str| x.as_object().cloned().ok_or_else(|| bad(format!("\"{key}\" is not an object")));
                let mut queries = Vec::new();
                for (id, t) in as_obj(q, "query")? {
                    let text = t.as_str().ok_or_else(|| bad(format!("query {id}: text is not a string")))?;
                    queries.push(Query { id, text: text.to_string() });
                }
                let mut pool = Vec::new();
                for (id, t) in as_obj(c, "corpus")? {
                    let code = t.as_str().ok_or_else(|| bad(format!("corpus {id}: code is not a string")))?;
                    pool.push(Candidate { id, code: code.to_string() });
                }
                let mut qrels: HashMap<String, HashMap<String, u32>> = HashMap::new();
                for (qid, m) in as_obj(r, "qrel")? {
                    let m = m.as_object().ok_or_else(|| bad(format!("qrel {qid} is not an object")))?;
                    let mut labels = HashMap::new();
                    for (cid, l) in m {
                        labels.insert(cid.clone(), label(l).ok_or_else(|| bad(format!("qrel {qid}/{cid}: label {l} is not a non-negative integer")))?);
                    }
                    qrels.insert(qid, labels);
                }
                let mut f = ClarcFile { name, queries, pool, qrels };
                f.queries.sort_by(|a, b| a.id.cmp(&b.id));
                f.warn_dangling(path);
                Ok(f)
            }
            Value::Array(rows) => {
                let mut f = ClarcFile { name, queries: Vec::new(), pool: Vec::new(), qrels: HashMap::new() };
                let mut seen_code: HashMap<String, usize> = HashMap::new();
                let mut conflicts = 0usize;
                for (i, row) in rows.iter().enumerate() {
                    let field = |k: &str| row.get(k).ok_or_else(|| bad(format!("pair {i}: missing \"{k}\"")));
                    let qid = id_string(field("query_id")?).ok_or_else(|| bad(format!("pair {i}: query_id is not a string or number")))?;
                    let cid = id_string(field("code_id")?).ok_or_else(|| bad(format!("pair {i}: code_id is not a string or number")))?;
                    let qtext = field("query_text")?.as_str().ok_or_else(|| bad(format!("pair {i}: query_text is not a string")))?;
                    let code = field("code_text")?.as_str().ok_or_else(|| bad(format!("pair {i}: code_text is not a string")))?;
                    let rel = label(field("relevance")?).ok_or_else(|| bad(format!("pair {i}: relevance is not a non-negative integer")))?;
                    if !f.qrels.contains_key(&qid) {
                        f.queries.push(Query { id: qid.clone(), text: qtext.to_string() });
                    }
                    f.qrels.entry(qid).or_default().insert(cid.clone(), rel);
                    match seen_code.get(&cid) {
                        Some(&at) => conflicts += usize::from(f.pool[at].code != code),
                        None => {
                            seen_code.insert(cid.clone(), f.pool.len());
                            f.pool.push(Candidate { id: cid, code: code.to_string() });
                        }
                    }
                }
                // Queries in id order, as in the dict format, so means add up identically.
                f.queries.sort_by(|a, b| a.id.cmp(&b.id));
                f.warn_dangling(path);
                if conflicts > 0 {
                    log::warn!("{}: {conflicts} code ids listed again with other code; the first text is used", path.display());
                }
                Ok(f)
            }
            _ => Err(bad("expected a JSON object or list at the top level".into())),
        }
    }

    /// Logs qrel entries that name unknown queries (never scored) or unknown candidates
    /// (relevant but unrankable: they lower recall and NDCG).
    fn warn_dangling(&self, path: &Path) {
        let known: std::collections::HashSet<&str> = self.pool.iter().map(|c| c.id.as_str()).collect();
        let no_query = self.qrels.keys().filter(|q| !self.queries.iter().any(|x| &x.id == *q)).count();
        let no_code = self.qrels.values().flat_map(|m| m.iter()).filter(|(c, &l)| l > 0 && !known.contains(c.as_str())).count();
        if no_query + no_code > 0 {
            log::warn!("{}: qrel names {no_query} unknown queries and {no_code} relevant candidates not in the corpus", path.display());
        }
    }

    /// The highest label in the file: the only one MRR counts.
    pub fn top_grade(&self) -> u32 {
        self.qrels.values().flat_map(|m| m.values().copied()).max().unwrap_or(1).max(1)
    }

    /// `(group, setting)` from the file name: `group3_short_original` → (group3_short,
    /// original), `group3_asm_long` → (group3, asm_long); unknown names → (name, "-").
    pub fn group_setting(&self) -> (String, String) {
        for s in SETTINGS {
            if let Some(g) = self.name.strip_suffix(&format!("_{s}")) {
                return (g.to_string(), s.to_string());
            }
        }
        (self.name.clone(), "-".into())
    }
}

/// A label: a non-negative integer, written as a number (1, 1.0) or a numeric string.
fn label(v: &Value) -> Option<u32> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0).map(|f| f as u64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .and_then(|n| u32::try_from(n).ok())
}

fn id_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The `.json` files named by `paths`: files as given, directories' `.json` files sorted.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, EvalError> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| EvalError::Io { path: p.clone(), source: e })?;
        if meta.is_dir() {
            let rd = std::fs::read_dir(p).map_err(|e| EvalError::Io { path: p.clone(), source: e })?;
            let mut files: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x.eq_ignore_ascii_case("json")) && f.is_file())
                .collect();
            files.sort();
            out.extend(files);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// The scores of one method on one file.
#[derive(Clone, Debug, Serialize)]
pub struct FileScore {
    pub file: String,
    pub group: String,
    pub setting: String,
    pub method: Method,
    /// Queries with at least one relevant candidate (the others are not scored).
    pub queries: usize,
    pub candidates: usize,
    pub metrics: Metrics,
}

pub struct RunOptions<'a> {
    /// The text encoder; every method but `bm25` needs it.
    pub encoder: Option<&'a Encoder>,
    /// Progress bars on stderr while encoding.
    pub progress: bool,
}

/// Weights of the `beryl` signals after z-scoring (function-level text is 1). Alone, the
/// node signal ranks far below the whole-function cosine (35 vs 62 NDCG@10 on dev
/// group1_original): it is a helper, as is the structure term. 0.5 for nodes lost to
/// text alone on dev; 0.25 is the one other value tried.
pub const W_PARTS: f32 = 0.25;
pub const W_STRUCTURE: f32 = 0.25;
/// Most CFG node texts encoded per candidate (long merged snippets have hundreds).
const MAX_NODES: usize = 96;

/// Scores `file` with each of `methods` (each computed once even when listed twice).
pub fn evaluate(file: &ClarcFile, methods: &[Method], opts: &RunOptions) -> Result<Vec<FileScore>, EvalError> {
    let enc = match (methods.iter().find(|m| m.needs_encoder()), opts.encoder) {
        (Some(m), None) => return Err(EvalError::NeedsEncoder(m.name())),
        (_, e) => e,
    };
    let mut sig = Signals { file, bm25: None, text: None, beryl: None };
    let (group, setting) = file.group_setting();
    let grade = file.top_grade();
    let mut out: Vec<FileScore> = Vec::new();
    for &m in methods {
        if out.iter().any(|s| s.method == m) {
            continue;
        }
        let scores: Vec<Vec<f32>> = match m {
            Method::Bm25 => sig.bm25().clone(),
            Method::Text => sig.text(enc, opts.progress)?.clone(),
            Method::Beryl => sig.beryl(enc, opts.progress)?.clone(),
            Method::Fusion => {
                let b = sig.bm25().clone();
                let t = sig.text(enc, opts.progress)?.clone();
                b.iter().zip(&t).map(|(b, t)| rrf(&[(b, 1.0), (t, 1.0)], &|x, y| file.pool[x].id.cmp(&file.pool[y].id))).collect()
            }
        };
        let mut per_query = Vec::new();
        for (q, s) in file.queries.iter().zip(&scores) {
            let Some(rels) = file.qrels.get(&q.id) else { continue };
            let ranking: Vec<&str> =
                order(s, &|x, y| file.pool[x].id.cmp(&file.pool[y].id)).into_iter().map(|i| file.pool[i].id.as_str()).collect();
            let rels: HashMap<&str, u32> = rels.iter().map(|(k, &v)| (k.as_str(), v)).collect();
            if let Some(qm) = query_metrics(&ranking, &rels, grade) {
                per_query.push(qm);
            }
        }
        out.push(FileScore {
            file: file.name.clone(),
            group: group.clone(),
            setting: setting.clone(),
            method: m,
            queries: per_query.len(),
            candidates: file.pool.len(),
            metrics: Metrics::mean(&per_query),
        });
    }
    Ok(out)
}

/// Score matrices (query × pool) computed on first use and shared between methods.
struct Signals<'f> {
    file: &'f ClarcFile,
    bm25: Option<Vec<Vec<f32>>>,
    text: Option<Vec<Vec<f32>>>,
    beryl: Option<Vec<Vec<f32>>>,
}

impl Signals<'_> {
    fn bm25(&mut self) -> &Vec<Vec<f32>> {
        let f = self.file;
        self.bm25.get_or_insert_with(|| {
            let docs: Vec<Vec<String>> = f.pool.iter().map(|c| tokens(&c.code)).collect();
            let idx = Bm25::new(&docs);
            f.queries.iter().map(|q| idx.scores(&tokens(&q.text))).collect()
        })
    }

    fn text(&mut self, enc: Option<&Encoder>, show: bool) -> Result<&Vec<Vec<f32>>, EvalError> {
        if self.text.is_none() {
            let enc = enc.ok_or(EvalError::NeedsEncoder("text"))?;
            let f = self.file;
            let q = query_vectors(enc, f, show)?;
            let codes: Vec<&str> = f.pool.iter().map(|c| c.code.as_str()).collect();
            let c = encode_all(enc, &codes, &format!("{}: code", f.name), show)?;
            self.text = Some(q.iter().map(|qv| c.iter().map(|cv| dot(qv, cv)).collect()).collect());
        }
        Ok(self.text.as_ref().expect("just set"))
    }

    fn beryl(&mut self, enc: Option<&Encoder>, show: bool) -> Result<&Vec<Vec<f32>>, EvalError> {
        if self.beryl.is_none() {
            let scores = self.compute_beryl(enc.ok_or(EvalError::NeedsEncoder("beryl"))?, show)?;
            self.beryl = Some(scores);
        }
        Ok(self.beryl.as_ref().expect("just set"))
    }

    fn compute_beryl(&mut self, enc: &Encoder, show: bool) -> Result<Vec<Vec<f32>>, EvalError> {
        let whole = self.text(Some(enc), show)?.clone();
        let f = self.file;
        let views: Vec<Views> = f.pool.iter().map(|c| Views::of(&c.code)).collect();
        // Every extra text of the pool, encoded in one pass.
        let mut texts: Vec<&str> = Vec::new();
        for v in &views {
            texts.extend(v.functions.iter().map(String::as_str));
            texts.extend(v.parts.iter().map(String::as_str));
        }
        let vecs = encode_all(enc, &texts, &format!("{}: statements", f.name), show)?;
        let mut at = 0;
        let mut fn_vecs: Vec<&[TextVec]> = Vec::new();
        let mut part_vecs: Vec<&[TextVec]> = Vec::new();
        for v in &views {
            fn_vecs.push(&vecs[at..at + v.functions.len()]);
            at += v.functions.len();
            part_vecs.push(&vecs[at..at + v.parts.len()]);
            at += v.parts.len();
        }
        let qv = query_vectors(enc, f, show)?;
        let sentences: Vec<Vec<String>> = f.queries.iter().map(|q| sentences(&q.text)).collect();
        let flat: Vec<&str> = sentences.iter().flatten().map(String::as_str).collect();
        let svecs = encode_all(enc, &flat, &format!("{}: query sentences", f.name), show)?;
        let mut s_at = 0;
        let mut out = Vec::with_capacity(f.queries.len());
        for (qi, q) in f.queries.iter().enumerate() {
            let sv = &svecs[s_at..s_at + sentences[qi].len()];
            s_at += sentences[qi].len();
            let cues = profile::query_cues(&q.text);
            let n = f.pool.len();
            let (mut func, mut parts, mut structure) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
            for ci in 0..n {
                let best_fn = fn_vecs[ci].iter().map(|v| dot(&qv[qi], v)).fold(whole[qi][ci], f32::max);
                func.push(best_fn);
                parts.push(maxsim(sv, part_vecs[ci]).unwrap_or(best_fn));
                structure.push(views[ci].profile.agreement(&cues));
            }
            out.push(zfuse(&[(&func, 1.0), (&parts, W_PARTS), (&structure, W_STRUCTURE)]));
        }
        Ok(out)
    }
}

/// Node-level alignment, as Beryllium matches query statements to code statements: each
/// query sentence takes its best node, and the sentences' best cosines are averaged.
/// `None` when either side is empty.
fn maxsim(sentences: &[TextVec], nodes: &[TextVec]) -> Option<f32> {
    if sentences.is_empty() || nodes.is_empty() {
        return None;
    }
    let best = |s: &TextVec| nodes.iter().map(|n| dot(s, n)).fold(f32::MIN, f32::max);
    Some(sentences.iter().map(best).sum::<f32>() / sentences.len() as f32)
}

/// The sentences of a query with at least three words (the whole query when none has).
fn sentences(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let next_space = chars.get(i + 1).is_none_or(|n| n.is_whitespace());
        if c == '\n' || ((c == '.' || c == ';' || c == '?' || c == '!') && next_space) {
            if cur.split_whitespace().count() >= 3 {
                out.push(cur.trim().to_string());
            }
            cur.clear();
        } else {
            cur.push(c);
        }
    }
    if cur.split_whitespace().count() >= 3 {
        out.push(cur.trim().to_string());
    }
    if out.is_empty() {
        out.push(text.trim().to_string());
    }
    out
}

fn query_vectors(enc: &Encoder, f: &ClarcFile, show: bool) -> Result<Vec<TextVec>, EvalError> {
    let texts: Vec<&str> = f.queries.iter().map(|q| q.text.as_str()).collect();
    encode_all(enc, &texts, &format!("{}: queries", f.name), show)
}

/// The texts and facts the `beryl` method reads from one candidate.
struct Views {
    /// Each function's own source, when the snippet holds more than one.
    functions: Vec<String>,
    /// CFG node texts (C/C++), or the English description (assembly, Wasm).
    parts: Vec<String>,
    profile: profile::Profile,
}

impl Views {
    fn of(code: &str) -> Views {
        let kind = code_kind(code);
        let prof = match kind {
            CodeKind::Source => profile::from_source(code),
            CodeKind::Asm => profile::from_asm(code),
            CodeKind::Wasm => profile::from_wasm(code),
        };
        if kind != CodeKind::Source {
            return Views { functions: Vec::new(), parts: vec![prof.describe()], profile: prof };
        }
        let mut functions = Vec::new();
        let mut parts: Vec<String> = Vec::new();
        // The extension only picks the grammar: C++ reads C functions too.
        if let Ok(pf) = beryl::lang::parse_file(Path::new("candidate.cpp"), code, 0) {
            if pf.functions.len() > 1 {
                for (meta, _) in &pf.functions {
                    if let Some(src) = code.get(meta.bytes.0 as usize..meta.bytes.1 as usize) {
                        functions.push(src.to_string());
                    }
                }
            }
            'outer: for (meta, cfg) in &pf.functions {
                for node in &cfg.nodes {
                    let text = match node.kind {
                        NodeKind::Entry => meta.name.as_str(),
                        NodeKind::Exit => continue,
                        _ => &*node.text,
                    };
                    if text.len() >= 3 && !parts.iter().any(|p| p == text) {
                        parts.push(text.to_string());
                        if parts.len() >= MAX_NODES {
                            break 'outer;
                        }
                    }
                }
            }
        }
        Views { functions, parts, profile: prof }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_formats_read_alike() {
        let dict = json!({
            "query": {"q1": "add two numbers", "q2": "reverse a string"},
            "corpus": {"c1": "int add(int a, int b) { return a + b; }", "c2": "void rev(char *s) {}", "c3": "int z;"},
            "qrel": {"q1": {"c1": 1}, "q2": {"c2": 2, "c3": 1}}
        });
        let list = json!([
            {"query_id": "q1", "query_text": "add two numbers", "code_id": "c1", "code_text": "int add(int a, int b) { return a + b; }", "relevance": 1},
            {"query_id": "q2", "query_text": "reverse a string", "code_id": "c2", "code_text": "void rev(char *s) {}", "relevance": 2},
            {"query_id": "q2", "query_text": "reverse a string", "code_id": "c3", "code_text": "int z;", "relevance": "1"},
            {"query_id": "q1", "query_text": "add two numbers", "code_id": "c1", "code_text": "int add(int a, int b) { return a + b; }", "relevance": 1.0}
        ]);
        let a = ClarcFile::from_value("group1_original".into(), Path::new("a.json"), &dict).unwrap();
        let b = ClarcFile::from_value("group1_original".into(), Path::new("b.json"), &list).unwrap();
        assert_eq!(b.pool.len(), 3, "a repeated code id is one candidate");
        assert_eq!(a.qrels, b.qrels);
        assert_eq!(a.top_grade(), 2);
        let opts = RunOptions { encoder: None, progress: false };
        let sa = evaluate(&a, &[Method::Bm25], &opts).unwrap();
        let sb = evaluate(&b, &[Method::Bm25], &opts).unwrap();
        assert_eq!(sa[0].metrics, sb[0].metrics);
        assert_eq!(sa[0].queries, 2);
        assert_eq!((sa[0].group.as_str(), sa[0].setting.as_str()), ("group1", "original"));
    }

    #[test]
    fn bad_input_is_an_error() {
        let p = Path::new("x.json");
        assert!(matches!(ClarcFile::from_value("x".into(), p, &json!({"query": {}})), Err(EvalError::Format { .. })));
        assert!(ClarcFile::from_value("x".into(), p, &json!([{"query_id": "q"}])).is_err());
        assert!(ClarcFile::from_value("x".into(), p, &json!({"query": {}, "corpus": {}, "qrel": {"q": {"c": -1}}})).is_err());
        assert!(ClarcFile::from_value("x".into(), p, &json!(3)).is_err());
        assert!(matches!(ClarcFile::load(Path::new("/nonexistent/clarc.json")), Err(EvalError::Io { .. })));
        let a = ClarcFile::from_value("x".into(), p, &json!({"query": {"q": "t"}, "corpus": {"c": "x"}, "qrel": {"q": {"c": 1}}})).unwrap();
        let opts = RunOptions { encoder: None, progress: false };
        assert!(matches!(evaluate(&a, &[Method::Text], &opts), Err(EvalError::NeedsEncoder("text"))));
    }

    #[test]
    fn group_and_setting_from_names() {
        let f = |n: &str| ClarcFile { name: n.into(), queries: vec![], pool: vec![], qrels: HashMap::new() }.group_setting();
        assert_eq!(f("group3_short_neutralized"), ("group3_short".into(), "neutralized".into()));
        assert_eq!(f("group3_asm_long"), ("group3".into(), "asm_long".into()));
        assert_eq!(f("mine"), ("mine".into(), "-".into()));
    }

    #[test]
    fn sentences_and_alignment() {
        let s = sentences("The function takes a list. It sorts it in place; returns nothing.\nSee also: x.y()");
        // "returns nothing" has fewer than three words; "x.y()" is not a sentence end.
        assert_eq!(s, ["The function takes a list", "It sorts it in place", "See also: x.y()"]);
        assert_eq!(sentences("Sort."), ["Sort."]);
        let mut a = [0f32; beryl::features::DIM];
        let mut b = [0f32; beryl::features::DIM];
        a[0] = 1.0;
        b[1] = 1.0;
        // Sentence a finds node a (1), sentence b finds node a or c (0.6): mean 0.8.
        let mut c = [0f32; beryl::features::DIM];
        c[0] = 0.8;
        c[1] = 0.6;
        assert!((maxsim(&[a, b], &[a, c]).unwrap() - 0.8).abs() < 1e-6);
        assert_eq!(maxsim(&[], &[a]), None);
    }

    #[test]
    fn views_of_merged_snippet() {
        let v = Views::of("int helper(int x) { return x * 2; }\nint main_fn(int n) { int s = 0; for (int i = 0; i < n; i++) s += helper(i); return s; }");
        assert_eq!(v.functions.len(), 2);
        assert!(v.parts.iter().any(|p| p == "main_fn") && v.parts.iter().any(|p| p.contains("helper(i)")), "{:?}", v.parts);
        assert_eq!(v.profile.loops, 1);
        let v = Views::of("endbr64\npush %rbp\nimul %esi,%eax\nret\n");
        assert!(v.functions.is_empty() && v.parts.len() == 1 && v.parts[0].contains("multiplies"));
    }
}
