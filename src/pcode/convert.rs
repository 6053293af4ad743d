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

use super::classify::{Classifier, LineClass};
use super::error::{PcodeError, SyntaxError};
use crate::text::{split, Split};
use serde::Serialize;

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

#[derive(Clone, Debug, Serialize)]
pub struct Conversion {
    pub pcode: String,
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

/// Converts plain pseudocode to p-code. The result is checked by parsing it.
pub fn convert(text: &str, clf: &Classifier) -> Result<Conversion, PcodeError> {
    let lines = merge_continuations(recognize_all(textbook_names(prepare(text))));
    let decided = decide(&lines, clf);
    let mut out = Out::default();
    let mut pos = 0;
    if lines.is_empty() {
        return Err(error(
            text,
            1,
            1,
            "expected a procedure header `NAME(params)`",
        ));
    }
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
    let Out { text: out, source } = out;
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
        lines: line_labels(&lines, &decided),
        source,
    })
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

// ---------------------------------------------------------------- lines

#[derive(Clone, Debug)]
struct Line {
    no: u32,
    col: u32,
    indent: usize,
    text: String,
    kind: Kind,
    /// Made up from the inline statement of `if … then S` / `else S`.
    synthetic: bool,
}

#[derive(Clone, Debug)]
enum Kind {
    Header {
        name: String,
        params: String,
    },
    If(String),
    Elif(String),
    Else,
    While(String),
    For {
        start: String,
        dir: Option<&'static str>,
        bound: String,
    },
    Each(String),
    Repeat,
    Until(String),
    Return(Option<String>),
    Call(String),
    Plain(String),
}

/// Non-blank lines with line numbers and comments removed.
fn prepare(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let expanded = raw.replace('\t', "    ");
        let lead = expanded.len() - expanded.trim_start().len();
        let rest = &expanded[lead..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let after_number = &rest[digits..];
        let body_start = if digits > 0
            && (after_number.is_empty() || after_number.starts_with([' ', '.', ':']))
        {
            let after = after_number.trim_start_matches(['.', ':']);
            lead + digits
                + (after_number.len() - after.len())
                + (after.len() - after.trim_start().len())
        } else {
            lead
        };
        let body = strip_comment(&expanded[body_start..]);
        let body = body.trim_end().trim_end_matches(';').trim_end();
        let body = body.strip_prefix('}').map_or(body, str::trim_start);
        if body.is_empty() || is_block_end(body) || is_specification(body) {
            continue;
        }
        let indent = expanded[..body_start].chars().count();
        out.push(Line {
            no: i as u32 + 1,
            col: indent as u32 + 1,
            indent,
            text: body.to_string(),
            kind: Kind::Plain(String::new()),
            synthetic: false,
        });
    }
    out
}

fn strip_comment(s: &str) -> &str {
    // `#` opens a comment at the start of a line or after a space (`# …`, `x = 1  # …`).
    let hash = s
        .char_indices()
        .find(|&(i, c)| c == '#' && (i == 0 || s[..i].ends_with([' ', '\t'])))
        .map(|(i, _)| i);
    let cut = [s.find("//"), s.find('▷'), hash].into_iter().flatten().min();
    match cut {
        Some(i) => &s[..i],
        None => s,
    }
}

/// A line that only closes or opens a block: `end`, `end while`, `endif`, `fi`, `od`,
/// `done`, `begin`, `{`. Indentation already says where blocks end.
fn is_block_end(s: &str) -> bool {
    let t = s.trim().to_lowercase();
    let words: Vec<&str> = t.split_whitespace().collect();
    match words.as_slice() {
        ["end", ..] => words.len() <= 2,
        [w] => matches!(
            *w,
            "endif"
                | "endwhile"
                | "endfor"
                | "endfunction"
                | "endprocedure"
                | "endalgorithm"
                | "fi"
                | "od"
                | "done"
                | "begin"
                | "{"
                | "}"
        ),
        _ => false,
    }
}

/// `Input: …`, `Output: …`, `Require: …`: what a procedure takes and gives, not a step.
fn is_specification(s: &str) -> bool {
    let (w, rest) = first_word(s.trim());
    rest.starts_with(':')
        && !rest.starts_with(":=")
        && matches!(
            w.as_str(),
            "input" | "output" | "inputs" | "outputs" | "require" | "requires" | "ensure" | "ensures"
        )
}

/// Words that lead a procedure header in other styles than the textbook's.
const HEADER_WORDS: [&str; 9] = [
    "procedure",
    "function",
    "algorithm",
    "def",
    "proc",
    "func",
    "fn",
    "subroutine",
    "method",
];

/// A header line without its style's leading word and closing words: `procedure
/// BFS(G, s) is`, `def bfs(G, s):`, `function gcd(a, b) -> int {` all give `NAME(params)`.
fn header_core(text: &str) -> &str {
    let t = text.trim();
    let (w, rest) = first_word(t);
    let t = if HEADER_WORDS.contains(&w.as_str()) && rest.contains('(') && !rest.starts_with('(') {
        rest
    } else {
        t
    };
    let Some(end) = t.find('(').and_then(|open| closing(t, open)).map(|close| close + 1) else { return t };
    let tail = t[end..].trim();
    let style = tail.is_empty()
        || matches!(tail, ":" | "is" | "begin" | "{" | "is begin" | "=")
        || tail.starts_with("->")
        || (tail.starts_with(':') && !tail.starts_with(":="));
    if style {
        &t[..end]
    } else {
        t
    }
}

/// `floydWarshall`, `floyd_warshall`, `LCSLength` → `FLOYD-WARSHALL`, `LCS-LENGTH`.
fn textbook_name(name: &str) -> String {
    let how = Split { sep: |c| c == '_' || c == '-', ..Split::WORDS };
    split(name, &how).iter().map(|w| w.chars().flat_map(char::to_uppercase).collect::<String>()).collect::<Vec<_>>().join("-")
}

/// `print(…)` and its kin write output, which textbooks say in words, not call.
fn is_output(name: &str) -> bool {
    matches!(name.to_lowercase().as_str(), "print" | "println" | "printf" | "output" | "write" | "writeln" | "display")
}

/// Library prefixes of a dotted call that are not the structure operated on.
const MODULES: [&str; 14] =
    ["math", "Math", "np", "numpy", "heapq", "sys", "random", "itertools", "collections", "std", "System", "Arrays", "Collections", "self"];

/// An operation written on its structure, `Q.enqueue(v)` or `Q.extractMin()`, as the
/// textbook writes it: `ENQUEUE(Q, v)`, `EXTRACT-MIN(Q)`.
fn structure_calls(text: &str) -> String {
    structure_calls_in(text, 0)
}

/// Operations nested in arguments are rewritten too, a few levels deep.
fn structure_calls_in(text: &str, level: usize) -> String {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let word_end = |from: usize| text[from..].find(|c: char| !ident(c)).map_or(text.len(), |k| from + k);
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        // A receiver: a whole word followed by `.name(`.
        let prev = text[..i].chars().next_back();
        if !c.is_alphabetic() || prev.is_some_and(|p| ident(p) || p == '.') {
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        let r_end = word_end(i);
        let recv = &text[i..r_end];
        let m_end = if text[r_end..].starts_with('.') { word_end(r_end + 1) } else { r_end };
        let method = text.get(r_end + 1..m_end).unwrap_or("");
        let operation = level < 8 && !MODULES.contains(&recv) && method.starts_with(char::is_alphabetic) && text[m_end..].starts_with('(');
        match operation.then(|| closing(text, m_end)).flatten() {
            Some(close) => {
                let args = structure_calls_in(&text[m_end + 1..close], level + 1);
                let sep = if args.trim().is_empty() { "" } else { ", " };
                out.push_str(&format!("{}({recv}{sep}{})", textbook_name(method), args.trim()));
                i = close + 1;
            }
            None => {
                out.push_str(recv);
                i = r_end;
            }
        }
    }
    out
}

/// Byte offset of the `)` that closes the `(` at byte `open` of `s`.
fn closing(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s[open..].char_indices() {
        depth += i32::from(c == '(') - i32::from(c == ')');
        if depth == 0 {
            return Some(open + i);
        }
    }
    None
}

/// Renames each procedure the input defines to its textbook form wherever it is called,
/// so `maxHeapify(A, i)` is a call like `MAX-HEAPIFY(A, i)`, and writes operations on a
/// structure as calls ([`structure_calls`]).
fn textbook_names(mut lines: Vec<Line>) -> Vec<Line> {
    let top = lines.iter().map(|l| l.indent).min().unwrap_or(0);
    let mut names: Vec<(String, String)> = lines
        .iter()
        .filter(|l| l.indent == top)
        .filter_map(|l| header_parts(header_core(&l.text)))
        .map(|(name, _)| {
            let canon = textbook_name(&name);
            (name, canon)
        })
        .filter(|(name, canon)| name != canon && canon.chars().filter(char::is_ascii_uppercase).count() >= 2)
        .collect();
    // Longer names first, so `sortRange` is not renamed through `sort`.
    names.sort_by_key(|(n, _)| std::cmp::Reverse(n.len()));
    names.dedup();
    for l in &mut lines {
        if l.text.contains('.') && header_parts(header_core(&l.text)).is_none() {
            l.text = structure_calls(&l.text);
        }
        for (name, canon) in &names {
            l.text = rename_calls(&l.text, name, canon);
        }
    }
    lines
}

/// `name(` → `canon(` where `name` stands as a whole word (not `x.name(`).
fn rename_calls(text: &str, name: &str, canon: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let before = text[..i].chars().next_back();
        let starts_word = !before.is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if starts_word && rest.starts_with(name) && rest[name.len()..].trim_start().starts_with('(') {
            out.push_str(canon);
            i += name.len();
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Recognizes each line's keyword; inline statements become synthetic child lines.
fn recognize_all(lines: Vec<Line>) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::with_capacity(lines.len());
    let min_indent = lines.iter().map(|l| l.indent).min().unwrap_or(0);
    for (i, mut l) in lines.iter().cloned().enumerate() {
        let next_indent = lines.get(i + 1).map(|n| n.indent);
        if l.indent > min_indent {
            l.text = exchange(&l.text).unwrap_or(l.text);
        }
        let (kind, inline) = recognize(&l.text, l.indent == min_indent);
        l.kind = kind;
        let child_indent = match next_indent {
            Some(n) if n > l.indent => n,
            _ => l.indent + 1,
        };
        out.push(l.clone());
        if let Some(stmt) = inline {
            let stmt = exchange(&stmt).unwrap_or(stmt);
            let (kind, _) = recognize(&stmt, false);
            out.push(Line {
                indent: child_indent,
                text: stmt,
                kind,
                synthetic: true,
                ..l
            });
        }
    }
    out
}

fn first_word(s: &str) -> (String, &str) {
    let end = s.find(|c: char| !c.is_alphanumeric()).unwrap_or(s.len());
    (s[..end].to_lowercase(), s[end..].trim_start())
}

fn recognize(text: &str, outermost: bool) -> (Kind, Option<String>) {
    let (w, rest) = first_word(text);
    let strip = |s: &str| opener(s).to_string();
    match w.as_str() {
        "if" => split_inline(rest, Kind::If),
        "elseif" | "elif" | "elsif" => split_inline(rest, Kind::Elif),
        "else" => {
            let rest = rest.strip_prefix(':').map_or(rest, str::trim_start);
            let rest = opener(rest);
            let (w2, rest2) = first_word(rest);
            if w2 == "if" {
                split_inline(rest2, Kind::Elif)
            } else if rest.is_empty() {
                (Kind::Else, None)
            } else {
                (Kind::Else, Some(rest.to_string()))
            }
        }
        "while" => (Kind::While(strip(rest)), None),
        "until" => (Kind::Until(rest.to_string()), None),
        "repeat" if opener(rest).is_empty() => (Kind::Repeat, None),
        "foreach" | "forall" => (Kind::Each(strip(rest)), None),
        "return" => {
            let v = rest.trim();
            (Kind::Return((!v.is_empty()).then(|| v.to_string())), None)
        }
        "for" => {
            let (w2, rest2) = first_word(rest);
            if w2 == "each" || w2 == "all" || w2 == "every" {
                (Kind::Each(strip(rest2)), None)
            } else {
                (for_head(&strip(rest)), None)
            }
        }
        _ => match (call_parts(text), header_parts(header_core(text))) {
            (_, Some((name, params))) if outermost => (Kind::Header { name, params }, None),
            (Some(_), _) => (Kind::Call(text.trim().to_string()), None),
            // A statement that is only `name(args)`, in any case, calls a procedure (a
            // hyphen in the name is a minus: `x-f(y)`).
            (None, _) => match header_parts(text) {
                Some((name, args)) if !name.contains('-') && !is_output(&name) => {
                    (Kind::Call(format!("{}({args})", textbook_name(&name))), None)
                }
                _ => (Kind::Plain(text.trim().to_string()), None),
            },
        },
    }
}

/// A loop header after `for`: `i = 1 to n`, `i from 1 to n`, `i from n down to 1`,
/// `i in range(1, n + 1)` (counted), `v in G.adj[u]` (over a collection).
fn for_head(head: &str) -> Kind {
    let head = head.replace(" down to ", " downto ");
    let range = split_range(&head);
    if let Some(i) = find_word(&head, "in") {
        let var = head[..i].trim();
        let over = head[i + 2..].trim();
        if let Some(args) = over.strip_prefix("range(").and_then(|a| a.strip_suffix(')')) {
            let args = split_args(args);
            let (from, to, step) = match args.as_slice() {
                [n] => ("0".to_string(), n.clone(), None),
                [a, b] => (a.clone(), b.clone(), None),
                [a, b, s] => (a.clone(), b.clone(), Some(s.clone())),
                _ => return Kind::Each(head.clone()),
            };
            let down = step.is_some_and(|s| s.trim_start().starts_with('-'));
            // `range` stops before its end: `range(1, n + 1)` runs to `n`.
            let (dir, bound) = match (down, to.strip_suffix("+ 1"), to.strip_suffix("- 1")) {
                (false, Some(t), _) => ("to", t.trim_end().to_string()),
                (false, None, _) => ("to", format!("{to} - 1")),
                (true, _, Some(t)) => ("downto", t.trim_end().to_string()),
                (true, _, None) => ("downto", format!("{to} + 1")),
            };
            return Kind::For {
                start: format!("{var} = {from}"),
                dir: Some(dir),
                bound,
            };
        }
        if range.is_none() {
            return Kind::Each(head.clone());
        }
    }
    match range {
        Some((start, dir, bound)) => {
            // `i from 1` is `i = 1`.
            let start = match find_word(&start, "from") {
                Some(i) => format!("{} = {}", start[..i].trim(), start[i + 4..].trim()),
                None => start,
            };
            Kind::For {
                start,
                dir: Some(dir),
                bound,
            }
        }
        None if head.contains('∈') => Kind::Each(head),
        None => Kind::For {
            start: head,
            dir: None,
            bound: String::new(),
        },
    }
}

/// A swap, however written, as the textbook writes it: `swap A[i] and A[j]`,
/// `swap(A[i], A[j])`, Java's `swap(A, i, j)` and Python's `A[i], A[j] = A[j], A[i]` are
/// all `exchange A[i] with A[j]` (pairs joined by `and`). `swap rows k and p of A` is
/// prose and stays as it is.
fn exchange(s: &str) -> Option<String> {
    // One term: no comma or space outside brackets.
    let term = |t: &str| !t.is_empty() && split_args(&t.replace(' ', ",")).len() == 1;
    let (word, rest) = first_word(s);
    if matches!(word.as_str(), "swap" | "exchange") {
        let rest = rest.trim();
        if let Some((_, args)) = header_parts(s).filter(|(_, a)| !a.is_empty()) {
            return match split_args(&args).as_slice() {
                [x, y] => Some(format!("exchange {x} with {y}")),
                [arr, i, j] if term(arr) => Some(format!("exchange {arr}[{i}] with {arr}[{j}]")),
                _ => None,
            };
        }
        for sep in ["and", "with"] {
            if let [k] = word_positions(rest, sep)[..] {
                let (x, y) = (rest[..k].trim(), rest[k + sep.len()..].trim());
                if term(x) && term(y) {
                    return Some(format!("exchange {x} with {y}"));
                }
            }
        }
        return None;
    }
    // Parallel assignment that swaps pairs.
    let (lhs, rhs) = ["←", ":=", "="].iter().find_map(|op| {
        let k = s.find(op)?;
        let next = s[k + op.len()..].chars().next();
        (*op != "=" || (next != Some('=') && !s[..k].ends_with(['!', '<', '>', '=', ':']))).then(|| (&s[..k], &s[k + op.len()..]))
    })?;
    let (l, r) = (split_args(lhs), split_args(rhs));
    if l.len() < 2 || l.len() % 2 != 0 || l.len() != r.len() || !l.iter().all(|t| term(t)) {
        return None;
    }
    let pairs: Vec<String> = l
        .chunks(2)
        .zip(r.chunks(2))
        .map(|(a, b)| (a[0] == b[1] && a[1] == b[0]).then(|| format!("{} with {}", a[0], a[1])))
        .collect::<Option<_>>()?;
    Some(format!("exchange {}", pairs.join(" and ")))
}

/// Arguments split at top-level commas.
fn split_args(s: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(String::new());
                continue;
            }
            _ => {}
        }
        out.last_mut().unwrap().push(c);
    }
    out.into_iter().map(|a| a.trim().to_string()).collect()
}

/// A test or loop head without the word or mark that opens its suite: `then`, `do`,
/// a trailing `:` or `{`.
fn opener(s: &str) -> &str {
    let t = s.trim_end();
    let t = match t.strip_suffix(['{', ':']) {
        Some(h) if !h.ends_with(':') => h.trim_end(),
        _ => t,
    };
    strip_trailing(t, &["then", "do"])
}

/// `TEST then S` (or `TEST: S`) → the test and the inline statement.
fn split_inline(rest: &str, mk: fn(String) -> Kind) -> (Kind, Option<String>) {
    let colon = rest
        .char_indices()
        .scan(0i32, |depth, (i, c)| {
            *depth += i32::from(matches!(c, '(' | '[' | '{')) - i32::from(matches!(c, ')' | ']' | '}'));
            Some((i, c, *depth))
        })
        .find(|&(i, c, d)| c == ':' && d == 0 && !rest[i + 1..].starts_with('='))
        .map(|(i, _, _)| (i, 1));
    if let Some((i, len)) = find_word(rest, "then").map(|i| (i, 4)).or(colon) {
        let after = rest[i + len..].trim().trim_start_matches('{').trim_start();
        let test = rest[..i].trim().to_string();
        if !after.is_empty() {
            return (mk(test), Some(after.to_string()));
        }
        return (mk(test), None);
    }
    (mk(opener(rest).to_string()), None)
}

fn strip_trailing<'a>(s: &'a str, words: &[&str]) -> &'a str {
    let t = s.trim_end();
    for w in words {
        if let Some(head) = t.strip_suffix(w) {
            if head.is_empty() || head.ends_with(' ') {
                return head.trim_end();
            }
        }
    }
    t
}

/// Byte offset of `word` as a whole word outside brackets, first occurrence.
fn find_word(s: &str, word: &str) -> Option<usize> {
    word_positions(s, word).into_iter().next()
}

fn word_positions(s: &str, word: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let b = s.as_bytes();
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        if depth != 0 || !s[i..].starts_with(word) {
            continue;
        }
        let before_ok = i == 0 || !(b[i - 1] as char).is_alphanumeric();
        let after = i + word.len();
        let after_ok = after >= b.len() || !(b[after] as char).is_alphanumeric();
        if before_ok && after_ok {
            out.push(i);
        }
    }
    out
}

fn split_range(head: &str) -> Option<(String, &'static str, String)> {
    for dir in ["downto", "to"] {
        if let Some(&i) = word_positions(head, dir).last() {
            let start = head[..i].trim();
            let bound = head[i + dir.len()..].trim();
            if !start.is_empty() && !bound.is_empty() {
                return Some((start.to_string(), dir, bound.to_string()));
            }
        }
    }
    None
}

/// A procedure header may use any identifier (`F(x)`, `Euclid(a, b)`); only its place
/// at the outermost indentation distinguishes it from an instruction.
fn header_parts(text: &str) -> Option<(String, String)> {
    let t = text.trim();
    let open = t.find('(')?;
    let inner = t.strip_suffix(')')?.get(open + 1..)?;
    let name = t[..open].trim_end();
    let ok = name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !name.ends_with('-')
        && !t.contains(['$', '@']);
    let balanced = inner.chars().try_fold(0i32, |d, c| {
        let d = d + i32::from(c == '(') - i32::from(c == ')');
        (d >= 0).then_some(d)
    }) == Some(0);
    (ok && balanced).then(|| (name.to_string(), inner.trim().to_string()))
}

/// `NAME(args)` with a textbook procedure name (upper case, hyphens allowed) and
/// balanced parentheses closing at the end.
fn call_parts(text: &str) -> Option<(String, String)> {
    let t = text.trim();
    let open = t.find('(')?;
    let name = t[..open].trim_end();
    let upper = name.chars().filter(|c| c.is_ascii_uppercase()).count() >= 2
        && !name.chars().any(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && name.starts_with(|c: char| c.is_ascii_alphabetic());
    if !upper || !t.ends_with(')') || t.contains(['$', '@']) {
        return None;
    }
    let inner = t.strip_suffix(')')?.get(open + 1..)?;
    let mut depth = 0i32;
    for c in inner.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    }
    (depth == 0).then(|| (name.to_string(), inner.trim().to_string()))
}

/// A line indented deeper than a simple statement continues that statement.
fn merge_continuations(lines: Vec<Line>) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::with_capacity(lines.len());
    for l in lines {
        if let Some(prev) = out.last_mut() {
            let continues =
                l.indent > prev.indent && !l.synthetic && matches!(prev.kind, Kind::Plain(_));
            if continues {
                if let (Kind::Plain(a), Kind::Plain(b)) = (&prev.kind, &l.kind) {
                    prev.kind = Kind::Plain(format!("{a} {b}"));
                    continue;
                }
            }
        }
        out.push(l);
    }
    out
}

// ---------------------------------------------------------------- classification

/// What each fragment became. Indexed like `lines`.
struct Decided {
    /// The class of the line's main fragment (instruction, test, header, return value).
    class: Vec<Option<LineClass>>,
}

fn fragment(l: &Line) -> Option<String> {
    match &l.kind {
        Kind::If(t)
        | Kind::Elif(t)
        | Kind::While(t)
        | Kind::Until(t)
        | Kind::Each(t)
        | Kind::Plain(t) => Some(t.clone()),
        Kind::For {
            start,
            dir: Some(d),
            bound,
        } => Some(format!("{start} {d} {bound}")),
        Kind::For { start, .. } => Some(start.clone()),
        Kind::Return(Some(v)) if call_parts(v).is_none() => Some(v.clone()),
        _ => None,
    }
}

fn decide(lines: &[Line], clf: &Classifier) -> Decided {
    let frags: Vec<Option<String>> = lines.iter().map(fragment).collect();
    // A lone name or number (`return C`, `for each v`) is an expression, and offers the
    // features nothing to compare: mined lines always hold an operator or several words.
    let open: Vec<&str> = frags
        .iter()
        .flatten()
        .map(String::as_str)
        .filter(|f| !is_lone_name(f))
        .collect();
    let classes = clf.classify(&open);
    let mut it = classes.into_iter();
    let class = frags
        .iter()
        .map(|f| match f {
            Some(f) if is_lone_name(f) => Some(LineClass::Math),
            Some(_) => it.next(),
            None => None,
        })
        .collect();
    Decided { class }
}

fn is_lone_name(s: &str) -> bool {
    let t = s.trim();
    !t.is_empty()
        && t.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '\'' | '∞'))
}

fn line_labels(lines: &[Line], d: &Decided) -> Vec<LineDecision> {
    let mut out: Vec<LineDecision> = Vec::new();
    for (l, c) in lines.iter().zip(&d.class) {
        if l.synthetic {
            continue;
        }
        let label = match (&l.kind, c) {
            (Kind::Plain(_), Some(LineClass::Math)) => LineLabel::Math,
            (Kind::Plain(_), _) => LineLabel::Text,
            _ => LineLabel::Control,
        };
        out.push(LineDecision { line: l.no, label });
    }
    out
}

// ---------------------------------------------------------------- tree and output

enum Node {
    Simple(usize),
    If {
        arms: Vec<(usize, Vec<Node>)>,
        otherwise: Option<(usize, Vec<Node>)>,
    },
    Loop(usize, Vec<Node>),
    /// The `repeat` line, the body and the `until` line.
    Repeat(usize, Vec<Node>, usize),
}

/// The statements at indentation `level` from `pos` on.
fn block(
    text: &str,
    lines: &[Line],
    pos: &mut usize,
    level: usize,
) -> Result<Vec<Node>, PcodeError> {
    let mut out = Vec::new();
    while *pos < lines.len() && lines[*pos].indent >= level {
        let i = *pos;
        let l = &lines[i];
        *pos += 1;
        match &l.kind {
            Kind::Header { .. } => {
                return Err(error(
                    text,
                    l.no,
                    l.col,
                    "procedure header inside a procedure body",
                ));
            }
            Kind::If(_) => {
                let mut arms = vec![(i, children(text, lines, pos, l.indent)?)];
                let mut otherwise = None;
                while *pos < lines.len() && lines[*pos].indent == l.indent {
                    let j = *pos;
                    match lines[j].kind {
                        Kind::Elif(_) => {
                            *pos += 1;
                            arms.push((j, children(text, lines, pos, l.indent)?));
                        }
                        Kind::Else => {
                            *pos += 1;
                            otherwise = Some((j, children(text, lines, pos, l.indent)?));
                            break;
                        }
                        _ => break,
                    }
                }
                out.push(Node::If { arms, otherwise });
            }
            Kind::Elif(_) | Kind::Else => {
                return Err(error(
                    text,
                    l.no,
                    l.col,
                    "`else` without a matching `if` at the same indentation",
                ));
            }
            Kind::While(_) | Kind::For { .. } | Kind::Each(_) => {
                out.push(Node::Loop(i, children(text, lines, pos, l.indent)?));
            }
            Kind::Repeat => {
                let body = children(text, lines, pos, l.indent)?;
                let until = lines
                    .get(*pos)
                    .filter(|u| u.indent == l.indent && matches!(u.kind, Kind::Until(_)));
                if until.is_none() {
                    return Err(error(
                        text,
                        l.no,
                        l.col,
                        "`repeat` without `until` at the same indentation",
                    ));
                }
                out.push(Node::Repeat(i, body, *pos));
                *pos += 1;
            }
            Kind::Until(_) => {
                return Err(error(
                    text,
                    l.no,
                    l.col,
                    "`until` without a matching `repeat`",
                ));
            }
            Kind::Return(_) | Kind::Call(_) | Kind::Plain(_) => out.push(Node::Simple(i)),
        }
    }
    Ok(out)
}

fn children(
    text: &str,
    lines: &[Line],
    pos: &mut usize,
    parent: usize,
) -> Result<Vec<Node>, PcodeError> {
    match lines.get(*pos) {
        Some(l) if l.indent > parent => {
            let level = l.indent;
            block(text, lines, pos, level)
        }
        _ => Ok(Vec::new()),
    }
}

/// P-code being written, with the input line of each line.
#[derive(Default)]
struct Out {
    text: String,
    source: Vec<u32>,
}

impl Out {
    fn line(&mut self, depth: usize, s: String, no: u32) {
        self.text.push_str(&"    ".repeat(depth));
        self.text.push_str(&s);
        self.text.push('\n');
        self.source.push(no);
    }
}

fn emit(nodes: &[Node], lines: &[Line], d: &Decided, depth: usize, out: &mut Out) {
    let class = |i: usize| d.class[i].unwrap_or(LineClass::Text);
    for n in nodes {
        match n {
            Node::Simple(i) => {
                let s = match &lines[*i].kind {
                    Kind::Return(None) => "return".to_string(),
                    Kind::Return(Some(v)) if call_parts(v).is_some() => {
                        format!("return {}", v.trim())
                    }
                    Kind::Return(Some(v)) => format!("return {}", mark(v, class(*i))),
                    Kind::Call(c) => c.clone(),
                    Kind::Plain(t) => mark(t, class(*i)),
                    _ => String::new(),
                };
                out.line(depth, s, lines[*i].no);
            }
            Node::If { arms, otherwise } => {
                for (k, (i, body)) in arms.iter().enumerate() {
                    let (Kind::If(t) | Kind::Elif(t)) = &lines[*i].kind else {
                        continue;
                    };
                    let kw = if k == 0 { "if" } else { "elseif" };
                    out.line(depth, format!("{kw} {}", test(t, class(*i))), lines[*i].no);
                    emit_suite(body, lines, d, depth, out);
                }
                if let Some((e, body)) = otherwise {
                    out.line(depth, "else".into(), lines[*e].no);
                    emit_suite(body, lines, d, depth, out);
                }
            }
            Node::Loop(i, body) => {
                let c = class(*i);
                let head = match &lines[*i].kind {
                    Kind::While(t) => format!("while {}", test(t, c)),
                    Kind::Each(t) => format!("for each {}", mark(t, c)),
                    Kind::For {
                        start,
                        dir: Some(dir),
                        bound,
                    } => {
                        format!("for {} {dir} {}", mark(start, c), mark(bound, c))
                    }
                    Kind::For { start, .. } => format!("for {}", mark(start, c)),
                    _ => String::new(),
                };
                out.line(depth, head, lines[*i].no);
                emit_suite(body, lines, d, depth, out);
            }
            Node::Repeat(r, body, u) => {
                out.line(depth, "repeat".into(), lines[*r].no);
                emit_suite(body, lines, d, depth, out);
                if let Kind::Until(t) = &lines[*u].kind {
                    out.line(depth, format!("until {}", test(t, class(*u))), lines[*u].no);
                }
            }
        }
    }
}

/// A suite in p-code needs at least one statement; an empty one gets a placeholder.
fn emit_suite(body: &[Node], lines: &[Line], d: &Decided, depth: usize, out: &mut Out) {
    if body.is_empty() {
        let no = out.source.last().copied().unwrap_or(1);
        out.line(depth + 1, "@do nothing@".into(), no);
    } else {
        emit(body, lines, d, depth + 1, out);
    }
}

fn mark(s: &str, c: LineClass) -> String {
    let clean: String = s.chars().filter(|&ch| ch != '$' && ch != '@').collect();
    let clean = crate::graph::normalize_ws(&clean);
    let clean = if clean.is_empty() {
        "…".to_string()
    } else {
        clean
    };
    match c {
        LineClass::Math => format!("${clean}$"),
        LineClass::Text => format!("@{clean}@"),
    }
}

/// A math test is split at top-level `and` / `or` / leading `not` so the p-code keeps
/// the connectives; English stays one description.
fn test(t: &str, c: LineClass) -> String {
    if c == LineClass::Text {
        return mark(t, c);
    }
    let mut cuts: Vec<(usize, &str)> = Vec::new();
    for w in ["and", "or"] {
        cuts.extend(word_positions(t, w).into_iter().map(|i| (i, w)));
    }
    cuts.sort();
    let mut parts = Vec::new();
    let mut from = 0;
    for (i, w) in &cuts {
        parts.push((&t[from..*i], Some(*w)));
        from = i + w.len();
    }
    parts.push((&t[from..], None));
    if parts
        .iter()
        .any(|(p, _)| p.trim().is_empty() || p.trim() == "not")
    {
        return mark(t, c);
    }
    let mut out = String::new();
    for (p, w) in parts {
        let mut p = p.trim();
        while let Some(rest) = p.strip_prefix("not ") {
            out.push_str("not ");
            p = rest.trim_start();
        }
        out.push_str(&mark(p, c));
        if let Some(w) = w {
            out.push_str(&format!(" {w} "));
        }
    }
    out
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
