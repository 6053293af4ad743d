//! Training pairs for a code-search text encoder: (doc comment, function) from real
//! source trees, each function also in anonymized form (the project's anonymizer: neutral
//! identifiers, comments removed, lines kept), so that an encoder can learn to read what
//! code does rather than what it is called.
//!
//! A pair is kept when the comment right above a function has a first sentence or two of
//! at least five words that is not a licence or a bare tag list, and the function has 3 to
//! 150 lines. Javadoc/Doxygen tags (`@param`, `\return`) end the description. Pairs are
//! unique by description and by code within a package; `Selection` makes them unique across
//! packages (identical, renamed and near-identical copies) and splits them by package.
//!
//! The repository keeps the pair list (`PairRef`: package, version, file, lines, hash), not
//! the texts: mining is deterministic, so the texts are rebuilt from the same packages.

use beryl::anonymize::{anonymize_str, Mode};
use beryl::corpus::walk::{discover, read_source};
use beryl::corpus::WalkOptions;
use beryl::lang::parse_file;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Packages never mined: those kept for an evaluation this project does not see, besides
/// the algorithm benchmark's own projects (`truth`).
const HELD_OUT: [&str; 12] = [
    "coreutils",
    "guava-libraries",
    "guava",
    "libguava-java",
    "jgrapht",
    "libjgrapht-java",
    "gsl",
    "graphviz",
    "jgraphx",
    "libjgraphx-java",
    "commons-lang3",
    "libcommons-lang3-java",
];

/// Whether mining `package` would leak a benchmark's code into training data.
pub fn held_out(package: &str, truth: &crate::algo::Truth) -> bool {
    truth.corpora.iter().any(|c| !c.debian_source_package.is_empty() && c.debian_source_package == package)
        // A benchmark corpus from PyPI or crates.io: that spec, or any package carrying its
        // name (Debian packages the same code as `python-NAME`, `rust-NAME`).
        || truth.corpora.iter().filter_map(|c| c.source.as_deref()).any(|spec| spec == package || registry_name(spec).is_some_and(|n| package.to_ascii_lowercase().contains(&n)))
        || HELD_OUT.contains(&package)
        || ["jgrapht", "jgraphx", "guava", "commons-lang3"].iter().any(|k| package.contains(k))
        // Kept out of training and benchmarks alike: an independent check of the Python,
        // Rust and Go front ends.
        || ["networkx", "petgraph", "yourbasic"].iter().any(|k| package.contains(k))
}

/// `jellyfish` of `pypi:jellyfish==0.8.2`, `strsim` of `crate:strsim@0.11.1` (lower case).
fn registry_name(spec: &str) -> Option<String> {
    let name = match (spec.strip_prefix("pypi:"), spec.strip_prefix("crate:")) {
        (Some(rest), _) => rest.split("==").next(),
        (_, Some(rest)) => rest.split('@').next(),
        _ => None,
    }?;
    (!name.is_empty()).then(|| name.to_ascii_lowercase())
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Pair {
    pub source: String,
    /// Debian version of the package mined; empty for a tree that is not a package.
    #[serde(default)]
    pub version: String,
    /// Path of the file under the package's unpacked tree, `/`-separated.
    #[serde(default)]
    pub file: String,
    /// First and last line of the function.
    #[serde(default)]
    pub lines: (u32, u32),
    /// `code_hash` of `code`.
    #[serde(default)]
    pub hash: String,
    /// `train` or `dev`, by package (`split_of`).
    #[serde(default)]
    pub split: String,
    pub lang: String,
    pub doc: String,
    pub code: String,
    /// `code` after the anonymizer with neutral names (`var_3`); empty when anonymizing
    /// the file failed.
    pub code_anon: String,
    /// … and with random names (seeded by the file path).
    #[serde(default)]
    pub code_rand: String,
}

/// The description in a comment block: markers stripped, up to the first tag or blank
/// line, at most two sentences and 300 characters.
pub fn describe(comment: &str) -> Option<String> {
    let mut words: Vec<&str> = Vec::new();
    for line in comment.lines() {
        let t = line.trim().trim_start_matches("/**").trim_start_matches("/*!").trim_start_matches("/*").trim_start_matches("///").trim_start_matches("//!");
        let t = t.trim_start_matches("//").trim_end_matches("*/").trim().trim_start_matches('*').trim();
        if t.starts_with('@') || t.starts_with('\\') && !t.starts_with("\\brief") {
            break;
        }
        if t.is_empty() {
            if words.is_empty() {
                continue;
            }
            break;
        }
        words.extend(t.trim_start_matches("\\brief").split_whitespace());
    }
    let mut text = String::new();
    let mut sentences = 0;
    for w in words {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(w);
        if w.ends_with('.') && w.len() > 2 {
            sentences += 1;
            if sentences == 2 {
                break;
            }
        }
        if text.len() > 300 {
            break;
        }
    }
    let text = text.replace("<p>", " ").replace("{@code ", "").replace("{@link ", "").replace('}', "");
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let lower = text.to_lowercase();
    let real_words = text.split_whitespace().filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 2).count();
    let licence = ["copyright", "license", "licence", "all rights reserved", "generated by"].iter().any(|k| lower.contains(k));
    (real_words >= 5 && !licence).then_some(text)
}

/// The comment block that ends right before byte `start` of `src` (after `floor`).
fn comment_before(src: &str, floor: usize, start: usize) -> &str {
    let before = src.get(floor.min(start)..start).unwrap_or("").trim_end();
    if before.ends_with("*/") {
        if let Some(i) = before.rfind("/*") {
            return &before[i..];
        }
        return "";
    }
    // Walk back over whole lines by their byte offsets, so CRLF line ends count in full.
    let mut starts = vec![0];
    starts.extend(before.match_indices('\n').map(|(i, _)| i + 1));
    let mut begin = before.len();
    for &st in starts.iter().rev() {
        if st <= begin && before[st..begin].trim_start().starts_with("//") {
            begin = st;
        } else {
            break;
        }
    }
    before.get(begin.min(before.len())..).unwrap_or("").trim_start()
}

fn lines(text: &str, a: u32, b: u32) -> String {
    text.lines().skip(a.saturating_sub(1) as usize).take((b + 1).saturating_sub(a) as usize).collect::<Vec<_>>().join("\n")
}

/// Every pair of the C, C++ and Java files under `root`; `source` names it in the output.
pub fn mine(root: &Path, source: &str) -> Vec<Pair> {
    let opts = WalkOptions::default();
    let (files, _) = discover(&[root.to_path_buf()], &opts);
    let per_file: Vec<Vec<Pair>> = files
        .par_iter()
        .map(|path: &PathBuf| {
            let file = path.strip_prefix(root).unwrap_or(path).components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
            if file.contains(['\t', '\n', '\r']) {
                // The pair list is tab-separated, one pair per line.
                return Vec::new();
            }
            let Ok(src) = read_source(path, &opts) else { return Vec::new() };
            let Ok(pf) = parse_file(path, &src, 0) else { return Vec::new() };
            let mut fns: Vec<_> = pf.functions.iter().map(|(m, _)| m).filter(|m| m.name != "<lambda>" && !m.name.starts_with("lambda$")).collect();
            fns.sort_by_key(|m| m.bytes.0);
            let mut found = Vec::new();
            let mut prev_end = 0usize;
            for m in fns {
                let (s, e) = (m.bytes.0 as usize, m.bytes.1 as usize);
                let floor = prev_end.max(s.saturating_sub(4000));
                prev_end = prev_end.max(e);
                let n_lines = m.lines.1.saturating_sub(m.lines.0) + 1;
                if !(3..=150).contains(&n_lines) {
                    continue;
                }
                let Some(doc) = describe(comment_before(&src, floor, s)) else { continue };
                found.push((m, doc, src.get(s..e.min(src.len())).unwrap_or("").chars().take(3000).collect::<String>()));
            }
            if found.is_empty() {
                // Most files have no described function: spare them the anonymizer.
                return Vec::new();
            }
            let anon = anonymize_str(pf.lang, &src, Mode::Neutral, 0).unwrap_or_default();
            // Seeded by the package and the file's place in it, not by where the tree was
            // unpacked, so a rebuild elsewhere draws the same random names.
            let seed = u64::from_le_bytes(Sha256::digest(format!("{source}/{file}").as_bytes())[..8].try_into().expect("8 bytes"));
            let rand = anonymize_str(pf.lang, &src, Mode::Random, seed).unwrap_or_default();
            let mut out = Vec::new();
            for (m, doc, code) in found {
                let twin = |t: &str| if t.is_empty() { String::new() } else { lines(t, m.lines.0, m.lines.1).chars().take(3000).collect() };
                let (code_anon, code_rand) = (twin(&anon), twin(&rand));
                out.push(Pair {
                    source: source.to_string(),
                    version: String::new(),
                    file: file.clone(),
                    lines: m.lines,
                    hash: code_hash(&code),
                    split: split_of(source).to_string(),
                    lang: pf.lang.name().to_string(),
                    doc,
                    code,
                    code_anon,
                    code_rand,
                });
            }
            out
        })
        .collect();
    let mut seen_doc = HashSet::new();
    let mut seen_code = HashSet::new();
    let mut out = Vec::new();
    for p in per_file.into_iter().flatten() {
        if seen_doc.insert(p.doc.to_lowercase()) && seen_code.insert(p.hash.clone()) {
            out.push(p);
        }
    }
    out
}

/// First 16 hex digits of the SHA-256 of `code` with its whitespace removed: a pair list
/// names a function by it, and a rebuild checks it.
pub fn code_hash(code: &str) -> String {
    let d = Sha256::digest(code.split_whitespace().collect::<String>().as_bytes());
    d[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// About one package in 32 goes to dev, chosen by a hash of its name, so the split never
/// depends on which other packages were mined.
pub fn split_of(package: &str) -> &'static str {
    if Sha256::digest(format!("beryl-pairs-split:{package}").as_bytes())[0] < 8 {
        "dev"
    } else {
        "train"
    }
}

/// Why a mined pair was left out of the selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Drop {
    /// The same code, whitespace aside, came earlier.
    SameCode,
    /// The same code after renaming (its neutral-name twin) came earlier.
    RenamedCopy,
    /// Token 3-grams overlap an earlier function's by about 80% or more.
    NearCopy,
    /// The same description (case aside) came earlier.
    SameDoc,
    /// The code is, or nearly is, code of an evaluation set that must not be trained on.
    Excluded,
    /// The package already gave `Selection::per_package` pairs.
    PackageCap,
}

const MINHASHES: usize = 32;
const BANDS: usize = 8;
const ROWS: usize = MINHASHES / BANDS;
/// Share of equal MinHash values (an estimate of Jaccard similarity) from which two
/// functions count as copies.
const NEAR: f64 = 0.8;
const BUCKET_CAP: usize = 32;

fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// MinHash signature of the lowercased token 3-grams of `code`; `None` for code too short
/// to compare.
fn signature(code: &str) -> Option<[u64; MINHASHES]> {
    let mut toks: Vec<String> = Vec::new();
    let mut cur = String::new();
    for c in code.chars() {
        if c.is_alphanumeric() || c == '_' {
            cur.extend(c.to_lowercase());
        } else {
            if !cur.is_empty() {
                toks.push(std::mem::take(&mut cur));
            }
            if !c.is_whitespace() {
                toks.push(c.to_string());
            }
        }
    }
    if !cur.is_empty() {
        toks.push(cur);
    }
    if toks.len() < 8 {
        return None;
    }
    let mut sig = [u64::MAX; MINHASHES];
    for w in toks.windows(3) {
        let h = fnv(&w.join("\u{1}"));
        for (i, s) in sig.iter_mut().enumerate() {
            *s = (*s).min(mix(h ^ (i as u64).wrapping_mul(0x2545_f491_4f6c_dd1d)));
        }
    }
    Some(sig)
}

/// The pairs kept from many packages: unique across packages by code, by renamed code, by
/// near-identical code and by description; never code of an excluded evaluation set; at most
/// `per_package` pairs of one package, so that a few large packages do not make up the data.
pub struct Selection {
    pub per_package: usize,
    codes: HashSet<String>,
    renamed: HashSet<String>,
    docs: HashSet<String>,
    sigs: Vec<[u64; MINHASHES]>,
    /// Whether signature `i` is of excluded code.
    excluded: Vec<bool>,
    bands: std::collections::HashMap<(usize, u64), Vec<u32>>,
    excluded_codes: HashSet<String>,
    excluded_renamed: HashSet<String>,
    pub dropped: std::collections::BTreeMap<Drop, usize>,
}

impl Selection {
    pub fn new(per_package: usize) -> Selection {
        Selection {
            per_package,
            codes: HashSet::new(),
            renamed: HashSet::new(),
            docs: HashSet::new(),
            sigs: Vec::new(),
            excluded: Vec::new(),
            bands: Default::default(),
            excluded_codes: HashSet::new(),
            excluded_renamed: HashSet::new(),
            dropped: Default::default(),
        }
    }

    fn band_keys(sig: &[u64; MINHASHES]) -> impl Iterator<Item = (usize, u64)> + '_ {
        (0..BANDS).map(move |b| (b, sig[b * ROWS..(b + 1) * ROWS].iter().fold(b as u64, |h, &x| mix(h ^ x))))
    }

    /// The earlier signature that `sig` nearly equals, if any: whether it was excluded code.
    fn near(&self, sig: &[u64; MINHASHES]) -> Option<bool> {
        for key in Self::band_keys(sig) {
            // Excluded code is remembered first, so it leads each bucket.
            for &j in self.bands.get(&key).into_iter().flatten() {
                let other = &self.sigs[j as usize];
                let same = sig.iter().zip(other).filter(|(a, b)| a == b).count();
                if same as f64 >= NEAR * MINHASHES as f64 {
                    return Some(self.excluded[j as usize]);
                }
            }
        }
        None
    }

    fn remember(&mut self, sig: [u64; MINHASHES], excluded: bool) {
        let i = self.sigs.len() as u32;
        for key in Self::band_keys(&sig).collect::<Vec<_>>() {
            // A crowded bucket holds many near-identical short functions already: one more
            // member adds nothing a later lookup needs, and would make lookups quadratic.
            let b = self.bands.entry(key).or_default();
            if b.len() < BUCKET_CAP {
                b.push(i);
            }
        }
        self.sigs.push(sig);
        self.excluded.push(excluded);
    }

    /// Code that must never be trained on (an evaluation set's candidates), also once
    /// renamed by the anonymizer, so that a copy with other names is caught too.
    pub fn exclude(&mut self, code: &str) {
        self.excluded_codes.insert(code_hash(code));
        for lang in [beryl::graph::Lang::C, beryl::graph::Lang::Cpp] {
            if let Ok(neutral) = anonymize_str(lang, code, Mode::Neutral, 0) {
                self.excluded_renamed.insert(code_hash(&neutral));
            }
        }
        if let Some(sig) = signature(code) {
            self.remember(sig, true);
        }
    }

    /// The pairs of one package kept, in order; packages should come in a fixed order
    /// (the first copy of a function wins).
    pub fn admit_package(&mut self, pairs: Vec<Pair>) -> Vec<Pair> {
        let mut kept = Vec::new();
        // Within the cap, a package's pairs are taken in an order fixed by their content,
        // not by file order, so a cap does not keep only the first directories.
        let mut pairs = pairs;
        pairs.sort_by_cached_key(|p| (mix(fnv(&p.hash)), p.file.clone(), p.lines));
        for p in pairs {
            match self.verdict(&p) {
                None if kept.len() >= self.per_package => *self.dropped.entry(Drop::PackageCap).or_default() += 1,
                None => {
                    self.codes.insert(p.hash.clone());
                    if !p.code_anon.is_empty() {
                        self.renamed.insert(code_hash(&p.code_anon));
                    }
                    self.docs.insert(p.doc.to_lowercase());
                    if let Some(sig) = signature(&p.code) {
                        self.remember(sig, false);
                    }
                    kept.push(p);
                }
                Some(d) => *self.dropped.entry(d).or_default() += 1,
            }
        }
        kept.sort_by(|a, b| (&a.file, a.lines).cmp(&(&b.file, b.lines)));
        kept
    }

    fn verdict(&self, p: &Pair) -> Option<Drop> {
        if self.excluded_codes.contains(&p.hash) || (!p.code_anon.is_empty() && self.excluded_renamed.contains(&code_hash(&p.code_anon))) {
            return Some(Drop::Excluded);
        }
        if self.codes.contains(&p.hash) {
            return Some(Drop::SameCode);
        }
        if !p.code_anon.is_empty() && self.renamed.contains(&code_hash(&p.code_anon)) {
            return Some(Drop::RenamedCopy);
        }
        if self.docs.contains(&p.doc.to_lowercase()) {
            return Some(Drop::SameDoc);
        }
        match signature(&p.code).and_then(|s| self.near(&s)) {
            Some(true) => Some(Drop::Excluded),
            Some(false) => Some(Drop::NearCopy),
            None => None,
        }
    }
}

/// One line of the pair list: where a pair's function is, and the hash that checks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairRef {
    pub package: String,
    pub version: String,
    pub split: String,
    pub file: String,
    pub lines: (u32, u32),
    pub hash: String,
}

const LIST_HEADER: &str = "# beryl pair list 1: package, version, split, file, first line, last line, code hash (tab-separated)";

impl PairRef {
    pub fn of(p: &Pair) -> PairRef {
        PairRef { package: p.source.clone(), version: p.version.clone(), split: p.split.clone(), file: p.file.clone(), lines: p.lines, hash: p.hash.clone() }
    }
}

/// Writes a pair list (gzip when the path ends in `.gz`).
pub fn write_list(path: &Path, refs: &[PairRef]) -> std::io::Result<()> {
    use std::io::Write;
    let mut text = String::new();
    text.push_str(LIST_HEADER);
    text.push('\n');
    for r in refs {
        text.push_str(&format!("{}\t{}\t{}\t{}\t{}\t{}\t{}\n", r.package, r.version, r.split, r.file, r.lines.0, r.lines.1, r.hash));
    }
    let f = std::fs::File::create(path)?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut w = flate2::write::GzEncoder::new(std::io::BufWriter::new(f), flate2::Compression::best());
        w.write_all(text.as_bytes())?;
        // finish() writes the trailer and reports its errors; a drop would swallow them.
        w.finish()?.flush()
    } else {
        let mut w = std::io::BufWriter::new(f);
        w.write_all(text.as_bytes())?;
        w.flush()
    }
}

/// Reads a pair list written by `write_list`.
pub fn read_list(path: &Path) -> Result<Vec<PairRef>, String> {
    use std::io::{BufRead, BufReader, Read};
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let r: Box<dyn Read> = if path.extension().is_some_and(|e| e == "gz") { Box::new(flate2::read::GzDecoder::new(f)) } else { Box::new(f) };
    let mut out = Vec::new();
    for (i, line) in BufReader::new(r).lines().enumerate() {
        let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
        if i == 0 {
            if line != LIST_HEADER {
                return Err(format!("{}: not a beryl pair list (first line {line:?})", path.display()));
            }
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        let bad = || format!("{}:{}: expected 7 tab-separated fields", path.display(), i + 1);
        let [package, version, split, file, a, b, hash] = f.as_slice() else { return Err(bad()) };
        let (a, b) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
        out.push(PairRef { package: package.to_string(), version: version.to_string(), split: split.to_string(), file: file.to_string(), lines: (a, b), hash: hash.to_string() });
    }
    Ok(out)
}

/// The listed pairs of one package, from the package's mined pairs; the refs whose
/// function is not found, or whose code hash differs, are returned apart.
pub fn rebuild(refs: &[&PairRef], mined: Vec<Pair>) -> (Vec<Pair>, Vec<PairRef>) {
    let mut by_place: std::collections::HashMap<(String, (u32, u32)), Pair> = mined.into_iter().map(|p| ((p.file.clone(), p.lines), p)).collect();
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for r in refs {
        match by_place.remove(&(r.file.clone(), r.lines)) {
            Some(mut p) if p.hash == r.hash => {
                p.version = r.version.clone();
                p.split = r.split.clone();
                out.push(p);
            }
            _ => missing.push((*r).clone()),
        }
    }
    (out, missing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_of_comment_blocks() {
        let javadoc = "/**\n * Returns the greatest common divisor of two numbers.\n * Uses Euclid's method.\n * Third sentence here.\n *\n * @param a the first\n */";
        assert_eq!(describe(javadoc).unwrap(), "Returns the greatest common divisor of two numbers. Uses Euclid's method.");
        assert_eq!(describe("// Sorts the array in place by inserting each element\n// into the sorted prefix").unwrap(), "Sorts the array in place by inserting each element into the sorted prefix");
        assert!(describe("/* Copyright 2004 the authors, all rights reserved */").is_none());
        assert!(describe("/** @return x */").is_none());
        assert!(describe("// TODO fix").is_none());
        assert_eq!(describe("/*! \\brief Computes the fast Fourier transform of x.\n \\param x input */").unwrap(), "Computes the fast Fourier transform of x.");
    }

    #[test]
    fn registry_corpora_of_the_benchmark_are_held_out() {
        let truth = crate::algo::Truth::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/algo/truth.json")).unwrap();
        for p in ["pypi:jellyfish==0.8.2", "python-jellyfish", "rust-strsim", "crate:num-integer@0.1.46", "rust-num-integer", "igraph", "python-networkx"] {
            assert!(held_out(p, &truth), "{p}");
        }
        for p in ["zlib", "python-rsa", "rust-similar", ""] {
            assert!(!held_out(p, &truth), "{p}");
        }
    }

    #[test]
    fn line_comments_with_crlf_line_ends() {
        let src = "int x;\r\n// Sorts the array in place by inserting\r\n// each element into the sorted prefix\r\nvoid f() {}";
        let start = src.find("void").unwrap();
        assert_eq!(comment_before(src, 0, start), "// Sorts the array in place by inserting\r\n// each element into the sorted prefix");
    }

    fn pair(source: &str, doc: &str, code: &str, anon: &str) -> Pair {
        Pair {
            source: source.into(),
            version: "1".into(),
            file: "a.c".into(),
            lines: (1, 3),
            hash: code_hash(code),
            split: split_of(source).into(),
            lang: "c".into(),
            doc: doc.into(),
            code: code.into(),
            code_anon: anon.into(),
            code_rand: String::new(),
        }
    }

    #[test]
    fn selection_drops_copies_across_packages() {
        let body = "int sum(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) { s += a[i] * a[i]; } return s; }";
        let anon = "int func_0(int *var_0, int var_1) { int var_2 = 0; for (int var_3 = 0; var_3 < var_1; var_3++) { var_2 += var_0[var_3] * var_0[var_3]; } return var_2; }";
        let mut sel = Selection::new(2);
        sel.exclude("int evaluated(int q) { while (q > 1) { q = q % 2 == 0 ? q / 2 : 3 * q + 1; } return q; }");
        let kept = sel.admit_package(vec![pair("one", "Sums the squares of the array elements.", body, anon)]);
        assert_eq!(kept.len(), 1);
        let renamed = body.replace("sum(", "squares(").replace(" s ", " t ").replace("s +=", "t +=").replace("return s", "return t");
        let near = body.replace("a[i] * a[i]", "a[i] * a[i] + 1");
        let excluded = "int evaluated(int q) { while (q > 1) { q = q % 2 == 0 ? q / 2 : 3 * q + 1; } return q; }";
        let other = "double mean(double *x, int n) { double m = 0; for (int k = 0; k < n; k++) m += x[k]; return m / n; }";
        let kept = sel.admit_package(vec![
            pair("two", "Another description of the same loop over squares.", body, anon),
            pair("two", "Adds up the squares of all values in the vector.", &renamed, anon),
            pair("two", "Sums the squares plus one of every element of a.", &near, ""),
            pair("two", "Collatz steps until the value reaches one in the loop.", excluded, ""),
            pair("two", "Sums the squares of the array elements.", other, ""),
            pair("two", "Returns the arithmetic mean of the n values in x.", other.replace("m / n", "m / (double) n").as_str(), ""),
            pair("two", "Computes the largest of the two given integer values.", "int max(int a, int b) { if (a > b) { return a; } else { return b; } }", ""),
            pair("two", "Computes the smallest of the two given integer values here.", "int min(int a, int b) { if (a < b) { return a; } else { return b; } }", ""),
        ]);
        let d = &sel.dropped;
        assert_eq!(d.get(&Drop::SameCode), Some(&1), "{d:?}");
        assert_eq!(d.get(&Drop::RenamedCopy), Some(&1), "{d:?}");
        assert_eq!(d.get(&Drop::Excluded), Some(&1), "{d:?}");
        assert_eq!(d.get(&Drop::SameDoc), Some(&1), "{d:?}");
        assert!(d.get(&Drop::NearCopy).copied().unwrap_or(0) >= 1, "{d:?}");
        // Three distinct functions are left and the cap keeps two of them.
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert_eq!(d.get(&Drop::PackageCap), Some(&1), "{d:?}");
    }

    #[test]
    fn pair_lists_round_trip_and_reject_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let refs = vec![PairRef { package: "zlib".into(), version: "1:1.2.13".into(), split: "train".into(), file: "src/deflate.c".into(), lines: (10, 40), hash: "0123456789abcdef".into() }];
        for name in ["l.tsv", "l.tsv.gz"] {
            let p = dir.path().join(name);
            write_list(&p, &refs).unwrap();
            assert_eq!(read_list(&p).unwrap(), refs);
        }
        let bad = dir.path().join("bad.tsv");
        std::fs::write(&bad, "package\tversion\n").unwrap();
        assert!(read_list(&bad).unwrap_err().contains("not a beryl pair list"));
    }

    #[test]
    fn mines_pairs_with_anonymized_twins() {
        let dir = tempfile::tempdir().unwrap();
        let src = "/** Returns the greatest common divisor of a and b by Euclid. */\nint gcd(int a, int b) {\n    while (b != 0) {\n        int t = a % b; a = b; b = t;\n    }\n    return a;\n}\n\nint no_doc(int x) {\n    return x + 1;\n}\n";
        std::fs::write(dir.path().join("g.c"), src).unwrap();
        let pairs = mine(dir.path(), "test");
        assert_eq!(pairs.len(), 1, "{pairs:?}");
        let p = &pairs[0];
        assert!(p.doc.starts_with("Returns the greatest common divisor"));
        assert!(p.code.starts_with("int gcd(int a, int b)") && p.code.ends_with('}'));
        assert!(!p.code_anon.contains("gcd") && p.code_anon.contains("while") && p.code_anon.lines().count() == p.code.lines().count(), "{}", p.code_anon);
        assert!(!p.code_rand.contains("gcd") && p.code_rand != p.code_anon && p.code_rand.lines().count() == p.code.lines().count(), "{}", p.code_rand);
    }
}
