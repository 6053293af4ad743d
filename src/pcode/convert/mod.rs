//! Plain (CLRS-style) pseudocode → p-code (paper §3.3).
//!
//! Keywords give the control flow and indentation gives the suites; every other
//! instruction, and every test or loop header, is classified math or natural language
//! by the label-propagation [`Classifier`], all lines of one input propagated together.
//!
//! Accepted input: optional line numbers, `//` and `▷` comments, `=` or `←`, keywords
//! `if … [then]`, `elseif` / `else if`, `else`, `while … [do]`, `for … to|downto … [do]`,
//! `for each … [do]`, `repeat` … `until …`, `return [value]`; `if … then S` and
//! `else S` may carry their statement on the same line. A line indented deeper than a
//! simple statement continues it. A line `NAME(params)` at the outermost indentation
//! starts a procedure; `NAME(args)` elsewhere is a call statement. Indentation is the
//! absolute column of the first character after the line number (tabs count 4), so
//! line numbers must be padded consistently, as textbooks print them. `$` and `@` are
//! removed from instructions since they delimit p-code markup.
//!
//! Other common styles read the same way: headers led by `procedure`, `function`,
//! `algorithm` or `def` and closed by `is`, `begin`, `:` or `{`; block ends (`end if`,
//! `end while`, `endfor`, `fi`, `od`, `done`, `}`) and `Input:` / `Output:` lines, which
//! carry no instruction, are dropped; `elif`, `elsif`, `foreach`, `forall`, `for every`;
//! a trailing `:` or `{` opens a suite; `for i from a to b`, `down to`, Python's
//! `for i in range(a, b)` (a counted loop) and `for v in S` (a loop over a collection);
//! `#` comments. A procedure of the input called under its own name in any case
//! (`maxHeapify(A, i)`, `max_heapify(A, i)`) is renamed as a textbook writes it
//! (`MAX-HEAPIFY`), so its calls are calls.

mod decide;
mod emit;
mod lines;

use super::classify::{Classifier, LineClass};
use super::error::{PcodeError, SyntaxError};
use crate::text::{split, Split};
use serde::Serialize;
#[allow(unused_imports)]
use decide::*;
#[allow(unused_imports)]
use emit::*;
#[allow(unused_imports)]
use lines::*;


/// What a line of plain pseudocode is, as the labeled evaluation set counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LineLabel {
    /// Decided by syntax: a keyword line, a call statement or a procedure header.
    Control,
    Math,
    Text,
}

#[derive(Clone, Debug, Serialize)]
pub struct LineDecision {
    /// 1-based line of the input.
    pub line: u32,
    pub label: LineLabel,
}

/// Something the input says that the p-language has no way to say, and how it was read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Warning {
    /// 1-based line and column of the input.
    pub line: u32,
    pub col: u32,
    pub message: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Conversion {
    pub pcode: String,
    /// What was read otherwise than written, in input order.
    pub warnings: Vec<Warning>,
    /// One entry per non-blank input line.
    pub lines: Vec<LineDecision>,
    /// The input line each line of `pcode` comes from.
    pub source: Vec<u32>,
}

/// Labels each non-blank line of `text` without building procedures; lines need no header.
pub fn classify_lines(text: &str, clf: &Classifier) -> Vec<LineDecision> {
    let lines = recognize_all(textbook_names(prepare(text)));
    let decided = decide(&lines, clf);
    line_labels(&lines, &decided)
}

/// A counted loop's step (`for i = 1 to n by 2`, `… step 2`): the p-language's loops step
/// by one, so the step is dropped from the bound, with a warning that says so.
/// Words after which `by` belongs to an expression.
const ARITHMETIC_BY: [&str; 5] = ["divided", "multiplied", "scaled", "shifted", "rounded"];

fn loop_steps(lines: &mut [Line]) -> Vec<Warning> {
    let mut warnings = Vec::new();
    for l in lines.iter_mut() {
        let Kind::For { bound, dir: Some(_), .. } = &mut l.kind else { continue };
        // `n divided by 2` is arithmetic in the bound, not a stride.
        let arithmetic = |at: usize| bound[..at].split_whitespace().next_back().is_some_and(|w| ARITHMETIC_BY.contains(&w.to_ascii_lowercase().as_str()));
        let Some((at, word)) = ["by", "step"].iter().find_map(|w| word_positions(bound, w).into_iter().find(|&i| !arithmetic(i)).map(|i| (i, *w))) else { continue };
        let step = bound[at + word.len()..].trim().to_string();
        bound.truncate(at);
        let kept = bound.trim_end().len();
        bound.truncate(kept);
        // Columns count characters, as editors do.
        let pat = format!(" {word} ");
        let at_text = l.text.match_indices(&pat).map(|m| m.0).find(|&i| !l.text[..i].split_whitespace().next_back().is_some_and(|w| ARITHMETIC_BY.contains(&w.to_ascii_lowercase().as_str())));
        let col = at_text.map_or(l.col, |i| l.col + l.text[..i].chars().count() as u32 + 1);
        warnings.push(Warning {
            line: l.no,
            col,
            message: format!("`{word} {step}`: a loop of the p-language steps by one; read without the step (write the stride as a statement in the loop if it matters)"),
        });
    }
    warnings
}

/// Converts plain pseudocode to p-code. The result is checked by parsing it.
pub fn convert(text: &str, clf: &Classifier) -> Result<Conversion, PcodeError> {
    let mut lines = merge_continuations(recognize_all(textbook_names(prepare(text))));
    let decided = decide(&lines, clf);
    let mut out = Out::default();
    out.warnings = loop_steps(&mut lines);
    let mut pos = 0;
    if lines.is_empty() {
        return Err(error(
            text,
            1,
            1,
            "expected a procedure header `NAME(params)`",
        ));
    }
    check_nesting(text, &lines)?;
    let top = lines[0].indent;
    while pos < lines.len() {
        let l = &lines[pos];
        let Kind::Header { name, params } = &l.kind else {
            return Err(error(
                text,
                l.no,
                l.col,
                "expected a procedure header `NAME(params)`",
            ));
        };
        if l.indent != top {
            return Err(error(
                text,
                l.no,
                l.col,
                "procedure header not at the outermost indentation",
            ));
        }
        out.line(0, format!("{name}({params})"), l.no);
        pos += 1;
        if pos >= lines.len() || lines[pos].indent <= top {
            return Err(error(
                text,
                l.no,
                l.col,
                "procedure without an indented body",
            ));
        }
        let level = lines[pos].indent;
        let body = block(text, &lines, &mut pos, level)?;
        emit(&body, &lines, &decided, 1, &mut out);
        out.line(0, String::new(), l.no);
    }
    let Out { text: out, source, mut warnings } = out;
    warnings.sort_by_key(|w| (w.line, w.col));
    // The output must be valid p-code; a failure here is a bug in this module.
    super::parser::parse(&out).map_err(|e| match e {
        PcodeError::Syntax(mut s) => {
            s.message = Some(format!(
                "generated p-code does not parse: {}",
                s.message.clone().unwrap_or_default()
            ));
            PcodeError::Syntax(s)
        }
        other => other,
    })?;
    Ok(Conversion {
        pcode: out,
        warnings,
        lines: line_labels(&lines, &decided),
        source,
    })
}

/// Refuses input indented deeper than p-code may nest: `block` recurses once a level, and
/// the p-code written from it would be refused anyway.
fn check_nesting(text: &str, lines: &[Line]) -> Result<(), PcodeError> {
    let mut levels: Vec<usize> = Vec::new();
    for l in lines {
        while levels.last().is_some_and(|&w| w > l.indent) {
            levels.pop();
        }
        if levels.last().is_none_or(|&w| w < l.indent) {
            levels.push(l.indent);
        }
        // The header's level is not a suite.
        if levels.len() > super::parser::MAX_NESTING + 1 {
            let msg = format!("more than {} nested indentation levels", super::parser::MAX_NESTING);
            return Err(error(text, l.no, l.col, &msg));
        }
    }
    Ok(())
}

fn error(text: &str, line: u32, col: u32, msg: &str) -> PcodeError {
    let line_text = text
        .lines()
        .nth(line.saturating_sub(1) as usize)
        .unwrap_or("")
        .to_string();
    PcodeError::Syntax(Box::new(SyntaxError {
        file: String::new(),
        line,
        col,
        line_text,
        expected: Vec::new(),
        found: String::new(),
        message: Some(msg.to_string()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_split_takes_the_last_to() {
        assert_eq!(
            split_range("i = 1 to n"),
            Some(("i = 1".into(), "to", "n".into()))
        );
        assert_eq!(
            split_range("j = n downto 2"),
            Some(("j = n".into(), "downto", "2".into()))
        );
        assert_eq!(split_range("x in Q"), None);
    }

    #[test]
    fn calls_need_textbook_names() {
        assert_eq!(
            call_parts("MERGE-SORT(A, p, q)"),
            Some(("MERGE-SORT".into(), "A, p, q".into()))
        );
        assert_eq!(call_parts("max(a, b)"), None);
        assert_eq!(call_parts("F(x) + G(y)"), None);
    }

    #[test]
    fn headers_of_other_styles() {
        let core = |t: &str| header_parts(header_core(t));
        let bfs = Some(("BFS".to_string(), "G, s".to_string()));
        assert_eq!(core("procedure BFS(G, s) is"), bfs);
        assert_eq!(core("def BFS(G, s):"), bfs);
        assert_eq!(core("function BFS(G, s) -> list {"), bfs);
        assert_eq!(core("Algorithm BFS(G, s)"), bfs);
        assert_eq!(core("BFS(G, s)"), bfs);
        // Not headers: an expression, a statement with a call in it.
        assert_eq!(core("F(x) + G(y)"), None);
        assert_eq!(core("x = f(a)"), None);
    }

    #[test]
    fn procedure_names_as_a_textbook_writes_them() {
        assert_eq!(textbook_name("floydWarshall"), "FLOYD-WARSHALL");
        assert_eq!(textbook_name("max_heapify"), "MAX-HEAPIFY");
        assert_eq!(textbook_name("LCSLength"), "LCS-LENGTH");
        assert_eq!(textbook_name("BFS"), "BFS");
        assert_eq!(textbook_name("merge2"), "MERGE2");
        assert_eq!(rename_calls("x = maxHeapify(A, i) + q.maxHeapify(B)", "maxHeapify", "MAX-HEAPIFY"), "x = MAX-HEAPIFY(A, i) + q.maxHeapify(B)");
    }

    #[test]
    fn operations_on_a_structure_are_calls() {
        assert_eq!(structure_calls("Q.enqueue(s)"), "ENQUEUE(Q, s)");
        assert_eq!(structure_calls("u := Q.extractMin()"), "u := EXTRACT-MIN(Q)");
        assert_eq!(structure_calls("H.decrease_key(v, d[u] + w(u, v))"), "DECREASE-KEY(H, v, d[u] + w(u, v))");
        // Fields, library modules and chained receivers stay.
        assert_eq!(structure_calls("v.d = u.d + 1"), "v.d = u.d + 1");
        assert_eq!(structure_calls("x = math.floor(n / 2)"), "x = math.floor(n / 2)");
        assert_eq!(structure_calls("G.adj[u].add(v)"), "G.adj[u].add(v)");
    }

    #[test]
    fn swaps_read_as_the_textbook_writes_them() {
        let x = |s: &str| exchange(s).unwrap_or_default();
        assert_eq!(x("exchange A[i] with A[j]"), "exchange A[i] with A[j]");
        assert_eq!(x("swap A[i + 1] and A[r]"), "exchange A[i + 1] with A[r]");
        assert_eq!(x("swap(A[i], A[largest])"), "exchange A[i] with A[largest]");
        assert_eq!(x("swap(a, i, j)"), "exchange a[i] with a[j]");
        assert_eq!(x("A[i], A[j] = A[j], A[i]"), "exchange A[i] with A[j]");
        assert_eq!(x("A[k], A[p], b[k], b[p] = A[p], A[k], b[p], b[k]"), "exchange A[k] with A[p] and b[k] with b[p]");
        assert_eq!(x("x, y := y, x"), "exchange x with y");
        // Prose, parallel assignments that do not swap, tests.
        assert_eq!(exchange("swap rows k and p of A and entries k and p of b"), None);
        assert_eq!(exchange("x, y = y, x + y"), None);
        assert_eq!(exchange("L, R = [None] * n, [None] * m"), None);
        assert_eq!(exchange("a == b"), None);
        assert_eq!(exchange("swap(x)"), None);
    }

    #[test]
    fn loop_heads_of_other_styles() {
        let counted = |start: &str, dir: &'static str, bound: &str| Kind::For { start: start.into(), dir: Some(dir), bound: bound.into() };
        let same = |a: Kind, b: Kind| format!("{a:?}") == format!("{b:?}");
        assert!(same(for_head("k from 1 to n"), counted("k = 1", "to", "n")));
        assert!(same(for_head("i from n down to 2"), counted("i = n", "downto", "2")));
        assert!(same(for_head("i in range(1, n + 1)"), counted("i = 1", "to", "n")));
        assert!(same(for_head("i in range(n)"), counted("i = 0", "to", "n - 1")));
        assert!(same(for_head("i in range(n, 1, -1)"), counted("i = n", "downto", "1 + 1")));
        assert!(same(for_head("i in range(n, 0, -1)"), counted("i = n", "downto", "0 + 1")));
        assert!(same(for_head("v in G.adj[u]"), Kind::Each("v in G.adj[u]".into())));
        assert!(same(for_head("i = 1 to n"), counted("i = 1", "to", "n")));
    }

    #[test]
    fn a_stride_is_told_from_arithmetic_and_placed_by_characters() {
        let steps = |text: &str| {
            let mut lines = merge_continuations(recognize_all(textbook_names(prepare(text))));
            let w = loop_steps(&mut lines);
            let bound = match &lines[0].kind {
                Kind::For { bound, .. } => bound.clone(),
                k => panic!("{k:?}"),
            };
            (w, bound)
        };
        let (w, bound) = steps("for i = 1 to n divided by 2\n    x = i\n");
        assert!(w.is_empty() && bound == "n divided by 2", "{w:?} {bound}");
        let (w, bound) = steps("for i = 1 to n divided by 2 by 3\n    x = i\n");
        assert_eq!((w.len(), bound.as_str()), (1, "n divided by 2"));
        assert_eq!((w[0].line, w[0].col), (1, 29), "{w:?}");
        // `⌊` is three bytes and one column.
        let (w, _) = steps("for j = 1 to ⌊n/2⌋ step 2\n    x = j\n");
        assert_eq!((w.len(), w[0].col), (1, 20), "{w:?}");
    }

    #[test]
    fn block_ends_and_specifications_carry_no_step() {
        for l in ["end", "end if", "END WHILE", "endfor", "fi", "od", "done", "}", "begin", "end procedure"] {
            assert!(is_block_end(l), "{l}");
        }
        for l in ["end = n", "end of the list is reached here", "x := 0"] {
            assert!(!is_block_end(l), "{l}");
        }
        assert!(is_specification("Input: a graph G and a source s"));
        assert!(is_specification("Output: d"));
        assert!(!is_specification("output := 0"));
        assert_eq!(strip_comment("x = 1  # the count"), "x = 1  ");
        assert_eq!(strip_comment("# a note"), "");
        assert_eq!(strip_comment("A[#x] = 1"), "A[#x] = 1");
    }

    #[test]
    fn python_suites_open_with_a_colon() {
        let (k, inline) = recognize("if x > y: return x", false);
        assert!(matches!(k, Kind::If(ref t) if t == "x > y"), "{k:?}");
        assert_eq!(inline.as_deref(), Some("return x"));
        assert!(matches!(recognize("elif A[i:j] == B:", false).0, Kind::Elif(ref t) if t == "A[i:j] == B"));
        assert!(matches!(recognize("else:", false).0, Kind::Else));
        assert!(matches!(recognize("while q:", false).0, Kind::While(ref t) if t == "q"));
        assert!(matches!(recognize("x := y", false).0, Kind::Plain(_)));
    }

    #[test]
    fn math_tests_keep_connectives() {
        assert_eq!(
            test("i > 0 and not A[i] ≤ key", LineClass::Math),
            "$i > 0$ and not $A[i] ≤ key$"
        );
        assert_eq!(
            test("the queue is not empty", LineClass::Text),
            "@the queue is not empty@"
        );
    }
}

