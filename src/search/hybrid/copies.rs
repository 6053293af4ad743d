//! Ranking the pool: the scorer orders it, fragments that add too little to better ones
//! are dropped, and copies of better ones (the same code under other names) are folded
//! into them.

use super::candidate::Candidate;
use super::scorer::Ranker;
use std::collections::HashMap;

/// Share of a fragment's lines shown by better results at which it is left out (a grown
/// fragment's root alone, a helper inside it, the same loop nest reached from another
/// root). Half is enough to say the reader has seen it: a result that repeats less than
/// that shows mostly new code.
const SHOWN_SHARE: f32 = 0.5;

/// The results listed so far: their keys, to drop `duplicate`s, and the lines they cover.
#[derive(Default)]
pub struct Shown {
    keys: Vec<(Vec<(u32, u32, u32)>, bool)>,
    lines: HashMap<u32, Vec<(u32, u32)>>,
}

impl Shown {
    /// Whether a fragment adds too little to the results above: it duplicates one, or
    /// at least [`SHOWN_SHARE`] of its lines are shown.
    pub fn repeats(&self, keys: &[(u32, u32, u32)], grown: bool) -> bool {
        if self.keys.iter().any(|(k, g)| duplicate(k, *g, keys, grown)) {
            return true;
        }
        let (mut all, mut old) = (0u64, 0u64);
        for &(f, a, b) in keys {
            all += u64::from(b.saturating_sub(a)) + 1;
            let mut cut: Vec<(u32, u32)> = self.lines.get(&f).into_iter().flatten().filter(|&&(c, d)| c <= b && a <= d).map(|&(c, d)| (c.max(a), d.min(b))).collect();
            cut.sort_unstable();
            let mut end = 0u32;
            for (c, d) in cut {
                let from = c.max(end);
                if d >= from {
                    old += u64::from(d - from) + 1;
                    end = d + 1;
                }
            }
        }
        all > 0 && old as f32 >= SHOWN_SHARE * all as f32
    }

    pub fn add(&mut self, keys: Vec<(u32, u32, u32)>, grown: bool) {
        for &(f, a, b) in &keys {
            self.lines.entry(f).or_default().push((a, b));
        }
        self.keys.push((keys, grown));
    }
}

/// Whether a fragment adds nothing to a better one: it starts where that one starts and is
/// of the same kind (grown or not), or it covers the very same lines. `keys` are
/// (function, first line, last line) of each span, the root's first.
fn duplicate(a: &[(u32, u32, u32)], a_grown: bool, b: &[(u32, u32, u32)], b_grown: bool) -> bool {
    let same_start = match (a.first(), b.first()) {
        (Some(s), Some(t)) => a_grown == b_grown && s.0 == t.0 && s.1 <= t.2 && t.1 <= s.2,
        _ => false,
    };
    same_start || (!a.is_empty() && a == b)
}

/// Scores candidates with `ranker`, best first (fragments wholly in tests after all
/// others), dropping each that [`Shown::repeats`] better ones and folding each that is a
/// copy of a better one (the same code under other names, as type-specialized libraries
/// write it) into that one's `copies`.
pub fn rank(cands: &mut Vec<Candidate>, ranker: &Ranker, top: usize) {
    for c in cands.iter_mut() {
        c.score = ranker.score(&c.signals);
    }
    cands.sort_by(|a, b| a.tests.cmp(&b.tests).then(b.score.total_cmp(&a.score)).then(a.function.cmp(&b.function)).then(a.grown.cmp(&b.grown)));
    // A grown fragment's root alone or a helper inside it does not follow it; the grown
    // fragment follows its root alone only where its callees hold more lines than the root.
    let mut kept: Vec<Candidate> = Vec::new();
    let mut shown = Shown::default();
    for c in cands.drain(..) {
        let keys = c.keys();
        if shown.repeats(&keys, c.grown) {
            continue;
        }
        if let Some(orig) = kept.iter_mut().find(|k| c.copy != 0 && k.copy == c.copy) {
            orig.copies.extend(c.spans.into_iter().take(1));
            continue;
        }
        // Once full, the rest are read only for copies of what is kept.
        if kept.len() < top {
            shown.add(keys, c.grown);
            kept.push(c);
        }
    }
    *cands = kept;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_start_alike_or_cover_the_same_lines() {
        let root = [(7, 10, 20)];
        let grown = [(7, 10, 20), (8, 30, 40)];
        assert!(duplicate(&root, false, &[(7, 15, 25)], false), "same start, same kind");
        assert!(!duplicate(&root, false, &grown, true), "the root alone and grown into a callee are two fragments");
        assert!(duplicate(&root, false, &root, true), "a grown fragment reported as its root alone is the root");
        assert!(!duplicate(&root, false, &[(9, 10, 20)], false));
        assert!(!duplicate(&[], false, &[], false));
    }

    #[test]
    fn results_whose_lines_are_mostly_shown_are_left_out() {
        let mut shown = Shown::default();
        shown.add(vec![(7, 10, 20), (8, 30, 40)], true);
        assert!(shown.repeats(&[(7, 10, 20)], false), "a grown fragment's root alone");
        assert!(shown.repeats(&[(8, 30, 40), (7, 12, 14)], true), "its callee grown into part of the root");
        assert!(shown.repeats(&[(7, 5, 20)], false), "11 of 16 lines shown");
        assert!(!shown.repeats(&[(7, 1, 25)], false), "11 of 25 lines shown");
        assert!(!shown.repeats(&[(7, 21, 60)], false), "another loop nest of the same function");
        assert!(!shown.repeats(&[(9, 10, 20)], false), "another function on the same lines");
        assert!(!shown.repeats(&[(8, 35, 40), (9, 1, 30)], true), "new helpers around a shown one");
        assert!(!Shown::default().repeats(&[], false));
    }
}
