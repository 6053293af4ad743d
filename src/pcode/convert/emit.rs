//! The suites as a tree, and the p-code written from it.

#[allow(unused_imports)]
use super::*;

pub(super) enum Node {
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
pub(super) fn block(
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

pub(super) fn children(
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
pub(super) struct Out {
    pub(super) text: String,
    pub(super) source: Vec<u32>,
    /// What the input said that the p-language cannot (see [`Warning`]).
    pub(super) warnings: Vec<Warning>,
}

impl Out {
    pub(super) fn line(&mut self, depth: usize, s: String, no: u32) {
        self.text.push_str(&"    ".repeat(depth));
        self.text.push_str(&s);
        self.text.push('\n');
        self.source.push(no);
    }
}

pub(super) fn emit(nodes: &[Node], lines: &[Line], d: &Decided, depth: usize, out: &mut Out) {
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
                    emit_suite(body, &lines[*i], lines, d, depth, out);
                }
                if let Some((e, body)) = otherwise {
                    out.line(depth, "else".into(), lines[*e].no);
                    emit_suite(body, &lines[*e], lines, d, depth, out);
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
                emit_suite(body, &lines[*i], lines, d, depth, out);
            }
            Node::Repeat(r, body, u) => {
                out.line(depth, "repeat".into(), lines[*r].no);
                emit_suite(body, &lines[*r], lines, d, depth, out);
                if let Kind::Until(t) = &lines[*u].kind {
                    out.line(depth, format!("until {}", test(t, class(*u))), lines[*u].no);
                }
            }
        }
    }
}

/// A suite in p-code needs at least one statement; an empty one gets a placeholder, and a
/// warning: a statement written on the keyword's line without `then` has been read as
/// part of the test (`if A[i] < x replace it with x`).
pub(super) fn emit_suite(body: &[Node], head: &Line, lines: &[Line], d: &Decided, depth: usize, out: &mut Out) {
    if body.is_empty() {
        let no = out.source.last().copied().unwrap_or(1);
        let message = match head.kind {
            Kind::If(_) | Kind::Elif(_) => "no statement under this test: the whole line is read as the test; write `if … then STATEMENT` or put the statement on an indented line below",
            _ => "no statement under this line: its body is empty; put the statement on an indented line below",
        };
        out.warnings.push(Warning { line: head.no, col: head.col, message: message.into() });
        out.line(depth + 1, "@do nothing@".into(), no);
    } else {
        emit(body, lines, d, depth + 1, out);
    }
}

pub(super) fn mark(s: &str, c: LineClass) -> String {
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
pub(super) fn test(t: &str, c: LineClass) -> String {
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
