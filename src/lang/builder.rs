//! Statement syntax → CFG for one function body. C, C++ and Java share most tree-sitter
//! node names, so one builder serves all three and branches where they differ.
//!
//! Construction threads a *frontier* through the statements: the dangling edges
//! `(from, kind)` that the next node will receive. Loops and switches push a jump target;
//! break/continue/return/goto/throw end the frontier and add their edge directly.
//!
//! Edge-kind rules: an edge entering a loop head from the end of its body is `Back`
//! (whatever branch it left by); break/continue/return/goto and a throw with no handler
//! in the function are `Jump`; a try reaches its handlers by `Exception`, and so does a
//! throw inside the try body.
//!
//! One concern, kept whole: the builder is one recursion over statement kinds that share
//! its frontier.

use super::{calls, ParseError, MAX_STATEMENT_NESTING};
use crate::graph::{normalize_ws, CallRef, EdgeKind, FnCfg, Lang, LocalId, Node, NodeKind, EXIT};
use std::collections::HashMap;
use tree_sitter::Node as TsNode;

mod go;
mod python;
mod rust;

type Frontier = Vec<(LocalId, EdgeKind)>;

struct Target {
    label: Option<String>,
    /// `None` for switch and labelled blocks: `continue` skips them.
    continue_to: Option<LocalId>,
    breaks: Vec<LocalId>,
    /// Tries open when the target was pushed: a jump out of a later one runs its finally.
    tries: usize,
}

struct TryCtx {
    handlers: Vec<LocalId>,
    /// Returns inside a try that has a finally block run the finally first.
    has_finally: bool,
    returns: Vec<LocalId>,
    /// Throws leaving the try (no handler of its own catches them), through its finally.
    throws: Vec<LocalId>,
    /// Breaks and continues leaving through the finally: (node, target index, is break).
    jumps: Vec<(LocalId, usize, bool)>,
}

pub struct Builder<'a> {
    lang: Lang,
    src: &'a [u8],
    file: u32,
    function: u32,
    cfg: FnCfg,
    targets: Vec<Target>,
    tries: Vec<TryCtx>,
    labels: HashMap<String, LocalId>,
    gotos: Vec<(LocalId, String)>,
    /// A label written before the next loop/switch/block (Java labelled statements).
    pending_label: Option<String>,
    /// Enclosing loop heads, conditions and switches: the nesting tree of the body.
    nest: Vec<LocalId>,
    /// Statements being built around the current one (`stmt` calls on the stack).
    depth: usize,
    /// Set when a statement lay deeper than [`MAX_STATEMENT_NESTING`]; the CFG is then refused.
    too_deep: bool,
    /// The parameter naming the method's own object (Python, Go), written `self` in calls.
    receiver: Option<String>,
    /// Rust: the next block's value is the function's result (its tail expression returns).
    tail: bool,
}

impl<'a> Builder<'a> {
    pub fn new(lang: Lang, src: &'a [u8], file: u32, function: u32, whole: TsNode) -> Self {
        Builder {
            lang,
            src,
            file,
            function,
            cfg: FnCfg::new(lang, file, function, span(whole).0, span(whole).1),
            targets: Vec::new(),
            tries: Vec::new(),
            labels: HashMap::new(),
            gotos: Vec::new(),
            pending_label: None,
            nest: Vec::new(),
            depth: 0,
            too_deep: false,
            receiver: None,
            tail: false,
        }
    }

    pub fn receiver(mut self, receiver: Option<String>) -> Self {
        self.receiver = receiver.filter(|r| !r.is_empty() && r != "_");
        self
    }

    /// Builds the CFG of `body` (a block, or an expression for expression lambdas); refused
    /// when its statements nest deeper than [`MAX_STATEMENT_NESTING`].
    pub fn build(mut self, body: TsNode<'a>) -> Result<FnCfg, ParseError> {
        let start: Frontier = vec![(crate::graph::ENTRY, EdgeKind::Seq)];
        self.tail = self.lang == Lang::Rust;
        let end = if is_block(body.kind()) {
            self.stmt(body, start)
        } else {
            // Expression-bodied lambda: its value is returned.
            let r = self.node(NodeKind::Return, body, body);
            self.connect(&start, r);
            self.cfg.edge(r, EXIT, EdgeKind::Jump);
            Vec::new()
        };
        self.connect(&end, EXIT);
        for (g, label) in std::mem::take(&mut self.gotos) {
            let to = self.labels.get(&label).copied().unwrap_or(EXIT);
            self.cfg.edge(g, to, EdgeKind::Jump);
        }
        if self.too_deep {
            return Err(ParseError::TooNested(MAX_STATEMENT_NESTING));
        }
        Ok(self.cfg)
    }

    fn text(&self, n: TsNode) -> &'a str {
        n.utf8_text(self.src).unwrap_or("")
    }

    fn push(&mut self, kind: NodeKind, bytes: (u32, u32), lines: (u32, u32), text: String, mut calls: Vec<CallRef>) -> LocalId {
        if let Some(r) = &self.receiver {
            for c in calls.iter_mut().filter(|c| c.member && &c.qualifier == r) {
                c.qualifier = "self".to_string();
            }
        }
        self.cfg.add(Node {
            kind,
            lang: self.lang,
            file: self.file,
            function: self.function,
            bytes,
            lines,
            text: text.into(),
            calls: calls.into(),
            parent: crate::graph::Parent::of(self.nest.last().copied()),
        })
    }

    /// Runs `f` with `head` as the parent of the nodes it adds.
    fn nested<R>(&mut self, head: LocalId, f: impl FnOnce(&mut Self) -> R) -> R {
        self.nest.push(head);
        let r = f(self);
        self.nest.pop();
        r
    }

    /// Adds a node of `kind` spanning `n`, with calls collected from `calls_in`.
    fn node(&mut self, kind: NodeKind, n: TsNode, calls_in: TsNode) -> LocalId {
        let (bytes, lines) = span(n);
        let mut cs = Vec::new();
        calls::collect(self.lang, calls_in, self.src, &mut cs);
        self.push(kind, bytes, lines, normalize_ws(self.text(n)), cs)
    }

    /// A statement node for `n` whose parts `holes` (Python comprehensions, Rust iterator
    /// chains) were built as loops of their own: each is written as its brackets around `…`
    /// (or `…` alone), and its calls are left to its loop, so no operator or call is
    /// counted twice.
    fn node_around(&mut self, kind: NodeKind, n: TsNode<'a>, holes: &[TsNode<'a>]) -> LocalId {
        if holes.is_empty() {
            return self.node(kind, n, n);
        }
        let (bytes, lines) = span(n);
        let mut text = String::new();
        let mut at = n.start_byte();
        for h in holes {
            let whole = self.text(*h);
            text.push_str(std::str::from_utf8(&self.src[at..h.start_byte().max(at)]).unwrap_or(""));
            let (open, close) = (whole.chars().next().unwrap_or(' '), whole.chars().last().unwrap_or(' '));
            // A Python comprehension keeps its brackets (a list, a set, a generator).
            let bracketed = self.lang == Lang::Python && matches!((open, close), ('[', ']') | ('(', ')') | ('{', '}'));
            if bracketed {
                text.push(open);
            }
            text.push('…');
            if bracketed {
                text.push(close);
            }
            at = h.end_byte().max(at);
        }
        text.push_str(std::str::from_utf8(&self.src[at..n.end_byte().max(at)]).unwrap_or(""));
        let mut cs = Vec::new();
        calls::collect_outside(self.lang, n, self.src, holes, &mut cs);
        self.push(kind, bytes, lines, normalize_ws(&text), cs)
    }

    /// A node whose text is a fixed word (`try`, `finally`, `do`), without calls.
    fn marker(&mut self, kind: NodeKind, n: TsNode, word: &str) -> LocalId {
        let (bytes, lines) = span(n);
        self.push(kind, (bytes.0, bytes.0 + word.len() as u32), (lines.0, lines.0), word.to_string(), Vec::new())
    }

    fn connect(&mut self, from: &Frontier, to: LocalId) {
        for &(f, k) in from {
            self.cfg.edge(f, to, k);
        }
    }

    fn connect_back(&mut self, from: &Frontier, head: LocalId) {
        for &(f, k) in from {
            let k = if k == EdgeKind::Jump { k } else { EdgeKind::Back };
            self.cfg.edge(f, head, k);
        }
    }

    fn stmts<I: IntoIterator<Item = TsNode<'a>>>(&mut self, it: I, mut fr: Frontier) -> Frontier {
        for s in it {
            fr = self.stmt(s, fr);
        }
        fr
    }

    fn children(n: TsNode<'a>) -> Vec<TsNode<'a>> {
        let mut c = n.walk();
        n.named_children(&mut c).collect()
    }

    /// Every recursion of the builder passes here: the depth is bounded, so the stack is.
    fn stmt(&mut self, n: TsNode<'a>, fr: Frontier) -> Frontier {
        if self.depth >= MAX_STATEMENT_NESTING {
            self.too_deep = true;
            return fr;
        }
        self.depth += 1;
        let out = self.stmt_kind(n, fr);
        self.depth -= 1;
        out
    }

    fn stmt_kind(&mut self, n: TsNode<'a>, fr: Frontier) -> Frontier {
        match self.lang {
            Lang::Python => return self.py_stmt(n, fr),
            Lang::Rust => return self.rs_stmt(n, fr),
            Lang::Go => return self.go_stmt(n, fr),
            _ => {}
        }
        let kind = n.kind();
        let label = if matches!(
            kind,
            "for_statement" | "while_statement" | "do_statement" | "enhanced_for_statement" | "for_range_loop"
                | "switch_statement" | "switch_expression" | "block" | "compound_statement"
        ) {
            self.pending_label.take()
        } else {
            None
        };
        match kind {
            "compound_statement" | "block" | "constructor_body" | "declaration_list" => {
                let kids = Self::children(n);
                self.breakable_block(label, kids, fr)
            }
            // Preprocessor conditionals inside bodies: their statements in textual order.
            "preproc_if" | "preproc_ifdef" | "preproc_else" | "preproc_elif" | "preproc_elifdef" => {
                let kids: Vec<_> = Self::children(n)
                    .into_iter()
                    .filter(|c| !matches!(c.kind(), "identifier" | "preproc_defined" | "binary_expression"))
                    .filter(|c| c.start_byte() > n.start_byte() || c.kind().starts_with("preproc_e"))
                    .collect();
                self.stmts(kids, fr)
            }
            "expression_statement" => {
                // A Java switch used as a statement-expression keeps its structure.
                if let Some(inner) = n.named_child(0) {
                    if inner.kind() == "switch_expression" {
                        return self.stmt(inner, fr);
                    }
                }
                self.simple(NodeKind::Statement, n, fr)
            }
            "declaration" | "local_variable_declaration" => {
                if has_initializer(n) {
                    self.simple(NodeKind::Declaration, n, fr)
                } else {
                    fr
                }
            }
            "if_statement" => self.if_stmt(n, fr),
            "while_statement" => self.while_stmt(n, label, fr),
            "do_statement" => self.do_stmt(n, label, fr),
            "for_statement" => self.for_stmt(n, label, fr),
            "enhanced_for_statement" | "for_range_loop" => self.foreach_stmt(n, label, fr),
            "switch_statement" | "switch_expression" => self.switch_stmt(n, label, fr),
            "break_statement" => self.jump_stmt(n, fr, true),
            "continue_statement" => self.jump_stmt(n, fr, false),
            "return_statement" | "co_return_statement" | "yield_statement" => {
                let r = self.node(NodeKind::Return, n, n);
                self.connect(&fr, r);
                self.route_return(r);
                Vec::new()
            }
            "goto_statement" => {
                let g = self.node(NodeKind::Goto, n, n);
                self.connect(&fr, g);
                let label = n.child_by_field_name("label").map(|l| self.text(l).to_string()).unwrap_or_default();
                self.gotos.push((g, label));
                Vec::new()
            }
            "labeled_statement" => self.labeled(n, fr),
            "try_statement" | "try_with_resources_statement" => self.try_stmt(n, fr),
            "throw_statement" => self.throw(n, fr),
            "synchronized_statement" => {
                let lock = n.named_children(&mut n.walk()).find(|k| k.kind() == "parenthesized_expression");
                let end = lock.map(|l| l.end_byte()).unwrap_or(n.start_byte() + "synchronized".len());
                let s = self.head(NodeKind::Synchronized, n, end, lock);
                self.connect(&fr, s);
                match n.child_by_field_name("body") {
                    Some(b) => self.stmt(b, vec![(s, EdgeKind::Seq)]),
                    None => vec![(s, EdgeKind::Seq)],
                }
            }
            // Nested types and functions are separate CFGs; comments, empty statements,
            // type definitions and declarations without initializer add no node.
            "comment" | "line_comment" | "block_comment" | ";" | "empty_statement" | "type_definition"
            | "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier"
            | "class_declaration" | "interface_declaration" | "enum_declaration" | "record_declaration"
            | "local_class_declaration" | "function_definition" | "preproc_include" | "preproc_def"
            | "preproc_function_def" | "preproc_call" | "alias_declaration" | "using_declaration"
            | "namespace_alias_definition" | "static_assert_declaration" | "template_declaration"
            | "field_declaration" | "access_specifier" => fr,
            "ERROR" => {
                // Keep what tree-sitter recovered inside an error region.
                let kids: Vec<_> = Self::children(n).into_iter().filter(|c| is_statement(c.kind())).collect();
                self.stmts(kids, fr)
            }
            _ if n.is_named() && !n.is_extra() => self.simple(NodeKind::Statement, n, fr),
            _ => fr,
        }
    }

    /// A throw (raise, panic): to the handlers of the innermost try, else out of the function.
    fn throw(&mut self, n: TsNode, fr: Frontier) -> Frontier {
        let t = self.node(NodeKind::Throw, n, n);
        self.connect(&fr, t);
        self.route_throw(t);
        Vec::new()
    }

    /// An exception raised at `from`: to the handlers of the innermost try still catching,
    /// unless a finally lies on the way (it runs first, then the exception leaves).
    fn route_throw(&mut self, from: LocalId) {
        for ctx in self.tries.iter_mut().rev() {
            if !ctx.handlers.is_empty() {
                for &h in &ctx.handlers {
                    self.cfg.edge(from, h, EdgeKind::Exception);
                }
                return;
            }
            if ctx.has_finally {
                ctx.throws.push(from);
                return;
            }
        }
        self.cfg.edge(from, EXIT, EdgeKind::Jump);
    }

    fn simple(&mut self, kind: NodeKind, n: TsNode, fr: Frontier) -> Frontier {
        let id = self.node(kind, n, n);
        self.connect(&fr, id);
        vec![(id, EdgeKind::Seq)]
    }

    fn breakable_block(&mut self, label: Option<String>, kids: Vec<TsNode<'a>>, fr: Frontier) -> Frontier {
        if label.is_none() {
            return self.stmts(kids, fr);
        }
        self.push_target(label, None);
        let mut out = self.stmts(kids, fr);
        let t = self.targets.pop().expect("pushed above");
        out.extend(t.breaks.into_iter().map(|b| (b, EdgeKind::Jump)));
        out
    }

    fn if_stmt(&mut self, n: TsNode<'a>, fr: Frontier) -> Frontier {
        // An else-if chain is a loop, not a recursion: real code has chains of hundreds.
        let (mut n, mut fr) = (n, fr);
        let mut out = Vec::new();
        loop {
            let cond = n.child_by_field_name("condition").unwrap_or(n);
            let c = self.node(NodeKind::Condition, strip_parens(cond), cond);
            self.connect(&fr, c);
            out.extend(match n.child_by_field_name("consequence") {
                Some(b) => self.nested(c, |s| s.stmt(b, vec![(c, EdgeKind::True)])),
                None => vec![(c, EdgeKind::True)],
            });
            match n.child_by_field_name("alternative") {
                Some(alt) => {
                    // C/C++ wrap the else branch in an else_clause; Java gives the statement.
                    let alt = if alt.kind() == "else_clause" {
                        alt.named_children(&mut alt.walk()).find(|k| !k.is_extra()).unwrap_or(alt)
                    } else {
                        alt
                    };
                    if alt.kind() == "else_clause" {
                        out.push((c, EdgeKind::False));
                    } else if alt.kind() == "if_statement" {
                        // else-if: a sibling of the first test in the nesting tree.
                        (n, fr) = (alt, vec![(c, EdgeKind::False)]);
                        continue;
                    } else {
                        out.extend(self.nested(c, |s| s.stmt(alt, vec![(c, EdgeKind::False)])));
                    }
                }
                None => out.push((c, EdgeKind::False)),
            }
            return out;
        }
    }

    /// Builds a loop body with `cont` as its continue target; returns the body's end and
    /// the break nodes that leave the loop.
    fn loop_body(&mut self, body: Option<TsNode<'a>>, cont: LocalId, label: Option<String>, fr: Frontier) -> (Frontier, Vec<LocalId>) {
        self.push_target(label, Some(cont));
        let out = match body {
            Some(b) => self.stmt(b, fr),
            None => fr,
        };
        let t = self.targets.pop().expect("pushed above");
        (out, t.breaks)
    }

    /// What follows a loop: the head's false edge (when it has a test) and its breaks.
    fn loop_exits(exit_test: Option<LocalId>, breaks: Vec<LocalId>) -> Frontier {
        let mut out: Frontier = exit_test.map(|h| (h, EdgeKind::False)).into_iter().collect();
        out.extend(breaks.into_iter().map(|b| (b, EdgeKind::Jump)));
        out
    }

    fn while_stmt(&mut self, n: TsNode<'a>, label: Option<String>, fr: Frontier) -> Frontier {
        let cond = n.child_by_field_name("condition").unwrap_or(n);
        let h = self.node(NodeKind::LoopHead, strip_parens(cond), cond);
        self.connect(&fr, h);
        let (end, breaks) = self.nested(h, |s| s.loop_body(n.child_by_field_name("body"), h, label, vec![(h, EdgeKind::True)]));
        self.connect_back(&end, h);
        Self::loop_exits(Some(h), breaks)
    }

    fn do_stmt(&mut self, n: TsNode<'a>, label: Option<String>, fr: Frontier) -> Frontier {
        let cond = n.child_by_field_name("condition").unwrap_or(n);
        let h = self.node(NodeKind::LoopHead, strip_parens(cond), cond);
        // The test's true edge re-enters the body: it is the loop's back edge.
        let mut entry = fr;
        entry.push((h, EdgeKind::Back));
        let (end, breaks) = self.nested(h, |s| s.loop_body(n.child_by_field_name("body"), h, label, entry));
        self.connect(&end, h);
        Self::loop_exits(Some(h), breaks)
    }

    fn for_stmt(&mut self, n: TsNode<'a>, label: Option<String>, fr: Frontier) -> Frontier {
        self.for_parts(n, n.child_by_field_name("body"), label, fr)
    }

    /// A three-part `for`: `n` holds the initializer, condition and update fields (the
    /// statement itself, or Go's `for_clause`).
    fn for_parts(&mut self, n: TsNode<'a>, body: Option<TsNode<'a>>, label: Option<String>, mut fr: Frontier) -> Frontier {
        // C: initializer is a field; C++/Java may name it `initializer` or `init`, possibly several.
        let mut cur = n.walk();
        let inits: Vec<_> = n
            .children_by_field_name("initializer", &mut cur)
            .chain(n.children_by_field_name("init", &mut n.walk()))
            .collect();
        for i in inits {
            let kind = if matches!(i.kind(), "declaration" | "local_variable_declaration") {
                NodeKind::Declaration
            } else {
                NodeKind::Statement
            };
            fr = self.simple(kind, i, fr);
        }
        let h = match n.child_by_field_name("condition") {
            Some(c) => self.node(NodeKind::LoopHead, c, c),
            None => self.marker(NodeKind::LoopHead, n, "for"),
        };
        self.connect(&fr, h);
        self.nest.push(h);
        let updates: Vec<_> = n.children_by_field_name("update", &mut n.walk()).collect();
        let upd = if updates.is_empty() {
            None
        } else {
            let first = updates[0];
            let last = updates[updates.len() - 1];
            let (b0, l0) = span(first);
            let (b1, l1) = span(last);
            let mut calls_v = Vec::new();
            for u in &updates {
                calls::collect(self.lang, *u, self.src, &mut calls_v);
            }
            let text = normalize_ws(std::str::from_utf8(&self.src[b0.0 as usize..(b1.1.max(b0.0)) as usize]).unwrap_or(""));
            Some(self.push(NodeKind::Statement, (b0.0, b1.1), (l0.0, l1.1), text, calls_v))
        };
        let cont = upd.unwrap_or(h);
        let (end, breaks) = self.loop_body(body, cont, label, vec![(h, EdgeKind::True)]);
        self.nest.pop();
        match upd {
            Some(u) => {
                self.connect(&end, u);
                self.cfg.edge(u, h, EdgeKind::Back);
            }
            None => self.connect_back(&end, h),
        }
        Self::loop_exits(n.child_by_field_name("condition").map(|_| h), breaks)
    }

    fn foreach_stmt(&mut self, n: TsNode<'a>, label: Option<String>, fr: Frontier) -> Frontier {
        // The head spans from the loop variable to the iterated value: `int x : xs`.
        let body = n.child_by_field_name("body");
        let first = n.named_child(0).unwrap_or(n);
        let h = match body {
            Some(b) => {
                let end = b.start_byte();
                let start = first.start_byte().min(end);
                let raw = std::str::from_utf8(&self.src[start..end]).unwrap_or("");
                let raw = raw.trim_end().trim_end_matches(')').trim_end();
                let (bytes, lines) = span(first);
                let mut cs = Vec::new();
                if let Some(v) = n.child_by_field_name("value").or_else(|| n.child_by_field_name("right")) {
                    calls::collect(self.lang, v, self.src, &mut cs);
                }
                self.push(NodeKind::LoopHead, (bytes.0, (start + raw.len()) as u32), lines, normalize_ws(raw), cs)
            }
            None => self.marker(NodeKind::LoopHead, n, "for"),
        };
        self.connect(&fr, h);
        let (end, breaks) = self.nested(h, |s| s.loop_body(body, h, label, vec![(h, EdgeKind::True)]));
        self.connect_back(&end, h);
        Self::loop_exits(Some(h), breaks)
    }

    fn switch_stmt(&mut self, n: TsNode<'a>, label: Option<String>, fr: Frontier) -> Frontier {
        let cond = n.child_by_field_name("condition").unwrap_or(n);
        let s = self.node(NodeKind::Switch, strip_parens(cond), cond);
        self.connect(&fr, s);
        self.nest.push(s);
        self.push_target(label, None);
        let mut fall: Frontier = Vec::new();
        let mut has_default = false;
        let body = n.child_by_field_name("body");
        let groups: Vec<_> = body.map(Self::children).unwrap_or_default();
        let mut out = Vec::new();
        for g in groups {
            match g.kind() {
                // C/C++: `case v: stmts...` is one node whose value is a field.
                "case_statement" => {
                    let value = g.child_by_field_name("value");
                    has_default |= value.is_none();
                    let c = self.case_head(g, value);
                    self.connect(&fall, c);
                    self.cfg.edge(s, c, EdgeKind::True);
                    let stmts: Vec<_> = Self::children(g).into_iter().filter(|k| Some(*k) != value).collect();
                    fall = self.stmts(stmts, vec![(c, EdgeKind::Seq)]);
                }
                // Java `case a, b: stmts...` (fall-through) and `case a -> x` (no fall-through).
                "switch_block_statement_group" | "switch_rule" => {
                    let kids = Self::children(g);
                    let labels: Vec<_> = kids.iter().copied().filter(|k| k.kind() == "switch_label").collect();
                    has_default |= labels.iter().any(|l| self.text(*l).trim_start().starts_with("default"));
                    let mut fr_case = std::mem::take(&mut fall);
                    for l in &labels {
                        let c = self.node(NodeKind::Case, *l, *l);
                        self.cfg.edge(s, c, EdgeKind::True);
                        self.connect(&fr_case, c);
                        fr_case = vec![(c, EdgeKind::Seq)];
                    }
                    let stmts: Vec<_> = kids.into_iter().filter(|k| k.kind() != "switch_label").collect();
                    if g.kind() == "switch_rule" {
                        // A rule's body (expression, block or throw) leaves the switch.
                        out.extend(self.stmts(stmts, fr_case));
                    } else {
                        fall = self.stmts(stmts, fr_case);
                    }
                }
                "comment" | "line_comment" | "block_comment" => {}
                // Statements before the first case are unreachable but still part of the code.
                _ => fall = self.stmt(g, fall),
            }
        }
        self.switch_end(s, out, fall, has_default)
    }

    /// What follows a switch `s` whose nesting and break target were pushed: the cases'
    /// ends `out`, the last case's fall-through, the test when no case is the default,
    /// and the breaks.
    fn switch_end(&mut self, s: LocalId, mut out: Frontier, fall: Frontier, has_default: bool) -> Frontier {
        out.extend(fall);
        self.nest.pop();
        if !has_default {
            out.push((s, EdgeKind::False));
        }
        let t = self.targets.pop().expect("pushed above");
        out.extend(t.breaks.into_iter().map(|b| (b, EdgeKind::Jump)));
        out
    }

    /// `case v` / `default` of a C/C++ case: the text up to the value, calls of the value.
    fn case_head(&mut self, case: TsNode, value: Option<TsNode>) -> LocalId {
        let end = value.map(|v| v.end_byte()).unwrap_or(case.start_byte() + "default".len());
        self.head(NodeKind::Case, case, end, value)
    }

    /// A node for the head of a compound statement: from its start to byte `end`.
    fn head(&mut self, kind: NodeKind, whole: TsNode, end: usize, calls_in: Option<TsNode>) -> LocalId {
        let end = end.min(self.src.len()).max(whole.start_byte());
        let text = normalize_ws(std::str::from_utf8(&self.src[whole.start_byte()..end]).unwrap_or(""));
        let line_end = whole.start_position().row as u32 + 1 + text_lines(&self.src[whole.start_byte()..end]);
        let mut cs = Vec::new();
        if let Some(c) = calls_in {
            calls::collect(self.lang, c, self.src, &mut cs);
        }
        self.push(kind, (whole.start_byte() as u32, end as u32), (whole.start_position().row as u32 + 1, line_end), text, cs)
    }

    /// The head of a for-each (`x in xs`, Rust `x in xs`, a comprehension's `for`): the text
    /// from the pattern to the iterated value, and the calls of `calls_in`.
    fn iter_head(&mut self, left: TsNode, right: TsNode, calls_in: Option<TsNode>) -> LocalId {
        let (b0, l0) = span(left);
        let (b1, l1) = span(right);
        let end = b1.1.max(b0.0);
        let raw = std::str::from_utf8(&self.src[b0.0 as usize..end as usize]).unwrap_or("");
        let mut cs = Vec::new();
        if let Some(c) = calls_in {
            calls::collect(self.lang, c, self.src, &mut cs);
        }
        self.push(NodeKind::LoopHead, (b0.0, end), (l0.0, l1.1.max(l0.0)), normalize_ws(raw), cs)
    }

    /// A clause's head (`except E as e:`, `case x if y:`, Go's `case a, b:`): from the start
    /// of `whole` to byte `end`, without the trailing `:`; its calls are those of `calls_in`.
    fn clause_head(&mut self, kind: NodeKind, whole: TsNode, end: usize, calls_in: Option<TsNode>) -> LocalId {
        let start = whole.start_byte();
        let raw = std::str::from_utf8(&self.src[start..end.max(start).min(self.src.len())]).unwrap_or("");
        let trimmed = raw.trim_end().trim_end_matches(':').trim_end();
        let mut cs = Vec::new();
        if let Some(c) = calls_in {
            calls::collect(self.lang, c, self.src, &mut cs);
        }
        let line = whole.start_position().row as u32 + 1;
        let line_end = line + trimmed.bytes().filter(|&b| b == b'\n').count() as u32;
        self.push(kind, (start as u32, (start + trimmed.len()) as u32), (line, line_end), normalize_ws(trimmed), cs)
    }

    fn jump_stmt(&mut self, n: TsNode, fr: Frontier, is_break: bool) -> Frontier {
        let kind = if is_break { NodeKind::Break } else { NodeKind::Continue };
        let j = self.node(kind, n, n);
        self.connect(&fr, j);
        let label = n
            .named_child(0)
            // Rust's `break x` carries a value, not a label: its labels are `label` nodes.
            .filter(|c| match self.lang {
                Lang::Rust => c.kind() == "label",
                _ => matches!(c.kind(), "identifier" | "statement_identifier" | "label_name"),
            })
            .map(|c| self.text(c).to_string());
        let idx = self.targets.iter().rposition(|t| {
            let named = label.as_deref().is_none_or(|l| t.label.as_deref() == Some(l));
            // Unlabelled break: innermost loop or switch (labelled blocks need the label).
            named && (!is_break || label.is_some() || t.continue_to.is_some() || t.label.is_none())
                && (is_break || t.continue_to.is_some())
        });
        match idx {
            Some(i) => self.route_jump(j, i, is_break),
            // A stray break/continue (broken code): it leaves the function.
            None => self.cfg.edge(j, EXIT, EdgeKind::Jump),
        }
        Vec::new()
    }

    fn push_target(&mut self, label: Option<String>, continue_to: Option<LocalId>) {
        self.targets.push(Target { label, continue_to, breaks: Vec::new(), tries: self.tries.len() });
    }

    /// A break or continue from `from` to target `idx`: through the finally of every try it
    /// leaves, innermost first (each finally's end routes it on).
    fn route_jump(&mut self, from: LocalId, idx: usize, is_break: bool) {
        let open = self.targets[idx].tries.min(self.tries.len());
        if let Some(ctx) = self.tries[open..].iter_mut().rev().find(|c| c.has_finally) {
            ctx.jumps.push((from, idx, is_break));
        } else if is_break {
            self.targets[idx].breaks.push(from);
        } else if let Some(to) = self.targets[idx].continue_to {
            self.cfg.edge(from, to, EdgeKind::Jump);
        }
    }

    fn route_return(&mut self, r: LocalId) {
        if let Some(ctx) = self.tries.iter_mut().rev().find(|c| c.has_finally) {
            ctx.returns.push(r);
        } else {
            self.cfg.edge(r, EXIT, EdgeKind::Jump);
        }
    }

    fn labeled(&mut self, n: TsNode<'a>, fr: Frontier) -> Frontier {
        let label_node = n.child_by_field_name("label").or_else(|| n.named_child(0));
        let name = label_node.map(|l| self.text(l).to_string()).unwrap_or_default();
        let l = match label_node {
            Some(ln) => {
                let (bytes, lines) = span(ln);
                self.push(NodeKind::Label, bytes, lines, format!("{name}:"), Vec::new())
            }
            None => self.marker(NodeKind::Label, n, ":"),
        };
        self.connect(&fr, l);
        self.labels.insert(name.clone(), l);
        let inner: Vec<_> = Self::children(n).into_iter().filter(|c| Some(*c) != label_node).collect();
        if matches!(self.lang, Lang::Java | Lang::Go) {
            self.pending_label = Some(name);
        }
        let out = self.stmts(inner, vec![(l, EdgeKind::Seq)]);
        self.pending_label = None;
        out
    }

    fn try_stmt(&mut self, n: TsNode<'a>, fr: Frontier) -> Frontier {
        let t = self.marker(NodeKind::Try, n, "try");
        self.connect(&fr, t);
        let kids = Self::children(n);
        let mut fr_body = vec![(t, EdgeKind::Seq)];
        // Java try-with-resources: each resource is a declaration run before the body.
        if let Some(res) = n.child_by_field_name("resources") {
            for r in Self::children(res) {
                fr_body = self.simple(NodeKind::Declaration, r, fr_body);
            }
        }
        let catches: Vec<_> = kids.iter().copied().filter(|k| k.kind() == "catch_clause").collect();
        let finally = kids.iter().copied().find(|k| k.kind() == "finally_clause");
        let handler_ids: Vec<LocalId> = catches
            .iter()
            .map(|c| {
                let head = c
                    .child_by_field_name("parameters")
                    .or_else(|| c.named_children(&mut c.walk()).find(|k| k.kind() == "catch_formal_parameter"))
                    .unwrap_or(*c);
                let (bytes, lines) = span(head);
                let text = normalize_ws(self.text(head));
                self.push(NodeKind::Catch, bytes, lines, if text.starts_with("catch") { text } else { format!("catch {text}") }, Vec::new())
            })
            .collect();
        for &h in &handler_ids {
            self.cfg.edge(t, h, EdgeKind::Exception);
        }
        self.tries.push(TryCtx {
            handlers: handler_ids.clone(),
            has_finally: finally.is_some(),
            returns: Vec::new(),
            throws: Vec::new(),
            jumps: Vec::new(),
        });
        let mut out = match n.child_by_field_name("body") {
            Some(b) => self.stmt(b, fr_body),
            None => fr_body,
        };
        // Handlers run outside the try's own handler scope, but inside its finally.
        let ctx = self.tries.last_mut().expect("pushed above");
        ctx.handlers.clear();
        for (c, h) in catches.iter().zip(handler_ids) {
            let body = c.child_by_field_name("body");
            out.extend(match body {
                Some(b) => self.stmt(b, vec![(h, EdgeKind::Seq)]),
                None => vec![(h, EdgeKind::Seq)],
            });
        }
        let ctx = self.tries.pop().expect("pushed above");
        match finally {
            Some(f) => self.finally_clause(f, &out, ctx),
            None => out,
        }
    }

    /// A try's `finally` clause, entered from `out` and from the try's returns, throws and
    /// jumps (`ctx`, already popped).
    fn finally_clause(&mut self, f: TsNode<'a>, out: &Frontier, ctx: TryCtx) -> Frontier {
        let fnode = self.marker(NodeKind::Finally, f, "finally");
        self.connect(out, fnode);
        let entries = ctx.returns.iter().chain(&ctx.throws).chain(ctx.jumps.iter().map(|j| &j.0));
        for &r in entries {
            self.cfg.edge(r, fnode, EdgeKind::Jump);
        }
        let body = f.named_children(&mut f.walk()).find(|k| is_block(k.kind()));
        let end = match body {
            Some(b) => self.stmt(b, vec![(fnode, EdgeKind::Seq)]),
            None => vec![(fnode, EdgeKind::Seq)],
        };
        // A finally entered by a return, throw, break or continue goes on where that was
        // going: the function's end (or the next finally), a handler, a loop.
        let ends: Vec<LocalId> = end.iter().map(|e| e.0).collect();
        let mut routed: Vec<(usize, bool)> = ctx.jumps.iter().map(|&(_, t, b)| (t, b)).collect();
        routed.sort_unstable();
        routed.dedup();
        for &e in &ends {
            if !ctx.returns.is_empty() {
                self.route_return(e);
            }
            if !ctx.throws.is_empty() {
                self.route_throw(e);
            }
            for &(t, is_break) in &routed {
                self.route_jump(e, t, is_break);
            }
        }
        end
    }
}

/// The outermost nodes under `n` (itself included) that `hit` accepts, in source order;
/// the walk does not enter a hit, nor a node whose kind `stop` names (a nested scope).
pub(super) fn outermost<'t, T>(n: TsNode<'t>, mut hit: impl FnMut(TsNode<'t>) -> Option<T>, stop: impl Fn(&str) -> bool) -> Vec<T> {
    let mut out = Vec::new();
    let mut stack = vec![n];
    while let Some(k) = stack.pop() {
        if let Some(t) = hit(k) {
            out.push(t);
            continue;
        }
        if stop(k.kind()) {
            continue;
        }
        let kids: Vec<_> = k.named_children(&mut k.walk()).collect();
        stack.extend(kids.into_iter().rev());
    }
    out
}

fn is_block(kind: &str) -> bool {
    matches!(kind, "compound_statement" | "block" | "constructor_body")
}

fn is_statement(kind: &str) -> bool {
    kind.ends_with("_statement") || matches!(kind, "declaration" | "local_variable_declaration" | "block")
}

/// `(x > 0)` → the inner expression node, so condition text has no parentheses.
fn strip_parens(n: TsNode) -> TsNode {
    if matches!(n.kind(), "parenthesized_expression" | "condition_clause") {
        let mut c = n.walk();
        let inner = n.named_children(&mut c).find(|k| !k.is_extra());
        if let Some(inner) = inner {
            return inner;
        }
    }
    n
}

fn has_initializer(n: TsNode) -> bool {
    let mut c = n.walk();
    let found = n.named_children(&mut c).any(|k| match k.kind() {
        "init_declarator" => true,
        "variable_declarator" => k.child_by_field_name("value").is_some(),
        _ => false,
    });
    found
}

/// Line breaks in a byte slice.
fn text_lines(b: &[u8]) -> u32 {
    b.iter().filter(|&&c| c == b'\n').count() as u32
}

/// Byte span and 1-based line span of a syntax node.
pub fn span(n: TsNode) -> ((u32, u32), (u32, u32)) {
    (
        (n.start_byte() as u32, n.end_byte() as u32),
        (n.start_position().row as u32 + 1, n.end_position().row as u32 + 1),
    )
}
