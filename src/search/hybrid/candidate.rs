//! A candidate fragment of hybrid search: where it lies, what found it, how it aligns with
//! the query, and its signals.

use super::signals::Signals;
use crate::shape::align::Alignment;

/// Ranks (0-based) of a function in each retriever that returned it.
pub type Ranks = [Option<u32>; 4];

/// One span of a candidate fragment.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct CandSpan {
    pub function: u32,
    pub path: String,
    pub lines: (u32, u32),
    /// Code nodes of the alignment (its pairs and its region) in this function.
    pub matched: usize,
}

/// A candidate fragment with its signals.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The function it starts from.
    pub function: u32,
    pub grown: bool,
    /// The root function's span first (unless set apart), then callees'.
    pub spans: Vec<CandSpan>,
    /// Callees the alignment reaches that lie far from the rest of the fragment in their
    /// file: cited with it, not spanned by it.
    pub apart: Vec<CandSpan>,
    pub signals: Signals,
    /// Bit i: retriever i returned the function.
    pub found: u8,
    /// Ranks in each retriever (0-based), where it returned the function.
    pub ranks: Ranks,
    pub alignment: Alignment,
    /// The alignment is with the query's looped form ([`Query::looped`]).
    pub looped: bool,
    /// (function, shape node) of each node of the code tree the alignment used.
    pub(super) origins: Vec<(u32, u16)>,
    /// [`Tree::copy_key`] of its code: equal keys are the same code under other names.
    pub copy: u64,
    /// Where lower-ranked copies of it start ([`super::rank`] folds them in).
    pub copies: Vec<CandSpan>,
    /// Every span lies in tests, examples or benchmarks ([`crate::search::place::is_test_path`]): listed after
    /// the code that implements.
    pub tests: bool,
    /// Grown from a test into the code it calls; the test's spans are left out.
    pub from_test: bool,
    pub score: f32,
}

impl Candidate {
    /// (function, first line, last line) of each span, the root's first: what
    /// de-duplication compares.
    pub fn keys(&self) -> Vec<(u32, u32, u32)> {
        self.spans.iter().map(|s| (s.function, s.lines.0, s.lines.1)).collect()
    }
}
