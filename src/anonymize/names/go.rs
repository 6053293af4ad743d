//! Go declarations: functions, methods, types, fields, parameters and results, `var`,
//! `const`, `:=` and `range` targets. A selector `pkg.Name` is a chain: through an
//! imported package the corpus does not hold it keeps its name; through a package the
//! corpus declares (or a local value) it is the corpus's own. Package names stay.

use super::{named_children, Category, Ctx, Scanner};
use tree_sitter::Node;

impl<'s> Scanner<'s> {
    pub(super) fn visit_go(&mut self, n: Node) {
        use Category::*;
        match n.kind() {
            "function_declaration" | "method_declaration" | "method_elem" => self.declare_field(n, "name", Function),
            "type_spec" | "type_alias" | "type_parameter_declaration" => {
                for k in n.children_by_field_name("name", &mut n.walk()).collect::<Vec<_>>() {
                    self.declare(k, Type);
                }
            }
            "field_declaration" | "parameter_declaration" | "variadic_parameter_declaration" | "var_spec" | "const_spec" => {
                for k in n.children_by_field_name("name", &mut n.walk()).collect::<Vec<_>>() {
                    self.declare(k, Variable);
                }
            }
            "short_var_declaration" | "range_clause" | "receive_statement" => {
                if let Some(left) = n.child_by_field_name("left") {
                    for k in named_children(left).chain(std::iter::once(left)) {
                        if k.kind() == "identifier" {
                            self.declare(k, Variable);
                        }
                    }
                }
            }
            "type_switch_statement" => {
                if let Some(a) = n.child_by_field_name("alias") {
                    for k in named_children(a) {
                        self.declare(k, Variable);
                    }
                }
            }
            "import_spec" => {
                // The name a file refers to an imported package by: never renamed.
                let last = n
                    .child_by_field_name("path")
                    .map(|p| self.text(p).trim_matches(|c| c == '"' || c == '`').rsplit('/').next().unwrap_or("").to_string())
                    .unwrap_or_default();
                let local = n.child_by_field_name("name").map_or_else(|| last.clone(), |a| self.text(a).to_string());
                self.out.package_aliases.push((local.clone(), last));
                self.imports.insert(local);
            }
            "package_clause" => {
                if let Some(p) = n.named_child(0) {
                    self.out.own_roots.push(self.text(p).to_string());
                }
            }
            "selector_expression" | "qualified_type" => {
                if let Some(segs) = go_path(n) {
                    let root = segs[0];
                    self.register_chain(segs);
                    if self.imports.contains(self.text(root)) {
                        self.ctx.insert(root.id(), Ctx::Package);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `a.b.C` as its segments, when every part is a name.
fn go_path(n: Node) -> Option<Vec<Node>> {
    let mut out = Vec::new();
    let mut cur = n;
    loop {
        match cur.kind() {
            "selector_expression" => {
                out.push(cur.child_by_field_name("field")?);
                cur = cur.child_by_field_name("operand")?;
            }
            "qualified_type" => {
                out.push(cur.child_by_field_name("name")?);
                cur = cur.child_by_field_name("package")?;
            }
            "identifier" | "package_identifier" => {
                out.push(cur);
                break;
            }
            _ => return None,
        }
        if out.len() > 64 {
            return None;
        }
    }
    out.reverse();
    Some(out)
}
