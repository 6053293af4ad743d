//! Argument groups and choices that several commands share. The library's enums know no
//! clap; each choice here mirrors one of them and converts into it.

use beryl::corpus::WalkOptions;
use beryl::features::{CacheAt, TextEncoders, TextModel};
use beryl::search::hybrid::Method;
use beryl::search::limits::QueryLimits;
use clap::ValueEnum;
use std::path::{Path, PathBuf};

/// A text encoder, as `--encoder`, `--function-encoder` and `--text-model` name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TextModelArg {
    /// Static token vectors distilled from MiniLM (`models/static`): ~10^5 texts/s a core.
    Static,
    /// all-MiniLM-L6-v2 as shipped.
    Minilm,
    /// MiniLM with the code-search adapters of `models/code-encoder`.
    Code,
}

impl From<TextModelArg> for TextModel {
    fn from(a: TextModelArg) -> TextModel {
        match a {
            TextModelArg::Static => TextModel::Static,
            TextModelArg::Minilm => TextModel::Minilm,
            TextModelArg::Code => TextModel::Code,
        }
    }
}

/// `beryl search --pseudo --method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MethodArg {
    /// Every retriever, structural alignment and the learned scorer.
    Hybrid,
    /// The paper's pipeline: node matching, grouping, γ = covered nodes + 1/distance.
    Beryllium,
    /// BM25F over function names, comments and bodies.
    Bm25,
    /// The query's procedure names against function names (then comments).
    Name,
    /// The whole query against function text vectors.
    Dense,
}

impl From<MethodArg> for Method {
    fn from(a: MethodArg) -> Method {
        match a {
            MethodArg::Hybrid => Method::Hybrid,
            MethodArg::Beryllium => Method::Beryllium,
            MethodArg::Bm25 => Method::Bm25,
            MethodArg::Name => Method::Name,
            MethodArg::Dense => Method::Dense,
        }
    }
}

/// A language beryl reads (`--lang`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LangArg {
    C,
    Cpp,
    Java,
    Python,
    Rust,
    Go,
}

impl From<LangArg> for beryl::graph::Lang {
    fn from(a: LangArg) -> beryl::graph::Lang {
        match a {
            LangArg::C => beryl::graph::Lang::C,
            LangArg::Cpp => beryl::graph::Lang::Cpp,
            LangArg::Java => beryl::graph::Lang::Java,
            LangArg::Python => beryl::graph::Lang::Python,
            LangArg::Rust => beryl::graph::Lang::Rust,
            LangArg::Go => beryl::graph::Lang::Go,
        }
    }
}

/// Where results may come from (`beryl search`).
#[derive(clap::Args, Clone, Debug)]
#[command(next_help_heading = "Scope")]
pub struct ScopeArgs {
    /// Only files matching GLOB, relative to the indexed root (gitignore syntax: `src/**`,
    /// `*.h`, a folder name; `!GLOB` leaves files out; the last matching glob decides).
    /// Repeatable. Applied before ranking: the top N are the best N inside.
    #[arg(long = "path", value_name = "GLOB")]
    pub paths: Vec<String>,
    /// Only files of this language. Repeatable.
    #[arg(long, value_enum)]
    pub lang: Vec<LangArg>,
    /// Leave out tests, examples, demos and benchmarks (results there are marked `[test]`).
    #[arg(long)]
    pub no_tests: bool,
}

impl ScopeArgs {
    pub fn scope(&self) -> beryl::search::scope::Scope {
        beryl::search::scope::Scope {
            paths: self.paths.clone(),
            langs: self.lang.iter().map(|&l| l.into()).collect(),
            no_tests: self.no_tests,
            cwd: std::env::current_dir().ok().and_then(|d| d.canonicalize().ok()),
        }
    }
}

/// Files to read, for commands that walk source trees.
#[derive(clap::Args, Clone)]
pub struct Walk {
    /// Files or directories to read.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Read files that .gitignore and .ignore exclude.
    #[arg(long)]
    pub no_ignore: bool,
    /// Skip files larger than this many bytes.
    #[arg(long, default_value_t = 1 << 20)]
    pub max_file_size: u64,
}

impl Walk {
    pub fn options(&self) -> WalkOptions {
        WalkOptions { max_bytes: self.max_file_size, respect_ignore: !self.no_ignore, ..WalkOptions::default() }
    }

    /// Fails on the first path that does not exist, before any work starts.
    pub fn check(&self) -> anyhow::Result<()> {
        check_paths(&self.paths)
    }
}

pub fn check_paths(paths: &[PathBuf]) -> anyhow::Result<()> {
    for p in paths {
        if !p.exists() {
            anyhow::bail!("{}: no such file or directory", p.display());
        }
    }
    Ok(())
}

/// `$BERYL_MODEL`, else the shipped graph model trained on `statements`' text vectors:
/// `models/default` (static vectors) or `models/minilm`.
pub fn default_model(statements: TextModel) -> PathBuf {
    std::env::var_os("BERYL_MODEL").filter(|m| !m.is_empty()).map(PathBuf::from).unwrap_or_else(|| {
        let name = if statements == TextModel::Minilm { "models/minilm" } else { "models/default" };
        beryl::repo_path(name)
    })
}

/// `threads`, else every core.
pub fn all_cores(threads: Option<usize>) -> usize {
    threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Which text encoder serves statements and which functions, for commands that build indexes.
#[derive(clap::Args, Clone, Copy)]
pub struct EncoderArgs {
    /// Text vectors of statement nodes (the graph model's inputs): static token vectors
    /// (fast) or all-MiniLM-L6-v2.
    #[arg(long = "encoder", value_enum, default_value = "static")]
    pub statements: TextModelArg,
    /// Text vectors of functions (natural-language and dense search): the code-search
    /// encoder, MiniLM, or static token vectors.
    #[arg(long = "function-encoder", value_enum, default_value = "code")]
    pub functions: TextModelArg,
}

impl EncoderArgs {
    /// The encoders, each with its persistent vector cache.
    pub fn load(self, threads: Option<usize>) -> TextEncoders {
        TextEncoders::new(self.statements.into(), self.functions.into(), Some(all_cores(threads)), CacheAt::Default)
    }
}

/// How large a query may be (`beryl search`, `beryl mcp`, `beryl pcode`).
#[derive(clap::Args, Clone, Copy, Debug)]
#[command(next_help_heading = "Query limits")]
pub struct QueryLimitArgs {
    /// Largest query in bytes; a file, pipe or device is read no further.
    #[arg(long, value_name = "N", default_value_t = QueryLimits::default().bytes)]
    pub max_query_bytes: usize,
    /// Most lines in a query.
    #[arg(long, value_name = "N", default_value_t = QueryLimits::default().lines)]
    pub max_query_lines: usize,
    /// Most statement nodes in a pseudocode query's graph.
    #[arg(long, value_name = "N", default_value_t = QueryLimits::default().nodes)]
    pub max_query_nodes: usize,
    /// Most levels of statements nested in one another in a pseudocode query.
    #[arg(long, value_name = "N", default_value_t = QueryLimits::default().depth)]
    pub max_query_depth: usize,
}

impl QueryLimitArgs {
    pub fn limits(&self) -> QueryLimits {
        QueryLimits { bytes: self.max_query_bytes, lines: self.max_query_lines, nodes: self.max_query_nodes, depth: self.max_query_depth }
    }
}

/// The text of a query file (`-`: standard input), read no further than `limits` allow.
pub fn read_query(path: &Path, limits: &QueryLimits) -> anyhow::Result<String> {
    use anyhow::Context;
    if path.as_os_str() == "-" {
        return limits.read(std::io::stdin().lock()).context("reading the query from standard input");
    }
    let f = std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
    if f.metadata().is_ok_and(|m| m.is_dir()) {
        anyhow::bail!("reading {}: it is a directory", path.display());
    }
    limits.read(f).with_context(|| format!("reading {}", path.display()))
}

/// A count of at least one (`--top`).
pub fn positive(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}
