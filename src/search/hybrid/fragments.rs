//! Fragments: the lines an alignment picks out in the root function and its callees,
//! made compact for the reader, and turned into the report's [`Fragment`]s.

use super::candidate::{CandSpan, Candidate};
use super::explain::explain;
use super::query::Query;
use crate::index::store::FunctionRow;
use crate::index::{Index, IndexError};
use crate::search::place::in_tests;
use crate::search::{Fragment, LineMatch, SearchError, Span};
use crate::shape::align::{Alignment, Tree};
use crate::shape::Shape;
use std::collections::{BTreeSet, HashMap};

/// Cached function rows and file paths of one query.
pub(super) struct Rows<'a> {
    index: &'a Index,
    funcs: HashMap<u32, FunctionRow>,
    paths: HashMap<u32, String>,
}

impl<'a> Rows<'a> {
    pub fn new(index: &'a Index) -> Rows<'a> {
        Rows { index, funcs: HashMap::new(), paths: HashMap::new() }
    }

    pub fn function(&mut self, f: u32) -> Result<&FunctionRow, IndexError> {
        if !self.funcs.contains_key(&f) {
            let r = self.index.store.function(f)?;
            self.funcs.insert(f, r);
        }
        Ok(&self.funcs[&f])
    }

    pub fn path(&mut self, file: u32) -> Result<String, IndexError> {
        if let Some(p) = self.paths.get(&file) {
            return Ok(p.clone());
        }
        let p = self.index.store.file(file)?.path;
        self.paths.insert(file, p.clone());
        Ok(p)
    }
}

/// Last line of each shape node's subtree.
fn subtree_ends(s: &Shape) -> Vec<u32> {
    let mut end: Vec<u32> = s.nodes.iter().map(|n| n.lines.1).collect();
    for k in (0..s.nodes.len()).rev() {
        let p = s.nodes[k].parent;
        if p != crate::shape::TOP {
            end[p as usize] = end[p as usize].max(end[k]);
        }
    }
    end
}

pub(super) fn subtree_size(t: &Tree, j: u32) -> usize {
    let mut n = 0;
    let mut stack = vec![j];
    while let Some(x) = stack.pop() {
        n += 1;
        stack.extend(&t.nodes[x as usize].children);
    }
    n
}

/// The fragment an alignment picks out: in the root function the matched lines (with the
/// rest of every matched loop or branch) when the function is much longer than that,
/// else the whole function; in callees the whole callee unless it is long.
pub(super) fn fragment_spans(rows: &mut Rows, get: &dyn Fn(u32) -> Option<Shape>, f: u32, tree: &Tree, a: &Alignment, shrink: bool) -> Result<Vec<CandSpan>, IndexError> {
    let mut per: Vec<(u32, Vec<u16>)> = vec![(f, Vec::new())];
    let mut add = |o: (u32, u16)| match per.iter_mut().find(|p| p.0 == o.0) {
        Some(p) => p.1.push(o.1),
        None => per.push((o.0, vec![o.1])),
    };
    for &(_, cj, _) in &a.pairs {
        add(tree.nodes[cj as usize].origin);
    }
    if let Some(j) = a.region {
        add(tree.nodes[j as usize].origin);
    }
    let mut out = Vec::new();
    for (fid, ks) in per {
        let row = rows.function(fid)?.clone();
        let path = rows.path(row.file)?;
        let whole = row.lines;
        let len = whole.1.saturating_sub(whole.0) + 1;
        let lines = match get(fid) {
            Some(s) if !ks.is_empty() => {
                let ends = subtree_ends(&s);
                let lo = ks.iter().filter_map(|&k| s.nodes.get(k as usize)).map(|n| n.lines.0).min().unwrap_or(whole.0);
                let hi = ks.iter().filter_map(|&k| ends.get(k as usize)).copied().max().unwrap_or(whole.1);
                let tight = hi.saturating_sub(lo) + 1;
                let long = if fid == f { len > 2 * tight + 20 } else { len > 60 };
                if shrink && long {
                    (lo, hi.max(lo))
                } else {
                    whole
                }
            }
            _ => whole,
        };
        out.push(CandSpan { function: fid, path, lines, matched: ks.len() });
    }
    Ok(out)
}

/// Splits off the spans that would leave a fragment mostly gap in their file. In each file
/// the span holding most of the alignment anchors the fragment; another span there stays
/// only while the file's extent is within three times the anchor (or 30 lines more). A
/// helper defined far from the code that carries the match is then cited beside the
/// fragment rather than making it every line in between. The root's span stays first
/// unless it is the one set apart.
pub(super) fn compact(spans: Vec<CandSpan>) -> (Vec<CandSpan>, Vec<CandSpan>) {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(spans[i].matched), i));
    let len = |s: &CandSpan| s.lines.1.saturating_sub(s.lines.0) + 1;
    let mut keep = vec![false; spans.len()];
    for &i in &order {
        let s = &spans[i];
        let mut in_file = order.iter().filter(|&&j| keep[j] && spans[j].path == s.path).map(|&j| &spans[j]);
        keep[i] = match in_file.next() {
            None => true,
            Some(anchor) => {
                let (lo, hi) = in_file.fold((anchor.lines.0.min(s.lines.0), anchor.lines.1.max(s.lines.1)), |(lo, hi), k| (lo.min(k.lines.0), hi.max(k.lines.1)));
                hi.saturating_sub(lo) + 1 <= (3 * len(anchor)).max(len(anchor) + 30)
            }
        };
    }
    let (mut kept, mut apart) = (Vec::new(), Vec::new());
    for (s, k) in spans.into_iter().zip(keep) {
        if k {
            kept.push(s);
        } else {
            apart.push(s);
        }
    }
    (kept, apart)
}

/// Fragments of the report from ranked candidates.
pub(super) fn to_fragments(index: &Index, q: &Query, cands: &[Candidate]) -> Result<Vec<Fragment>, SearchError> {
    let mut rows = Rows::new(index);
    let total_lines: BTreeSet<u32> = q.nodes.iter().flat_map(|n| n.lines.0..=n.lines.1).collect();
    let mut out = Vec::new();
    for (rank, c) in cands.iter().enumerate() {
        let mut matches = Vec::new();
        let mut covered = BTreeSet::new();
        let mut count: HashMap<u32, usize> = HashMap::new();
        for &(qi, cj, sim) in &c.alignment.pairs {
            let Some(&qk) = q.node_of.get(&q.form_of(c).0.nodes[qi as usize].origin) else { continue };
            let (fid, k) = c.origins[cj as usize];
            let Some(shape) = index.shapes.get(fid) else { continue };
            let Some(n) = shape.nodes.get(k as usize) else { continue };
            let row = rows.function(fid)?.clone();
            let node = index.store.node(row.entry + n.local as u32)?;
            let qn = &q.nodes[qk];
            covered.extend(qn.lines.0..=qn.lines.1);
            *count.entry(fid).or_default() += 1;
            matches.push(LineMatch {
                query_node: qk,
                query_lines: qn.lines,
                query_text: qn.text.clone(),
                path: rows.path(row.file)?,
                lines: node.lines,
                code: node.text,
                similarity: sim,
            });
        }
        matches.sort_by_key(|m| (m.query_lines, m.query_node));
        let mut span = |s: &CandSpan| -> Result<Span, SearchError> {
            let row = rows.function(s.function)?.clone();
            Ok(Span {
                path: s.path.clone(),
                function_id: s.function,
                function: row.qualified.clone(),
                function_lines: row.lines,
                lines: s.lines,
                nodes: count.get(&s.function).copied().unwrap_or(0),
                test: in_tests(&s.path, &index.meta.roots),
            })
        };
        let spans = c.spans.iter().map(&mut span).collect::<Result<Vec<_>, _>>()?;
        let apart = c.apart.iter().map(&mut span).collect::<Result<Vec<_>, _>>()?;
        let copies = c.copies.iter().map(&mut span).collect::<Result<Vec<_>, _>>()?;
        // The name signal read the root, which may be among the spans set apart.
        let name = rows.function(c.function)?.qualified.clone();
        out.push(Fragment {
            rank: rank + 1,
            score: c.score as f64,
            query_nodes_covered: c.alignment.pairs.iter().map(|p| p.0).collect::<BTreeSet<_>>().len(),
            query_lines_covered: covered.len(),
            query_lines_total: total_lines.len(),
            distance: 0,
            spans,
            apart,
            copies,
            matches,
            reasons: explain(c, q, &name),
        });
    }
    Ok(out)
}

/// Whole functions ranked by one signal (the single-retriever methods).
pub(super) fn function_fragments(index: &Index, list: &[(u32, f32)], why: &dyn Fn(usize, f32) -> String) -> Result<Vec<Fragment>, SearchError> {
    let mut rows = Rows::new(index);
    let mut out = Vec::new();
    for (rank, &(f, s)) in list.iter().enumerate() {
        let row = rows.function(f)?.clone();
        let path = rows.path(row.file)?;
        let test = in_tests(&path, &index.meta.roots);
        out.push(Fragment {
            rank: rank + 1,
            score: s as f64,
            query_nodes_covered: 0,
            query_lines_covered: 0,
            query_lines_total: 0,
            distance: 0,
            spans: vec![Span { path, function_id: f, function: row.qualified, function_lines: row.lines, lines: row.lines, nodes: 0, test }],
            apart: Vec::new(),
            copies: Vec::new(),
            matches: Vec::new(),
            reasons: vec![why(rank, s)],
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(function: u32, path: &str, lines: (u32, u32), matched: usize) -> CandSpan {
        CandSpan { function, path: path.into(), lines, matched }
    }

    #[test]
    fn compact_sets_far_helpers_apart_around_the_span_that_carries_the_match() {
        // A caller with one matched call, its helper 200 lines down holding the loop, and a
        // small helper right below it: the far caller goes, the near helper stays.
        let (kept, apart) = compact(vec![span(1, "a.c", (10, 20), 1), span(2, "a.c", (220, 260), 6), span(3, "a.c", (262, 270), 2)]);
        assert_eq!(kept.iter().map(|s| s.function).collect::<Vec<_>>(), vec![2, 3]);
        assert_eq!(apart.iter().map(|s| s.function).collect::<Vec<_>>(), vec![1]);
        // Adjacent functions stay one fragment; another file anchors its own extent.
        let (kept, apart) = compact(vec![span(1, "a.c", (10, 40), 3), span(2, "a.c", (42, 60), 3), span(3, "b.c", (900, 950), 1)]);
        assert_eq!((kept.len(), apart.len()), (3, 0));
        assert_eq!(kept[0].function, 1, "the root's span stays first");
    }
}
