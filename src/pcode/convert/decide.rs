//! Math or English: each instruction and test classified, all lines of one input
//! propagated together.

#[allow(unused_imports)]
use super::*;

/// What each fragment became. Indexed like `lines`.
pub(super) struct Decided {
    /// The class of the line's main fragment (instruction, test, header, return value).
    pub(super) class: Vec<Option<LineClass>>,
}

pub(super) fn fragment(l: &Line) -> Option<String> {
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

pub(super) fn decide(lines: &[Line], clf: &Classifier) -> Decided {
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

pub(super) fn is_lone_name(s: &str) -> bool {
    let t = s.trim();
    !t.is_empty()
        && t.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '\'' | '∞'))
}

pub(super) fn line_labels(lines: &[Line], d: &Decided) -> Vec<LineDecision> {
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
