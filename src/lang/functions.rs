//! Finds every function-like definition in a syntax tree (functions, methods,
//! constructors, lambdas, methods of local and anonymous classes) with its scope,
//! name and arity, and builds its CFG.

use super::builder::{span, Builder};
use super::calls::strip_generics;
use super::ParseError;
use crate::graph::{FileUnit, FnCfg, FunctionMeta, Lang};
use tree_sitter::{Node as TsNode, Tree};

mod go;
mod python;
mod rust;

/// Work of the walk, on an explicit stack: syntax trees nest deeper than a thread's stack.
enum Task<'a> {
    /// `in_class`, `anon_ns`: see [`Walker::visit`].
    Visit(TsNode<'a>, bool, bool),
    /// Enter a named scope (a class, a function whose body is visited).
    Enter(String),
    /// Leave scopes down to this many names.
    Truncate(usize),
}

struct Walker<'a> {
    lang: Lang,
    src: &'a [u8],
    file: u32,
    out: Vec<(FunctionMeta, FnCfg)>,
    unit: FileUnit,
    lambdas: u32,
    /// Tasks still to run, the next last.
    todo: Vec<Task<'a>>,
}

pub fn build_all(lang: Lang, tree: &Tree, src: &str, file: u32) -> Result<(Vec<(FunctionMeta, FnCfg)>, FileUnit), ParseError> {
    let mut w = Walker {
        lang,
        src: src.as_bytes(),
        file,
        out: Vec::new(),
        unit: FileUnit::default(),
        lambdas: 0,
        todo: vec![Task::Visit(tree.root_node(), false, false)],
    };
    // One scope for the whole walk: tasks run in source order, and each scope entered is
    // left by a `Truncate` queued behind the tasks of its insides.
    let mut scope = Vec::new();
    while let Some(t) = w.todo.pop() {
        match t {
            Task::Visit(n, in_class, anon_ns) => w.visit(n, &mut scope, in_class, anon_ns)?,
            Task::Enter(name) => scope.push(name),
            Task::Truncate(k) => scope.truncate(k),
        }
    }
    Ok((w.out, w.unit))
}

impl<'a> Walker<'a> {
    fn text(&self, n: TsNode) -> &'a str {
        n.utf8_text(self.src).unwrap_or("")
    }

    /// `in_class`: directly inside a class body (C++ `static` then means class-static).
    /// `anon_ns`: inside an anonymous C++ namespace (internal linkage).
    fn visit(&mut self, n: TsNode<'a>, scope: &mut Vec<String>, in_class: bool, anon_ns: bool) -> Result<(), ParseError> {
        match self.lang {
            Lang::Python => return self.visit_python(n, scope, in_class),
            Lang::Rust => return self.visit_rust(n, scope),
            Lang::Go => return self.visit_go(n, scope),
            _ => {}
        }
        match n.kind() {
            "package_declaration" if self.lang == Lang::Java => {
                if let Some(id) = n.named_children(&mut n.walk()).find(|k| k.kind() != "annotation") {
                    self.unit.package = self.text(id).split_whitespace().collect();
                    // Java scopes start with the package; later siblings see it.
                    scope.extend(self.unit.package.split('.').map(str::to_string));
                }
                return Ok(());
            }
            "import_declaration" if self.lang == Lang::Java => {
                let t = self.text(n).trim_start_matches("import").trim_end_matches(';');
                let t = t.trim().trim_start_matches("static").trim();
                self.unit.imports.push(t.split_whitespace().collect());
                return Ok(());
            }
            "namespace_definition" => {
                let name = n.child_by_field_name("name").map(|k| self.text(k).to_string());
                let parts: Vec<String> = match &name {
                    Some(s) => s.split("::").map(|p| p.trim().to_string()).collect(),
                    None => Vec::new(),
                };
                if let Some(b) = n.child_by_field_name("body") {
                    self.todo.push(Task::Truncate(scope.len()));
                    self.visit_children(b, false, anon_ns || name.is_none());
                    self.todo.extend(parts.into_iter().rev().map(Task::Enter));
                }
                return Ok(());
            }
            "class_specifier" | "struct_specifier" | "union_specifier" | "class_declaration"
            | "interface_declaration" | "enum_declaration" | "record_declaration"
            | "annotation_type_declaration" => {
                let Some(body) = n.child_by_field_name("body") else { return Ok(()) };
                let name = n
                    .child_by_field_name("name")
                    .map(|k| strip_generics(self.text(k)))
                    .unwrap_or_else(|| "$anon".to_string());
                self.todo.push(Task::Truncate(scope.len()));
                self.visit_children(body, true, anon_ns);
                self.todo.push(Task::Enter(name));
                return Ok(());
            }
            "object_creation_expression" if self.lang == Lang::Java => {
                // Anonymous class: `new T(args) { ... }`; its methods live in scope `T$anon`.
                if let Some(body) = n.named_children(&mut n.walk()).find(|k| k.kind() == "class_body") {
                    let t = n.child_by_field_name("type").map(|t| strip_generics(self.text(t))).unwrap_or_default();
                    self.todo.push(Task::Truncate(scope.len()));
                    self.visit_children(body, true, anon_ns);
                    self.todo.push(Task::Enter(format!("{}$anon", t.rsplit('.').next().unwrap_or(""))));
                    let args: Vec<_> = n.named_children(&mut n.walk()).filter(|k| k.kind() != "class_body").collect();
                    self.todo.extend(args.into_iter().rev().map(|k| Task::Visit(k, false, anon_ns)));
                    return Ok(());
                }
            }
            "function_definition" => return self.function_definition(n, scope, in_class, anon_ns),
            "method_declaration" | "constructor_declaration" | "compact_constructor_declaration" => {
                return self.java_method(n, scope);
            }
            "lambda_expression" => return self.lambda(n, scope),
            _ => {}
        }
        self.visit_children(n, in_class && n.kind() == "template_declaration", anon_ns);
        Ok(())
    }

    /// Queues the named children of `n`, to be visited in order before anything queued earlier.
    fn visit_children(&mut self, n: TsNode<'a>, in_class: bool, anon_ns: bool) {
        let kids: Vec<_> = n.named_children(&mut n.walk()).collect();
        self.todo.extend(kids.into_iter().rev().map(|k| Task::Visit(k, in_class, anon_ns)));
    }

    /// Registers a function and builds its CFG; then queues its body for nested functions,
    /// inside its own name, with the walk's scope cut back to `outer` names after.
    fn emit(&mut self, meta: FunctionMeta, whole: TsNode<'a>, body: TsNode<'a>, outer: usize) -> Result<(), ParseError> {
        self.emit_with_receiver(meta, whole, body, outer, None)
    }

    /// As [`Self::emit`]; `receiver` names the parameter that holds the method's own object
    /// (Python `self`, a Go receiver): calls on it are written with the qualifier `self`.
    fn emit_with_receiver(&mut self, meta: FunctionMeta, whole: TsNode<'a>, body: TsNode<'a>, outer: usize, receiver: Option<String>) -> Result<(), ParseError> {
        let id = self.out.len() as u32;
        let cfg = Builder::new(self.lang, self.src, self.file, id, whole).receiver(receiver).build(body)?;
        let name = meta.name.clone();
        self.out.push((meta, cfg));
        // Lambdas and local classes inside the body are functions of their own.
        self.todo.push(Task::Truncate(outer));
        self.visit_children(body, false, false);
        self.todo.push(Task::Enter(name));
        Ok(())
    }

    fn meta(&self, name: String, scope: &[String], arity: Option<u32>, min_arity: u32, file_local: bool, n: TsNode) -> FunctionMeta {
        let (bytes, lines) = span(n);
        FunctionMeta {
            name,
            scope: scope.to_vec(),
            arity,
            min_arity,
            file_local,
            lang: self.lang,
            file: self.file,
            lines,
            bytes,
        }
    }

    fn function_definition(&mut self, n: TsNode<'a>, scope: &mut Vec<String>, in_class: bool, anon_ns: bool) -> Result<(), ParseError> {
        let Some(body) = n.child_by_field_name("body") else { return Ok(()) };
        let Some(decl) = find_function_declarator(n) else {
            // K&R or macro-mangled definitions: still visit for nested lambdas.
            self.visit_children(body, false, anon_ns);
            return Ok(());
        };
        let raw = decl.child_by_field_name("declarator").map(|d| self.text(d)).unwrap_or("");
        let (qual, name) = split_name(raw);
        let (arity, min_arity) = c_arity(decl.child_by_field_name("parameters"), self.src);
        let is_static = n
            .named_children(&mut n.walk())
            .any(|k| k.kind() == "storage_class_specifier" && self.text(k) == "static");
        let outer = scope.len();
        let qualified = !qual.is_empty();
        scope.extend(qual);
        let file_local = (is_static && !in_class && !qualified) || anon_ns;
        let meta = self.meta(name, scope, arity, min_arity, file_local, n);
        self.emit(meta, n, body, outer)
    }

    fn java_method(&mut self, n: TsNode<'a>, scope: &[String]) -> Result<(), ParseError> {
        let Some(body) = n.child_by_field_name("body") else { return Ok(()) };
        let name = match n.kind() {
            "method_declaration" => n.child_by_field_name("name").map(|k| self.text(k).to_string()).unwrap_or_default(),
            // Constructors are named after their class.
            _ => scope.last().cloned().unwrap_or_default(),
        };
        let (arity, min_arity) = java_arity(n.child_by_field_name("parameters"));
        let meta = self.meta(name, scope, arity, min_arity, false, n);
        self.emit(meta, n, body, scope.len())
    }

    fn lambda(&mut self, n: TsNode<'a>, scope: &[String]) -> Result<(), ParseError> {
        let Some(body) = n.child_by_field_name("body") else { return Ok(()) };
        let (arity, min_arity) = match self.lang {
            Lang::Java => match n.child_by_field_name("parameters") {
                Some(p) if p.kind() == "identifier" => (Some(1), 1),
                Some(p) if p.kind() == "formal_parameters" => java_arity(Some(p)),
                Some(p) => {
                    let k = p.named_children(&mut p.walk()).filter(|k| k.kind() == "identifier").count() as u32;
                    (Some(k), k)
                }
                None => (Some(0), 0),
            },
            _ => {
                let params = n
                    .child_by_field_name("declarator")
                    .and_then(|d| d.child_by_field_name("parameters"));
                if params.is_some() { c_arity(params, self.src) } else { (Some(0), 0) }
            }
        };
        self.emit_lambda(n, body, scope, (arity, min_arity))
    }

    /// A lambda or closure: a file-local function named `lambda$N` in the enclosing scope.
    fn emit_lambda(&mut self, n: TsNode<'a>, body: TsNode<'a>, scope: &[String], (arity, min_arity): (Option<u32>, u32)) -> Result<(), ParseError> {
        let name = format!("lambda${}", self.lambdas);
        self.lambdas += 1;
        let meta = self.meta(name, scope, arity, min_arity, true, n);
        self.emit(meta, n, body, scope.len())
    }
}

/// Descends declarator fields (pointer, reference, parenthesized, attributed) to the
/// function declarator of a definition.
fn find_function_declarator(n: TsNode) -> Option<TsNode> {
    let mut d = n.child_by_field_name("declarator")?;
    for _ in 0..16 {
        if d.kind() == "function_declarator" {
            return Some(d);
        }
        d = d
            .child_by_field_name("declarator")
            .or_else(|| d.named_children(&mut d.walk()).find(|k| k.kind().ends_with("declarator")))?;
    }
    None
}

/// `ns::Cls<T>::name` → (["ns", "Cls"], "name"); operators keep their symbol.
fn split_name(raw: &str) -> (Vec<String>, String) {
    let cleaned: String = if let Some(i) = raw.find("operator") {
        let (head, op) = raw.split_at(i);
        let mut h = strip_generics(head);
        h.push_str(&op.split_whitespace().collect::<String>());
        h
    } else {
        strip_generics(raw)
    };
    let mut parts: Vec<String> = cleaned.split("::").map(str::to_string).collect();
    let name = parts.pop().unwrap_or_default();
    parts.retain(|p| !p.is_empty());
    (parts, name)
}

/// Declared and minimum parameter counts of a C/C++ parameter list.
/// `(void)` has none; `...` makes the count open-ended (`None`).
fn c_arity(params: Option<TsNode>, src: &[u8]) -> (Option<u32>, u32) {
    let Some(p) = params else { return (Some(0), 0) };
    let mut n = 0u32;
    let mut min = 0u32;
    let mut variadic = false;
    let mut cur = p.walk();
    for k in p.children(&mut cur) {
        match k.kind() {
            "parameter_declaration" => {
                let void = k.child_by_field_name("declarator").is_none()
                    && k.utf8_text(src).map(|t| t.trim() == "void").unwrap_or(false);
                if !void {
                    n += 1;
                    min += 1;
                }
            }
            "optional_parameter_declaration" => n += 1,
            "variadic_parameter_declaration" | "variadic_parameter" | "..." => variadic = true,
            _ => {}
        }
    }
    (if variadic { None } else { Some(n) }, min)
}

fn java_arity(params: Option<TsNode>) -> (Option<u32>, u32) {
    let Some(p) = params else { return (Some(0), 0) };
    let mut n = 0u32;
    let mut variadic = false;
    let mut cur = p.walk();
    for k in p.named_children(&mut cur) {
        match k.kind() {
            "formal_parameter" => n += 1,
            "spread_parameter" => variadic = true,
            _ => {}
        }
    }
    (if variadic { None } else { Some(n) }, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names_split() {
        assert_eq!(split_name("ns::Cls<T>::run"), (vec!["ns".into(), "Cls".into()], "run".into()));
        assert_eq!(split_name("foo"), (vec![], "foo".into()));
        assert_eq!(split_name("Vec::operator <"), (vec!["Vec".into()], "operator<".into()));
        assert_eq!(split_name("A::~A"), (vec!["A".into()], "~A".into()));
    }
}
