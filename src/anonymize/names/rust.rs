//! Rust declarations: items, fields, variants, generic parameters, bindings of `let`,
//! parameters, closures, `for` and `match` patterns. Paths (`a::b::f`) are chains: from
//! `std`, `core` or a crate the corpus does not hold they keep their later names; from
//! `crate`, `self`, `super`, `Self` or a module of the corpus they are its own. Module
//! names are file names: never renamed.

use super::{named_children, Category, Ctx, Scanner};
use tree_sitter::Node;

impl<'s> Scanner<'s> {
    pub(super) fn visit_rust(&mut self, n: Node) {
        use Category::*;
        match n.kind() {
            "function_item" | "function_signature_item" => self.declare_field(n, "name", Function),
            "struct_item" | "enum_item" | "union_item" | "trait_item" | "type_item" | "enum_variant" | "associated_type" => {
                self.declare_field(n, "name", Type)
            }
            "type_parameters" => {
                for p in named_children(n) {
                    let id = if p.kind() == "type_identifier" { Some(p) } else { p.child_by_field_name("name").or_else(|| p.named_child(0)) };
                    if let Some(id) = id.filter(|i| i.kind() == "type_identifier") {
                        self.declare(id, Type);
                    }
                }
            }
            "field_declaration" => self.declare_field(n, "name", Variable),
            "const_item" | "static_item" => self.declare_field(n, "name", Variable),
            "mod_item" => {
                if let Some(name) = n.child_by_field_name("name") {
                    self.out.own_roots.push(self.text(name).to_string());
                }
            }
            "let_declaration" | "parameter" | "for_expression" | "let_condition" => {
                if let Some(p) = n.child_by_field_name("pattern") {
                    self.declare_bindings(p);
                }
            }
            "closure_parameters" => {
                for p in named_children(n) {
                    self.declare_bindings(p);
                }
            }
            "match_arm" => {
                if let Some(p) = n.child_by_field_name("pattern") {
                    self.declare_bindings(p);
                }
            }
            "scoped_identifier" | "scoped_type_identifier" | "scoped_use_list" => {
                if n.kind() != "scoped_use_list" {
                    if let Some(segs) = rust_path(n) {
                        self.register_chain(segs);
                    }
                }
                // A lower-case name before `::` is a module or crate: a file or folder name,
                // or another crate's, so it keeps its spelling even where a variable is
                // spelled alike.
                if let Some(p) = n.child_by_field_name("path") {
                    let mut stack = vec![p];
                    while let Some(k) = stack.pop() {
                        if k.kind() == "identifier" && self.text(k).starts_with(|c: char| c.is_lowercase()) {
                            self.ctx.insert(k.id(), Ctx::Package);
                        }
                        stack.extend(named_children(k));
                    }
                }
            }
            _ => {}
        }
    }

    /// Variables a pattern binds: lower-case identifiers (an upper-case one names a
    /// variant or constant), and the shorthand fields of struct patterns.
    fn declare_bindings(&mut self, p: Node) {
        let mut stack = vec![p];
        while let Some(k) = stack.pop() {
            match k.kind() {
                "identifier" if self.text(k).starts_with(|c: char| c.is_lowercase() || c == '_') => self.declare(k, Category::Variable),
                // `Some(x)`, `Point { x, .. }`: the constructor is not bound, its insides are.
                "tuple_struct_pattern" | "struct_pattern" => {
                    stack.extend(named_children(k).skip(1));
                }
                "scoped_identifier" | "type_identifier" | "field_identifier" => {}
                "field_pattern" => {
                    if let Some(p) = k.child_by_field_name("pattern") {
                        stack.push(p);
                    }
                }
                _ => stack.extend(named_children(k)),
            }
        }
    }
}

/// The identifier segments of a path (`a::b::C`), or `None` when it holds generics,
/// `<T as Trait>` or anything but names.
fn rust_path(n: Node) -> Option<Vec<Node>> {
    let mut out = Vec::new();
    let mut cur = n;
    loop {
        match cur.kind() {
            "scoped_identifier" | "scoped_type_identifier" => {
                out.push(cur.child_by_field_name("name")?);
                match cur.child_by_field_name("path") {
                    Some(p) => cur = p,
                    None => break,
                }
            }
            "identifier" | "type_identifier" | "crate" | "self" | "super" => {
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
