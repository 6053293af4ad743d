//! What a candidate visibly does — loops, recursion, operator families, floating point —
//! read from C/C++ syntax, x86 assembly or WebAssembly text, and the few of those facts a
//! natural-language query asks for. Their agreement is the structure term of the `beryl`
//! CLARC method; for assembly and Wasm the same facts also become a short English
//! description the text encoder can read (their identifiers are gone).

use beryl::features::{count_tree, Family, OpCounts};
use tree_sitter::Parser;

/// The kind of code a candidate holds, told from its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodeKind {
    Source,
    Asm,
    Wasm,
}

pub fn code_kind(code: &str) -> CodeKind {
    let head: Vec<&str> = code.lines().map(str::trim).filter(|l| !l.is_empty()).take(6).collect();
    if head.iter().any(|l| l.starts_with("(func") || l.starts_with("(module") || l.starts_with("local.get") || l.starts_with("global.get")) {
        return CodeKind::Wasm;
    }
    let asm_like = |l: &&str| {
        let m = l.split_whitespace().next().unwrap_or("");
        m == "endbr64" || (l.contains('%') && m.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()) && !l.contains(';'))
    };
    if !head.is_empty() && head.iter().filter(|l| asm_like(l)).count() * 2 >= head.len() {
        return CodeKind::Asm;
    }
    CodeKind::Source
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profile {
    pub loops: u32,
    pub branches: u32,
    pub calls: u32,
    pub recursion: bool,
    pub float: bool,
    pub ops: OpCounts,
    /// Notable constants, in order of first use (assembly and Wasm only).
    pub constants: Vec<i64>,
}

/// Facts a query can ask for. Add/sub and comparisons are left out: nearly every
/// function has them, so they cannot tell candidates apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cue {
    Loop,
    Recursion,
    MulDiv,
    Modulo,
    Bit,
    Index,
    Float,
}

/// Query words that ask for each fact (whole lowercase words).
const LEXICON: &[(Cue, &[&str])] = &[
    (Cue::Loop, &["loop", "loops", "iterate", "iterates", "iterating", "iteration", "iteratively", "repeatedly", "traverse", "traverses", "traversing", "until"]),
    (Cue::Recursion, &["recursive", "recursively", "recursion", "recurses"]),
    (Cue::MulDiv, &["multiply", "multiplies", "multiplied", "multiplying", "multiplication", "product", "divide", "divides", "divided", "dividing", "division", "average", "ratio", "scaled", "scales", "scaling", "percentage"]),
    (Cue::Modulo, &["modulo", "modulus", "remainder", "divisible", "mod"]),
    (Cue::Bit, &["bit", "bits", "bitwise", "shift", "shifts", "shifted", "shifting", "mask", "masks", "masked", "xor"]),
    (Cue::Index, &["array", "arrays", "element", "elements", "index", "indices", "matrix", "buffer"]),
    (Cue::Float, &["float", "floating", "double", "decimal", "fraction", "fractional"]),
];

/// The facts `query` asks for, each once.
pub fn query_cues(query: &str) -> Vec<Cue> {
    let words: Vec<String> = query.split(|c: char| !c.is_alphanumeric()).map(str::to_lowercase).collect();
    LEXICON
        .iter()
        .filter(|(_, ws)| words.iter().any(|w| ws.contains(&w.as_str())))
        .map(|(c, _)| *c)
        .collect()
}

impl Profile {
    pub fn has(&self, cue: Cue) -> bool {
        match cue {
            Cue::Loop => self.loops > 0,
            Cue::Recursion => self.recursion,
            Cue::MulDiv => self.ops.get(Family::MulDiv) > 0,
            Cue::Modulo => self.ops.get(Family::Modulo) > 0,
            Cue::Bit => self.ops.get(Family::Bit) > 0,
            Cue::Index => self.ops.get(Family::Index) > 0,
            Cue::Float => self.float,
        }
    }

    /// Mean over the query's cues of +1 (the candidate has it) or −1; 0 without cues.
    pub fn agreement(&self, cues: &[Cue]) -> f32 {
        if cues.is_empty() {
            return 0.0;
        }
        cues.iter().map(|&c| if self.has(c) { 1.0 } else { -1.0 }).sum::<f32>() / cues.len() as f32
    }

    /// An English line of the facts, for the text encoder (low-level code has no names).
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if self.loops > 0 {
            parts.push("loop iterating".into());
        }
        if self.branches > 0 {
            parts.push("compares and branches".into());
        }
        if self.recursion {
            parts.push("recursive call".into());
        } else if self.calls > 0 {
            parts.push("calls a helper function".into());
        }
        let fam = [
            (Family::AddSub, "adds and subtracts"),
            (Family::MulDiv, "multiplies or divides"),
            (Family::Modulo, "remainder modulo"),
            (Family::Bit, "bitwise shift and mask"),
            (Family::Index, "indexes an array"),
        ];
        for (f, words) in fam {
            if self.ops.get(f) > 0 {
                parts.push(words.into());
            }
        }
        if self.float {
            parts.push("floating point".into());
        }
        if !self.constants.is_empty() {
            let cs: Vec<String> = self.constants.iter().map(|&c| constant_words(c)).collect();
            parts.push(format!("constants {}", cs.join(" ")));
        }
        if parts.is_empty() {
            return "function".into();
        }
        format!("function that {}", parts.join(", "))
    }
}

/// A constant as a number, and as the character it encodes when it is a printable letter,
/// digit or sign (`65 'A'`): comparisons with 'a'..'z' are common and telling.
fn constant_words(c: i64) -> String {
    match u8::try_from(c) {
        Ok(b) if b.is_ascii_graphic() && b != b'\'' => format!("{c} '{}'", b as char),
        _ => c.to_string(),
    }
}

/// The profile of C or C++ source: loops and branches from the syntax tree, operator
/// families as the math features count them, recursion when a function calls its own name.
pub fn from_source(code: &str) -> Profile {
    let mut p = Profile::default();
    let mut parser = Parser::new();
    if parser.set_language(&tree_sitter_cpp::LANGUAGE.into()).is_err() {
        return p;
    }
    let Some(tree) = parser.parse(code, None) else { return p };
    let root = tree.root_node();
    count_tree(root, &mut p.ops);
    let src = code.as_bytes();
    let mut names: Vec<&str> = Vec::new();
    let mut called: Vec<&str> = Vec::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "for_statement" | "for_range_loop" | "while_statement" | "do_statement" => p.loops += 1,
            "if_statement" | "switch_statement" | "conditional_expression" => p.branches += 1,
            "call_expression" => {
                p.calls += 1;
                if let Some(f) = n.child_by_field_name("function") {
                    called.push(last_name(f.utf8_text(src).unwrap_or("")));
                }
            }
            "function_declarator" => {
                if let Some(d) = n.child_by_field_name("declarator") {
                    names.push(last_name(d.utf8_text(src).unwrap_or("")));
                }
            }
            "primitive_type" => {
                let t = n.utf8_text(src).unwrap_or("");
                p.float |= t == "float" || t == "double";
            }
            "number_literal" => {
                let t = n.utf8_text(src).unwrap_or("");
                p.float |= !t.starts_with("0x") && !t.starts_with("0X") && (t.contains('.') || t.contains(['e', 'E']));
            }
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    p.recursion = called.iter().any(|c| !c.is_empty() && names.contains(c));
    p
}

/// `ns::Cls::f` or `obj.f` → `f`.
fn last_name(s: &str) -> &str {
    s.rsplit(|c: char| !(c.is_alphanumeric() || c == '_')).find(|p| !p.is_empty()).unwrap_or("")
}

/// Keeps up to this many distinct notable constants.
const MAX_CONSTANTS: usize = 12;

fn note_constant(p: &mut Profile, v: i64) {
    // 0 and 1 are everywhere; large values are addresses and frame offsets.
    if (2..65536).contains(&v.abs()) && !p.constants.contains(&v) && p.constants.len() < MAX_CONSTANTS {
        p.constants.push(v);
    }
}

fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim();
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let v = match s.strip_prefix("0x") {
        Some(h) => i64::from_str_radix(h, 16).ok()?,
        None => s.parse().ok()?,
    };
    Some(if neg { -v } else { v })
}

/// The profile of g++ x86-64 assembly as objdump prints it (AT&T syntax, symbols stripped).
/// Function boundaries (`endbr64`) restart addresses; a jump whose target lies before the
/// jump's estimated address closes a loop. Addresses are only known at rip-relative
/// operands (`# 0x4d` is the next instruction's), so positions in between are estimated
/// at 4 bytes per instruction from the last known one.
pub fn from_asm(code: &str) -> Profile {
    let mut p = Profile::default();
    let lines: Vec<&str> = code.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let (mut anchor_addr, mut anchor_line) = (0i64, 0usize);
    for (i, line) in lines.iter().enumerate() {
        let (body, comment) = match line.split_once('#') {
            Some((b, c)) => (b.trim(), Some(c.trim())),
            None => (*line, None),
        };
        let mut it = body.splitn(2, char::is_whitespace);
        let m = it.next().unwrap_or("");
        let ops = it.next().unwrap_or("").trim();
        if m == "endbr64" {
            (anchor_addr, anchor_line) = (4, i + 1);
            continue;
        }
        let here = anchor_addr + 4 * (i - anchor_line) as i64;
        if let Some(next) = comment.and_then(parse_int) {
            (anchor_addr, anchor_line) = (next, i + 1);
        }
        let stack_op = ops.ends_with("%rsp") || ops.ends_with("%rbp");
        let base = asm_base(m);
        if m.starts_with('j') {
            if m != "jmp" {
                p.branches += 1;
            }
            if let Some(t) = parse_int(ops.split_whitespace().next().unwrap_or("")) {
                if t < here - 4 {
                    p.loops += 1;
                }
            }
        } else if m == "call" {
            p.calls += 1;
        } else if ["add", "sub", "inc", "dec", "neg", "adc", "sbb", "addss", "addsd", "subss", "subsd"].contains(&base) {
            if !stack_op {
                p.ops.add(Family::AddSub);
            }
        } else if ["imul", "mul", "mulss", "mulsd", "divss", "divsd"].contains(&base) {
            p.ops.add(Family::MulDiv);
        } else if ["idiv", "div"].contains(&base) {
            // The quotient lands in %eax, the remainder in %edx: what is read next tells.
            let rem = lines[i + 1..].iter().take(2).any(|l| l.contains("%edx,") || l.contains("%rdx,"));
            p.ops.add(if rem { Family::Modulo } else { Family::MulDiv });
        } else if ["shl", "shr", "sar", "sal", "rol", "ror", "not", "bt", "bts", "btr", "tzcnt", "lzcnt", "popcnt", "bsf", "bsr"].contains(&base)
            || (["and", "or", "xor"].contains(&base) && !stack_op && !same_operands(ops))
        {
            p.ops.add(Family::Bit);
        }
        if ["cmp", "test", "ucomiss", "ucomisd", "comiss", "comisd"].contains(&base) {
            p.ops.add(Family::Relational);
        }
        if ops.contains("%xmm") {
            p.float = true;
        }
        if ops.contains('(') && [",1)", ",2)", ",4)", ",8)"].iter().any(|s| ops.contains(s)) {
            p.ops.add(Family::Index);
        }
        if let Some(imm) = ops.strip_prefix('$') {
            if !stack_op {
                if let Some(v) = parse_int(imm.split(',').next().unwrap_or("")) {
                    note_constant(&mut p, v);
                }
            }
        }
    }
    p
}

/// Mnemonics this reader knows, without AT&T size suffixes.
const ASM_KNOWN: &[&str] = &[
    "add", "sub", "inc", "dec", "neg", "adc", "sbb", "imul", "mul", "idiv", "div", "shl", "shr", "sar", "sal", "rol",
    "ror", "not", "bt", "bts", "btr", "tzcnt", "lzcnt", "popcnt", "bsf", "bsr", "and", "or", "xor", "cmp", "test",
];

/// `addl` → `add`: drops one size suffix (b, w, l, q) when that leaves a known mnemonic.
fn asm_base(m: &str) -> &str {
    if ASM_KNOWN.contains(&m) {
        return m;
    }
    match m.strip_suffix(['b', 'w', 'l', 'q']) {
        Some(b) if ASM_KNOWN.contains(&b) => b,
        _ => m,
    }
}

/// `xor %eax,%eax`: the zeroing idiom, not a bit operation.
fn same_operands(ops: &str) -> bool {
    let mut it = ops.split(',').map(str::trim);
    matches!((it.next(), it.next()), (Some(a), Some(b)) if a == b)
}

/// The profile of WebAssembly text (`wasm2wat` of Emscripten -O0 output). Constants are
/// tracked through locals, because -O0 code stores every operand in one, to tell
/// compiler idioms from the source's operators; the stack-frame size after
/// `global.get 0` is not a constant of the algorithm.
pub fn from_wasm(code: &str) -> Profile {
    let mut p = Profile::default();
    let mut own: Option<&str> = None;
    let mut local_const: std::collections::HashMap<&str, i64> = Default::default();
    let mut pushed: Vec<Option<i64>> = Vec::new(); // constness of recent pushes
    let mut since_frame = usize::MAX;
    for line in code.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("(func (;") {
            own = rest.split(';').next();
            continue;
        }
        let mut it = line.split_whitespace();
        let ins = it.next().unwrap_or("");
        let arg = it.next().unwrap_or("");
        since_frame = since_frame.saturating_add(1);
        let (_, op) = ins.split_once('.').unwrap_or(("", ins));
        let mut push: Option<Option<i64>> = Some(None);
        match ins {
            "loop" => p.loops += 1,
            "br_if" | "if" | "br_table" | "select" => p.branches += 1,
            "call" => {
                p.calls += 1;
                p.recursion |= own == Some(arg);
            }
            "global.get" if arg == "0" => since_frame = 0,
            "local.get" => push = Some(local_const.get(arg).copied()),
            "local.set" | "local.tee" => {
                match pushed.last().copied().flatten() {
                    Some(v) => local_const.insert(arg, v),
                    None => local_const.remove(arg),
                };
                push = None;
            }
            _ if ins.ends_with(".const") => {
                let v = parse_int(arg);
                if let Some(v) = v {
                    if since_frame > 3 {
                        note_constant(&mut p, v);
                    }
                }
                push = Some(v);
            }
            _ => {}
        }
        if ins.starts_with("f32.") || ins.starts_with("f64.") {
            p.float = true;
        }
        match op {
            "add" | "sub" => p.ops.add(Family::AddSub),
            "mul" | "div" | "div_s" | "div_u" => p.ops.add(Family::MulDiv),
            "rem_s" | "rem_u" => p.ops.add(Family::Modulo),
            "rotl" | "rotr" | "or" | "popcnt" | "ctz" | "clz" => p.ops.add(Family::Bit),
            // Compiler idioms, not operators of the source: masks that narrow booleans,
            // chars and shorts; shift pairs that sign-extend them; `xor -1` for `!`;
            // shifts by 2 or 3 that scale an array index.
            "and" if !last_operand(&pushed, &[1, 255, 65535]) => p.ops.add(Family::Bit),
            "xor" if !last_operand(&pushed, &[-1]) => p.ops.add(Family::Bit),
            "shl" | "shr_s" | "shr_u" => {
                if op == "shl" && last_operand(&pushed, &[2, 3]) {
                    p.ops.add(Family::Index);
                } else if !last_operand(&pushed, &[16, 24, 48, 56]) {
                    p.ops.add(Family::Bit);
                }
            }
            "eq" | "ne" | "lt_s" | "lt_u" | "gt_s" | "gt_u" | "le_s" | "le_u" | "ge_s" | "ge_u" | "lt" | "gt" | "le" | "ge" => {
                p.ops.add(Family::Relational)
            }
            _ => {}
        }
        if let Some(c) = push {
            pushed.push(c);
            if pushed.len() > 8 {
                pushed.remove(0);
            }
        }
    }
    p
}

/// Whether one of the two operands on top of the stack is one of these constants.
fn last_operand(pushed: &[Option<i64>], values: &[i64]) -> bool {
    pushed[pushed.len().saturating_sub(2)..].iter().any(|c| c.is_some_and(|v| values.contains(&v)))
}

/// The profile of any candidate, by its kind.
pub fn profile(code: &str) -> Profile {
    match code_kind(code) {
        CodeKind::Source => from_source(code),
        CodeKind::Asm => from_asm(code),
        CodeKind::Wasm => from_wasm(code),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(code_kind("int f(int x) { return x; }"), CodeKind::Source);
        assert_eq!(code_kind("endbr64 \npush   %rbp\nmov    %rsp,%rbp\n"), CodeKind::Asm);
        assert_eq!(code_kind("(func (;1;) (type 0) (result i32)\nlocal.get 0\n"), CodeKind::Wasm);
    }

    #[test]
    fn source_profile() {
        let p = from_source("long fact(int n) { if (n < 2) return 1; return n * fact(n - 1); }");
        assert!(p.recursion && p.loops == 0 && p.has(Cue::MulDiv) && !p.has(Cue::Modulo));
        let p = from_source("double avg(const double *a, int n) { double s = 0; for (int i = 0; i < n; i++) s += a[i]; return s / n; }");
        assert!(!p.recursion && p.loops == 1 && p.float && p.has(Cue::Index) && p.has(Cue::MulDiv));
        let p = from_source("unsigned f(unsigned x) { return (x >> 3) & 7; }");
        assert!(p.has(Cue::Bit) && !p.float);
    }

    #[test]
    fn asm_profile() {
        // A -O0 loop: jmp forward to the test, then a backward jl to the body.
        let asm = "endbr64\npush %rbp\nmov %rsp,%rbp\nmovl $0x0,-0x4(%rbp)\njmp 0x20\naddl $0x1,-0x4(%rbp)\n\
                   cmpl $0x41,-0x4(%rbp)\njle 0x14\nmov -0x4(%rbp),%eax\ncltd\nidivl -0x8(%rbp)\nmov %edx,%eax\npop %rbp\nret\n";
        let p = from_asm(asm);
        assert_eq!(p.loops, 1, "{p:?}");
        assert!(p.has(Cue::Modulo) && !p.has(Cue::MulDiv) && !p.has(Cue::Bit));
        assert_eq!(p.constants, vec![0x41]);
        assert!(p.describe().contains("65 'A'"), "{}", p.describe());
    }

    #[test]
    fn wasm_profile() {
        let wat = "(func (;3;) (type 0) (param i32) (result i32)\n(local i32 i32)\nglobal.get 0\nlocal.set 1\ni32.const 16\n\
                   local.set 2\nloop  ;; label = @1\ni32.const 1\nlocal.set 3\nlocal.get 0\nlocal.get 3\ni32.and\n\
                   local.get 0\ni32.const 10\ni32.rem_s\ncall 3\nbr_if 0 (;@1;)\nend\n";
        let p = from_wasm(wat);
        assert!(p.loops == 1 && p.recursion && p.has(Cue::Modulo) && !p.has(Cue::Bit), "{p:?}");
        assert_eq!(p.constants, vec![10]);
    }

    #[test]
    fn cues_and_agreement() {
        let cues = query_cues("Recursively computes the remainder of each element of the array.");
        assert_eq!(cues, vec![Cue::Recursion, Cue::Modulo, Cue::Index]);
        let p = from_source("int f(int *a, int n) { return n ? a[n] % 7 + f(a, n - 1) : 0; }");
        assert_eq!(p.agreement(&cues), 1.0);
        assert_eq!(Profile::default().agreement(&cues), -1.0);
        assert_eq!(p.agreement(&[]), 0.0);
    }
}
