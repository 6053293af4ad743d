//! One pass over a file's syntax tree: the names it declares (with their category), every
//! identifier token with the context that decides whether it may be renamed, the comments,
//! and the identifier words inside macro bodies (which tree-sitter keeps as raw text).
//!
//! One concern, kept whole: the pass is one walk whose cases share its context.

use super::Category;
use crate::graph::Lang;
use std::collections::{HashMap, HashSet};
use tree_sitter::{Node, Tree};

mod go;
mod python;
mod rust;

/// How a token's position limits renaming.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ctx {
    Plain,
    /// Inside a Java package declaration: never renamed.
    Package,
    /// A segment of a Java import path before its last name: renamed only if it is a
    /// declared type (`import pkg.Outer.Inner`), never as a package segment.
    ImportPrefix,
    /// Segment `pos` of the qualified name `chains[id]` (`std::sort`, `Math.max`, `a.b.c`).
    Chain {
        id: u32,
        pos: u16,
    },
}

/// How close a token or comment is to a syntax error: 0 clean, 1 in an item (a top-level
/// declaration, a namespace or class member, a preprocessor-branch item) next to one that
/// contains an error, 2 in an item that contains an error, 3 inside an ERROR node.
/// Rewriting near errors can change how tree-sitter recovers, so a file that parses worse
/// is redone leaving the higher zones alone.
pub(crate) type Zone = u8;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Tok {
    pub start: usize,
    pub end: usize,
    pub zone: Zone,
    pub ctx: Ctx,
}

#[derive(Default)]
pub(crate) struct Scan {
    pub errors: u32,
    pub decls: Vec<(String, Category)>,
    /// Identifier tokens in byte order.
    pub tokens: Vec<Tok>,
    /// Qualified names as their segments' texts, left to right.
    pub chains: Vec<Vec<String>>,
    /// Comment spans in byte order, with their zone.
    pub comments: Vec<(usize, usize, Zone)>,
    /// Every identifier-shaped word of the file: generated names must avoid them.
    pub seen: HashSet<String>,
    /// Scopes of out-of-line definitions: types unless declared otherwise.
    pub weak_types: Vec<String>,
    /// Words parsed as built-in types (`size_t`, `uint8_t`): never renamed, since a renamed
    /// declaration would no longer match its uses.
    pub primitive: HashSet<String>,
    /// Modules and packages the file declares without renaming them (their names are
    /// file and folder names): paths from them are the corpus's own.
    pub own_roots: Vec<String>,
    /// Go imports as (the name the file uses, the imported path's last folder): an alias
    /// of one of the corpus's own packages is an own root too.
    pub package_aliases: Vec<(String, String)>,
}

fn is_ident_kind(kind: &str) -> bool {
    matches!(
        kind,
        "identifier" | "field_identifier" | "type_identifier" | "namespace_identifier" | "statement_identifier"
            | "shorthand_field_identifier"
    )
}

/// Zones of a container's children: 2 for an item with an error, 1 for the items next to
/// one (comments and punctuation do not count as items).
fn item_zones(children: &[Node]) -> Vec<Zone> {
    let items: Vec<usize> = (0..children.len())
        .filter(|&i| children[i].is_named() && !is_comment_kind(children[i].kind()))
        .collect();
    let mut zones = vec![0; children.len()];
    for (k, &i) in items.iter().enumerate() {
        if children[i].has_error() {
            zones[i] = 2;
            for j in [k.wrapping_sub(1), k + 1] {
                if let Some(&n) = items.get(j) {
                    zones[n] = zones[n].max(1);
                }
            }
        }
    }
    zones
}

/// Nodes whose children are declarations or members: the items error zones are made of.
fn is_container(kind: &str) -> bool {
    matches!(
        kind,
        "translation_unit"
            | "program"
            | "module"
            | "source_file"
            | "declaration_list"
            | "field_declaration_list"
            | "class_body"
            | "interface_body"
            | "enum_body"
            | "enum_body_declarations"
            | "annotation_type_body"
            | "preproc_if"
            | "preproc_ifdef"
            | "preproc_else"
            | "preproc_elif"
            | "preproc_elifdef"
    )
}

fn is_comment_kind(kind: &str) -> bool {
    matches!(kind, "comment" | "line_comment" | "block_comment")
}

struct Scanner<'s> {
    lang: Lang,
    src: &'s str,
    out: Scan,
    /// Contexts assigned to identifier leaves by an ancestor (chains, imports), by node id.
    ctx: HashMap<usize, Ctx>,
    /// Go: the names the file's imports give packages.
    imports: HashSet<String>,
}

pub(crate) fn scan(lang: Lang, tree: &Tree, src: &str, errors: u32) -> Scan {
    let mut s = Scanner {
        lang,
        src,
        out: Scan { errors, ..Scan::default() },
        ctx: HashMap::new(),
        imports: HashSet::new(),
    };
    // Explicit stack: expression trees of real code nest deeper than the thread stack allows.
    // Each entry: node, its zone (the item part), in a package name.
    let mut stack: Vec<(Node, Zone, bool)> = vec![(tree.root_node(), 0, false)];
    while let Some((node, item_zone, skip)) = stack.pop() {
        let zone = if node.is_error() { 3 } else { item_zone };
        s.visit(node, zone, skip);
        let skip = skip || (lang == Lang::Java && node.kind() == "package_declaration");
        let mut c = node.walk();
        let children: Vec<Node> = node.children(&mut c).collect();
        let zones: Vec<Zone> = if zone < 3 && is_container(node.kind()) {
            item_zones(&children)
        } else {
            vec![zone; children.len()]
        };
        stack.extend(children.into_iter().zip(zones).rev().map(|(ch, z)| (ch, z, skip)));
    }
    s.out.tokens.sort_by_key(|t| t.start);
    s.out.comments.sort();
    s.out
}

impl<'s> Scanner<'s> {
    fn text(&self, n: Node) -> &'s str {
        &self.src[n.byte_range()]
    }

    fn declare(&mut self, n: Node, cat: Category) {
        if is_ident_kind(n.kind()) {
            self.out.decls.push((self.text(n).to_string(), cat));
        }
    }

    fn declare_field(&mut self, n: Node, field: &str, cat: Category) {
        if let Some(f) = n.child_by_field_name(field) {
            self.declare(f, cat);
        }
    }

    fn visit(&mut self, n: Node, zone: Zone, skip: bool) {
        let kind = n.kind();
        if is_comment_kind(kind) {
            self.out.comments.push((n.start_byte(), n.end_byte(), zone));
            return;
        }
        if is_ident_kind(kind) && n.child_count() == 0 {
            let text = self.text(n);
            self.out.seen.insert(text.to_string());
            if !text.is_empty() {
                let ctx = if skip {
                    Ctx::Package
                } else {
                    self.ctx.get(&n.id()).copied().unwrap_or(Ctx::Plain)
                };
                self.out.tokens.push(Tok {
                    start: n.start_byte(),
                    end: n.end_byte(),
                    zone,
                    ctx,
                });
            }
            return;
        }
        if skip {
            return;
        }
        match self.lang {
            Lang::Java => self.visit_java(n),
            Lang::Python => self.visit_python(n),
            Lang::Rust => self.visit_rust(n),
            Lang::Go => self.visit_go(n),
            _ => self.visit_c(n, zone),
        }
    }

    fn visit_c(&mut self, n: Node, zone: Zone) {
        match n.kind() {
            "primitive_type" => {
                self.out.primitive.insert(self.text(n).to_string());
            }
            "function_definition" | "declaration" | "field_declaration" | "type_definition" => {
                let is_typedef = n.kind() == "type_definition";
                for d in fields(n, "declarator") {
                    for (name, is_fn) in declarator_names(d) {
                        let cat = if is_typedef {
                            Category::Type
                        } else if is_fn || n.kind() == "function_definition" {
                            Category::Function
                        } else {
                            Category::Variable
                        };
                        self.declare(name, cat);
                    }
                    // `void Scanner::scan() {…}` defines a member of `Scanner`, so the scopes
                    // are the corpus's own even when their declaration is not among the files.
                    if let Some(segs) = declarator_qualifier(d).and_then(cpp_path) {
                        for s in &segs[..segs.len().saturating_sub(1)] {
                            self.out.weak_types.push(self.text(*s).to_string());
                        }
                    }
                }
            }
            "parameter_declaration" | "optional_parameter_declaration" | "variadic_parameter_declaration" | "for_range_loop" => {
                for d in fields(n, "declarator") {
                    for (name, _) in declarator_names(d) {
                        self.declare(name, Category::Variable);
                    }
                }
            }
            // Only a definition declares: `struct stat *st` names a library type.
            "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier" if n.child_by_field_name("body").is_some() => {
                if let Some(name) = n.child_by_field_name("name").and_then(innermost_name) {
                    self.declare(name, Category::Type);
                }
            }
            "enumerator" => self.declare_field(n, "name", Category::Type),
            "alias_declaration" | "optional_type_parameter_declaration" | "concept_definition" => {
                self.declare_field(n, "name", Category::Type)
            }
            "type_parameter_declaration" | "variadic_type_parameter_declaration" => {
                for ch in named_children(n) {
                    self.declare(ch, Category::Type);
                }
            }
            "namespace_definition" | "namespace_alias_definition" => {
                if let Some(name) = n.child_by_field_name("name") {
                    let mut stack = vec![name];
                    while let Some(x) = stack.pop() {
                        if x.kind() == "namespace_identifier" {
                            self.declare(x, Category::Namespace);
                        } else if x.kind() == "nested_namespace_specifier" {
                            stack.extend(named_children(x));
                        }
                    }
                }
            }
            "labeled_statement" => self.declare_field(n, "label", Category::Variable),
            "lambda_capture_initializer" => self.declare_field(n, "left", Category::Variable),
            "preproc_def" | "preproc_function_def" => {
                self.declare_field(n, "name", Category::Macro);
                if let Some(params) = n.child_by_field_name("parameters") {
                    for p in named_children(params) {
                        self.declare(p, Category::Variable);
                    }
                }
                if let Some(v) = n.child_by_field_name("value") {
                    self.lex_macro_text(v, zone);
                }
            }
            // `#undef NAME` is a generic directive whose argument is raw text.
            "preproc_call" => {
                let undef = n.child_by_field_name("directive").is_some_and(|d| {
                    let t = self.text(d);
                    t.starts_with('#') && t[1..].trim_start() == "undef"
                });
                if undef {
                    if let Some(v) = n.child_by_field_name("argument") {
                        self.lex_macro_text(v, zone);
                    }
                }
            }
            "qualified_identifier" if self.lang == Lang::Cpp => self.chain_cpp(n),
            _ => {}
        }
    }

    fn visit_java(&mut self, n: Node) {
        use Category::*;
        match n.kind() {
            "class_declaration"
            | "interface_declaration"
            | "enum_declaration"
            | "record_declaration"
            | "annotation_type_declaration"
            | "enum_constant" => self.declare_field(n, "name", Type),
            "method_declaration" | "annotation_type_element_declaration" => self.declare_field(n, "name", Function),
            "variable_declarator"
            | "formal_parameter"
            | "catch_formal_parameter"
            | "enhanced_for_statement"
            | "resource"
            | "instanceof_expression" => self.declare_field(n, "name", Variable),
            "type_parameter" => {
                for ch in named_children(n) {
                    if ch.kind() == "type_identifier" {
                        self.declare(ch, Type);
                    }
                }
            }
            "type_pattern" | "record_pattern_component" | "inferred_parameters" | "labeled_statement" => {
                for ch in named_children(n) {
                    if ch.kind() == "identifier" {
                        self.declare(ch, Variable);
                    }
                }
            }
            "lambda_expression" => {
                if let Some(p) = n.child_by_field_name("parameters").filter(|p| p.kind() == "identifier") {
                    self.declare(p, Variable);
                }
            }
            "import_declaration" => self.import_java(n),
            "method_invocation" | "field_access" | "scoped_identifier" | "scoped_type_identifier" | "method_reference" => {
                self.chain_java(n)
            }
            _ => {}
        }
    }

    /// `import a.b.C;`: the package segments are never renamed, the imported name is.
    fn import_java(&mut self, n: Node) {
        let star = named_children(n).any(|c| c.kind() == "asterisk");
        let Some(path) = named_children(n).find(|c| matches!(c.kind(), "scoped_identifier" | "identifier")) else {
            return;
        };
        let Some(segs) = java_path(path, 0) else { return };
        let last = segs.len() - 1;
        for (i, s) in segs.into_iter().enumerate() {
            let ctx = if i == last && !star { Ctx::Plain } else { Ctx::ImportPrefix };
            self.ctx.insert(s.id(), ctx);
        }
    }

    /// Registers a qualified name once, at its outermost node (visited first).
    fn register_chain(&mut self, segs: Vec<Node>) {
        if segs.len() < 2 || segs.len() > u16::MAX as usize || self.ctx.contains_key(&segs[0].id()) {
            return;
        }
        let id = self.out.chains.len() as u32;
        self.out.chains.push(segs.iter().map(|s| self.text(*s).to_string()).collect());
        for (pos, s) in segs.iter().enumerate() {
            self.ctx.insert(s.id(), Ctx::Chain { id, pos: pos as u16 });
        }
    }

    fn chain_java(&mut self, n: Node) {
        let segs = match n.kind() {
            "method_invocation" => n.child_by_field_name("object").and_then(|o| {
                let mut v = java_path(o, 0)?;
                v.push(n.child_by_field_name("name")?);
                Some(v)
            }),
            "method_reference" => {
                let (first, last) = (n.named_child(0), n.named_child(n.named_child_count().saturating_sub(1)));
                match (first, last) {
                    (Some(f), Some(l)) if l.kind() == "identifier" && f.id() != l.id() => java_path(f, 0).map(|mut v| {
                        v.push(l);
                        v
                    }),
                    _ => None,
                }
            }
            _ => java_path(n, 0),
        };
        if let Some(segs) = segs {
            self.register_chain(segs);
        }
    }

    fn chain_cpp(&mut self, n: Node) {
        if let Some(segs) = cpp_path(n) {
            self.register_chain(segs);
        }
    }

    /// Identifier words of a macro body or `#undef` argument, skipping literals; line
    /// comments inside it are reported as comments.
    fn lex_macro_text(&mut self, arg: Node, zone: Zone) {
        let base = arg.start_byte();
        let b = self.src[arg.byte_range()].as_bytes();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_alphabetic() || c == b'_' {
                let mut j = i + 1;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
                let word = &self.src[base + i..base + j];
                self.out.seen.insert(word.to_string());
                // `L"x"`, `u8'c'`: an encoding prefix, not a name.
                let prefix = j < b.len()
                    && (b[j] == b'"' || b[j] == b'\'')
                    && matches!(word, "L" | "u" | "U" | "u8" | "R" | "LR" | "uR" | "UR" | "u8R");
                if !prefix {
                    self.out.tokens.push(Tok {
                        start: base + i,
                        end: base + j,
                        zone,
                        ctx: Ctx::Plain,
                    });
                }
                i = j;
            } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
                // A preprocessing number: `1e-5`, `0x1fULL`, `1.5f`.
                let mut j = i + 1;
                while j < b.len()
                    && (b[j].is_ascii_alphanumeric()
                        || b[j] == b'_'
                        || b[j] == b'.'
                        || ((b[j] == b'+' || b[j] == b'-') && matches!(b[j - 1], b'e' | b'E' | b'p' | b'P')))
                {
                    j += 1;
                }
                i = j;
            } else if c == b'"' || c == b'\'' {
                let mut j = i + 1;
                while j < b.len() && b[j] != c && b[j] != b'\n' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                i = j + 1;
            } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
                let mut j = i + 2;
                while j < b.len() && !(b[j] == b'\n' && b[j - 1] != b'\\') {
                    j += 1;
                }
                // The newline ends the directive; it is not part of the comment.
                let end = if j > 0 && b.get(j) == Some(&b'\n') && b[j - 1] == b'\r' {
                    j - 1
                } else {
                    j
                };
                self.out.comments.push((base + i, base + end, zone));
                i = j;
            } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
                let j = self.src[base + i + 2..base + b.len()].find("*/").map_or(b.len(), |k| i + 2 + k + 2);
                self.out.comments.push((base + i, base + j, zone));
                i = j;
            } else {
                i += 1;
            }
        }
    }
}

fn fields<'t>(n: Node<'t>, field: &str) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.children_by_field_name(field, &mut c).collect()
}

fn named_children<'t>(n: Node<'t>) -> impl Iterator<Item = Node<'t>> {
    (0..n.named_child_count()).filter_map(move |i| n.named_child(i))
}

/// The name a struct/class/enum specifier defines: `A::B` defines `B`, `A<T>` defines `A`.
fn innermost_name(mut n: Node) -> Option<Node> {
    for _ in 0..64 {
        match n.kind() {
            "type_identifier" | "identifier" => return Some(n),
            "qualified_identifier" | "template_type" => n = n.child_by_field_name("name")?,
            _ => return None,
        }
    }
    None
}

/// The names a C/C++ declarator declares, each with whether it is a function: the innermost
/// declarator wrapping the name is a function declarator (`int *f(void)`), not a pointer
/// to one (`int (*fp)(void)`).
fn declarator_names(mut n: Node) -> Vec<(Node, bool)> {
    let mut is_fn = false;
    for _ in 0..64 {
        match n.kind() {
            "identifier" | "field_identifier" | "type_identifier" => return vec![(n, is_fn)],
            "structured_binding_declarator" => return named_children(n).filter(|c| c.kind() == "identifier").map(|c| (c, false)).collect(),
            "function_declarator" => {
                is_fn = true;
                let Some(d) = n.child_by_field_name("declarator") else { break };
                n = d;
            }
            "pointer_declarator" | "array_declarator" | "init_declarator" | "pointer_type_declarator" => {
                is_fn = false;
                let Some(d) = n.child_by_field_name("declarator") else { break };
                n = d;
            }
            "qualified_identifier" | "template_function" => {
                let Some(d) = n.child_by_field_name("name") else { break };
                n = d;
            }
            // Wrappers without a `declarator` field; parentheses and attributes do not
            // change what the name is, a reference does.
            "parenthesized_declarator" | "attributed_declarator" | "reference_declarator" | "variadic_declarator" => {
                if n.kind() == "reference_declarator" {
                    is_fn = false;
                }
                let Some(d) = named_children(n).find(|c| {
                    let k = c.kind();
                    k.ends_with("declarator") || is_ident_kind(k) || k == "qualified_identifier" || k == "template_function"
                }) else {
                    break;
                };
                n = d;
            }
            // Destructors and operators: the class name or no name at all.
            _ => break,
        }
    }
    Vec::new()
}

/// The qualified name a declarator declares (`A::f` in `int A::f(int)`), if any.
fn declarator_qualifier(mut n: Node) -> Option<Node> {
    for _ in 0..64 {
        match n.kind() {
            "qualified_identifier" => return Some(n),
            "function_declarator" | "pointer_declarator" | "array_declarator" | "init_declarator" | "pointer_type_declarator" => {
                n = n.child_by_field_name("declarator")?
            }
            "parenthesized_declarator" | "attributed_declarator" | "reference_declarator" => {
                n = named_children(n).find(|c| c.kind().ends_with("declarator") || c.kind() == "qualified_identifier")?
            }
            _ => return None,
        }
    }
    None
}

/// A Java name path `a.b.C` (identifiers, field accesses of names, scoped identifiers and
/// types) as its segments; `None` when a part is a call, `this`, a literal…
fn java_path(n: Node, depth: usize) -> Option<Vec<Node>> {
    if depth > 64 {
        return None;
    }
    match n.kind() {
        "identifier" | "type_identifier" => Some(vec![n]),
        "field_access" => {
            let mut v = java_path(n.child_by_field_name("object")?, depth + 1)?;
            let f = n.child_by_field_name("field")?;
            (f.kind() == "identifier").then_some(())?;
            v.push(f);
            Some(v)
        }
        "scoped_identifier" => {
            let mut v = java_path(n.child_by_field_name("scope")?, depth + 1)?;
            v.push(n.child_by_field_name("name")?);
            Some(v)
        }
        "scoped_type_identifier" => {
            let parts: Vec<Node> = named_children(n).filter(|c| !c.kind().ends_with("annotation")).collect();
            let (last, init) = parts.split_last()?;
            (init.len() == 1 && last.kind() == "type_identifier").then_some(())?;
            let mut v = java_path(init[0], depth + 1)?;
            v.push(*last);
            Some(v)
        }
        // `Outer<T>.Inner`: the path continues through the generic type's name.
        "generic_type" => java_path(n.named_child(0)?, depth + 1),
        _ => None,
    }
}

/// A C++ qualified name `a::b::c` as its name segments; template arguments are not segments.
fn cpp_path(n: Node) -> Option<Vec<Node>> {
    let mut segs = Vec::new();
    let mut cur = n;
    for _ in 0..64 {
        match cur.kind() {
            "qualified_identifier" => {
                let scope = cur.child_by_field_name("scope")?;
                segs.push(match scope.kind() {
                    "namespace_identifier" => scope,
                    "template_type" => scope.child_by_field_name("name")?,
                    _ => return None,
                });
                cur = cur.child_by_field_name("name")?;
            }
            k if is_ident_kind(k) => {
                segs.push(cur);
                return Some(segs);
            }
            "template_function" | "template_type" | "template_method" => {
                segs.push(cur.child_by_field_name("name")?);
                return Some(segs);
            }
            "destructor_name" => {
                segs.push(cur.named_child(0)?);
                return Some(segs);
            }
            // operator names: the scope segments still form a path
            _ => return Some(segs),
        }
    }
    None
}
