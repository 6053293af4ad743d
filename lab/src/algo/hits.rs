//! The hit rule and the per-row metrics: a fragment hits when it lies on a known
//! implementation and is not much larger than it.

#[allow(unused_imports)]
use super::*;

/// The fragment's own size: last minus first line + 1 over its spans in one file, the
/// largest over the files it touches.
pub fn fragment_extent(spans: &[LocSpan]) -> u32 {
    let mut per: HashMap<(&str, &str), (u32, u32)> = HashMap::new();
    for s in spans {
        let (a, b) = (s.lines.0.min(s.lines.1), s.lines.0.max(s.lines.1));
        let e = per.entry((&s.project, &s.path)).or_insert((a, b));
        e.0 = e.0.min(a);
        e.1 = e.1.max(b);
    }
    per.values().map(|&(a, b)| b - a + 1).max().unwrap_or(0)
}

/// Largest fragment still judged a hit on an entry spanning `entry_span` lines.
pub fn size_limit(entry_span: u32) -> u32 {
    (3 * entry_span).max(entry_span + 30)
}

/// A fragment hits an entry when one of its spans is in the entry's file and overlaps its
/// lines, and the fragment is not much larger than the entry.
pub fn is_hit(spans: &[LocSpan], entry: &Entry) -> bool {
    let overlaps = spans.iter().any(|s| {
        s.project == entry.project && s.path == entry.path && s.lines.0.min(s.lines.1) <= entry.end_line && s.lines.0.max(s.lines.1) >= entry.start_line
    });
    overlaps && fragment_extent(spans) <= size_limit(entry.span())
}

/// Rank (1-based) of the first fragment among the top [`MAX_RANK`] that hits any of
/// `entries`; `None` is ">100".
pub fn f_rank(fragments: &[Vec<LocSpan>], entries: &[&Entry]) -> Option<usize> {
    fragments.iter().take(MAX_RANK).position(|f| entries.iter().any(|e| is_hit(f, e))).map(|i| i + 1)
}

/// Like [`f_rank`] without the size limit: the first fragment that touches an entry at
/// all. A diagnostic: where it is much better than the F-rank, fragments were too large.
pub fn overlap_rank(fragments: &[Vec<LocSpan>], entries: &[&Entry]) -> Option<usize> {
    let touches = |f: &Vec<LocSpan>, e: &Entry| {
        f.iter().any(|s| s.project == e.project && s.path == e.path && s.lines.0.min(s.lines.1) <= e.end_line && s.lines.0.max(s.lines.1) >= e.start_line)
    };
    fragments.iter().take(MAX_RANK).position(|f| entries.iter().any(|e| touches(f, e))).map(|i| i + 1)
}

pub fn reciprocal(rank: Option<usize>) -> f64 {
    rank.filter(|r| (1..=MAX_RANK).contains(r)).map_or(0.0, |r| 1.0 / r as f64)
}

pub fn hit_at(rank: Option<usize>, k: usize) -> f64 {
    if rank.is_some_and(|r| r <= k) {
        1.0
    } else {
        0.0
    }
}

/// `3` or `>100`.
pub fn rank_text(rank: Option<usize>) -> String {
    rank.map_or_else(|| format!(">{MAX_RANK}"), |r| r.to_string())
}
