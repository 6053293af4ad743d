//! What a statement computes, written with no names: its tokens with every variable
//! replaced by the order of its first appearance (alpha-renaming), array and field names
//! dropped (`dist[v]` and CLRS's `v.d` both read `[ a ]`), declared types, `Math.` and
//! `std::` left out, compound assignments spelled out (`x += y` is `x = x + y`), and
//! p-code's `←`, `≤`, `mod`, `and` read as C's `=`, `<=`, `%`, `&&`. So `t = b; b = a % b`
//! in C, Java and p-code read alike, under any names.
//!
//! A statement's sketch is a 128-bit Bloom set of its canonical token bigrams and
//! trigrams (one bit each) plus the whole canonical statement; two sketches compare by the
//! Jaccard index of their bits.

/// Calls whose meaning is the same in every corpus and in pseudocode; any other call is `F`.
const KNOWN_CALLS: [(&str, &str); 22] = [
    ("min", "min"),
    ("fmin", "min"),
    ("fminf", "min"),
    ("MIN", "min"),
    ("max", "max"),
    ("fmax", "max"),
    ("fmaxf", "max"),
    ("MAX", "max"),
    ("abs", "abs"),
    ("fabs", "abs"),
    ("labs", "abs"),
    ("sqrt", "sqrt"),
    ("floor", "floor"),
    ("ceil", "ceil"),
    ("swap", "swap"),
    ("exchange", "swap"),
    ("exp", "exp"),
    ("log", "log"),
    ("pow", "pow"),
    ("sin", "sin"),
    ("cos", "cos"),
    ("length", "length"),
];

/// Words that stand for "infinity" or an extreme bound.
const INFINITE: [&str; 11] = ["INF", "INFINITY", "HUGE_VAL", "DBL_MAX", "FLT_MAX", "INT_MAX", "LONG_MAX", "MAX_VALUE", "POSITIVE_INFINITY", "inf", "infinity"];

/// A bound written as one of [`INFINITE`], or as a library's own upper-case constant for
/// infinity (`LIB_INFINITY`): libraries prefix the name with theirs.
fn is_infinite(w: &str) -> bool {
    INFINITE.contains(&w) || (w.ends_with("_INFINITY") && w.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'))
}

/// Type words of C, C++ and Java that a declaration puts before a name.
const TYPE_WORDS: [&str; 22] = [
    "int", "long", "short", "char", "float", "double", "unsigned", "signed", "bool", "boolean", "void", "size_t", "const",
    "static", "final", "auto", "register", "var", "byte", "volatile", "struct", "ssize_t",
];

/// Keywords that may lead a condition's or statement's text and say nothing of what it computes.
const CONTROL_WORDS: [&str; 16] =
    ["if", "while", "until", "then", "do", "else", "elseif", "for", "to", "downto", "each", "repeat", "case", "switch", "new", "sizeof"];

#[derive(Clone, Debug, PartialEq, Eq)]
enum Raw {
    Name(String),
    Num(String),
    Str,
    Op(&'static str),
}

const OPS: [&str; 38] = [
    ">>>=", "<<=", ">>=", ">>>", "<=", ">=", "==", "!=", "&&", "||", "<<", ">>", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "++",
    "--", "->", "::", ":=", "<-", "<>", "+", "-", "*", "/", "%", "<", ">", "=", "!", "&", "|",
];

fn lex(text: &str) -> Vec<Raw> {
    let cs: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        // Comments: `//` and `▷` to the end, `/* … */`.
        if c == '▷' || (c == '/' && cs.get(i + 1) == Some(&'/')) {
            while i < cs.len() && cs[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && cs.get(i + 1) == Some(&'*') {
            i += 2;
            while i + 1 < cs.len() && !(cs[i] == '*' && cs[i + 1] == '/') {
                i += 1;
            }
            i += 2;
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let s = i;
            while i < cs.len() && (cs[i].is_alphanumeric() || cs[i] == '_' || (cs[i] == '\'' && i > s)) {
                i += 1;
            }
            out.push(Raw::Name(cs[s..i].iter().collect()));
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && cs.get(i + 1).is_some_and(|d| d.is_ascii_digit())) {
            let s = i;
            while i < cs.len() && (cs[i].is_ascii_alphanumeric() || cs[i] == '.') {
                i += 1;
            }
            let run: String = cs[s..i].iter().collect();
            // p-code's `2i` multiplies; `2u`, `1L`, `0x1F`, `1e-5` are C literals.
            let digits = run.chars().take_while(|d| d.is_ascii_digit()).count();
            let rest = &run[digits..];
            let literal = rest.is_empty()
                || rest.starts_with(['.', 'e', 'E', 'x', 'X', 'b', 'B'])
                || rest.chars().all(|d| "uUlLfFdD".contains(d));
            if literal {
                out.push(Raw::Num(run));
            } else {
                out.push(Raw::Num(run[..digits].to_string()));
                out.push(Raw::Op("*"));
                out.push(Raw::Name(rest.to_string()));
            }
            continue;
        }
        if c == '"' || c == '\'' {
            i += 1;
            while i < cs.len() && cs[i] != c {
                i += if cs[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(Raw::Str);
            continue;
        }
        if c == '∞' {
            out.push(Raw::Name("INF".into()));
            i += 1;
            continue;
        }
        let rest: String = cs[i..cs.len().min(i + 4)].iter().collect();
        if let Some(op) = OPS.iter().find(|op| rest.starts_with(**op)) {
            out.push(Raw::Op(op));
            i += op.chars().count();
            continue;
        }
        // One-character symbols, p-code's Unicode operators read as C's.
        let single = match c {
            '←' => "=",
            '≤' => "<=",
            '≥' => ">=",
            '≠' => "!=",
            '−' => "-",
            '·' | '×' | '∗' | '⋅' => "*",
            '÷' => "/",
            '∧' => "&&",
            '∨' => "||",
            '¬' => "!",
            '⊕' | '^' => "^",
            '(' => "(",
            ')' => ")",
            '[' => "[",
            ']' => "]",
            ',' => ",",
            '?' => "?",
            ':' => ":",
            '.' => ".",
            '~' => "~",
            _ => "",
        };
        if !single.is_empty() {
            out.push(Raw::Op(single));
        }
        // Whitespace, `$`, `@`, `;`, braces, floor and ceiling brackets: nothing.
        i += 1;
    }
    out
}

/// Canonical tokens of one statement. `test`: the text is a condition, where p-code's `=`
/// compares.
pub fn canon(text: &str, test: bool) -> Vec<String> {
    rename(spell_out(refs(&words(text, test))))
}

/// The statement's tokens with names still in (`$name`), before arrays and fields lose
/// theirs: types, qualifiers and keywords gone, calls as `F` or their known name.
fn words(text: &str, test: bool) -> Vec<String> {
    let raw = lex(text);
    // Words first: p-code operators, types, qualifiers, calls, bounds.
    let mut toks: Vec<String> = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let next = raw.get(i + 1);
        match &raw[i] {
            Raw::Name(w) => {
                let w = w.as_str();
                let word_op = match w {
                    "mod" => Some("%"),
                    "and" => Some("&&"),
                    "or" => Some("||"),
                    "not" => Some("!"),
                    "div" => Some("/"),
                    "xor" => Some("^"),
                    _ => None,
                };
                if let Some(op) = word_op {
                    toks.push(op.into());
                } else if matches!(w, "Math" | "std" | "this" | "StrictMath" | "FastMath") && matches!(next, Some(Raw::Op(".")) | Some(Raw::Op("::"))) {
                    i += 1;
                } else if TYPE_WORDS.contains(&w) || CONTROL_WORDS.contains(&w) {
                } else if matches!(w, "true" | "false" | "TRUE" | "FALSE" | "NIL" | "nil" | "NULL" | "null" | "nullptr") {
                    toks.push("K".into());
                } else if is_infinite(w) {
                    // `Integer.MAX_VALUE`, `Double.POSITIVE_INFINITY`: the class goes too.
                    if toks.last().is_some_and(|t| t == ".") && toks.len() >= 2 && toks[toks.len() - 2].starts_with('$') {
                        toks.truncate(toks.len() - 2);
                    }
                    toks.push("INF".into());
                } else if w == "return" {
                    toks.push("return".into());
                } else if next == Some(&Raw::Op("(")) {
                    toks.push(KNOWN_CALLS.iter().find(|(k, _)| *k == w).map_or("F", |(_, v)| v).into());
                } else {
                    toks.push(format!("${w}"));
                }
            }
            Raw::Num(n) => toks.push(match n.trim_end_matches(['L', 'l', 'u', 'U', 'f', 'F']) {
                "0" | "0.0" => "0".into(),
                "1" | "1.0" => "1".into(),
                "2" | "2.0" => "2".into(),
                _ => "N".into(),
            }),
            Raw::Str => toks.push("S".into()),
            Raw::Op(o) => toks.push(
                match *o {
                    "=" if test => "==",
                    ":=" | "<-" => "=",
                    "<>" => "!=",
                    // Order tests in any direction read as one: code and pseudocode often
                    // test the same bound from the other side.
                    ">" | ">=" | "<=" => "<",
                    "::" => ".",
                    "->" => ".",
                    o => o,
                }
                .into(),
            ),
        }
        i += 1;
    }
    // A declaration's leading type name (`Node *p = q`, `Edge e = ...`): a name followed
    // by another name, or by stars and a name, at the start.
    if toks.len() >= 2 && toks[0].starts_with('$') {
        let mut k = 1;
        while toks.get(k).is_some_and(|t| t == "*" || t == "&") {
            k += 1;
        }
        if toks.get(k).is_some_and(|t| t.starts_with('$')) && toks.get(k + 1).is_none_or(|t| t == "=" || t == "[" || t == ",") {
            toks.drain(..k);
        }
    }
    // A pointer declarator left by a dropped type word (`double *p = q`).
    let stars = toks.iter().take_while(|t| *t == "*" || *t == "&").count();
    if stars > 0 && toks.get(stars).is_some_and(|t| t.starts_with('$')) && toks.get(stars + 1).is_some_and(|t| t == "=") {
        toks.drain(..stars);
    }
    toks
}

/// What a node reads and writes, for the def-use edges of [`super::Shape`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// An assignment, a declaration, a call, a return.
    Statement,
    /// A condition: reads only.
    Test,
    /// A loop head: p-code's `i = 1 to n` and a for-each's `v in A` write their variable.
    LoopHead,
}

/// The variable a node writes (an array's or record's own name for `a[i] = x`, `v.d = x`)
/// and the variables it reads, fields left out.
pub fn def_use(text: &str, access: Access) -> (Option<String>, Vec<String>) {
    let names = |toks: &[String]| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (i, t) in toks.iter().enumerate() {
            let field = i > 0 && toks[i - 1] == ".";
            if let Some(n) = t.strip_prefix('$').filter(|_| !field) {
                if !out.iter().any(|o| o == n) {
                    out.push(n.to_string());
                }
            }
        }
        out
    };
    match access {
        Access::Test => (None, names(&words(text, true))),
        Access::LoopHead => {
            for kw in [" to ", " downto "] {
                if let Some(k) = text.find(kw) {
                    let var = names(&words(text[..k].split(['=', '←']).next().unwrap_or(""), false)).into_iter().next();
                    let mut uses = names(&words(&text[k + kw.len()..], true));
                    uses.extend(names(&words(text[..k].split_once(['=', '←']).map_or("", |p| p.1), false)));
                    return (var, uses);
                }
            }
            let each = text.find(" in ").map(|k| (k, 4)).or_else(|| text.find(':').filter(|_| !text.contains('?')).map(|k| (k, 1)));
            match each {
                Some((k, w)) => (names(&words(&text[..k], false)).pop(), names(&words(&text[k + w..], true))),
                None => (None, names(&words(text, true))),
            }
        }
        Access::Statement => {
            let toks = spell_out(words(text, false));
            let mut depth = 0i32;
            let at = toks.iter().position(|t| {
                match t.as_str() {
                    "[" | "(" => depth += 1,
                    "]" | ")" => depth -= 1,
                    _ => {}
                }
                depth == 0 && t == "="
            });
            match at {
                Some(k) => {
                    let lhs = names(&toks[..k]);
                    let mut uses: Vec<String> = lhs.iter().skip(1).cloned().collect();
                    for n in names(&toks[k + 1..]) {
                        if !uses.contains(&n) {
                            uses.push(n);
                        }
                    }
                    (lhs.into_iter().next(), uses)
                }
                None => (None, names(&toks)),
            }
        }
    }
}

/// Array and field names dropped: `a[i]` → `[ i ]`, `a.b.c` → `[ a ]`, `a[i, j]` →
/// `[ i ] [ j ]`.
fn refs(toks: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(toks.len());
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if t.starts_with('$') && toks.get(i + 1).is_some_and(|n| n == "[") {
            // the array's own name goes
        } else if t.starts_with('$') && toks.get(i + 1).is_some_and(|n| n == ".") && toks.get(i + 2).is_some_and(|n| n.starts_with('$')) {
            let base = t.clone();
            i += 1;
            while toks.get(i).is_some_and(|n| n == ".") && toks.get(i + 1).is_some_and(|n| n.starts_with('$') || n == "F" || KNOWN_CALLS.iter().any(|k| k.1 == n)) {
                i += 2;
            }
            // `a.b(` is a method call on `a`: keep the call, drop `a`.
            if toks.get(i).is_some_and(|n| n == "(") {
                out.push(toks[i - 1].clone());
                continue;
            }
            out.extend(["[".into(), base, "]".into()]);
            continue;
        } else if t == "[" {
            depth += 1;
            out.push(t.clone());
        } else if t == "]" {
            depth = depth.saturating_sub(1);
            out.push(t.clone());
        } else if t == "," && depth > 0 {
            out.extend(["]".into(), "[".into()]);
        } else {
            out.push(t.clone());
        }
        i += 1;
    }
    out
}

/// `x += y` → `x = x + y`; `x++` alone → `x = x + 1`.
fn spell_out(toks: Vec<String>) -> Vec<String> {
    if toks.len() == 2 && (toks[1] == "++" || toks[1] == "--" || toks[0] == "++" || toks[0] == "--") {
        let (v, op) = if toks[1].len() == 2 && !toks[1].starts_with('$') { (&toks[0], &toks[1]) } else { (&toks[1], &toks[0]) };
        return vec![v.clone(), "=".into(), v.clone(), op[..1].into(), "1".into()];
    }
    let compound = ["+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", ">>>="];
    if let Some(k) = toks.iter().position(|t| compound.contains(&t.as_str())) {
        if k > 0 {
            let op = toks[k].trim_end_matches('=').to_string();
            let mut out: Vec<String> = toks[..k].to_vec();
            out.push("=".into());
            out.extend_from_slice(&toks[..k]);
            out.push(op);
            out.extend_from_slice(&toks[k + 1..]);
            return out;
        }
    }
    toks
}

/// Variables by order of first appearance: `a`, `b`, ... (the sixth and later share `f`).
fn rename(toks: Vec<String>) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    toks.into_iter()
        .map(|t| {
            if let Some(name) = t.strip_prefix('$') {
                let k = seen.iter().position(|s| s == name).unwrap_or_else(|| {
                    seen.push(name.to_string());
                    seen.len() - 1
                });
                ["a", "b", "c", "d", "e", "f"][k.min(5)].to_string()
            } else {
                t
            }
        })
        .collect()
}

fn hash(parts: &[&str]) -> u64 {
    // FNV-1a: stable across builds and platforms, as sketches are stored in indexes.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0x1f)) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// A loop head as a test: p-code's `i = 1 to n` is `i <= n`, `i = n downto 1` is
/// `i >= 1` (C's head is its condition already); a loop over the items of a collection
/// (`v in G.Adj[u]`, Java's `Edge e : edges`) has none.
pub fn loop_test(text: &str) -> Option<String> {
    for (kw, op) in [(" to ", "<="), (" downto ", ">=")] {
        if let Some(k) = text.find(kw) {
            let var = text[..k].split('=').next().unwrap_or("").trim();
            return Some(format!("{var} {op} {}", &text[k + kw.len()..]));
        }
    }
    if text.contains(" in ") || text.contains(':') {
        return None;
    }
    Some(text.to_string())
}

/// The sketch of a statement (0 when it has fewer than two tokens).
pub fn sketch(text: &str, test: bool) -> u128 {
    let t = canon(text, test);
    if t.len() < 2 {
        return 0;
    }
    let refs: Vec<&str> = t.iter().map(String::as_str).collect();
    let mut s = 0u128;
    let mut set = |h: u64| s |= 1u128 << (h % 128);
    for w in refs.windows(2) {
        set(hash(w));
    }
    for w in refs.windows(3) {
        set(hash(w));
    }
    set(hash(&refs) ^ 0x5bd1_e995);
    s
}

/// Jaccard index of two sketches' bits; 0 when either is empty.
pub fn similarity(a: u128, b: u128) -> f32 {
    if a == 0 || b == 0 {
        return 0.0;
    }
    (a & b).count_ones() as f32 / (a | b).count_ones() as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> String {
        canon(s, false).join(" ")
    }

    #[test]
    fn names_do_not_matter() {
        assert_eq!(c("t = b;"), c("tmp = y;"));
        assert_eq!(c("b = a % b;"), c("y = x % y;"));
        assert_eq!(c("$b = a mod b$"), c("y = x % y;"));
        assert_eq!(c("d[i][j] = Math.min(d[i][j], d[i][k] + d[k][j]);"), c("$D[i, j] = min(D[i, j], D[i, k] + D[k, j])$"));
        assert_eq!(c("dist[v] = dist[u] + w;"), "[ a ] = [ b ] + c");
        assert_eq!(c("$v.d = u.d + w$"), "[ a ] = [ b ] + c");
    }

    #[test]
    fn forms_are_spelled_alike() {
        assert_eq!(c("count += x;"), c("$count ← count + x$"));
        assert_eq!(c("i++;"), c("$i = i + 1$"));
        assert_eq!(c("int key = a[j];"), c("$key = A[j]$"));
        assert_eq!(c("double *p = q;"), c("p = q;"));
        assert_eq!(canon("$i = 0$ and $A[i] > key$", true).join(" "), canon("i == 0 && a[i] > key", false).join(" "));
        assert_eq!(c("x = Integer.MAX_VALUE;"), c("$x = ∞$"));
        assert_eq!(c("$r = 2i + 1$"), c("right = 2 * i + 1;"));
        assert_eq!(c("x = 1L << 3;"), "a = 1 << N");
        assert_eq!(canon(&loop_test("i = 2 to n").unwrap(), true), canon("j < len", true));
        assert_eq!(canon(&loop_test("i = n downto 1").unwrap(), true), canon("k > 1", true));
        assert_eq!(loop_test("vertex v in G.Adj[u]"), None);
        assert_eq!(c("$key = A[i]$   // A[1 : i - 1] is sorted"), c("key = a[i]; /* next */"));
        assert_eq!(c("$return EUCLID(b, a mod b)$"), c("return gcd(y, x % y);"));
    }

    #[test]
    fn reads_and_writes() {
        let du = |t: &str, a: Access| {
            let (d, u) = def_use(t, a);
            (d.unwrap_or_default(), u.join(" "))
        };
        assert_eq!(du("$A[j + 1] = key$", Access::Statement), ("A".into(), "j key".into()));
        assert_eq!(du("a[j + 1] = a[j];", Access::Statement), ("a".into(), "j a".into()));
        assert_eq!(du("count += x;", Access::Statement), ("count".into(), "count x".into()));
        assert_eq!(du("i++;", Access::Statement), ("i".into(), "i".into()));
        assert_eq!(du("int key = a[i];", Access::Statement), ("key".into(), "a i".into()));
        assert_eq!(du("$v.d = u.d + 1$", Access::Statement), ("v".into(), "u".into()));
        assert_eq!(du("$key ← A[i]$", Access::Statement), ("key".into(), "A i".into()));
        assert_eq!(du("return gcd(y, x % y);", Access::Statement), (String::new(), "y x".into()));
        assert_eq!(du("j > 0 && a[j] > key", Access::Test), (String::new(), "j a key".into()));
        assert_eq!(du("i = 2 to n", Access::LoopHead), ("i".into(), "n".into()));
        assert_eq!(du("vertex v in G.Adj[u]", Access::LoopHead), ("v".into(), "G u".into()));
        assert_eq!(du("Edge e : edges", Access::LoopHead), ("e".into(), "edges".into()));
        assert_eq!(du("i < n", Access::LoopHead), (String::new(), "i n".into()));
    }

    #[test]
    fn odd_text_does_not_panic() {
        for t in ["", "++", "-- ++", "a.", ".b", "x[", "]]", "'", "\"abc", "/*", "1x", "2é", "∞∞", "é.ü(", "for ", " to ", "i = to", "a ? b : c", "\u{0}\u{7f}"] {
            let _ = sketch(t, false);
            let _ = sketch(t, true);
            let _ = loop_test(t).map(|l| sketch(&l, true));
            for a in [Access::Statement, Access::Test, Access::LoopHead] {
                let _ = def_use(t, a);
            }
        }
    }

    #[test]
    fn sketches_compare_statements() {
        let euclid = sketch("$b = a mod b$", false);
        assert!(similarity(euclid, sketch("v2 = v1 % v2;", false)) > 0.99);
        assert!(similarity(euclid, sketch("v3[v1] = v3[v1 + 1];", false)) < 0.3);
        let fw = sketch("$D[i][j] = min(D[i][j], D[i][k] + D[k][j])$", false);
        assert!(similarity(fw, sketch("m[a][b] = fmin(m[a][b], m[a][c] + m[c][b]);", false)) > 0.99);
        assert!(similarity(fw, sketch("c[i][j] += a[i][k] * b[k][j];", false)) < 0.5);
        assert_eq!(sketch("x", false), 0);
        assert_eq!(similarity(0, euclid), 0.0);
    }
}
