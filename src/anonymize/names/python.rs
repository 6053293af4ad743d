//! Python declarations: functions, classes, parameters, assignment and loop targets,
//! `as` names, attributes assigned on an object (`self.size = 0` declares a field).
//! Imported module paths are file names: never renamed. Qualified names are not chains:
//! `a.b` is renamed by spelling, as the receiver's type is unknown.

use super::{named_children, Category, Ctx, Scanner};
use tree_sitter::Node;

impl<'s> Scanner<'s> {
    pub(super) fn visit_python(&mut self, n: Node) {
        use Category::*;
        match n.kind() {
            "function_definition" => self.declare_field(n, "name", Function),
            "class_definition" => self.declare_field(n, "name", Type),
            "parameters" | "lambda_parameters" => {
                for p in named_children(n) {
                    match p.kind() {
                        "identifier" => self.declare(p, Variable),
                        "default_parameter" | "typed_default_parameter" => self.declare_field(p, "name", Variable),
                        _ => {
                            // typed and splat parameters: their first identifier.
                            if let Some(id) = named_children(p).find(|c| c.kind() == "identifier") {
                                self.declare(id, Variable);
                            }
                        }
                    }
                }
            }
            "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                if let Some(left) = n.child_by_field_name("left") {
                    self.declare_targets(left);
                }
            }
            "as_pattern" | "named_expression" => {
                if let Some(t) = n.child_by_field_name("alias").or_else(|| n.child_by_field_name("name")) {
                    self.declare_targets(t);
                }
            }
            "except_clause" => {
                if let Some(a) = n.child_by_field_name("alias") {
                    self.declare_targets(a);
                }
            }
            "global_statement" | "nonlocal_statement" => {
                for c in named_children(n) {
                    self.declare(c, Variable);
                }
            }
            "import_statement" | "import_from_statement" => {
                // Module paths name files and packages: they keep their spelling; the names
                // imported from a module are the module's own and follow its renaming.
                let mut mods: Vec<Node> = n.child_by_field_name("module_name").into_iter().collect();
                if n.kind() == "import_statement" {
                    for k in n.children_by_field_name("name", &mut n.walk()) {
                        mods.push(if k.kind() == "aliased_import" { k.child_by_field_name("name").unwrap_or(k) } else { k });
                    }
                }
                while let Some(m) = mods.pop() {
                    if m.kind() == "identifier" {
                        self.ctx.insert(m.id(), Ctx::Package);
                    }
                    mods.extend(named_children(m));
                }
            }
            _ => {}
        }
    }

    /// Names bound by an assignment target: identifiers of tuples and lists, and the
    /// attribute of `obj.attr` (a field).
    fn declare_targets(&mut self, t: Node) {
        let mut stack = vec![t];
        while let Some(k) = stack.pop() {
            match k.kind() {
                "identifier" => self.declare(k, Category::Variable),
                "attribute" => self.declare_field(k, "attribute", Category::Variable),
                "pattern_list" | "tuple_pattern" | "list_pattern" | "expression_list" | "tuple" | "list" | "list_splat_pattern" => {
                    stack.extend(named_children(k))
                }
                _ => {}
            }
        }
    }
}
