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

use super::classify::{Classifier, LineClass};
use super::error::{PcodeError, SyntaxError};
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
}

/// Labels each non-blank line of `text` without building procedures; lines need no header.
pub fn classify_lines(text: &str, clf: &Classifier) -> Vec<LineDecision> {
    let lines = recognize_all(prepare(text));
    let decided = decide(&lines, clf);
    line_labels(&lines, &decided)
}

/// Converts plain pseudocode to p-code. The result is checked by parsing it.
pub fn convert(text: &str, clf: &Classifier) -> Result<Conversion, PcodeError> {
    let lines = merge_continuations(recognize_all(prepare(text)));
    let decided = decide(&lines, clf);
    let mut out = String::new();
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
        out.push_str(&format!("{name}({params})\n"));
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
        out.push('\n');
    }
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
        let body = body.trim_end();
        if body.is_empty() {
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
    let cut = [s.find("//"), s.find('▷')].into_iter().flatten().min();
    match cut {
        Some(i) => &s[..i],
        None => s,
    }
}

/// Recognizes each line's keyword; inline statements become synthetic child lines.
fn recognize_all(lines: Vec<Line>) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::with_capacity(lines.len());
    let min_indent = lines.iter().map(|l| l.indent).min().unwrap_or(0);
    for (i, mut l) in lines.iter().cloned().enumerate() {
        let next_indent = lines.get(i + 1).map(|n| n.indent);
        let (kind, inline) = recognize(&l.text, l.indent == min_indent);
        l.kind = kind;
        let child_indent = match next_indent {
            Some(n) if n > l.indent => n,
            _ => l.indent + 1,
        };
        out.push(l.clone());
        if let Some(stmt) = inline {
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
    let strip = |s: &str| strip_trailing(s, &["then", "do"]).to_string();
    match w.as_str() {
        "if" => split_inline(rest, Kind::If),
        "elseif" => split_inline(rest, Kind::Elif),
        "else" => {
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
        "repeat" if rest.is_empty() => (Kind::Repeat, None),
        "return" => {
            let v = rest.trim();
            (Kind::Return((!v.is_empty()).then(|| v.to_string())), None)
        }
        "for" => {
            let (w2, rest2) = first_word(rest);
            if w2 == "each" || w2 == "all" {
                (Kind::Each(strip(rest2)), None)
            } else {
                let head = strip(rest);
                match split_range(&head) {
                    Some((start, dir, bound)) => (
                        Kind::For {
                            start,
                            dir: Some(dir),
                            bound,
                        },
                        None,
                    ),
                    None => (
                        Kind::For {
                            start: head,
                            dir: None,
                            bound: String::new(),
                        },
                        None,
                    ),
                }
            }
        }
        _ => match (call_parts(text), header_parts(text)) {
            (_, Some((name, params))) if outermost => (Kind::Header { name, params }, None),
            (Some(_), _) => (Kind::Call(text.trim().to_string()), None),
            _ => (Kind::Plain(text.trim().to_string()), None),
        },
    }
}

/// `TEST then S` → the test and the inline statement.
fn split_inline(rest: &str, mk: fn(String) -> Kind) -> (Kind, Option<String>) {
    if let Some(i) = find_word(rest, "then") {
        let after = rest[i + 4..].trim();
        let test = rest[..i].trim().to_string();
        if !after.is_empty() {
            return (mk(test), Some(after.to_string()));
        }
        return (mk(test), None);
    }
    (mk(rest.trim().to_string()), None)
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
    /// Body and the index of the `until` line.
    Repeat(Vec<Node>, usize),
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
                out.push(Node::Repeat(body, *pos));
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

fn emit(nodes: &[Node], lines: &[Line], d: &Decided, depth: usize, out: &mut String) {
    let pad = "    ".repeat(depth);
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
                out.push_str(&format!("{pad}{s}\n"));
            }
            Node::If { arms, otherwise } => {
                for (k, (i, body)) in arms.iter().enumerate() {
                    let (Kind::If(t) | Kind::Elif(t)) = &lines[*i].kind else {
                        continue;
                    };
                    let kw = if k == 0 { "if" } else { "elseif" };
                    out.push_str(&format!("{pad}{kw} {}\n", test(t, class(*i))));
                    emit_suite(body, lines, d, depth, out);
                }
                if let Some((_, body)) = otherwise {
                    out.push_str(&format!("{pad}else\n"));
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
                out.push_str(&format!("{pad}{head}\n"));
                emit_suite(body, lines, d, depth, out);
            }
            Node::Repeat(body, u) => {
                out.push_str(&format!("{pad}repeat\n"));
                emit_suite(body, lines, d, depth, out);
                if let Kind::Until(t) = &lines[*u].kind {
                    out.push_str(&format!("{pad}until {}\n", test(t, class(*u))));
                }
            }
        }
    }
}

/// A suite in p-code needs at least one statement; an empty one gets a placeholder.
fn emit_suite(body: &[Node], lines: &[Line], d: &Decided, depth: usize, out: &mut String) {
    if body.is_empty() {
        out.push_str(&format!("{}@do nothing@\n", "    ".repeat(depth + 1)));
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
