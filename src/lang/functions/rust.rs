//! Rust items: functions, methods in `impl` and `trait` blocks (scoped by their type),
//! inline modules, nested functions and closures; `use` declarations for call resolution.

use super::{strip_generics, ParseError, Task, Walker};
use tree_sitter::Node as TsNode;

impl<'a> Walker<'a> {
    pub(super) fn visit_rust(&mut self, n: TsNode<'a>, scope: &mut Vec<String>) -> Result<(), ParseError> {
        match n.kind() {
            "use_declaration" => {
                if let Some(arg) = n.child_by_field_name("argument") {
                    let mut out = Vec::new();
                    rust_uses(arg, "", self.src, &mut out);
                    self.unit.imports.extend(out);
                }
                Ok(())
            }
            "mod_item" | "trait_item" | "impl_item" => {
                let Some(body) = n.child_by_field_name("body") else { return Ok(()) };
                let field = if n.kind() == "impl_item" { "type" } else { "name" };
                let name = n.child_by_field_name(field).map(|k| type_name(self.text(k))).unwrap_or_default();
                self.todo.push(Task::Truncate(scope.len()));
                self.visit_children(body, n.kind() != "mod_item", false);
                if !name.is_empty() {
                    self.todo.push(Task::Enter(name));
                }
                Ok(())
            }
            "function_item" => {
                let Some(body) = n.child_by_field_name("body") else { return Ok(()) };
                let name = n.child_by_field_name("name").map(|k| self.text(k).to_string()).unwrap_or_default();
                // A method's `self` is not an argument of `x.m(…)`.
                let arity = rust_arity(n.child_by_field_name("parameters"));
                let meta = self.meta(name, scope, arity.0, arity.1, false, n);
                self.emit(meta, n, body, scope.len())
            }
            "closure_expression" => {
                let Some(body) = n.child_by_field_name("body") else { return Ok(()) };
                let k = n
                    .child_by_field_name("parameters")
                    .map(|p| p.named_children(&mut p.walk()).filter(|c| !c.is_extra()).count() as u32)
                    .unwrap_or(0);
                self.emit_lambda(n, body, scope, (Some(k), k))
            }
            _ => {
                self.visit_children(n, false, false);
                Ok(())
            }
        }
    }
}

/// `Vec<T>` → `Vec`, `&'a mut foo::Bar<T>` → `Bar`: the name a method's scope carries.
fn type_name(t: &str) -> String {
    let s = strip_generics(t);
    let s = s.trim_start_matches('&').trim_start_matches("mut");
    let s = s.strip_prefix('\'').map(|r| r.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_')).unwrap_or(s);
    let s = s.trim_start_matches("mut");
    s.rsplit("::").next().unwrap_or("").to_string()
}

/// (declared, minimum) parameters, not counting `self`.
fn rust_arity(params: Option<TsNode>) -> (Option<u32>, u32) {
    let Some(p) = params else { return (Some(0), 0) };
    let mut n = 0u32;
    let mut variadic = false;
    for k in p.named_children(&mut p.walk()) {
        match k.kind() {
            "parameter" => n += 1,
            "variadic_parameter" => variadic = true,
            _ => {}
        }
    }
    (if variadic { None } else { Some(n) }, n)
}

/// `use` trees as `local=path::name` (`*=path` for globs), `prefix` the path above `n`.
fn rust_uses(n: TsNode, prefix: &str, src: &[u8], out: &mut Vec<String>) {
    let text = |k: TsNode| k.utf8_text(src).unwrap_or("").split_whitespace().collect::<String>();
    let join = |p: &str, s: &str| if p.is_empty() { s.to_string() } else if s.is_empty() { p.to_string() } else { format!("{p}::{s}") };
    match n.kind() {
        "scoped_use_list" => {
            let path = n.child_by_field_name("path").map(text).unwrap_or_default();
            let base = join(prefix, &path);
            if let Some(list) = n.child_by_field_name("list") {
                for k in list.named_children(&mut list.walk()) {
                    rust_uses(k, &base, src, out);
                }
            }
        }
        "use_list" => {
            for k in n.named_children(&mut n.walk()) {
                rust_uses(k, prefix, src, out);
            }
        }
        "use_as_clause" => {
            let path = n.child_by_field_name("path").map(text).unwrap_or_default();
            let alias = n.child_by_field_name("alias").map(text).unwrap_or_default();
            out.push(format!("{alias}={}", join(prefix, &path)));
        }
        "use_wildcard" => {
            let path = text(n);
            let path = path.trim_end_matches('*').trim_end_matches("::");
            out.push(format!("*={}", join(prefix, path)));
        }
        "line_comment" | "block_comment" => {}
        _ => {
            let path = join(prefix, &text(n));
            let local = path.rsplit("::").next().unwrap_or("").to_string();
            // `use a::b::{self}` binds `b`.
            let (local, path) = if local == "self" {
                let p = path.trim_end_matches("::self").to_string();
                (p.rsplit("::").next().unwrap_or("").to_string(), p)
            } else {
                (local, path)
            };
            out.push(format!("{local}={path}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impl_types_lose_references_lifetimes_and_paths() {
        assert_eq!(type_name("Vec<T>"), "Vec");
        assert_eq!(type_name("&'a mut foo::Bar<T>"), "Bar");
        assert_eq!(type_name("Graph<N, E, Ty, Ix>"), "Graph");
    }
}
