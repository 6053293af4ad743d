//! Typed p-code tree → one [`FnCfg`] per procedure, in the node and edge vocabulary
//! of source-code graphs.
//!
//! Conventions (shared with the source front ends where they overlap):
//! * every LoopHead's `True` edge enters the body and its `False` edge leaves the loop
//!   (for `repeat … until` the exit is taken when the `until` test holds, still `False`:
//!   "the loop stops"), and every edge from the end of a body back to its head is `Back`,
//!   whatever kind the edge would otherwise have had (e.g. the `False` exit of a trailing
//!   `if` without `else`);
//! * `return` gets a `Jump` edge to EXIT, even as the last statement;
//! * a node's `function` is the procedure's index in its file; the caller renumbers.

use super::ast::*;
use crate::graph::{
    normalize_ws, CallRef, EdgeKind, FnCfg, FunctionMeta, Lang, LocalId, Node, NodeKind, EXIT,
};
use serde::Serialize;

/// A procedure of a p-code file with its graph.
#[derive(Clone, Debug, Serialize)]
pub struct ProcGraph {
    pub meta: FunctionMeta,
    pub cfg: FnCfg,
}

/// A call written in a node of procedure `caller` that names procedure `callee` of the
/// same file: where the ICFG gets a `Call` edge (node → callee ENTRY) and a `Return`
/// edge (callee EXIT → the node's successors).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ProcCall {
    pub caller: usize,
    pub node: LocalId,
    /// Index into the node's `calls`.
    pub call: usize,
    pub callee: usize,
}

/// Builds the graph of every procedure of `prog`, parsed from `src`.
pub fn build_graphs(src: &str, prog: &Program, file: u32) -> Vec<ProcGraph> {
    let names: Vec<String> = prog.procs.iter().map(|p| p.name.to_lowercase()).collect();
    let lines = LineIndex::new(src);
    prog.procs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let function = i as u32;
            let bytes = (p.span.start, p.span.end);
            let line_span = lines.span(p.span);
            let mut b = Builder {
                cfg: FnCfg::new(Lang::Pcode, file, function, bytes, line_span),
                lines: &lines,
                names: &names,
                file,
                function,
                nest: Vec::new(),
            };
            let (_, out) = b.stmts(&p.body, vec![(crate::graph::ENTRY, EdgeKind::Seq)]);
            b.connect(&out, EXIT);
            let meta = FunctionMeta {
                name: p.name.clone(),
                scope: Vec::new(),
                arity: Some(p.params.len() as u32),
                min_arity: p.params.len() as u32,
                file_local: false,
                lang: Lang::Pcode,
                file,
                lines: line_span,
                bytes,
            };
            ProcGraph { meta, cfg: b.cfg }
        })
        .collect()
}

/// Every call in `procs` whose name matches a procedure of the same file
/// (case-insensitively, as textbooks vary the case of procedure names).
pub fn call_sites(procs: &[ProcGraph]) -> Vec<ProcCall> {
    let mut out = Vec::new();
    for (caller, p) in procs.iter().enumerate() {
        for (node, n) in p.cfg.nodes.iter().enumerate() {
            for (call, c) in n.calls.iter().enumerate() {
                let callee = procs
                    .iter()
                    .position(|q| q.meta.name.eq_ignore_ascii_case(&c.name));
                if let Some(callee) = callee {
                    out.push(ProcCall {
                        caller,
                        node: node as LocalId,
                        call,
                        callee,
                    });
                }
            }
        }
    }
    out
}

type Frontier = Vec<(LocalId, EdgeKind)>;

struct Builder<'a> {
    cfg: FnCfg,
    lines: &'a LineIndex,
    names: &'a [String],
    file: u32,
    function: u32,
    /// Enclosing loop heads and conditions: the nesting tree of the procedure.
    nest: Vec<LocalId>,
}

impl Builder<'_> {
    fn node(&mut self, kind: NodeKind, span: Span, text: String, calls: Vec<CallRef>) -> LocalId {
        self.cfg.add(Node {
            kind,
            lang: Lang::Pcode,
            file: self.file,
            function: self.function,
            bytes: (span.start, span.end),
            lines: self.lines.span(span),
            text: normalize_ws(&text).into(),
            calls: calls.into(),
            parent: crate::graph::Parent::of(self.nest.last().copied()),
        })
    }

    fn connect(&mut self, from: &Frontier, to: LocalId) {
        for &(n, k) in from {
            self.cfg.edge(n, to, k);
        }
    }

    /// Adds `body` after `preds`; returns its first node and the edges left open at its end.
    fn stmts(&mut self, body: &[Stmt], preds: Frontier) -> (Option<LocalId>, Frontier) {
        let mut first = None;
        let mut frontier = preds;
        for s in body {
            let (entry, out) = self.stmt(s, &frontier);
            first.get_or_insert(entry);
            frontier = out;
        }
        (first, frontier)
    }

    fn stmt(&mut self, s: &Stmt, preds: &Frontier) -> (LocalId, Frontier) {
        match s {
            Stmt::Math { text, span } => {
                let calls = scan_calls(text, self.names);
                self.simple(NodeKind::Math, *span, text.clone(), calls, preds)
            }
            Stmt::Text { text, span } => {
                let calls = scan_calls(text, self.names);
                self.simple(NodeKind::Text, *span, text.clone(), calls, preds)
            }
            Stmt::Call(c) => {
                let calls = calls_of(&Expr::Call(c.clone()), self.names);
                self.simple(NodeKind::Call, c.span, c.render(), calls, preds)
            }
            Stmt::Return { value, span } => {
                let (text, calls) = match value {
                    Some(v) => (format!("return {}", v.render()), calls_of(v, self.names)),
                    None => ("return".to_string(), Vec::new()),
                };
                let r = self.node(NodeKind::Return, *span, text, calls);
                self.connect(preds, r);
                self.cfg.edge(r, EXIT, EdgeKind::Jump);
                (r, Vec::new())
            }
            Stmt::If { arms, otherwise } => self.branch(arms, otherwise.as_deref(), preds),
            Stmt::While { test, head, body } => {
                let calls = test_calls(test, self.names);
                let h = self.node(NodeKind::LoopHead, *head, test.render(), calls);
                self.looping(h, body, preds)
            }
            Stmt::For {
                head,
                head_span,
                body,
            } => {
                let calls = head
                    .atoms()
                    .into_iter()
                    .flat_map(|e| calls_of(e, self.names))
                    .collect();
                let h = self.node(NodeKind::LoopHead, *head_span, head.render(), calls);
                self.looping(h, body, preds)
            }
            Stmt::Repeat {
                body,
                until,
                until_span,
            } => {
                // The body comes first in the text; the `until` test is its loop head.
                let start = self.cfg.nodes.len();
                let (first, out) = self.stmts(body, preds.clone());
                let calls = test_calls(until, self.names);
                let u = self.node(NodeKind::LoopHead, *until_span, until.render(), calls);
                let outer = self.nest.last().copied();
                for n in &mut self.cfg.nodes[start..u as usize] {
                    if n.parent == outer {
                        n.parent = crate::graph::Parent::of(Some(u));
                    }
                }
                self.connect(&out, u);
                self.cfg.edge(u, first.unwrap_or(u), EdgeKind::Back);
                (first.unwrap_or(u), vec![(u, EdgeKind::False)])
            }
        }
    }

    fn simple(
        &mut self,
        kind: NodeKind,
        span: Span,
        text: String,
        calls: Vec<CallRef>,
        preds: &Frontier,
    ) -> (LocalId, Frontier) {
        let n = self.node(kind, span, text, calls);
        self.connect(preds, n);
        (n, vec![(n, EdgeKind::Seq)])
    }

    /// A pre-tested loop with head `h`.
    fn looping(&mut self, h: LocalId, body: &[Stmt], preds: &Frontier) -> (LocalId, Frontier) {
        self.connect(preds, h);
        self.nest.push(h);
        let (_, out) = self.stmts(body, vec![(h, EdgeKind::True)]);
        self.nest.pop();
        for (n, _) in out {
            self.cfg.edge(n, h, EdgeKind::Back);
        }
        (h, vec![(h, EdgeKind::False)])
    }

    fn branch(
        &mut self,
        arms: &[Arm],
        otherwise: Option<&[Stmt]>,
        preds: &Frontier,
    ) -> (LocalId, Frontier) {
        let mut pending = preds.clone();
        let mut outs = Vec::new();
        let mut entry = None;
        for arm in arms {
            let calls = test_calls(&arm.test, self.names);
            let c = self.node(NodeKind::Condition, arm.head, arm.test.render(), calls);
            entry.get_or_insert(c);
            self.connect(&pending, c);
            self.nest.push(c);
            let (_, out) = self.stmts(&arm.body, vec![(c, EdgeKind::True)]);
            self.nest.pop();
            outs.extend(out);
            pending = vec![(c, EdgeKind::False)];
        }
        match otherwise {
            Some(body) => {
                // `else` belongs to the last test, as in source code.
                if let Some(&(last, _)) = pending.first() {
                    self.nest.push(last);
                }
                let (_, out) = self.stmts(body, pending.clone());
                if !pending.is_empty() {
                    self.nest.pop();
                }
                outs.extend(out);
            }
            None => outs.extend(pending),
        }
        // The grammar gives every `if` at least one arm; EXIT stands in otherwise.
        (entry.unwrap_or(EXIT), outs)
    }
}

fn test_calls(t: &Test, names: &[String]) -> Vec<CallRef> {
    t.atoms()
        .into_iter()
        .flat_map(|e| calls_of(e, names))
        .collect()
}

/// Calls in an expression: an explicit call with the calls in its arguments, or the
/// calls written inside marked text.
fn calls_of(e: &Expr, names: &[String]) -> Vec<CallRef> {
    match e {
        Expr::Call(c) => {
            let mut v = vec![call_ref(&c.name, c.args.len() as u32)];
            v.extend(c.args.iter().flat_map(|a| calls_of(a, names)));
            v
        }
        Expr::Math { text, .. } | Expr::Text { text, .. } | Expr::Bare { text, .. } => {
            scan_calls(text, names)
        }
    }
}

fn call_ref(written: &str, argc: u32) -> CallRef {
    match written.rsplit_once('.') {
        Some((q, n)) => CallRef {
            name: n.to_string(),
            qualifier: q.to_string(),
            argc,
            member: true,
        },
        None => CallRef {
            name: written.to_string(),
            qualifier: String::new(),
            argc,
            member: false,
        },
    }
}

/// Finds `NAME(…)` inside math or English: names in the textbook's procedure style
/// (upper case, e.g. `FIND-SET`) or naming a procedure of the same file. Lower-case
/// functions such as `max(a, b)` or `lg(n)` are math, not calls.
pub fn scan_calls(text: &str, names: &[String]) -> Vec<CallRef> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let starts_word =
            (c.is_ascii_alphabetic() || c == '_') && (i == 0 || !is_name_char(chars[i - 1]));
        if !starts_word {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len()
            && (is_name_char(chars[j])
                || chars[j] == '-' && chars.get(j + 1).is_some_and(|d| d.is_ascii_alphanumeric()))
        {
            j += 1;
        }
        let name: String = chars[i..j].iter().collect();
        let mut k = j;
        while k < chars.len() && chars[k] == ' ' {
            k += 1;
        }
        if chars.get(k) == Some(&'(') && is_procedure_name(&name, names) {
            let member = i > 0 && chars[i - 1] == '.';
            let qualifier = if member {
                qualifier_before(&chars, i - 1)
            } else {
                String::new()
            };
            out.push(CallRef {
                name,
                qualifier,
                argc: count_args(&chars[k..]),
                member,
            });
        }
        i = j;
    }
    out
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn is_procedure_name(name: &str, names: &[String]) -> bool {
    let letters = name.chars().filter(|c| c.is_ascii_alphabetic()).count();
    let upper = letters >= 2 && !name.chars().any(|c| c.is_ascii_lowercase());
    upper || names.iter().any(|n| n.eq_ignore_ascii_case(name))
}

fn qualifier_before(chars: &[char], dot: usize) -> String {
    let mut s = dot;
    while s > 0 && (is_name_char(chars[s - 1]) || chars[s - 1] == '.') {
        s -= 1;
    }
    chars[s..dot].iter().collect()
}

/// Arguments of the call whose `(` starts `rest`: top-level commas plus one, or 0.
fn count_args(rest: &[char]) -> u32 {
    let mut depth = 0usize;
    let mut commas = 0u32;
    let mut blank = true;
    for &c in rest {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => commas += 1,
            _ => {}
        }
        if depth >= 1 && !c.is_whitespace() && c != '(' {
            blank = false;
        }
    }
    if blank {
        0
    } else {
        commas + 1
    }
}

/// Byte offset → 1-based line.
pub struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(src: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(src.match_indices('\n').map(|(i, _)| i as u32 + 1));
        LineIndex { starts }
    }

    pub fn line(&self, at: u32) -> u32 {
        self.starts.partition_point(|&s| s <= at) as u32
    }

    /// Lines of a half-open byte span, inclusive.
    pub fn span(&self, s: Span) -> (u32, u32) {
        let last = if s.end > s.start { s.end - 1 } else { s.start };
        (self.line(s.start), self.line(last))
    }
}
