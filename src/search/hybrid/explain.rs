//! The reasons a result is shown with: which signals carried it, in words.

use super::candidate::Candidate;
use super::query::Query;
use super::{DENSE, LEXICAL};
use crate::search::place::TESTS_LAST;
use std::collections::BTreeSet;

/// The reasons of candidate `c`, whose root function is called `function`.
pub(super) fn explain(c: &Candidate, q: &Query, function: &str) -> Vec<String> {
    let s = &c.signals;
    let mut r = Vec::new();
    if s.name > 0.0 {
        r.push(format!("name: {:.0}% of the query's procedure-name words are in `{function}`", 100.0 * s.name));
    }
    if s.string_name > 0.0 {
        r.push(format!("strings: {:.0}% of the query's procedure-name words are in its string literals", 100.0 * s.string_name));
    }
    if s.file_name > 0.0 {
        r.push(format!("file name: {:.0}% of the query's procedure-name words are in the name of its file", 100.0 * s.file_name));
    }
    if let Some(k) = c.ranks[LEXICAL] {
        r.push(format!("lexical: BM25F rank {}", k + 1));
    }
    if let Some(k) = c.ranks[DENSE] {
        r.push(format!("dense: text-vector rank {}", k + 1));
    }
    let qn: BTreeSet<u32> = c.alignment.pairs.iter().map(|p| p.0).collect();
    let (qtree, qprofile) = q.form_of(c);
    r.push(format!(
        "structure: {} of {} query statements aligned in order (score {:.2}, {} loop(s) in the query)",
        qn.len(),
        qtree.nodes.len(),
        c.alignment.score,
        qprofile.loops
    ));
    if c.looped {
        r.push("structure: aligned with the query's tail call to itself written as a loop, as iterative code has it".into());
    }
    if s.tok_bag > 0.0 {
        r.push(format!(
            "tokens: the query's statements are written alike, names aside: {:.0}% along the alignment, {:.0}% anywhere in the fragment, {:.0}% as one run in the query's order",
            100.0 * s.tok_align,
            100.0 * s.tok_bag,
            100.0 * s.tok_seq
        ));
    }
    if s.flow > 0.0 {
        r.push(format!("data flow: {:.0}% of the query's def-use edges (a statement reading what another wrote) hold between the matched statements", 100.0 * s.flow));
    }
    if s.beryllium > 0.0 {
        r.push(format!("beryllium: a node group covers {:.0}% of the query", 100.0 * s.beryllium));
    }
    if !c.copies.is_empty() {
        r.push(format!("copies: the same code, names aside, in {} more place(s), listed with it", c.copies.len()));
    }
    if c.grown {
        let n = c.spans.len() + c.apart.len() - 1;
        match c.apart.len() {
            0 => r.push(format!("fragment: grown into {n} called function(s)")),
            k => r.push(format!("fragment: grown into {n} called function(s), {k} of them defined far from the rest and listed apart")),
        }
    }
    if c.tests {
        r.push(TESTS_LAST.into());
    }
    if c.from_test {
        r.push("tests: reached from a test that calls it; the test's lines are left out".into());
    }
    r
}
