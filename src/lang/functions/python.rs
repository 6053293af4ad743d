//! Python definitions: module-level functions, methods in classes (their first parameter
//! is the receiver), nested functions and lambdas; imports for call resolution.

use super::{ParseError, Task, Walker};
use tree_sitter::Node as TsNode;

impl<'a> Walker<'a> {
    pub(super) fn visit_python(&mut self, n: TsNode<'a>, scope: &mut Vec<String>, in_class: bool) -> Result<(), ParseError> {
        match n.kind() {
            "import_statement" | "import_from_statement" => {
                self.python_imports(n);
                Ok(())
            }
            "class_definition" => {
                let Some(body) = n.child_by_field_name("body") else { return Ok(()) };
                let name = n.child_by_field_name("name").map(|k| self.text(k).to_string()).unwrap_or_else(|| "$anon".into());
                // Base-class arguments may hold lambdas: they belong to the enclosing scope.
                if let Some(sup) = n.child_by_field_name("superclasses") {
                    self.todo.push(Task::Visit(sup, false, false));
                }
                self.todo.push(Task::Truncate(scope.len()));
                self.visit_children(body, true, false);
                self.todo.push(Task::Enter(name));
                Ok(())
            }
            "decorated_definition" => {
                let Some(def) = n.child_by_field_name("definition") else { return Ok(()) };
                let is_static = n
                    .named_children(&mut n.walk())
                    .filter(|k| k.kind() == "decorator")
                    .any(|d| self.text(d).trim_start_matches('@').trim() == "staticmethod");
                if def.kind() == "function_definition" {
                    return self.python_function(def, n, scope, in_class && !is_static);
                }
                self.todo.push(Task::Visit(def, in_class, false));
                Ok(())
            }
            "function_definition" => self.python_function(n, n, scope, in_class),
            "lambda" => {
                let Some(body) = n.child_by_field_name("body") else { return Ok(()) };
                let arity = python_arity(n.child_by_field_name("parameters"), false, self.src).0;
                self.emit_lambda(n, body, scope, arity)
            }
            _ => {
                self.visit_children(n, false, false);
                Ok(())
            }
        }
    }

    /// `def` at `n` (`whole` includes its decorators). In a class, the first parameter is
    /// the object (unless `@staticmethod`): it is not counted and calls on it are `self.…`.
    fn python_function(&mut self, n: TsNode<'a>, whole: TsNode<'a>, scope: &[String], method: bool) -> Result<(), ParseError> {
        let Some(body) = n.child_by_field_name("body") else { return Ok(()) };
        let name = n.child_by_field_name("name").map(|k| self.text(k).to_string()).unwrap_or_default();
        let (arity, receiver) = python_arity(n.child_by_field_name("parameters"), method, self.src);
        let meta = self.meta(name, scope, arity.0, arity.1, false, whole);
        self.emit_with_receiver(meta, whole, body, scope.len(), receiver)
    }

    /// Imports as `local=module.path` (`*=module` for a star import); a relative module
    /// keeps its leading dots.
    fn python_imports(&mut self, n: TsNode<'a>) {
        let module = n.child_by_field_name("module_name").map(|m| self.text(m).split_whitespace().collect::<String>());
        let mut cur = n.walk();
        for k in n.children_by_field_name("name", &mut cur) {
            let (path, alias) = match k.kind() {
                "aliased_import" => (
                    k.child_by_field_name("name").map(|x| self.text(x)).unwrap_or(""),
                    k.child_by_field_name("alias").map(|x| self.text(x).to_string()),
                ),
                _ => (self.text(k), None),
            };
            let path: String = path.split_whitespace().collect();
            let full = match &module {
                Some(m) if m.ends_with('.') => format!("{m}{path}"),
                Some(m) => format!("{m}.{path}"),
                None => path.clone(),
            };
            // `import a.b` binds `a.b` as written; `from m import f` binds `f`.
            let local = alias.unwrap_or_else(|| if module.is_some() { path.rsplit('.').next().unwrap_or("").to_string() } else { path.clone() });
            self.unit.imports.push(format!("{local}={full}"));
        }
        if let Some(m) = &module {
            if n.named_children(&mut n.walk()).any(|k| k.kind() == "wildcard_import") {
                self.unit.imports.push(format!("*={m}"));
            }
        }
    }
}

/// (declared, minimum) positional parameters, `None` for `*args`; and the receiver's name
/// when `method` (the first parameter, not counted).
fn python_arity(params: Option<TsNode>, method: bool, src: &[u8]) -> ((Option<u32>, u32), Option<String>) {
    let Some(p) = params else { return ((Some(0), 0), None) };
    let (mut n, mut min, mut variadic) = (0u32, 0u32, false);
    let mut receiver = None;
    let mut first = method;
    let mut cur = p.walk();
    for k in p.named_children(&mut cur) {
        let required = matches!(k.kind(), "identifier" | "typed_parameter");
        let optional = matches!(k.kind(), "default_parameter" | "typed_default_parameter");
        if first && (required || optional) {
            first = false;
            let id = if k.kind() == "identifier" { Some(k) } else { k.named_child(0) };
            receiver = id.and_then(|i| i.utf8_text(src).ok()).map(str::to_string);
            continue;
        }
        match k.kind() {
            _ if required => {
                n += 1;
                min += 1;
            }
            _ if optional => n += 1,
            "list_splat_pattern" => variadic = true,
            _ => {}
        }
    }
    ((if variadic { None } else { Some(n) }, min), receiver)
}
