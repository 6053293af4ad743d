//! Ground truth: the projects, the implementations judged in them, pooled judgments.

#[allow(unused_imports)]
use super::*;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TruthCorpus {
    pub name: String,
    /// Empty for a corpus from another registry (`source`).
    pub debian_source_package: String,
    /// A corpus from PyPI or crates.io, as `beryl corpus fetch` takes it
    /// (`pypi:NAME==VERSION`, `crate:NAME@VERSION`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub version: String,
    pub language: String,
    pub orig_tarball: String,
    pub top_dir: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Entry {
    pub algorithm: String,
    pub project: String,
    /// Relative to the corpus's `top_dir`.
    pub path: String,
    pub function: String,
    pub start_line: u32,
    pub end_line: u32,
    #[serde(default)]
    pub confidence: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
}

impl Entry {
    pub fn span(&self) -> u32 {
        self.end_line.saturating_sub(self.start_line) + 1
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Truth {
    pub corpora: Vec<TruthCorpus>,
    pub entries: Vec<Entry>,
    #[serde(default)]
    pub decoys: Vec<Entry>,
}

/// A pooled judgment of the truth: every method's first fragments that hit no entry, read
/// and judged like the truth was (`bench/algo/README.md`). The truth as filed was found by
/// grepping for names, so it misses implementations nobody named; the ranking figures are
/// reported against it and, beside, against it plus these.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pooled {
    /// How the pool was drawn and judged.
    pub about: String,
    /// Judged implementations, in the shape of the truth's entries.
    pub entries: Vec<Entry>,
    /// Judged not to implement the algorithm.
    pub decoys: Vec<Entry>,
}

impl Truth {
    pub fn load(path: &Path) -> Result<Truth, AlgoError> {
        let text = std::fs::read_to_string(path).map_err(io(path))?;
        Truth::parse(&text, path)
    }

    /// Parses and checks that entries name listed projects and sane line ranges.
    pub fn parse(text: &str, path: &Path) -> Result<Truth, AlgoError> {
        let t: Truth = serde_json::from_str(text).map_err(json(path))?;
        t.check(t.entries.iter().chain(&t.decoys), path)?;
        Ok(t)
    }

    /// Adds the entries and decoys of a pooled judgment (`bench/algo/pooled.json`); returns
    /// how many entries it added.
    pub fn add_pooled(&mut self, path: &Path) -> Result<usize, AlgoError> {
        let text = std::fs::read_to_string(path).map_err(io(path))?;
        let p: Pooled = serde_json::from_str(&text).map_err(json(path))?;
        self.check(p.entries.iter().chain(&p.decoys), path)?;
        let n = p.entries.len();
        self.entries.extend(p.entries);
        self.decoys.extend(p.decoys);
        Ok(n)
    }

    fn check<'a>(&self, items: impl Iterator<Item = &'a Entry>, path: &Path) -> Result<(), AlgoError> {
        let names: BTreeSet<&str> = self.corpora.iter().map(|c| c.name.as_str()).collect();
        for e in items {
            let bad = |msg: String| AlgoError::Truth { path: path.to_path_buf(), msg };
            if !names.contains(e.project.as_str()) {
                return Err(bad(format!("{} {}: project {:?} is not among the corpora", e.algorithm, e.function, e.project)));
            }
            if e.start_line == 0 || e.end_line < e.start_line {
                return Err(bad(format!("{} {} in {}: bad line range {}-{}", e.algorithm, e.function, e.path, e.start_line, e.end_line)));
            }
        }
        Ok(())
    }

    pub fn corpus(&self, name: &str) -> Option<&TruthCorpus> {
        self.corpora.iter().find(|c| c.name == name)
    }
}

impl TruthCorpus {
    /// What `beryl corpus fetch` takes for this corpus.
    pub fn fetch_spec(&self) -> &str {
        self.source.as_deref().unwrap_or(&self.debian_source_package)
    }

    /// Its folder under the cache's `corpora`.
    pub fn cache_folder(&self) -> String {
        beryl::corpus::fetch::cache_folder(self.fetch_spec()).unwrap_or_else(|| self.fetch_spec().to_string())
    }
}

/// The language classes results are grouped by, in report order.
pub const LANGUAGE_CLASSES: [&str; 5] = ["Java", "C", "Python", "Rust", "Go"];

/// Language class for grouping: C++ projects count as C (the paper has C and Java only).
pub fn language_class(lang: &str) -> &'static str {
    LANGUAGE_CLASSES.into_iter().find(|l| l.eq_ignore_ascii_case(lang)).unwrap_or("C")
}
