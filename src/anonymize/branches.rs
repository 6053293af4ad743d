//! One branch of every preprocessor conditional, for finding declarations that tree-sitter
//! cannot parse across `#if`/`#else`. Template libraries write `#ifdef DOXYGEN template<…> #else
//! template<…> #endif class Bfs {…}`: neither branch is a whole declaration, so the class
//! comes out as an ERROR region and its name was never declared (and so never renamed).
//! A view keeps one branch of each conditional and blanks the directives and the other
//! branches byte for byte (line breaks stay), so it parses as the compiler would see the
//! file under one configuration, and its offsets are the file's.

/// Which branch of each conditional a view keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keep {
    First,
    Last,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Directive {
    Open,
    Branch,
    Close,
    Other,
}

/// The directive a line starts, if it is a conditional's.
fn directive(line: &str) -> Directive {
    let Some(rest) = line.trim_start().strip_prefix('#') else { return Directive::Other };
    let word: String = rest.trim_start().chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    match word.as_str() {
        "if" | "ifdef" | "ifndef" => Directive::Open,
        "elif" | "elifdef" | "elifndef" | "else" => Directive::Branch,
        "endif" => Directive::Close,
        _ => Directive::Other,
    }
}

/// Byte ranges of the file's logical lines (a line ending in `\` goes on).
fn logical_lines(src: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut pos = 0;
    for line in src.split_inclusive('\n') {
        pos += line.len();
        if !line.trim_end_matches(['\n', '\r']).ends_with('\\') {
            out.push((start, pos));
            start = pos;
        }
    }
    if start < src.len() {
        out.push((start, src.len()));
    }
    out
}

/// The file with one branch of each conditional kept; `None` when it has no conditional
/// or they do not nest properly (an unmatched `#endif`: better no view than a wrong one).
pub(crate) fn view(src: &str, keep: Keep) -> Option<String> {
    let lines = logical_lines(src);
    let kinds: Vec<Directive> = lines.iter().map(|&(a, b)| directive(&src[a..b])).collect();
    if !kinds.contains(&Directive::Open) {
        return None;
    }
    // Branch count of each conditional, by the line that opens it.
    let mut branches = vec![0u32; lines.len()];
    let mut open: Vec<usize> = Vec::new();
    for (i, k) in kinds.iter().enumerate() {
        match k {
            Directive::Open => {
                open.push(i);
                branches[i] = 1;
            }
            Directive::Branch => branches[*open.last()?] += 1,
            Directive::Close => {
                open.pop()?;
            }
            Directive::Other => {}
        }
    }
    if !open.is_empty() {
        return None;
    }
    // Each open conditional: (branch now, branch kept).
    let mut stack: Vec<(u32, u32)> = Vec::new();
    let mut blank = vec![false; lines.len()];
    for (i, k) in kinds.iter().enumerate() {
        let active = stack.iter().all(|&(now, kept)| now == kept);
        match k {
            Directive::Open => {
                let kept = if keep == Keep::First { 0 } else { branches[i] - 1 };
                stack.push((0, kept));
                blank[i] = true;
            }
            Directive::Branch => {
                if let Some(top) = stack.last_mut() {
                    top.0 += 1;
                }
                blank[i] = true;
            }
            Directive::Close => {
                stack.pop();
                blank[i] = true;
            }
            Directive::Other => blank[i] = !active,
        }
    }
    let mut out = src.as_bytes().to_vec();
    for (&(a, b), _) in lines.iter().zip(&blank).filter(|(_, &x)| x) {
        for c in &mut out[a..b] {
            if *c != b'\n' && *c != b'\r' {
                *c = b' ';
            }
        }
    }
    // Only whole lines were blanked and every other byte is as it was: still UTF-8.
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "#ifdef DOXYGEN\ntemplate <typename G>\n#else\ntemplate <typename G=Lé>\n#endif\nclass Bfs {};\n";

    #[test]
    fn keeps_one_branch_and_every_offset() {
        let first = view(SRC, Keep::First).unwrap();
        let last = view(SRC, Keep::Last).unwrap();
        assert_eq!(first.len(), SRC.len());
        assert_eq!(first.lines().count(), SRC.lines().count());
        assert!(first.contains("template <typename G>\n") && !first.contains("G=L"));
        assert!(last.contains("template <typename G=Lé>") && !last.contains("G>\n"));
        assert!(!last.contains('#'));
        assert_eq!(&last[last.find("class").unwrap()..], "class Bfs {};\n");
    }

    #[test]
    fn nested_and_continued_directives() {
        let src = "#if A \\\n  && B\nx\n#if C\ny\n#elif D\nz\n#else\nw\n#endif\n#else\nv\n#endif\n";
        let words = |k| view(src, k).unwrap().split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(words(Keep::First), ["x", "y"]);
        assert_eq!(words(Keep::Last), ["v"]);
    }

    #[test]
    fn no_view_without_conditionals_or_when_unbalanced() {
        assert_eq!(view("int x;\n#define A 1\n", Keep::First), None);
        assert_eq!(view("#endif\n#if A\n", Keep::First), None);
        assert_eq!(view("#if A\nint x;\n", Keep::Last), None);
    }
}
