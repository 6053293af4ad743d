//! Rust statements and the expressions that carry control flow (`if`, `match`, `loop`,
//! `while`, `for`, blocks). A block's value is its last expression: at the end of a
//! function body it is the result, so it becomes a return node, and so do the values of
//! the `if`/`match` arms there. `?` may leave the function, and `panic!`-like macros do.
//! An iterator chain that a consuming method ends (`v.iter().filter(…).map(…).sum()`) runs
//! a loop, so it is built as one: its source is the loop head, and each closure of its
//! steps a node of the body (a test for `filter`-like steps). The closures stay functions
//! of their own as well, as every closure does.

use super::{Builder, Frontier};
use crate::graph::{EdgeKind, NodeKind, EXIT};
use tree_sitter::Node as TsNode;

/// Iterator methods that consume the iterator: a chain ending in one runs a loop.
const CONSUMERS: [&str; 25] = [
    "for_each", "try_for_each", "sum", "product", "count", "collect", "fold", "try_fold", "reduce", "max", "min", "max_by",
    "min_by", "max_by_key", "min_by_key", "any", "all", "find", "find_map", "position", "rposition", "last", "nth",
    "partition", "unzip",
];
/// Iterator adapters: steps between a chain's source and its consumer.
const ADAPTERS: [&str; 20] = [
    "map", "filter", "filter_map", "flat_map", "flatten", "enumerate", "zip", "rev", "skip", "take", "step_by",
    "take_while", "skip_while", "map_while", "inspect", "cloned", "copied", "chain", "peekable", "scan",
];
/// Methods that make an iterator of a collection, slice or string (a range is one too).
const SOURCES: [&str; 16] = [
    "iter", "iter_mut", "into_iter", "chars", "bytes", "char_indices", "lines", "split", "split_whitespace", "windows",
    "chunks", "chunks_exact", "keys", "values", "values_mut", "drain",
];
/// Steps whose closure tests each item: a branch of the loop body.
const TESTS: [&str; 7] = ["filter", "take_while", "skip_while", "any", "all", "find", "position"];

/// Macros that never return.
const DIVERGING: [&str; 4] = ["panic", "unreachable", "todo", "unimplemented"];

impl<'a> Builder<'a> {
    pub(super) fn rs_stmt(&mut self, n: TsNode<'a>, fr: Frontier) -> Frontier {
        match n.kind() {
            "block" => self.rs_block(n, fr),
            "expression_statement" => match n.named_children(&mut n.walk()).find(|k| !k.is_extra()) {
                Some(e) => self.rs_expr(e, fr, false),
                None => fr,
            },
            "let_declaration" => self.rs_let(n, fr),
            // Items are functions or types of their own; attributes and comments say, not do.
            "function_item" | "function_signature_item" | "struct_item" | "enum_item" | "union_item" | "impl_item"
            | "trait_item" | "mod_item" | "use_declaration" | "type_item" | "macro_definition" | "attribute_item"
            | "inner_attribute_item" | "line_comment" | "block_comment" | "const_item" | "static_item"
            | "extern_crate_declaration" | "foreign_mod_item" | "associated_type" | "empty_statement" | "label" => fr,
            "ERROR" => {
                let kids: Vec<_> = Self::children(n)
                    .into_iter()
                    .filter(|c| matches!(c.kind(), "expression_statement" | "let_declaration" | "block"))
                    .collect();
                self.stmts(kids, fr)
            }
            _ if n.is_named() && !n.is_extra() => self.rs_expr(n, fr, false),
            _ => fr,
        }
    }

    /// A block's statements, then its value (the last expression, when it has no `;`).
    fn rs_block(&mut self, n: TsNode<'a>, fr: Frontier) -> Frontier {
        let tail = std::mem::take(&mut self.tail);
        let kids = Self::children(n);
        let label = kids.iter().find(|k| k.kind() == "label").map(|l| self.text(*l).to_string());
        let last = kids.iter().rposition(|k| !k.is_extra() && !matches!(k.kind(), "line_comment" | "block_comment"));
        let value = match last.map(|i| (i, kids[i])) {
            Some((i, k)) if !is_statement_like(k.kind()) => Some((i, k)),
            // A block-like expression ending a block is parsed as a statement even without
            // `;`: its value is still the block's.
            Some((i, k)) if k.kind() == "expression_statement" && !self.text(k).trim_end().ends_with(';') => {
                k.named_children(&mut k.walk()).find(|e| is_control(e.kind())).map(|e| (i, e))
            }
            _ => None,
        };
        let (stmts, value) = match value {
            Some((i, v)) => (kids[..i].to_vec(), Some(v)),
            None => (kids, None),
        };
        let run = |s: &mut Self, fr: Frontier| {
            let fr = s.stmts(stmts, fr);
            match value {
                Some(v) => s.rs_expr(v, fr, tail),
                None => fr,
            }
        };
        if label.is_none() {
            return run(self, fr);
        }
        self.push_target(label, None);
        let mut out = run(self, fr);
        let t = self.targets.pop().expect("pushed above");
        out.extend(t.breaks.into_iter().map(|b| (b, EdgeKind::Jump)));
        out
    }

    /// `let p = v;`: a value with control flow runs first, then the binding; `let … else`
    /// tests the pattern and runs the (diverging) else block when it does not match.
    fn rs_let(&mut self, n: TsNode<'a>, fr: Frontier) -> Frontier {
        let Some(value) = n.child_by_field_name("value") else { return fr };
        if let Some(alt) = n.child_by_field_name("alternative") {
            let end = alt.start_byte();
            let c = self.clause_head(NodeKind::Condition, n, end.saturating_sub(0), Some(value));
            // `clause_head` keeps the `else` keyword out: trim it from the text.
            let t: Box<str> = self.cfg.nodes[c as usize].text.trim_end_matches("else").trim_end().into();
            self.cfg.nodes[c as usize].text = t.into();
            self.connect(&fr, c);
            let mut out = vec![(c, EdgeKind::True)];
            out.extend(self.nested(c, |s| s.stmt(alt, vec![(c, EdgeKind::False)])));
            return out;
        }
        if is_control(value.kind()) {
            let fr = self.rs_expr(value, fr, false);
            let d = self.clause_head(NodeKind::Declaration, n, value.start_byte(), None);
            self.connect(&fr, d);
            return vec![(d, EdgeKind::Seq)];
        }
        let (fr, chains) = self.rs_chain_loops(value, fr);
        let d = self.node_around(NodeKind::Declaration, n, &chains);
        self.connect(&fr, d);
        if self.leaves_early(n) {
            self.cfg.edge(d, EXIT, EdgeKind::Jump);
        }
        vec![(d, EdgeKind::Seq)]
    }

    /// The consumed iterator chains of `e` as loops, run before the statement uses their
    /// value; returns the frontier after them and the chains (the statement's holes).
    fn rs_chain_loops(&mut self, e: TsNode<'a>, mut fr: Frontier) -> (Frontier, Vec<TsNode<'a>>) {
        let chains = outer_chains(e, self.src);
        let mut holes = Vec::new();
        for (call, chain) in chains {
            // The head carries the calls of the whole chain outside its closures (`zip(b.iter())`).
            let h = self.node(NodeKind::LoopHead, chain.source, call);
            self.connect(&fr, h);
            self.nest.push(h);
            let mut cur = vec![(h, EdgeKind::True)];
            for (name, body) in chain.steps {
                let test = TESTS.contains(&name);
                let id = self.node(if test { NodeKind::Condition } else { NodeKind::Statement }, body, body);
                self.connect(&cur, id);
                if test {
                    self.cfg.edge(id, h, EdgeKind::Back);
                    cur = vec![(id, EdgeKind::True)];
                } else {
                    cur = vec![(id, EdgeKind::Seq)];
                }
            }
            self.connect_back(&cur, h);
            self.nest.pop();
            fr = vec![(h, EdgeKind::False)];
            holes.push(call);
        }
        (fr, holes)
    }

    /// An expression in statement position; `tail`: its value is the function's result.
    fn rs_expr(&mut self, e: TsNode<'a>, fr: Frontier, tail: bool) -> Frontier {
        match e.kind() {
            "if_expression" => self.rs_if(e, fr, tail),
            "match_expression" => self.rs_match(e, fr, tail),
            "while_expression" | "loop_expression" | "for_expression" => {
                let label = e.named_children(&mut e.walk()).find(|k| k.kind() == "label").map(|l| self.text(l).to_string());
                let h = match e.kind() {
                    "while_expression" => {
                        let c = e.child_by_field_name("condition").unwrap_or(e);
                        self.node(NodeKind::LoopHead, c, c)
                    }
                    "for_expression" => {
                        let (p, v) = (e.child_by_field_name("pattern"), e.child_by_field_name("value"));
                        self.iter_head(p.unwrap_or(e), v.unwrap_or(e), v)
                    }
                    _ => self.marker(NodeKind::LoopHead, e, "loop"),
                };
                self.connect(&fr, h);
                let body = e.child_by_field_name("body");
                let (end, breaks) = self.nested(h, |s| s.loop_body(body, h, label, vec![(h, EdgeKind::True)]));
                self.connect_back(&end, h);
                // `loop` ends only by `break`.
                let test = (e.kind() != "loop_expression").then_some(h);
                Self::loop_exits(test, breaks)
            }
            "block" => {
                self.tail = tail;
                self.stmt(e, fr)
            }
            "unsafe_block" | "async_block" | "const_block" => match e.named_children(&mut e.walk()).find(|k| k.kind() == "block") {
                Some(b) => {
                    self.tail = tail;
                    self.stmt(b, fr)
                }
                None => self.rs_plain(e, fr, tail),
            },
            "return_expression" => {
                let (fr, chains) = self.rs_chain_loops(e, fr);
                let r = self.node_around(NodeKind::Return, e, &chains);
                self.connect(&fr, r);
                self.route_return(r);
                Vec::new()
            }
            "break_expression" => self.jump_stmt(e, fr, true),
            "continue_expression" => self.jump_stmt(e, fr, false),
            "macro_invocation" if self.diverges(e) => self.throw(e, fr),
            _ => self.rs_plain(e, fr, tail),
        }
    }

    /// An expression without control flow of its own: a statement, or the result.
    fn rs_plain(&mut self, e: TsNode<'a>, fr: Frontier, tail: bool) -> Frontier {
        let (fr, chains) = self.rs_chain_loops(e, fr);
        if tail {
            let r = self.node_around(NodeKind::Return, e, &chains);
            self.connect(&fr, r);
            self.route_return(r);
            return Vec::new();
        }
        let id = self.node_around(NodeKind::Statement, e, &chains);
        self.connect(&fr, id);
        if self.leaves_early(e) {
            self.cfg.edge(id, EXIT, EdgeKind::Jump);
        }
        vec![(id, EdgeKind::Seq)]
    }

    fn rs_if(&mut self, n: TsNode<'a>, fr: Frontier, tail: bool) -> Frontier {
        let (mut n, mut fr) = (n, fr);
        let mut out = Vec::new();
        loop {
            let cond = n.child_by_field_name("condition").unwrap_or(n);
            let c = self.node(NodeKind::Condition, cond, cond);
            self.connect(&fr, c);
            out.extend(match n.child_by_field_name("consequence") {
                Some(b) => self.nested(c, |s| {
                    s.tail = tail;
                    s.stmt(b, vec![(c, EdgeKind::True)])
                }),
                None => vec![(c, EdgeKind::True)],
            });
            let alt = n
                .child_by_field_name("alternative")
                .and_then(|a| a.named_children(&mut a.walk()).find(|k| matches!(k.kind(), "block" | "if_expression")));
            match alt {
                Some(a) if a.kind() == "if_expression" => {
                    (n, fr) = (a, vec![(c, EdgeKind::False)]);
                }
                Some(b) => {
                    out.extend(self.nested(c, |s| {
                        s.tail = tail;
                        s.stmt(b, vec![(c, EdgeKind::False)])
                    }));
                    return out;
                }
                None => {
                    out.push((c, EdgeKind::False));
                    return out;
                }
            }
        }
    }

    /// `match v { p => e, … }`: a case per arm (its pattern and guard), no fall-through;
    /// a bare `_` arm is the default.
    fn rs_match(&mut self, n: TsNode<'a>, fr: Frontier, tail: bool) -> Frontier {
        let value = n.child_by_field_name("value").unwrap_or(n);
        let s = self.node(NodeKind::Switch, value, value);
        self.connect(&fr, s);
        self.nest.push(s);
        let arms: Vec<_> = n
            .child_by_field_name("body")
            .map(|b| Self::children(b).into_iter().filter(|k| k.kind() == "match_arm").collect())
            .unwrap_or_default();
        let mut out = Vec::new();
        let mut has_default = false;
        for arm in arms {
            let pattern = arm.child_by_field_name("pattern").unwrap_or(arm);
            has_default |= self.text(pattern).trim() == "_";
            let c = self.node(NodeKind::Case, pattern, pattern);
            self.cfg.edge(s, c, EdgeKind::True);
            out.extend(match arm.child_by_field_name("value") {
                Some(v) => self.rs_expr(v, vec![(c, EdgeKind::Seq)], tail),
                None => vec![(c, EdgeKind::Seq)],
            });
        }
        self.nest.pop();
        if !has_default {
            out.push((s, EdgeKind::False));
        }
        out
    }

    fn diverges(&self, m: TsNode) -> bool {
        let name = m.child_by_field_name("macro").map(|k| self.text(k)).unwrap_or("");
        DIVERGING.contains(&name.rsplit("::").next().unwrap_or(""))
    }

    /// Whether `n` holds a `?` outside closures: the error is returned from the function.
    fn leaves_early(&self, n: TsNode) -> bool {
        let mut stack = vec![n];
        while let Some(k) = stack.pop() {
            if k.kind() == "try_expression" {
                return true;
            }
            if matches!(k.kind(), "closure_expression" | "function_item" | "async_block") {
                continue;
            }
            stack.extend(k.named_children(&mut k.walk()));
        }
        false
    }
}

fn is_control(kind: &str) -> bool {
    matches!(
        kind,
        "if_expression" | "match_expression" | "loop_expression" | "while_expression" | "for_expression" | "block" | "unsafe_block"
    )
}

/// Children of a block that are not its value: statements, items, attributes, comments.
fn is_statement_like(kind: &str) -> bool {
    kind.ends_with("_item")
        || matches!(
            kind,
            "expression_statement" | "let_declaration" | "use_declaration" | "macro_definition" | "attribute_item"
                | "inner_attribute_item" | "line_comment" | "block_comment" | "empty_statement" | "label"
                | "extern_crate_declaration" | "associated_type"
        )
}

/// A consumed iterator chain: its source (`v.iter()`, `(0..n)`) and, in order, the steps
/// that pass a closure (the method's name and the closure's body).
struct Chain<'t> {
    source: TsNode<'t>,
    steps: Vec<(&'static str, TsNode<'t>)>,
}

/// `recv.name(args)`, generic turbofish included: the receiver, the name and the arguments.
fn method_call<'t>(n: TsNode<'t>, src: &'t [u8]) -> Option<(TsNode<'t>, &'t str, Option<TsNode<'t>>)> {
    if n.kind() != "call_expression" {
        return None;
    }
    let mut f = n.child_by_field_name("function")?;
    if f.kind() == "generic_function" {
        f = f.child_by_field_name("function")?;
    }
    if f.kind() != "field_expression" {
        return None;
    }
    let name = f.child_by_field_name("field")?.utf8_text(src).ok()?;
    Some((f.child_by_field_name("value")?, name, n.child_by_field_name("arguments")))
}

/// The body of the closure a step passes (`filter(|x| x > 0)` → `x > 0`).
fn closure_body(args: Option<TsNode>) -> Option<TsNode> {
    let args = args?;
    let c = args.named_children(&mut args.walk()).find(|k| k.kind() == "closure_expression")?;
    c.child_by_field_name("body")
}

/// The chain that call `n` ends, when `n` is a consuming method over adapters over a source.
fn loop_chain<'t>(n: TsNode<'t>, src: &'t [u8]) -> Option<Chain<'t>> {
    let (mut recv, name, args) = method_call(n, src)?;
    let consumer = CONSUMERS.iter().find(|&&c| c == name)?;
    let mut steps: Vec<(&'static str, TsNode<'t>)> = closure_body(args).map(|b| (*consumer, b)).into_iter().collect();
    loop {
        if let Some((r, m, a)) = method_call(recv, src) {
            if let Some(adapter) = ADAPTERS.iter().find(|&&x| x == m) {
                steps.extend(closure_body(a).map(|b| (*adapter, b)));
                recv = r;
                continue;
            }
            if !SOURCES.contains(&m) {
                return None;
            }
        } else {
            let inner = if recv.kind() == "parenthesized_expression" { recv.named_child(0)? } else { recv };
            if inner.kind() != "range_expression" {
                return None;
            }
        }
        steps.reverse();
        return Some(Chain { source: recv, steps });
    }
}

/// The consumed chains in `n` that no other chain, closure or item holds, in source order.
fn outer_chains<'t>(n: TsNode<'t>, src: &'t [u8]) -> Vec<(TsNode<'t>, Chain<'t>)> {
    super::outermost(n, |k| loop_chain(k, src).map(|c| (k, c)), super::super::calls::is_nested_scope)
}
