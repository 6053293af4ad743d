//! Call sites inside one statement's syntax, as the syntax names them.

use crate::graph::{CallRef, Lang};
use tree_sitter::Node as TsNode;

/// Node kinds that start another function or type: their insides belong to another CFG.
pub fn is_nested_scope(kind: &str) -> bool {
    matches!(
        kind,
        "lambda_expression"
            | "class_body"
            | "function_definition"
            | "field_declaration_list"
            | "class_declaration"
            | "interface_declaration"
            | "enum_declaration"
            | "record_declaration"
            | "lambda"
            | "class_definition"
            | "closure_expression"
            | "function_item"
            | "impl_item"
            | "mod_item"
            | "func_literal"
    )
}

/// Collects every call in `n`, not descending into lambdas or class bodies.
pub fn collect(lang: Lang, n: TsNode, src: &[u8], out: &mut Vec<CallRef>) {
    collect_outside(lang, n, src, &[], out)
}

/// As [`collect`], skipping the subtrees `holes` (parts of `n` that other nodes hold).
pub fn collect_outside(lang: Lang, n: TsNode, src: &[u8], holes: &[TsNode], out: &mut Vec<CallRef>) {
    let mut stack = vec![n];
    while let Some(n) = stack.pop() {
        if let Some(c) = call_of(lang, n, src) {
            out.push(c);
        }
        let mut cur = n.walk();
        // Reverse so calls come out in source order.
        let kids: Vec<_> = n.named_children(&mut cur).collect();
        for k in kids.into_iter().rev() {
            if !is_nested_scope(k.kind()) && !holes.contains(&k) {
                stack.push(k);
            }
        }
    }
}

fn text<'a>(n: TsNode, src: &'a [u8]) -> &'a str {
    n.utf8_text(src).unwrap_or("")
}

fn argc(args: Option<TsNode>) -> u32 {
    let Some(a) = args else { return 0 };
    let mut cur = a.walk();
    a.named_children(&mut cur).filter(|c| !c.is_extra()).count() as u32
}

/// Drops template/generic argument lists: `std::vector<int>::push_back` → `std::vector::push_back`.
pub fn strip_generics(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut depth = 0i32;
    for ch in s.chars() {
        match ch {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            c if depth == 0 && !c.is_whitespace() => out.push(c),
            _ => {}
        }
    }
    out
}

/// Splits `a::b::c` (or `a.b.c` for Java) into qualifier `a::b` and name `c`.
fn split_qualified(s: &str, sep: &str) -> (String, String) {
    let s = strip_generics(s);
    match s.rfind(sep) {
        Some(i) => (s[..i].to_string(), s[i + sep.len()..].to_string()),
        None => (String::new(), s),
    }
}

fn call_of(lang: Lang, n: TsNode, src: &[u8]) -> Option<CallRef> {
    match (lang, n.kind()) {
        (Lang::C | Lang::Cpp, "call_expression") => {
            let f = n.child_by_field_name("function")?;
            let argc = argc(n.child_by_field_name("arguments"));
            let (qualifier, name, member) = match f.kind() {
                "field_expression" => {
                    let obj = f.child_by_field_name("argument").map(|o| text(o, src)).unwrap_or("");
                    let field = f.child_by_field_name("field").map(|o| text(o, src)).unwrap_or("");
                    let (q, name) = split_qualified(field, "::");
                    let q = if q.is_empty() { obj.to_string() } else { format!("{obj}::{q}") };
                    (q, name, true)
                }
                "identifier" | "qualified_identifier" | "template_function" | "scoped_identifier" => {
                    let (q, name) = split_qualified(text(f, src), "::");
                    (q, name, false)
                }
                // Calls through pointers, subscripts or call results: no name to resolve.
                _ => (String::new(), String::new(), false),
            };
            Some(CallRef { name, qualifier, argc, member })
        }
        (Lang::Cpp, "new_expression") => {
            let t = n.child_by_field_name("type")?;
            let (qualifier, name) = split_qualified(text(t, src), "::");
            Some(CallRef {
                name,
                qualifier,
                argc: argc(n.child_by_field_name("arguments")),
                member: false,
            })
        }
        (Lang::Java, "method_invocation") => {
            let name = text(n.child_by_field_name("name")?, src).to_string();
            let obj = n.child_by_field_name("object");
            Some(CallRef {
                name,
                qualifier: obj.map(|o| strip_generics(text(o, src))).unwrap_or_default(),
                argc: argc(n.child_by_field_name("arguments")),
                member: obj.is_some(),
            })
        }
        (Lang::Java, "object_creation_expression") => {
            let t = n.child_by_field_name("type")?;
            let (qualifier, name) = split_qualified(text(t, src), ".");
            Some(CallRef {
                name,
                qualifier,
                argc: argc(n.child_by_field_name("arguments")),
                member: false,
            })
        }
        (Lang::Java, "explicit_constructor_invocation") => {
            let c = n.child_by_field_name("constructor")?;
            Some(CallRef {
                // `this(...)`/`super(...)`: the resolver maps them to constructors.
                name: text(c, src).to_string(),
                qualifier: String::new(),
                argc: argc(n.child_by_field_name("arguments")),
                member: false,
            })
        }
        (Lang::Python, "call") => {
            let f = n.child_by_field_name("function")?;
            let args = n.child_by_field_name("arguments");
            // `f(x for x in xs)`: one generator argument.
            let argc = match args {
                Some(a) if a.kind() == "generator_expression" => 1,
                a => argc(a),
            };
            Some(match f.kind() {
                "attribute" => CallRef {
                    name: f.child_by_field_name("attribute").map(|a| text(a, src)).unwrap_or("").to_string(),
                    qualifier: f.child_by_field_name("object").map(|o| text(o, src).split_whitespace().collect()).unwrap_or_default(),
                    argc,
                    member: true,
                },
                "identifier" => CallRef { name: text(f, src).to_string(), qualifier: String::new(), argc, member: false },
                _ => CallRef { name: String::new(), qualifier: String::new(), argc, member: false },
            })
        }
        (Lang::Rust, "call_expression") => {
            let argc = argc(n.child_by_field_name("arguments"));
            let mut f = n.child_by_field_name("function")?;
            if f.kind() == "generic_function" {
                f = f.child_by_field_name("function")?;
            }
            Some(match f.kind() {
                "field_expression" => CallRef {
                    name: f.child_by_field_name("field").map(|a| text(a, src)).unwrap_or("").to_string(),
                    qualifier: f.child_by_field_name("value").map(|o| strip_generics(text(o, src))).unwrap_or_default(),
                    argc,
                    member: true,
                },
                "identifier" | "scoped_identifier" => {
                    let (q, name) = split_qualified(text(f, src), "::");
                    CallRef { name, qualifier: q.trim_start_matches("::").to_string(), argc, member: false }
                }
                _ => CallRef { name: String::new(), qualifier: String::new(), argc, member: false },
            })
        }
        (Lang::Go, "call_expression") => {
            let f = n.child_by_field_name("function")?;
            let argc = argc(n.child_by_field_name("arguments"));
            Some(match f.kind() {
                "selector_expression" => CallRef {
                    name: f.child_by_field_name("field").map(|a| text(a, src)).unwrap_or("").to_string(),
                    qualifier: f.child_by_field_name("operand").map(|o| text(o, src).split_whitespace().collect()).unwrap_or_default(),
                    argc,
                    member: true,
                },
                "identifier" => CallRef { name: text(f, src).to_string(), qualifier: String::new(), argc, member: false },
                _ => CallRef { name: String::new(), qualifier: String::new(), argc, member: false },
            })
        }
        _ => None,
    }
}
