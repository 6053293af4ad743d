//! New names (neutral counters or seeded random strings) and the span rewriting itself.

use super::kept::Kept;
use super::names::{Ctx, Scan, Tok, Zone};
use super::{Category, Mode};
use std::collections::{HashMap, HashSet};

/// Hands out new names in order of first renamed appearance.
pub(crate) struct Namer {
    mode: Mode,
    rng: u64,
    counters: [usize; Category::ALL.len()],
    /// Words a new name must not be: every word of the input, keywords, earlier new names.
    taken: HashSet<String>,
    pub assigned: HashMap<String, (Category, String)>,
    /// Original names in the order they were first renamed.
    pub order: Vec<String>,
}

impl Namer {
    pub fn new(mode: Mode, seed: u64, taken: HashSet<String>) -> Namer {
        Namer {
            mode,
            // splitmix64 state; mixing the seed keeps seeds 0 and 1 far apart.
            rng: seed ^ 0x5DEE_CE66_D1CE_4E5B,
            counters: [0; Category::ALL.len()],
            taken,
            assigned: HashMap::new(),
            order: Vec::new(),
        }
    }

    fn next_u64(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A new name; `upper` capitalizes it (not `MACRO_N`, already upper case).
    fn fresh(&mut self, cat: Category, upper: bool) -> String {
        loop {
            let mut name = match self.mode {
                Mode::Neutral => {
                    let i = &mut self.counters[cat as usize];
                    let n = format!("{}_{}", cat.prefix(), *i);
                    *i += 1;
                    n
                }
                Mode::Random => {
                    const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
                    const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
                    let mut s = String::with_capacity(8);
                    s.push(LETTERS[(self.next_u64() % 26) as usize] as char);
                    for _ in 0..7 {
                        s.push(ALNUM[(self.next_u64() % 36) as usize] as char);
                    }
                    s
                }
            };
            if upper {
                name[..1].make_ascii_uppercase();
            }
            if !Kept::is_keyword_anywhere(&name) && self.taken.insert(name.clone()) {
                return name;
            }
        }
    }

    /// The new name of `original`, made on first use. It keeps the case of the original's
    /// first letter (`Stack` → `Class_0`, `stack` → `var_0`): Java readers and beryl's own
    /// call resolver tell `Type.m()` and `new T()` from `obj.m()` by it.
    pub fn name_for(&mut self, original: &str, cat: Category) -> &str {
        if !self.assigned.contains_key(original) {
            let new = self.fresh(cat, original.starts_with(|c: char| c.is_uppercase()));
            self.assigned.insert(original.to_string(), (cat, new));
            self.order.push(original.to_string());
        }
        &self.assigned[original].1
    }
}

/// For each qualified name of a file, the first segment that is left alone: the segments from
/// a renamed name on stay when the path starts outside the corpus (`std::sort`,
/// `Math.max`); a path from a name the corpus declares (even one kept by list, like a
/// variable `set`) is the corpus's own, and so is a Java path through lower-case package
/// names to a declared type (`org.x.Foo`).
pub(crate) fn chain_keep_from(scan: &Scan, declared: &HashSet<String>, renamed: &HashMap<String, Category>, java: bool) -> Vec<usize> {
    scan.chains
        .iter()
        .map(|segs| {
            if declared.contains(&segs[0]) && !Kept::is_library_root(&segs[0]) {
                return segs.len();
            }
            let Some(i) = segs.iter().position(|s| renamed.contains_key(s)) else {
                return segs.len();
            };
            let packages = segs[..i].iter().all(|s| s.starts_with(|c: char| c.is_lowercase()));
            if java && packages && segs[i].starts_with(|c: char| c.is_uppercase()) {
                segs.len()
            } else {
                i
            }
        })
        .collect()
}

/// Whether a declared name's token at this position is renamed.
pub(crate) fn renames(tok: &Tok, cat: Category, keep_from: &[usize]) -> bool {
    match tok.ctx {
        Ctx::Plain => true,
        Ctx::Package => false,
        Ctx::ImportPrefix => cat == Category::Type,
        Ctx::Chain { id, pos } => (pos as usize) < keep_from[id as usize],
    }
}

/// What replaces a removed comment: its line breaks (line numbers stay), a space where it
/// separated two tokens, and a line continuation for each line break inside a preprocessor
/// directive (the directive went on past the comment).
fn comment_replacement(src: &str, start: usize, end: usize) -> String {
    let text = &src[start..end];
    let breaks = text.matches('\n').count();
    if breaks == 0 {
        let before = src[..start].chars().next_back().is_some_and(|c| !c.is_whitespace());
        let after = src[end..].chars().next().is_some_and(|c| !c.is_whitespace());
        return if before && after { " ".into() } else { String::new() };
    }
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let sep = if in_directive(src, start) {
        format!(" \\{nl}")
    } else {
        nl.to_string()
    };
    sep.repeat(breaks)
}

/// Whether byte `pos` lies on a preprocessor directive's logical line (continuations included).
fn in_directive(src: &str, pos: usize) -> bool {
    let mut line_start = src[..pos].rfind('\n').map_or(0, |i| i + 1);
    loop {
        let line = &src[line_start..pos.max(line_start)];
        let prev_continues = line_start >= 2 && src[..line_start - 1].trim_end_matches('\r').ends_with('\\');
        if !prev_continues {
            return line.trim_start().starts_with('#');
        }
        line_start = src[..line_start - 1].rfind('\n').map_or(0, |i| i + 1);
    }
}

/// An edit: replace `src[start..end]`.
pub(crate) struct Edit {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// Removal of the comments whose zone is below `limit`.
pub(crate) fn comment_edits(src: &str, comments: &[(usize, usize, Zone)], limit: Zone) -> Vec<Edit> {
    let mut edits: Vec<Edit> = Vec::with_capacity(comments.len());
    for &(start, end, _) in comments.iter().filter(|c| c.2 < limit) {
        let text = comment_replacement(src, start, end);
        // A comment that ends its line takes the blanks before it along (no trailing spaces).
        let mut start = start;
        if text.is_empty() || text.starts_with(['\n', '\r']) || text.starts_with(" \\") {
            let ends_line = text.starts_with(['\n', '\r', ' ']) || src[end..].starts_with(['\n', '\r']) || end == src.len();
            if ends_line {
                let floor = edits.last().map_or(0, |e| e.end);
                while start > floor && matches!(src.as_bytes()[start - 1], b' ' | b'\t') {
                    start -= 1;
                }
            }
        }
        edits.push(Edit { start, end, text });
    }
    edits
}

/// Applies non-overlapping edits (sorted by start) in one forward pass.
pub(crate) fn apply(src: &str, edits: &[Edit]) -> String {
    let mut out = String::with_capacity(src.len());
    let mut at = 0;
    for e in edits {
        if e.start < at {
            continue; // overlap: cannot happen for tokens and comments; stay safe anyway
        }
        out.push_str(&src[at..e.start]);
        out.push_str(&e.text);
        at = e.end;
    }
    out.push_str(&src[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(src: &str, spans: &[(usize, usize)]) -> String {
        let spans: Vec<(usize, usize, Zone)> = spans.iter().map(|&(a, b)| (a, b, 0)).collect();
        apply(src, &comment_edits(src, &spans, 4))
    }

    #[test]
    fn comments_keep_lines_and_token_boundaries() {
        let s = "int/*x*/y; // tail\n/* a\n b */ z;\n";
        let a = s.find("/*x*/").unwrap();
        let b = s.find("// tail").unwrap();
        let c = s.find("/* a").unwrap();
        let c_end = s.find("*/ z").unwrap() + 2;
        let out = strip(s, &[(a, a + 5), (b, b + 7), (c, c_end)]);
        assert_eq!(out, "int y;\n\n z;\n");
    }

    #[test]
    fn multiline_comment_in_directive_continues_it() {
        let s = "#define X 1 /* a\n b */ + 2\nint y;\n";
        let c = s.find("/*").unwrap();
        let e = s.find("*/").unwrap() + 2;
        assert_eq!(strip(s, &[(c, e)]), "#define X 1 \\\n + 2\nint y;\n");
    }

    #[test]
    fn random_names_are_deterministic() {
        let mut a = Namer::new(Mode::Random, 3, HashSet::new());
        let mut b = Namer::new(Mode::Random, 3, HashSet::new());
        let x = a.name_for("foo", Category::Function).to_string();
        assert_eq!(x, b.name_for("foo", Category::Function));
        assert_eq!(x.len(), 8);
        assert!(x.starts_with(|c: char| c.is_ascii_lowercase()));
        assert!(a.name_for("Foo", Category::Type).starts_with(|c: char| c.is_ascii_uppercase()));
        assert_eq!(
            Namer::new(Mode::Neutral, 0, HashSet::new()).name_for("Foo", Category::Type),
            "Class_0"
        );
    }
}
