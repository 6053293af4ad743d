//! Python statements. Blocks are indentation, so every statement is a node of its own;
//! `elif` chains, loop `else` clauses, `try`/`except`/`else`/`finally`, `with`, `match`
//! and comprehensions (as the loops they are) get the control flow a reader sees.

use super::{Builder, Frontier, TryCtx};
use crate::graph::{EdgeKind, LocalId, NodeKind};
use tree_sitter::Node as TsNode;

impl<'a> Builder<'a> {
    pub(super) fn py_stmt(&mut self, n: TsNode<'a>, fr: Frontier) -> Frontier {
        match n.kind() {
            "block" | "module" => {
                let kids = Self::children(n);
                self.stmts(kids, fr)
            }
            "expression_statement" => {
                // A lone string is a docstring: documentation, not a step.
                if n.named_child_count() == 1 && n.named_child(0).is_some_and(|k| matches!(k.kind(), "string" | "concatenated_string")) {
                    return fr;
                }
                self.py_simple(NodeKind::Statement, n, fr)
            }
            "if_statement" => self.py_if(n, fr),
            "for_statement" => {
                let (left, right) = (n.child_by_field_name("left"), n.child_by_field_name("right"));
                let h = self.iter_head(left.unwrap_or(n), right.unwrap_or(n), right);
                self.connect(&fr, h);
                self.py_loop(n, h, vec![(h, EdgeKind::True)])
            }
            "while_statement" => {
                let cond = n.child_by_field_name("condition").unwrap_or(n);
                let h = self.node(NodeKind::LoopHead, cond, cond);
                self.connect(&fr, h);
                self.py_loop(n, h, vec![(h, EdgeKind::True)])
            }
            "try_statement" => self.py_try(n, fr),
            "with_statement" => {
                let body = n.child_by_field_name("body");
                let end = body.map(|b| b.start_byte()).unwrap_or(n.end_byte());
                let clause = n.named_children(&mut n.walk()).find(|k| k.kind() == "with_clause");
                let w = self.clause_head(NodeKind::Statement, n, end, clause);
                self.connect(&fr, w);
                match body {
                    Some(b) => self.nested(w, |s| s.stmt(b, vec![(w, EdgeKind::Seq)])),
                    None => vec![(w, EdgeKind::Seq)],
                }
            }
            "match_statement" => self.py_match(n, fr),
            "return_statement" => {
                let (fr, comps) = self.comprehensions(n, fr);
                let r = self.node_around(NodeKind::Return, n, &comps);
                self.connect(&fr, r);
                self.route_return(r);
                Vec::new()
            }
            "raise_statement" => self.throw(n, fr),
            "break_statement" => self.jump_stmt(n, fr, true),
            "continue_statement" => self.jump_stmt(n, fr, false),
            // Definitions are functions or scopes of their own; the rest declare, not do.
            "function_definition" | "class_definition" | "decorated_definition" | "import_statement"
            | "import_from_statement" | "future_import_statement" | "global_statement" | "nonlocal_statement"
            | "pass_statement" | "comment" | "type_alias_statement" => fr,
            "ERROR" => {
                let kids: Vec<_> = Self::children(n)
                    .into_iter()
                    .filter(|c| c.kind().ends_with("_statement") || c.kind() == "block")
                    .collect();
                self.stmts(kids, fr)
            }
            _ if n.is_named() && !n.is_extra() => self.py_simple(NodeKind::Statement, n, fr),
            _ => fr,
        }
    }

    /// A simple statement, after the loops of the comprehensions it holds.
    fn py_simple(&mut self, kind: NodeKind, n: TsNode<'a>, fr: Frontier) -> Frontier {
        let (fr, comps) = self.comprehensions(n, fr);
        let id = self.node_around(kind, n, &comps);
        self.connect(&fr, id);
        vec![(id, EdgeKind::Seq)]
    }

    /// `if`/`elif`/`else`: one condition node per test, each `elif` a sibling of the first.
    fn py_if(&mut self, n: TsNode<'a>, fr: Frontier) -> Frontier {
        let mut out = Vec::new();
        let mut fr = fr;
        let mut arms: Vec<TsNode<'a>> = vec![n];
        arms.extend(n.children_by_field_name("alternative", &mut n.walk()));
        for arm in arms {
            match arm.kind() {
                "else_clause" => {
                    let body = arm.child_by_field_name("body");
                    let parent = fr.first().map(|f| f.0);
                    let end = match (body, parent) {
                        (Some(b), Some(p)) => self.nested(p, |s| s.stmt(b, fr)),
                        (Some(b), None) => self.stmt(b, fr),
                        _ => fr,
                    };
                    out.extend(end);
                    return out;
                }
                _ => {
                    let cond = arm.child_by_field_name("condition").unwrap_or(arm);
                    let c = self.node(NodeKind::Condition, cond, cond);
                    self.connect(&fr, c);
                    out.extend(match arm.child_by_field_name("consequence") {
                        Some(b) => self.nested(c, |s| s.stmt(b, vec![(c, EdgeKind::True)])),
                        None => vec![(c, EdgeKind::True)],
                    });
                    fr = vec![(c, EdgeKind::False)];
                }
            }
        }
        out.extend(fr);
        out
    }

    /// The body of a `for` or `while` with head `h`, and its `else` clause, which runs when
    /// the loop ends without `break`.
    fn py_loop(&mut self, n: TsNode<'a>, h: LocalId, entry: Frontier) -> Frontier {
        let label = None;
        let (end, breaks) = self.nested(h, |s| s.loop_body(n.child_by_field_name("body"), h, label, entry));
        self.connect_back(&end, h);
        let mut out: Frontier = vec![(h, EdgeKind::False)];
        if let Some(alt) = n.child_by_field_name("alternative") {
            if let Some(b) = alt.child_by_field_name("body") {
                out = self.stmt(b, out);
            }
        }
        out.extend(breaks.into_iter().map(|b| (b, EdgeKind::Jump)));
        out
    }

    fn py_try(&mut self, n: TsNode<'a>, fr: Frontier) -> Frontier {
        let t = self.marker(NodeKind::Try, n, "try");
        self.connect(&fr, t);
        let kids = Self::children(n);
        let excepts: Vec<_> = kids.iter().copied().filter(|k| matches!(k.kind(), "except_clause" | "except_group_clause")).collect();
        let else_clause = kids.iter().copied().find(|k| k.kind() == "else_clause");
        let finally = kids.iter().copied().find(|k| k.kind() == "finally_clause");
        let handlers: Vec<LocalId> = excepts
            .iter()
            .map(|c| {
                let body = c.named_children(&mut c.walk()).find(|k| k.kind() == "block");
                let end = body.map(|b| b.start_byte()).unwrap_or(c.end_byte());
                self.clause_head(NodeKind::Catch, *c, end, None)
            })
            .collect();
        for &h in &handlers {
            self.cfg.edge(t, h, EdgeKind::Exception);
        }
        self.tries.push(TryCtx { handlers: handlers.clone(), has_finally: finally.is_some(), returns: Vec::new(), throws: Vec::new(), jumps: Vec::new() });
        let mut out = match n.child_by_field_name("body") {
            Some(b) => self.stmt(b, vec![(t, EdgeKind::Seq)]),
            None => vec![(t, EdgeKind::Seq)],
        };
        // `else` runs when the body raised nothing, outside the handlers' reach.
        self.tries.last_mut().expect("pushed above").handlers.clear();
        if let Some(b) = else_clause.and_then(|e| e.child_by_field_name("body")) {
            out = self.stmt(b, out);
        }
        for (c, h) in excepts.iter().zip(handlers) {
            let body = c.named_children(&mut c.walk()).find(|k| k.kind() == "block");
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

    /// `match subject:` with `case pattern [if guard]:` arms; no arm falls through, and
    /// `case _` is the default.
    fn py_match(&mut self, n: TsNode<'a>, fr: Frontier) -> Frontier {
        let subject = n.child_by_field_name("subject").unwrap_or(n);
        let s = self.node(NodeKind::Switch, subject, subject);
        self.connect(&fr, s);
        self.nest.push(s);
        // No break target: `break` inside a case leaves the enclosing loop.
        let mut out = Vec::new();
        let mut has_default = false;
        let cases: Vec<_> = n
            .child_by_field_name("body")
            .map(|b| Self::children(b).into_iter().filter(|k| k.kind() == "case_clause").collect())
            .unwrap_or_default();
        for case in cases {
            let body = case.child_by_field_name("consequence");
            let end = body.map(|b| b.start_byte()).unwrap_or(case.end_byte());
            let c = self.clause_head(NodeKind::Case, case, end, case.child_by_field_name("guard"));
            let pattern = case.named_children(&mut case.walk()).find(|k| k.kind() == "case_pattern");
            has_default |= case.child_by_field_name("guard").is_none() && pattern.is_some_and(|p| self.text(p).trim() == "_");
            self.cfg.edge(s, c, EdgeKind::True);
            out.extend(match body {
                Some(b) => self.stmt(b, vec![(c, EdgeKind::Seq)]),
                None => vec![(c, EdgeKind::Seq)],
            });
        }
        self.nest.pop();
        if !has_default {
            out.push((s, EdgeKind::False));
        }
        out
    }

    /// The comprehensions of a statement as loops, run before the statement uses their
    /// value: `for` clauses become loop heads (nested in order), `if` clauses conditions,
    /// and the element a statement inside the innermost loop.
    fn comprehensions(&mut self, n: TsNode<'a>, mut fr: Frontier) -> (Frontier, Vec<TsNode<'a>>) {
        let comps = outer_comprehensions(n);
        for &comp in &comps {
            fr = self.comprehension(comp, fr);
        }
        (fr, comps)
    }

    fn comprehension(&mut self, comp: TsNode<'a>, fr: Frontier) -> Frontier {
        let clauses: Vec<_> = Self::children(comp).into_iter().filter(|k| matches!(k.kind(), "for_in_clause" | "if_clause")).collect();
        let element = comp.child_by_field_name("body");
        // Each loop's exit leads out of the enclosing loop: back to its head.
        let mut heads: Vec<LocalId> = Vec::new();
        let mut cur = fr;
        let mut exits: Frontier = Vec::new();
        for cl in &clauses {
            if cl.kind() == "for_in_clause" {
                let (left, right) = (cl.child_by_field_name("left"), cl.child_by_field_name("right"));
                let h = self.iter_head(left.unwrap_or(*cl), right.unwrap_or(*cl), right);
                self.connect(&cur, h);
                match heads.last() {
                    Some(&outer) => self.cfg.edge(h, outer, EdgeKind::Back),
                    None => exits.push((h, EdgeKind::False)),
                }
                self.nest.push(h);
                heads.push(h);
                cur = vec![(h, EdgeKind::True)];
            } else {
                let cond = cl.named_child(0).unwrap_or(*cl);
                let c = self.node(NodeKind::Condition, cond, cond);
                self.connect(&cur, c);
                if let Some(&h) = heads.last() {
                    self.cfg.edge(c, h, EdgeKind::Back);
                }
                cur = vec![(c, EdgeKind::True)];
            }
        }
        if let Some(e) = element {
            let id = self.node(NodeKind::Statement, e, e);
            self.connect(&cur, id);
            cur = vec![(id, EdgeKind::Seq)];
        }
        match heads.last() {
            Some(&h) => self.connect_back(&cur, h),
            None => exits.extend(cur),
        }
        for _ in &heads {
            self.nest.pop();
        }
        exits
    }
}

/// Comprehensions in `n` that no other comprehension, lambda or nested definition holds.
fn outer_comprehensions(n: TsNode) -> Vec<TsNode> {
    let is_comp = |k: TsNode| matches!(k.kind(), "list_comprehension" | "set_comprehension" | "dictionary_comprehension" | "generator_expression");
    super::outermost(n, |k| is_comp(k).then_some(k), |kind| matches!(kind, "lambda" | "function_definition" | "class_definition"))
}
