//! Settings (one project, one language, all projects), query forms, methods, and the
//! groups of projects each index holds.

#[allow(unused_imports)]
use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Setting {
    /// Each project its own index.
    One,
    /// All projects of one language in one index (C++ counts as C).
    Multi,
    /// All projects in one index.
    Mixed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum QueryForm {
    /// `<algorithm>.p`, p-code.
    P,
    /// `<algorithm>.txt`, plain pseudocode, converted to p-code.
    Txt,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, clap::ValueEnum)]
pub enum Method {
    /// `search --method hybrid`: every retriever, alignment and the learned scorer,
    /// cross-validated by algorithm.
    #[value(name = "hybrid")]
    #[serde(rename = "hybrid")]
    Hybrid,
    /// The paper's pipeline (`search --method beryllium`): index with text, graph and math
    /// features, node matching and grouping.
    #[value(name = "beryllium", alias = "beryl")]
    #[serde(rename = "beryllium")]
    Beryllium,
    /// Beryllium with text and graph features, no math.
    #[value(name = "cb+g")]
    #[serde(rename = "cb+g")]
    CbG,
    /// Beryllium with text features only.
    #[value(name = "cb")]
    #[serde(rename = "cb")]
    Cb,
    /// `search --method dense`: the query text against function text vectors.
    #[value(name = "dense")]
    #[serde(rename = "dense")]
    Dense,
    /// `search --method bm25`: BM25F over function names, comments and bodies.
    #[value(name = "bm25f")]
    #[serde(rename = "bm25f")]
    Bm25f,
    /// `search --method name`: the query's procedure names against function names.
    #[value(name = "pname")]
    #[serde(rename = "pname")]
    Pname,
    /// Baseline: Okapi BM25 over functions, the `.txt` pseudocode as query.
    #[value(name = "bm25")]
    #[serde(rename = "bm25")]
    Bm25,
    /// Baseline: the algorithm's name (file stem) against function identifiers and the
    /// comment above.
    #[value(name = "name")]
    #[serde(rename = "name")]
    Name,
    /// Hybrid without each signal (its retriever and its features; refitted).
    #[value(name = "-lexical")]
    #[serde(rename = "-lexical")]
    NoLexical,
    #[value(name = "-dense")]
    #[serde(rename = "-dense")]
    NoDense,
    #[value(name = "-beryllium")]
    #[serde(rename = "-beryllium")]
    NoBeryllium,
    #[value(name = "-structure")]
    #[serde(rename = "-structure")]
    NoStructure,
    #[value(name = "-fragment")]
    #[serde(rename = "-fragment")]
    NoFragment,
    #[value(name = "-tokens")]
    #[serde(rename = "-tokens")]
    NoTokens,
    #[value(name = "-strings")]
    #[serde(rename = "-strings")]
    NoStrings,
}

impl Method {
    /// What `beryl eval algo` runs without `--methods`.
    pub const DEFAULT: [Method; 16] = [
        Method::Hybrid,
        Method::Beryllium,
        Method::CbG,
        Method::Cb,
        Method::Dense,
        Method::Bm25f,
        Method::Pname,
        Method::Bm25,
        Method::Name,
        Method::NoLexical,
        Method::NoDense,
        Method::NoBeryllium,
        Method::NoStructure,
        Method::NoFragment,
        Method::NoTokens,
        Method::NoStrings,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Method::Hybrid => "hybrid",
            Method::Beryllium => "beryllium",
            Method::CbG => "cb+g",
            Method::Cb => "cb",
            Method::Dense => "dense",
            Method::Bm25f => "bm25f",
            Method::Pname => "pname",
            Method::Bm25 => "bm25",
            Method::Name => "name",
            Method::NoLexical => "-lexical",
            Method::NoDense => "-dense",
            Method::NoBeryllium => "-beryllium",
            Method::NoStructure => "-structure",
            Method::NoFragment => "-fragment",
            Method::NoTokens => "-tokens",
            Method::NoStrings => "-strings",
        }
    }

    /// Index feature switches of the methods that search an index.
    pub fn features(self) -> Option<FeatureSet> {
        match self {
            Method::CbG => Some(FeatureSet { text: true, graph: true, math: false }),
            Method::Cb => Some(FeatureSet { text: true, graph: false, math: false }),
            Method::Bm25 | Method::Name => None,
            _ => Some(FeatureSet { text: true, graph: true, math: true }),
        }
    }

    /// The hybrid variant this method is ranked by, if it is one.
    pub fn variant(self) -> Option<Variant> {
        let without = match self {
            Method::Hybrid => None,
            Method::NoLexical => Some("lexical"),
            Method::NoDense => Some("dense"),
            Method::NoBeryllium => Some("beryllium"),
            Method::NoStructure => Some("structure"),
            Method::NoFragment => Some("fragment"),
            Method::NoTokens => Some("tokens"),
            Method::NoStrings => Some("strings"),
            _ => return None,
        };
        Some(Variant { without })
    }
}

/// Projects searched together in one index.
#[derive(Clone, Debug, Serialize)]
pub struct Group {
    /// Project name (`one`), `java`/`c` (`multi`) or `mixed`.
    pub name: String,
    /// `Java`, `C` or `mixed`.
    pub language: String,
    pub projects: Vec<String>,
}

/// Index units of a setting over the selected projects (sorted by name inside a group).
pub fn groups(truth: &Truth, setting: Setting, projects: &[String]) -> Vec<Group> {
    let lang = |p: &str| truth.corpus(p).map_or("C", |c| language_class(&c.language));
    let mut sorted: Vec<String> = projects.to_vec();
    sorted.sort();
    sorted.dedup();
    match setting {
        Setting::One => sorted
            .iter()
            // A project without entries has nothing to find when it is alone.
            .filter(|p| truth.entries.iter().any(|e| &e.project == *p))
            .map(|p| Group { name: p.clone(), language: lang(p).to_string(), projects: vec![p.clone()] })
            .collect(),
        Setting::Multi => LANGUAGE_CLASSES
            .iter()
            .map(|l| Group {
                name: l.to_lowercase(),
                language: l.to_string(),
                projects: sorted.iter().filter(|p| lang(p) == *l).cloned().collect(),
            })
            .filter(|g| !g.projects.is_empty())
            .collect(),
        Setting::Mixed => vec![Group { name: "mixed".into(), language: "mixed".into(), projects: sorted }],
    }
}
