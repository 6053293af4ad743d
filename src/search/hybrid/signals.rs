//! The signals of a candidate fragment, read from the retrievers, the alignment and the
//! fragment itself. [`Signals`] names each; [`Signals::NAMES`] is the one place that fixes
//! their order for the scorer, and a scorer's manifest must list the same names.

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
