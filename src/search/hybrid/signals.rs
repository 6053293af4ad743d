//! The signals of a candidate fragment, read from the retrievers, the alignment and the
//! fragment itself. [`Signals`] names each; [`Signals::NAMES`] is the one place that fixes
//! their order for the scorer, and a scorer's manifest must list the same names.

use super::candidates::Candidate;

/// Declares the signal struct and its name list from one list, so the two cannot drift.
macro_rules! signals {
    ($( $(#[doc = $doc:literal])* $name:ident, )*) => {
        /// A candidate's signals; `Default` is all zeros.
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        pub struct Signals {
            $( $(#[doc = $doc])* pub $name: f32, )*
        }

        impl Signals {
            /// Signal names in the scorer's order.
            pub const NAMES: [&'static str; N_SIGNALS] = [$(stringify!($name)),*];

            /// The signals in [`Signals::NAMES`] order.
            pub fn to_array(&self) -> [f32; N_SIGNALS] {
                [$(self.$name),*]
            }

            pub fn from_array(x: &[f32; N_SIGNALS]) -> Signals {
                let [$($name),*] = *x;
                Signals { $($name),* }
            }
        }
    };
}

/// How many signals a candidate has.
pub const N_SIGNALS: usize = 29;

signals! {
    /// BM25F score over names, comments and bodies, over the pool's best.
    lex,
    /// 1/(1 + rank) in the lexical retriever (0 when it did not return the function).
    lex_rr,
    /// Share of the query's procedure-name words in the function's name.
    name,
    /// … in the comment above the function.
    comment_name,
    /// Cosine of the query's and the function's text vectors, minus the pool's best.
    dense,
    /// 1/(1 + rank) in the dense retriever.
    dense_rr,
    /// Query share covered by the paper's best node group that touches the function.
    beryllium,
    /// 1/(1 + rank) in the Beryllium retriever.
    beryllium_rr,
    /// Score of the nesting-tree alignment.
    align,
    /// The alignment score minus the pool's best.
    align_rel,
    /// Cosine of the query's and the function's profiles (loops, depth, operators).
    profile,
    /// Same loop-nesting depth as the query.
    depth_match,
    /// Relative difference in loop count (capped at 2).
    loops_diff,
    /// Both recurse or neither does.
    recursion,
    /// Aligned nodes over the nodes of the aligned region.
    density,
    /// log of the fragment's extent over the query's lines.
    size,
    /// `size` squared.
    size2,
    /// The fragment is grown into callees.
    grown,
    /// The root span lies in tests, examples or benchmarks.
    test_path,
    /// Statements written alike along the alignment, names aside.
    tok_align,
    /// … anywhere in the fragment.
    tok_bag,
    /// 1/(1 + rank) of `profile` in the pool.
    profile_rr,
    /// Largest extent of one file's spans over the lines they cover (log).
    spread,
    /// Share of the query's def-use edges that hold between matched statements.
    flow,
    /// Longest run of the query's statements in its order.
    tok_seq,
    /// Both recurse.
    recursion_both,
    /// 1/(1 + rank) of `tok_align` in a pool where no name or comment matches.
    tok_align_rr_unnamed,
    /// Share of the query's procedure-name words in the file's name.
    file_name,
    /// … in the function's string literals.
    string_name,
}

/// Signals that can be taken out as a whole (ablation), and the retriever that belongs to
/// each (see [`super::RETRIEVERS`]).
pub const GROUPS: [(&str, &[&str]); 7] = [
    ("lexical", &["lex", "lex_rr", "name", "comment_name", "file_name"]),
    ("dense", &["dense", "dense_rr"]),
    ("beryllium", &["beryllium", "beryllium_rr"]),
    ("structure", &["align", "align_rel", "profile", "depth_match", "loops_diff", "recursion", "density", "profile_rr", "flow", "recursion_both"]),
    ("fragment", &["size", "size2", "grown", "test_path", "spread"]),
    ("tokens", &["tok_align", "tok_bag", "tok_seq", "tok_align_rr_unnamed"]),
    ("strings", &["string_name"]),
];

/// A mask over [`Signals::NAMES`] without the signals of `groups`.
pub fn mask_without(groups: &[&str]) -> [bool; N_SIGNALS] {
    let mut m = [true; N_SIGNALS];
    for g in groups {
        if let Some((_, fs)) = GROUPS.iter().find(|(n, _)| n == g) {
            for f in *fs {
                if let Some(i) = Signals::NAMES.iter().position(|x| x == f) {
                    m[i] = false;
                }
            }
        }
    }
    m
}

/// The signals that compare a candidate with the rest of its pool, set once the pool is
/// whole.
pub fn relative(out: &mut [Candidate]) {
    let max_of = |get: fn(&Signals) -> f32, out: &[Candidate]| out.iter().map(|c| get(&c.signals)).fold(f32::MIN, f32::max);
    let (lex_max, dense_max, align_max) = (max_of(|s| s.lex, out), max_of(|s| s.dense, out), max_of(|s| s.align, out));
    for c in out.iter_mut() {
        let s = &mut c.signals;
        s.lex = if lex_max > 0.0 { s.lex / lex_max } else { 0.0 };
        s.dense -= dense_max;
        s.align_rel = s.align - align_max;
    }
    // Where names say nothing (renamed code) the few closest profiles matter more than the
    // profile's value: its rank in the pool says which are closest.
    pool_rank(out, |s| s.profile, |s, v| s.profile_rr = v);
    // Where no candidate's name or comment carries the query's procedure name (renamed or
    // tersely named code), the closest token matches in the pool stand out; elsewhere names
    // do that and this stays 0.
    let unnamed = max_of(|s| s.name, out) <= 0.0 && max_of(|s| s.comment_name, out) <= 0.0;
    if unnamed {
        pool_rank(out, |s| s.tok_align, |s, v| s.tok_align_rr_unnamed = v);
    }
}

/// Sets a signal of every candidate to 1/(1 + rank) of another in the pool (highest first;
/// ties in pool order).
fn pool_rank(out: &mut [Candidate], from: fn(&Signals) -> f32, to: fn(&mut Signals, f32)) {
    let mut order: Vec<usize> = (0..out.len()).collect();
    order.sort_by(|&a, &b| from(&out[b].signals).total_cmp(&from(&out[a].signals)).then(a.cmp(&b)));
    for (r, &i) in order.iter().enumerate() {
        to(&mut out[i].signals, 1.0 / (1.0 + r as f32));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_struct_and_round_trip() {
        assert_eq!(Signals::NAMES.len(), N_SIGNALS);
        assert_eq!(Signals::NAMES[0], "lex");
        assert_eq!(Signals::NAMES[N_SIGNALS - 1], "string_name");
        let x: [f32; N_SIGNALS] = std::array::from_fn(|i| i as f32);
        let s = Signals::from_array(&x);
        assert_eq!(s.lex_rr, 1.0);
        assert_eq!(s.file_name, 27.0);
        assert_eq!(s.to_array(), x);
    }

    #[test]
    fn every_group_names_known_signals() {
        for (_, fs) in GROUPS {
            for f in fs {
                assert!(Signals::NAMES.contains(f), "{f}");
            }
        }
        let m = mask_without(&["dense"]);
        assert_eq!(m.iter().filter(|&&b| !b).count(), 2);
    }
}
