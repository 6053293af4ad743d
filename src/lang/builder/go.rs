//! Go statements: `if` and `switch` with initializers, the three `for` forms (clauses,
//! `range`, a bare condition, none), expression and type switches and `select` (no
//! implicit fall-through; `fallthrough` continues into the next case), labels, `goto`,
//! and `panic` as a throw.

use super::{Builder, Frontier};
use crate::graph::{EdgeKind, LocalId, NodeKind};
use tree_sitter::Node as TsNode;

impl<'a> Builder<'a> {
    pub(super) fn go_stmt(&mut self, n: TsNode<'a>, fr: Frontier) -> Frontier {
        let kind = n.kind();
        let label = if matches!(kind, "for_statement" | "expression_switch_statement" | "type_switch_statement" | "select_statement" | "block") {
            self.pending_label.take()
        } else {
            None
        };
        match kind {
            "block" | "statement_list" => {
                // A block's statements sit in a `statement_list`: one nesting level, as in C.
                let kids = Self::children(n)
                    .into_iter()
                    .flat_map(|k| if k.kind() == "statement_list" { Self::children(k) } else { vec![k] })
                    .collect();
                self.breakable_block(label, kids, fr)
            }
            "if_statement" => self.go_if(n, fr),
            "for_statement" => self.go_for(n, label, fr),
            "expression_switch_statement" | "type_switch_statement" | "select_statement" => self.go_switch(n, label, fr),
            "return_statement" => {
                let r = self.node(NodeKind::Return, n, n);
                self.connect(&fr, r);
                self.route_return(r);
                Vec::new()
            }
            "break_statement" => self.jump_stmt(n, fr, true),
            "continue_statement" => self.jump_stmt(n, fr, false),
            "goto_statement" => {
                let g = self.node(NodeKind::Goto, n, n);
                self.connect(&fr, g);
                let label = n.named_child(0).map(|l| self.text(l).to_string()).unwrap_or_default();
                self.gotos.push((g, label));
                Vec::new()
            }
            "labeled_statement" => self.labeled(n, fr),
            "expression_statement" if self.is_panic(n) => self.throw(n, fr),
            "short_var_declaration" => self.simple(NodeKind::Declaration, n, fr),
            "var_declaration" | "const_declaration" => {
                // `var x int` only declares; `var x = f()` computes.
                if self.text(n).contains('=') {
                    self.simple(NodeKind::Declaration, n, fr)
                } else {
                    fr
                }
            }
            "fallthrough_statement" | "empty_statement" | "comment" | "type_declaration" | "function_declaration"
            | "method_declaration" | "import_declaration" | "package_clause" => fr,
            "ERROR" => {
                let kids: Vec<_> = Self::children(n)
                    .into_iter()
                    .filter(|c| c.kind().ends_with("_statement") || matches!(c.kind(), "block" | "statement_list" | "short_var_declaration"))
                    .collect();
                self.stmts(kids, fr)
            }
            _ if n.is_named() && !n.is_extra() => self.simple(NodeKind::Statement, n, fr),
            _ => fr,
        }
    }

    fn is_panic(&self, n: TsNode) -> bool {
        let call = n.named_child(0).filter(|c| c.kind() == "call_expression");
        let f = call.and_then(|c| c.child_by_field_name("function"));
        f.is_some_and(|f| f.kind() == "identifier" && self.text(f) == "panic")
    }

    /// `if init; cond { … } else if …`: the initializer runs before its test.
    fn go_if(&mut self, n: TsNode<'a>, fr: Frontier) -> Frontier {
        let (mut n, mut fr) = (n, fr);
        let mut out = Vec::new();
        loop {
            if let Some(init) = n.child_by_field_name("initializer") {
                fr = self.simple(NodeKind::Statement, init, fr);
            }
            let cond = n.child_by_field_name("condition").unwrap_or(n);
            let c = self.node(NodeKind::Condition, cond, cond);
            self.connect(&fr, c);
            out.extend(match n.child_by_field_name("consequence") {
                Some(b) => self.nested(c, |s| s.stmt(b, vec![(c, EdgeKind::True)])),
                None => vec![(c, EdgeKind::True)],
            });
            match n.child_by_field_name("alternative") {
                Some(a) if a.kind() == "if_statement" => (n, fr) = (a, vec![(c, EdgeKind::False)]),
                Some(b) => {
                    out.extend(self.nested(c, |s| s.stmt(b, vec![(c, EdgeKind::False)])));
                    return out;
                }
                None => {
                    out.push((c, EdgeKind::False));
                    return out;
                }
            }
        }
    }

    fn go_for(&mut self, n: TsNode<'a>, label: Option<String>, fr: Frontier) -> Frontier {
        let body = n.child_by_field_name("body");
        let head = n.named_children(&mut n.walk()).find(|k| Some(*k) != body && !k.is_extra());
        let h: LocalId = match head {
            Some(c) if c.kind() == "for_clause" => return self.for_parts(c, body, label, fr),
            Some(r) if r.kind() == "range_clause" => {
                let right = r.child_by_field_name("right");
                self.iter_head(r, r, right)
            }
            Some(cond) => self.node(NodeKind::LoopHead, cond, cond),
            None => self.marker(NodeKind::LoopHead, n, "for"),
        };
        self.connect(&fr, h);
        let (end, breaks) = self.nested(h, |s| s.loop_body(body, h, label, vec![(h, EdgeKind::True)]));
        self.connect_back(&end, h);
        // `for { … }` ends only by `break` or `return`.
        Self::loop_exits(head.map(|_| h), breaks)
    }

    /// Expression and type switches and `select`: a case node per clause, no implicit
    /// fall-through; `break` leaves the switch.
    fn go_switch(&mut self, n: TsNode<'a>, label: Option<String>, mut fr: Frontier) -> Frontier {
        if let Some(init) = n.child_by_field_name("initializer") {
            fr = self.simple(NodeKind::Statement, init, fr);
        }
        let value = n.child_by_field_name("value");
        let s = match value {
            Some(v) => {
                // From the alias or value to the body's brace: `t := v.(type)`.
                let from = n.child_by_field_name("alias").unwrap_or(v);
                let brace = n.children(&mut n.walk()).find(|k| k.kind() == "{").map_or(v.end_byte(), |b| b.start_byte());
                let h = self.clause_head(NodeKind::Switch, n, brace, Some(v));
                let text = std::str::from_utf8(&self.src[from.start_byte()..brace.max(from.start_byte())]).unwrap_or("");
                self.cfg.nodes[h as usize].text = crate::graph::normalize_ws(text).into();
                h
            }
            None => self.marker(NodeKind::Switch, n, if n.kind() == "select_statement" { "select" } else { "switch" }),
        };
        self.cfg.nodes[s as usize].kind = NodeKind::Switch;
        self.connect(&fr, s);
        self.nest.push(s);
        self.push_target(label, None);
        let mut out = Vec::new();
        let mut fall: Frontier = Vec::new();
        let mut has_default = false;
        let cases: Vec<_> = Self::children(n)
            .into_iter()
            .filter(|k| matches!(k.kind(), "expression_case" | "type_case" | "default_case" | "communication_case"))
            .collect();
        for case in cases {
            has_default |= case.kind() == "default_case";
            let list = case.named_children(&mut case.walk()).find(|k| k.kind() == "statement_list");
            let end = list.map(|l| l.start_byte()).unwrap_or(case.end_byte());
            let calls_in = case.child_by_field_name("value").or_else(|| case.child_by_field_name("communication"));
            let c = self.clause_head(NodeKind::Case, case, end, calls_in);
            self.cfg.edge(s, c, EdgeKind::True);
            self.connect(&std::mem::take(&mut fall), c);
            let end = match list {
                Some(l) => self.stmt(l, vec![(c, EdgeKind::Seq)]),
                None => vec![(c, EdgeKind::Seq)],
            };
            let falls = list.and_then(|l| l.named_children(&mut l.walk()).filter(|k| !k.is_extra()).last()).is_some_and(|k| k.kind() == "fallthrough_statement");
            if falls {
                fall = end;
            } else {
                out.extend(end);
            }
        }
        self.switch_end(s, out, fall, has_default)
    }
}
