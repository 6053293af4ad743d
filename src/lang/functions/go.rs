//! Go declarations: functions, methods (scoped by their receiver's type; calls on the
//! receiver are written `self.…`) and function literals; the package and its imports.

use super::{strip_generics, ParseError, Task, Walker};
use tree_sitter::Node as TsNode;

impl<'a> Walker<'a> {
    pub(super) fn visit_go(&mut self, n: TsNode<'a>, scope: &mut Vec<String>) -> Result<(), ParseError> {
        match n.kind() {
            "package_clause" => {
                if let Some(id) = n.named_child(0) {
                    self.unit.package = self.text(id).to_string();
                }
                Ok(())
            }
            "import_spec" => {
                let path = n.child_by_field_name("path").map(|p| self.text(p).trim_matches(|c| c == '"' || c == '`').to_string()).unwrap_or_default();
                let local = n
                    .child_by_field_name("name")
                    .map(|a| self.text(a).to_string())
                    .unwrap_or_else(|| path.rsplit('/').next().unwrap_or("").to_string());
                self.unit.imports.push(format!("{local}={path}"));
                Ok(())
            }
            "function_declaration" => {
                let Some(body) = n.child_by_field_name("body") else { return Ok(()) };
                let name = n.child_by_field_name("name").map(|k| self.text(k).to_string()).unwrap_or_default();
                let arity = go_arity(n.child_by_field_name("parameters"));
                let meta = self.meta(name, scope, arity.0, arity.1, false, n);
                self.emit(meta, n, body, scope.len())
            }
            "method_declaration" => {
                let Some(body) = n.child_by_field_name("body") else { return Ok(()) };
                let name = n.child_by_field_name("name").map(|k| self.text(k).to_string()).unwrap_or_default();
                let arity = go_arity(n.child_by_field_name("parameters"));
                let recv = n
                    .child_by_field_name("receiver")
                    .and_then(|r| r.named_children(&mut r.walk()).find(|k| k.kind() == "parameter_declaration"));
                let receiver = recv.and_then(|r| r.child_by_field_name("name")).map(|k| self.text(k).to_string());
                let ty = recv
                    .and_then(|r| r.child_by_field_name("type"))
                    .map(|t| {
                        // `*Graph[K]`: the type's name, without pointer or type arguments.
                        let t = strip_generics(self.text(t));
                        t.trim_start_matches('*').split('[').next().unwrap_or("").to_string()
                    })
                    .unwrap_or_default();
                let outer = scope.len();
                let mut inner = scope.clone();
                inner.push(ty.clone());
                let meta = self.meta(name, &inner, arity.0, arity.1, false, n);
                self.emit_with_receiver(meta, n, body, outer, receiver)?;
                // Function literals inside live under the type too (tasks run last-in first).
                self.todo.push(Task::Enter(ty));
                Ok(())
            }
            "func_literal" => {
                let Some(body) = n.child_by_field_name("body") else { return Ok(()) };
                let arity = go_arity(n.child_by_field_name("parameters"));
                self.emit_lambda(n, body, scope, arity)
            }
            _ => {
                self.visit_children(n, false, false);
                Ok(())
            }
        }
    }
}

/// Declared parameters (`a, b int` is two); `None` for a variadic `...T`.
fn go_arity(params: Option<TsNode>) -> (Option<u32>, u32) {
    let Some(p) = params else { return (Some(0), 0) };
    let mut n = 0u32;
    let mut variadic = false;
    for k in p.named_children(&mut p.walk()) {
        match k.kind() {
            "parameter_declaration" => {
                let names = k.children_by_field_name("name", &mut k.walk()).count() as u32;
                n += names.max(1);
            }
            "variadic_parameter_declaration" => variadic = true,
            _ => {}
        }
    }
    if variadic {
        (None, n)
    } else {
        (Some(n), n)
    }
}
