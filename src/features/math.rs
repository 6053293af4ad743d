//! Math-operator encoding (Beryllium §4.1): per node, how many operators of each of seven
//! families it contains. Complementary operators share a family (`+`/`-`, `*`/`/`,
//! `<`/`>=`, ...), so `1 + 2` and `1 - (-2)` look alike.
//!
//! Where the compound and ambiguous forms go (the same rules for source and p-code):
//!
//! | family     | C / C++ / Java                                   | p-code (besides the C forms)      |
//! |------------|--------------------------------------------------|-----------------------------------|
//! | add/sub    | binary and unary `+ -`, `+= -=`, `++ --`         | `−`, `±`, `Σ ∑` (a sum is repeated `+`) |
//! | mul/div    | binary `* /`, `*= /=`, Python `// @` and their `=` forms | `· × ÷ ∗ ⋅`, `div`, `Π ∏`   |
//! | indexing   | one per index: `a[i][j]` and Python `a[i, j]` are 2 | `A[i]`, `A[i, j]` is 2 (a comma inside an index adds one) |
//! | modulo     | `% %=`                                           | `mod`                             |
//! | bit        | `<< >> & \| ^ ~`, their `=` forms, Java `>>> >>>=`, C++ `bitand bitor xor compl *_eq`, Go `&^ &^=` and unary `^` | `xor ⊕ shl shr`, `&` |
//! | logical    | `&& \|\| !`, C++ and Python `and or not`         | `and or not ∧ ∨ ¬`                |
//! | relational | `< <= > >= == !=`, C++ `<=> not_eq`              | `≤ ≥ ≠`, `=` in a test, `<>`      |
//!
//! Not counted: unary `*` (dereference) and unary `&` (address-of), `*`/`&`/`&&` in
//! declarators (pointers, references), template brackets `<` `>`, array declarators and
//! `new T[n]`, lambda captures, `->` and `.`, plain `=`, `?:`, casts, `sizeof`, Java
//! `instanceof` and Python `in`/`is` (tests with no operator counterpart in pseudocode),
//! powers (`**`, as in p-code), Rust's and Go's unary `*` and `&`, Go's `<-`. Types are never inferred,
//! so `a + b` on strings and `cout << x` count like arithmetic and shifts.
//! In p-code, `←`, `:=` and `<-` assign; `=` assigns unless the text is a test; `^` and
//! `**` are powers, `|x|` is an absolute value or size, floors, ceilings and `∞` are not
//! operators of any family.

use crate::graph::Lang;
use std::cell::RefCell;
use std::fmt;
use tree_sitter::{Node as TsNode, Parser};

/// The seven operator families, in the order of [`OpCounts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    AddSub,
    MulDiv,
    Index,
    Modulo,
    Bit,
    Logical,
    Relational,
}

impl Family {
    pub const ALL: [Family; 7] = [
        Family::AddSub,
        Family::MulDiv,
        Family::Index,
        Family::Modulo,
        Family::Bit,
        Family::Logical,
        Family::Relational,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Family::AddSub => "add_sub",
            Family::MulDiv => "mul_div",
            Family::Index => "index",
            Family::Modulo => "modulo",
            Family::Bit => "bit",
            Family::Logical => "logical",
            Family::Relational => "relational",
        }
    }
}

/// Operator counts per family, indexed by `Family as usize`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OpCounts(pub [u32; 7]);

impl OpCounts {
    pub fn get(&self, f: Family) -> u32 {
        self.0[f as usize]
    }

    pub fn add(&mut self, f: Family) {
        self.0[f as usize] += 1;
    }

    pub fn total(&self) -> u32 {
        self.0.iter().sum()
    }

    /// `ln(1 + count)` per family: long expressions should not drown the other features.
    pub fn scaled(&self) -> [f32; 7] {
        self.0.map(|c| (c as f32).ln_1p())
    }

    /// Builds counts from `(family, count)` pairs; handy in tests and tables.
    pub fn of(pairs: &[(Family, u32)]) -> OpCounts {
        let mut c = OpCounts::default();
        for &(f, n) in pairs {
            c.0[f as usize] += n;
        }
        c
    }
}

impl fmt::Display for OpCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = Family::ALL
            .iter()
            .filter(|fam| self.get(**fam) > 0)
            .map(|fam| format!("{}={}", fam.name(), self.get(*fam)))
            .collect();
        write!(f, "{{{}}}", parts.join(" "))
    }
}

/// The family of a C, C++ or Java operator token inside an operator expression.
fn source_family(op: &str) -> Option<Family> {
    use Family::*;
    Some(match op {
        "+" | "-" | "++" | "--" | "+=" | "-=" => AddSub,
        "*" | "/" | "*=" | "/=" | "//" | "//=" | "@" | "@=" => MulDiv,
        "%" | "%=" => Modulo,
        "<<" | ">>" | ">>>" | "&" | "|" | "^" | "~" | "<<=" | ">>=" | ">>>=" | "&=" | "|=" | "^=" | "bitand"
        | "bitor" | "xor" | "compl" | "and_eq" | "or_eq" | "xor_eq" | "&^" | "&^=" => Bit,
        "&&" | "||" | "!" | "and" | "or" | "not" => Logical,
        "<" | "<=" | ">" | ">=" | "==" | "!=" | "<=>" | "not_eq" => Relational,
        _ => return None,
    })
}

/// Adds the operators of the syntax subtree `n` (of C, C++ or Java source `src`) to `acc`.
/// Only operator expressions count, so declarators, templates and dereferences never do.
pub fn count_tree(n: TsNode, acc: &mut OpCounts) {
    count_range(n, 0, usize::MAX, acc)
}

/// As [`count_tree`], for the nodes that start inside bytes `lo..hi`.
fn count_range(n: TsNode, lo: usize, hi: usize, acc: &mut OpCounts) {
    // Explicit stack: expressions nest deeper than a thread's stack allows.
    let mut stack = vec![n];
    while let Some(n) = stack.pop() {
        if n.end_byte() <= lo || n.start_byte() >= hi {
            continue;
        }
        let inside = n.start_byte() >= lo;
        match n.kind() {
            // Operator expressions of all six grammars (Python's, Rust's compound and Go's
            // increment and assignment statements included).
            "binary_expression" | "update_expression" | "assignment_expression" | "binary_operator"
            | "boolean_operator" | "not_operator" | "comparison_operator" | "augmented_assignment"
            | "compound_assignment_expr" | "inc_statement" | "dec_statement" | "assignment_statement"
                if inside =>
            {
                let mut c = n.walk();
                for ch in n.children(&mut c) {
                    if !ch.is_named() && !ch.is_missing() {
                        if let Some(f) = source_family(ch.kind()) {
                            acc.add(f);
                        }
                    }
                }
            }
            "unary_expression" | "unary_operator" if inside => {
                // Rust and Go write dereference and address-of as unary operators; C has
                // its own node for them. A unary `^` is Go's bitwise complement.
                let mut c = n.walk();
                for ch in n.children(&mut c) {
                    if !ch.is_named() && !ch.is_missing() {
                        match ch.kind() {
                            "*" | "&" | "<-" => {}
                            "^" => acc.add(Family::Bit),
                            k => {
                                if let Some(f) = source_family(k) {
                                    acc.add(f);
                                }
                            }
                        }
                    }
                }
            }
            "subscript_expression" | "array_access" | "index_expression" if inside => acc.add(Family::Index),
            // Python: `a[i, j]` indexes twice.
            "subscript" if inside => {
                let k = n.children_by_field_name("subscript", &mut n.walk()).count().max(1);
                for _ in 0..k {
                    acc.add(Family::Index);
                }
            }
            _ => {}
        }
        stack.extend(n.children(&mut n.walk()));
    }
}

/// Ways to make a CFG node's text a parsable unit (prefix, suffix). Node texts are
/// statements (`x = y;`), bare conditions (`a < b`), for-each heads (`int x : xs`) and case
/// labels, so each shape has a wrapper; the first that parses without error wins. A bare
/// condition goes inside `if (…)` before it is tried as a statement: as a C++ statement,
/// `a < b && c > d;` parses as a declaration of `d` with template type `a<b && c>`.
fn wrappers(lang: Lang) -> &'static [(&'static str, &'static str)] {
    match lang {
        Lang::Java => &[
            ("class W_ { void f_() {\n", "\n} }"),
            ("class W_ { void f_() { if (", ") ; } }"),
            ("class W_ { void f_() {\n", "\n; } }"),
            ("class W_ { void f_() { for (", ") ; } }"),
            ("class W_ { void f_() { switch (0) {\n", "\n: ; } } }"),
        ],
        Lang::Python => &[
            ("", "\n"),
            ("if ", ":\n    pass\n"),
            ("for ", ":\n    pass\n"),
            ("", ":\n    pass\n"),
            ("match x_:\n    ", ":\n        pass\n"),
            ("try:\n    pass\n", ":\n    pass\n"),
        ],
        Lang::Rust => &[
            ("fn f_() {\n", "\n}"),
            ("fn f_() { if ", " {} }"),
            ("fn f_() {\n", ";\n}"),
            ("fn f_() { for ", " {} }"),
            ("fn f_() { match 0 { ", " => {} } }"),
        ],
        Lang::Go => &[
            ("package p_\nfunc f_() {\n", "\n}"),
            ("package p_\nfunc f_() { if ", " {} }"),
            ("package p_\nfunc f_() { for ", " {} }"),
            ("package p_\nfunc f_() { switch {\n", ":\n} }"),
        ],
        _ => &[
            ("void f_(void) {\n", "\n}"),
            ("void f_(void) { if (", ") ; }"),
            ("void f_(void) {\n", "\n;}"),
            ("void f_(void) { for (", ") ; }"),
            ("void f_(void) { switch (0) {\n", "\n: ; } }"),
        ],
    }
}

thread_local! {
    // One parser per language and thread: creating one costs more than parsing a statement.
    static PARSERS: RefCell<Vec<(Lang, Parser)>> = const { RefCell::new(Vec::new()) };
}

fn with_parser<R>(lang: Lang, f: impl FnOnce(&mut Parser) -> R) -> Option<R> {
    PARSERS.with(|ps| {
        let mut ps = ps.borrow_mut();
        if !ps.iter().any(|(l, _)| *l == lang) {
            let language: tree_sitter::Language = match lang {
                Lang::C => tree_sitter_c::LANGUAGE.into(),
                Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
                Lang::Java => tree_sitter_java::LANGUAGE.into(),
                Lang::Python => tree_sitter_python::LANGUAGE.into(),
                Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
                Lang::Go => tree_sitter_go::LANGUAGE.into(),
                Lang::Pcode => return None,
            };
            let mut p = Parser::new();
            p.set_language(&language).ok()?;
            ps.push((lang, p));
        }
        let (_, p) = ps.iter_mut().find(|(l, _)| *l == lang)?;
        Some(f(p))
    })
}

/// Operator counts of a CFG node's source text (a statement, condition, loop head or case).
/// The text is parsed inside a dummy function; when no wrapper parses cleanly the one with
/// the fewest error nodes is used, so broken code still gets its recognisable operators.
/// `Lang::Pcode` text goes to [`count_pcode`] as a non-test.
pub fn count_source(lang: Lang, text: &str) -> OpCounts {
    if lang == Lang::Pcode {
        return count_pcode(text, false);
    }
    if text.trim().is_empty() {
        return OpCounts::default();
    }
    let mut best: Option<(usize, OpCounts)> = None;
    for (pre, post) in wrappers(lang) {
        let src = format!("{pre}{text}{post}");
        let got = with_parser(lang, |p| {
            let tree = p.parse(&src, None)?;
            let root = tree.root_node();
            let errors = if root.has_error() { error_nodes(root) } else { 0 };
            let mut acc = OpCounts::default();
            count_range(root, pre.len(), pre.len() + text.len(), &mut acc);
            Some((errors, acc))
        })
        .flatten();
        let Some((errors, acc)) = got else { continue };
        if errors == 0 {
            return acc;
        }
        if best.as_ref().is_none_or(|(e, _)| errors < *e) {
            best = Some((errors, acc));
        }
    }
    best.map(|(_, c)| c).unwrap_or_default()
}

fn error_nodes(n: TsNode) -> usize {
    let mut count = 0;
    let mut stack = vec![n];
    while let Some(n) = stack.pop() {
        if n.is_error() || n.is_missing() {
            count += 1;
        } else if n.has_error() {
            stack.extend(n.children(&mut n.walk()));
        }
    }
    count
}

/// A lexical token of p-code math text.
#[derive(Debug, PartialEq)]
enum Tok<'a> {
    /// An identifier, number or any other operand-like word.
    Word(&'a str),
    Sym(&'a str),
}

/// Multi-character symbols, longest first so that `<<=` is not read as `<` `<=`.
const SYMS: &[&str] = &[
    ">>>=", "<<=", ">>=", ">>>", "**", "<-", ":=", "<>", "<=", ">=", "==", "!=", "&&", "||", "++", "--", "+=", "-=",
    "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>", "..",
];

fn lex(text: &str) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    let mut i = 0;
    let b = text.as_bytes();
    while i < text.len() {
        let rest = &text[i..];
        let Some(c) = rest.chars().next() else { break };
        if c.is_whitespace() {
            i += c.len_utf8();
        } else if c == '"' || c == '\'' {
            // A string or character literal is one operand.
            let end = rest[1..].find(c).map(|e| e + 2).unwrap_or(rest.len());
            out.push(Tok::Word(&rest[..end]));
            i += end;
        } else if c.is_ascii_digit() {
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                // An exponent sign belongs to the number: `1e-5`.
                if (b[j] == b'e' || b[j] == b'E') && j + 1 < b.len() && (b[j + 1] == b'-' || b[j + 1] == b'+') {
                    j += 1;
                }
                j += 1;
                // A decimal point, but not the range `1..n`.
                if j + 1 < b.len() && b[j] == b'.' && b[j + 1].is_ascii_digit() {
                    j += 1;
                }
            }
            out.push(Tok::Word(&text[i..j]));
            i = j;
        } else if c.is_alphanumeric() || c == '_' {
            let end = rest.find(|ch: char| !(ch.is_alphanumeric() || ch == '_' || ch == '\'')).unwrap_or(rest.len());
            out.push(Tok::Word(&rest[..end]));
            i += end;
        } else if let Some(s) = SYMS.iter().find(|s| rest.starts_with(**s)) {
            out.push(Tok::Sym(s));
            i += s.len();
        } else {
            out.push(Tok::Sym(&rest[..c.len_utf8()]));
            i += c.len_utf8();
        }
    }
    out
}

/// Operator counts of p-code math text (the statement between `$`s, or a test). `is_test`
/// says the text is the test of an `if`/`while`/`until`, where `=` compares; elsewhere `=`
/// assigns. Words (`mod`, `and`, ...) are matched case-insensitively as whole words.
pub fn count_pcode(text: &str, is_test: bool) -> OpCounts {
    use Family::*;
    let toks = lex(text);
    let mut acc = OpCounts::default();
    // Open brackets: `true` for an index bracket (after an operand), `false` for a list.
    let mut brackets: Vec<bool> = Vec::new();
    let mut parens = 0usize;
    let mut paren_marks: Vec<usize> = Vec::new();
    let mut prev_operand = false;
    for t in &toks {
        let mut operand = false;
        match t {
            // Capital sigma and pi are letters, so they lex as words; lower-case σ, π are names.
            Tok::Word("Σ") => acc.add(AddSub),
            Tok::Word("Π") => acc.add(MulDiv),
            Tok::Word(w) => {
                let lw = w.to_lowercase();
                match lw.as_str() {
                    "mod" => acc.add(Modulo),
                    "div" => acc.add(MulDiv),
                    "and" | "or" | "not" => acc.add(Logical),
                    "xor" | "shl" | "shr" => acc.add(Bit),
                    _ => operand = true,
                }
            }
            Tok::Sym(s) => match *s {
                "+" | "-" | "−" | "±" | "∓" | "++" | "--" | "+=" | "-=" | "Σ" | "∑" => acc.add(AddSub),
                "*" | "/" | "·" | "×" | "÷" | "∗" | "⋅" | "*=" | "/=" | "Π" | "∏" => acc.add(MulDiv),
                "%" | "%=" => acc.add(Modulo),
                "<<" | ">>" | ">>>" | "<<=" | ">>=" | ">>>=" | "&" | "&=" | "|=" | "~" | "⊕" => acc.add(Bit),
                "&&" | "||" | "!" | "∧" | "∨" | "¬" => acc.add(Logical),
                "<" | ">" | "<=" | ">=" | "≤" | "≥" | "≠" | "!=" | "==" | "<>" | "⩽" | "⩾" => acc.add(Relational),
                "=" if is_test => acc.add(Relational),
                "[" => {
                    if prev_operand {
                        acc.add(Index);
                    }
                    brackets.push(prev_operand);
                    paren_marks.push(parens);
                }
                "]" => {
                    brackets.pop();
                    paren_marks.pop();
                    operand = true;
                }
                "(" => parens += 1,
                ")" => {
                    parens = parens.saturating_sub(1);
                    operand = true;
                }
                // `A[i, j]` indexes twice, like `a[i][j]`; commas inside a call do not count.
                "," if brackets.last() == Some(&true) && paren_marks.last() == Some(&parens) => acc.add(Index),
                "∞" | "⌋" | "⌉" | "|" => operand = true,
                _ => {}
            },
        }
        prev_operand = operand;
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexes_longest_symbols_and_numbers() {
        let t = lex("a<<=1e-5..n ≤ x");
        assert_eq!(
            t,
            vec![
                Tok::Word("a"),
                Tok::Sym("<<="),
                Tok::Word("1e-5"),
                Tok::Sym(".."),
                Tok::Word("n"),
                Tok::Sym("≤"),
                Tok::Word("x")
            ]
        );
    }

    #[test]
    fn python_rust_and_go_operators_count_in_their_families() {
        use Family::*;
        let py = count_source(Lang::Python, "m = (lo + hi) // 2 if a[i, j] % 2 == 0 and not done else x ** 2");
        assert_eq!(py, OpCounts::of(&[(AddSub, 1), (MulDiv, 1), (Index, 2), (Modulo, 1), (Relational, 1), (Logical, 2)]));
        assert_eq!(count_source(Lang::Python, "i in range(n)"), OpCounts::default());
        let rs = count_source(Lang::Rust, "sum += *a[i] * (b >> 1) & !mask");
        assert_eq!(rs, OpCounts::of(&[(AddSub, 1), (MulDiv, 1), (Index, 1), (Bit, 2), (Logical, 1)]));
        let go = count_source(Lang::Go, "x &^= ^y << 2 + *p");
        assert_eq!(go, OpCounts::of(&[(Bit, 3), (AddSub, 1)]));
        assert_eq!(count_source(Lang::Go, "i++"), OpCounts::of(&[(AddSub, 1)]));
        assert_eq!(count_source(Lang::Go, "lo < hi"), OpCounts::of(&[(Relational, 1)]));
    }

    #[test]
    fn scaled_is_log1p() {
        let s = OpCounts([0, 1, 2, 0, 0, 0, 9]).scaled();
        assert_eq!(s[0], 0.0);
        assert!((s[1] - 2f32.ln()).abs() < 1e-6);
        assert!((s[6] - 10f32.ln()).abs() < 1e-6);
    }
}
