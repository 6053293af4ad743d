//! Lines of plain pseudocode: comments, numbers and block ends stripped, continuations
//! merged, procedure names written as a textbook writes them, and each line recognized as
//! a header, a control keyword, a call or a simple instruction.
//!
//! One concern, kept whole: every rule here reads one line of pseudocode.

#[allow(unused_imports)]
use super::*;

#[derive(Clone, Debug)]
pub(super) struct Line {
    pub(super) no: u32,
    pub(super) col: u32,
    pub(super) indent: usize,
    pub(super) text: String,
    pub(super) kind: Kind,
    /// Made up from the inline statement of `if … then S` / `else S`.
    pub(super) synthetic: bool,
}

#[derive(Clone, Debug)]
pub(super) enum Kind {
    Header {
        name: String,
        params: String,
    },
    If(String),
    Elif(String),
    Else,
    While(String),
    For {
        start: String,
        dir: Option<&'static str>,
        bound: String,
    },
    Each(String),
    Repeat,
    Until(String),
    Return(Option<String>),
    Call(String),
    Plain(String),
}

/// Non-blank lines with line numbers and comments removed.
pub(super) fn prepare(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let expanded = raw.replace('\t', "    ");
        let lead = expanded.len() - expanded.trim_start().len();
        let rest = &expanded[lead..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let after_number = &rest[digits..];
        let body_start = if digits > 0
            && (after_number.is_empty() || after_number.starts_with([' ', '.', ':']))
        {
            let after = after_number.trim_start_matches(['.', ':']);
            lead + digits
                + (after_number.len() - after.len())
                + (after.len() - after.trim_start().len())
        } else {
            lead
        };
        let body = strip_comment(&expanded[body_start..]);
        let body = body.trim_end().trim_end_matches(';').trim_end();
        let body = body.strip_prefix('}').map_or(body, str::trim_start);
        if body.is_empty() || is_block_end(body) || is_specification(body) {
            continue;
        }
        let indent = expanded[..body_start].chars().count();
        out.push(Line {
            no: i as u32 + 1,
            col: indent as u32 + 1,
            indent,
            text: body.to_string(),
            kind: Kind::Plain(String::new()),
            synthetic: false,
        });
    }
    out
}

pub(super) fn strip_comment(s: &str) -> &str {
    // `#` opens a comment at the start of a line or after a space (`# …`, `x = 1  # …`).
    let hash = s
        .char_indices()
        .find(|&(i, c)| c == '#' && (i == 0 || s[..i].ends_with([' ', '\t'])))
        .map(|(i, _)| i);
    let cut = [s.find("//"), s.find('▷'), hash].into_iter().flatten().min();
    match cut {
        Some(i) => &s[..i],
        None => s,
    }
}

/// A line that only closes or opens a block: `end`, `end while`, `endif`, `fi`, `od`,
/// `done`, `begin`, `{`. Indentation already says where blocks end.
pub(super) fn is_block_end(s: &str) -> bool {
    let t = s.trim().to_lowercase();
    let words: Vec<&str> = t.split_whitespace().collect();
    match words.as_slice() {
        ["end", ..] => words.len() <= 2,
        [w] => matches!(
            *w,
            "endif"
                | "endwhile"
                | "endfor"
                | "endfunction"
                | "endprocedure"
                | "endalgorithm"
                | "fi"
                | "od"
                | "done"
                | "begin"
                | "{"
                | "}"
        ),
        _ => false,
    }
}

/// `Input: …`, `Output: …`, `Require: …`: what a procedure takes and gives, not a step.
pub(super) fn is_specification(s: &str) -> bool {
    let (w, rest) = first_word(s.trim());
    rest.starts_with(':')
        && !rest.starts_with(":=")
        && matches!(
            w.as_str(),
            "input" | "output" | "inputs" | "outputs" | "require" | "requires" | "ensure" | "ensures"
        )
}

/// Words that lead a procedure header in other styles than the textbook's.
pub(super) const HEADER_WORDS: [&str; 9] = [
    "procedure",
    "function",
    "algorithm",
    "def",
    "proc",
    "func",
    "fn",
    "subroutine",
    "method",
];

/// A header line without its style's leading word and closing words: `procedure
/// BFS(G, s) is`, `def bfs(G, s):`, `function gcd(a, b) -> int {` all give `NAME(params)`.
pub(super) fn header_core(text: &str) -> &str {
    let t = text.trim();
    let (w, rest) = first_word(t);
    let t = if HEADER_WORDS.contains(&w.as_str()) && rest.contains('(') && !rest.starts_with('(') {
        rest
    } else {
        t
    };
    let Some(end) = t.find('(').and_then(|open| closing(t, open)).map(|close| close + 1) else { return t };
    let tail = t[end..].trim();
    let style = tail.is_empty()
        || matches!(tail, ":" | "is" | "begin" | "{" | "is begin" | "=")
        || tail.starts_with("->")
        || (tail.starts_with(':') && !tail.starts_with(":="));
    if style {
        &t[..end]
    } else {
        t
    }
}

/// `floydWarshall`, `floyd_warshall`, `LCSLength` → `FLOYD-WARSHALL`, `LCS-LENGTH`.
pub(super) fn textbook_name(name: &str) -> String {
    let how = Split { sep: |c| c == '_' || c == '-', ..Split::WORDS };
    split(name, &how).iter().map(|w| w.chars().flat_map(char::to_uppercase).collect::<String>()).collect::<Vec<_>>().join("-")
}

/// `print(…)` and its kin write output, which textbooks say in words, not call.
pub(super) fn is_output(name: &str) -> bool {
    matches!(name.to_lowercase().as_str(), "print" | "println" | "printf" | "output" | "write" | "writeln" | "display")
}

/// Library prefixes of a dotted call that are not the structure operated on.
pub(super) const MODULES: [&str; 14] =
    ["math", "Math", "np", "numpy", "heapq", "sys", "random", "itertools", "collections", "std", "System", "Arrays", "Collections", "self"];

/// An operation written on its structure, `Q.enqueue(v)` or `Q.extractMin()`, as the
/// textbook writes it: `ENQUEUE(Q, v)`, `EXTRACT-MIN(Q)`.
pub(super) fn structure_calls(text: &str) -> String {
    structure_calls_in(text, 0)
}

/// Operations nested in arguments are rewritten too, a few levels deep.
pub(super) fn structure_calls_in(text: &str, level: usize) -> String {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let word_end = |from: usize| text[from..].find(|c: char| !ident(c)).map_or(text.len(), |k| from + k);
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        // A receiver: a whole word followed by `.name(`.
        let prev = text[..i].chars().next_back();
        if !c.is_alphabetic() || prev.is_some_and(|p| ident(p) || p == '.') {
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        let r_end = word_end(i);
        let recv = &text[i..r_end];
        let m_end = if text[r_end..].starts_with('.') { word_end(r_end + 1) } else { r_end };
        let method = text.get(r_end + 1..m_end).unwrap_or("");
        let operation = level < 8 && !MODULES.contains(&recv) && method.starts_with(char::is_alphabetic) && text[m_end..].starts_with('(');
        match operation.then(|| closing(text, m_end)).flatten() {
            Some(close) => {
                let args = structure_calls_in(&text[m_end + 1..close], level + 1);
                let sep = if args.trim().is_empty() { "" } else { ", " };
                out.push_str(&format!("{}({recv}{sep}{})", textbook_name(method), args.trim()));
                i = close + 1;
            }
            None => {
                out.push_str(recv);
                i = r_end;
            }
        }
    }
    out
}

/// Byte offset of the `)` that closes the `(` at byte `open` of `s`.
pub(super) fn closing(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s[open..].char_indices() {
        depth += i32::from(c == '(') - i32::from(c == ')');
        if depth == 0 {
            return Some(open + i);
        }
    }
    None
}

/// Renames each procedure the input defines to its textbook form wherever it is called,
/// so `maxHeapify(A, i)` is a call like `MAX-HEAPIFY(A, i)`, and writes operations on a
/// structure as calls ([`structure_calls`]).
pub(super) fn textbook_names(mut lines: Vec<Line>) -> Vec<Line> {
    let top = lines.iter().map(|l| l.indent).min().unwrap_or(0);
    let mut names: Vec<(String, String)> = lines
        .iter()
        .filter(|l| l.indent == top)
        .filter_map(|l| header_parts(header_core(&l.text)))
        .map(|(name, _)| {
            let canon = textbook_name(&name);
            (name, canon)
        })
        .filter(|(name, canon)| name != canon && canon.chars().filter(char::is_ascii_uppercase).count() >= 2)
        .collect();
    // Longer names first, so `sortRange` is not renamed through `sort`.
    names.sort_by_key(|(n, _)| std::cmp::Reverse(n.len()));
    names.dedup();
    for l in &mut lines {
        if l.text.contains('.') && header_parts(header_core(&l.text)).is_none() {
            l.text = structure_calls(&l.text);
        }
        for (name, canon) in &names {
            l.text = rename_calls(&l.text, name, canon);
        }
    }
    lines
}

/// `name(` → `canon(` where `name` stands as a whole word (not `x.name(`).
pub(super) fn rename_calls(text: &str, name: &str, canon: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let before = text[..i].chars().next_back();
        let starts_word = !before.is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if starts_word && rest.starts_with(name) && rest[name.len()..].trim_start().starts_with('(') {
            out.push_str(canon);
            i += name.len();
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Recognizes each line's keyword; inline statements become synthetic child lines.
pub(super) fn recognize_all(lines: Vec<Line>) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::with_capacity(lines.len());
    let min_indent = lines.iter().map(|l| l.indent).min().unwrap_or(0);
    for (i, mut l) in lines.iter().cloned().enumerate() {
        let next_indent = lines.get(i + 1).map(|n| n.indent);
        if l.indent > min_indent {
            l.text = exchange(&l.text).unwrap_or(l.text);
        }
        let (kind, inline) = recognize(&l.text, l.indent == min_indent);
        l.kind = kind;
        let child_indent = match next_indent {
            Some(n) if n > l.indent => n,
            _ => l.indent + 1,
        };
        out.push(l.clone());
        if let Some(stmt) = inline {
            let stmt = exchange(&stmt).unwrap_or(stmt);
            let (kind, _) = recognize(&stmt, false);
            out.push(Line {
                indent: child_indent,
                text: stmt,
                kind,
                synthetic: true,
                ..l
            });
        }
    }
    out
}

pub(super) fn first_word(s: &str) -> (String, &str) {
    let end = s.find(|c: char| !c.is_alphanumeric()).unwrap_or(s.len());
    (s[..end].to_lowercase(), s[end..].trim_start())
}

pub(super) fn recognize(text: &str, outermost: bool) -> (Kind, Option<String>) {
    let (w, rest) = first_word(text);
    let strip = |s: &str| opener(s).to_string();
    match w.as_str() {
        "if" => split_inline(rest, Kind::If),
        "elseif" | "elif" | "elsif" => split_inline(rest, Kind::Elif),
        "else" => {
            let rest = rest.strip_prefix(':').map_or(rest, str::trim_start);
            let rest = opener(rest);
            let (w2, rest2) = first_word(rest);
            if w2 == "if" {
                split_inline(rest2, Kind::Elif)
            } else if rest.is_empty() {
                (Kind::Else, None)
            } else {
                (Kind::Else, Some(rest.to_string()))
            }
        }
        "while" => (Kind::While(strip(rest)), None),
        "until" => (Kind::Until(rest.to_string()), None),
        "repeat" if opener(rest).is_empty() => (Kind::Repeat, None),
        "foreach" | "forall" => (Kind::Each(strip(rest)), None),
        "return" => {
            let v = rest.trim();
            (Kind::Return((!v.is_empty()).then(|| v.to_string())), None)
        }
        "for" => {
            let (w2, rest2) = first_word(rest);
            if w2 == "each" || w2 == "all" || w2 == "every" {
                (Kind::Each(strip(rest2)), None)
            } else {
                (for_head(&strip(rest)), None)
            }
        }
        _ => match (call_parts(text), header_parts(header_core(text))) {
            (_, Some((name, params))) if outermost => (Kind::Header { name, params }, None),
            (Some(_), _) => (Kind::Call(text.trim().to_string()), None),
            // A statement that is only `name(args)`, in any case, calls a procedure (a
            // hyphen in the name is a minus: `x-f(y)`).
            (None, _) => match header_parts(text) {
                Some((name, args)) if !name.contains('-') && !is_output(&name) => {
                    (Kind::Call(format!("{}({args})", textbook_name(&name))), None)
                }
                _ => (Kind::Plain(text.trim().to_string()), None),
            },
        },
    }
}

/// A loop header after `for`: `i = 1 to n`, `i from 1 to n`, `i from n down to 1`,
/// `i in range(1, n + 1)` (counted), `v in G.adj[u]` (over a collection).
pub(super) fn for_head(head: &str) -> Kind {
    let head = head.replace(" down to ", " downto ");
    let range = split_range(&head);
    if let Some(i) = find_word(&head, "in") {
        let var = head[..i].trim();
        let over = head[i + 2..].trim();
        if let Some(args) = over.strip_prefix("range(").and_then(|a| a.strip_suffix(')')) {
            let args = split_args(args);
            let (from, to, step) = match args.as_slice() {
                [n] => ("0".to_string(), n.clone(), None),
                [a, b] => (a.clone(), b.clone(), None),
                [a, b, s] => (a.clone(), b.clone(), Some(s.clone())),
                _ => return Kind::Each(head.clone()),
            };
            let down = step.is_some_and(|s| s.trim_start().starts_with('-'));
            // `range` stops before its end: `range(1, n + 1)` runs to `n`.
            let (dir, bound) = match (down, to.strip_suffix("+ 1"), to.strip_suffix("- 1")) {
                (false, Some(t), _) => ("to", t.trim_end().to_string()),
                (false, None, _) => ("to", format!("{to} - 1")),
                (true, _, Some(t)) => ("downto", t.trim_end().to_string()),
                (true, _, None) => ("downto", format!("{to} + 1")),
            };
            return Kind::For {
                start: format!("{var} = {from}"),
                dir: Some(dir),
                bound,
            };
        }
        if range.is_none() {
            return Kind::Each(head.clone());
        }
    }
    match range {
        Some((start, dir, bound)) => {
            // `i from 1` is `i = 1`.
            let start = match find_word(&start, "from") {
                Some(i) => format!("{} = {}", start[..i].trim(), start[i + 4..].trim()),
                None => start,
            };
            Kind::For {
                start,
                dir: Some(dir),
                bound,
            }
        }
        None if head.contains('∈') => Kind::Each(head),
        None => Kind::For {
            start: head,
            dir: None,
            bound: String::new(),
        },
    }
}

/// A swap, however written, as the textbook writes it: `swap A[i] and A[j]`,
/// `swap(A[i], A[j])`, Java's `swap(A, i, j)` and Python's `A[i], A[j] = A[j], A[i]` are
/// all `exchange A[i] with A[j]` (pairs joined by `and`). `swap rows k and p of A` is
/// prose and stays as it is.
pub(super) fn exchange(s: &str) -> Option<String> {
    // One term: no comma or space outside brackets.
    let term = |t: &str| !t.is_empty() && split_args(&t.replace(' ', ",")).len() == 1;
    let (word, rest) = first_word(s);
    if matches!(word.as_str(), "swap" | "exchange") {
        let rest = rest.trim();
        if let Some((_, args)) = header_parts(s).filter(|(_, a)| !a.is_empty()) {
            return match split_args(&args).as_slice() {
                [x, y] => Some(format!("exchange {x} with {y}")),
                [arr, i, j] if term(arr) => Some(format!("exchange {arr}[{i}] with {arr}[{j}]")),
                _ => None,
            };
        }
        for sep in ["and", "with"] {
            if let [k] = word_positions(rest, sep)[..] {
                let (x, y) = (rest[..k].trim(), rest[k + sep.len()..].trim());
                if term(x) && term(y) {
                    return Some(format!("exchange {x} with {y}"));
                }
            }
        }
        return None;
    }
    // Parallel assignment that swaps pairs.
    let (lhs, rhs) = ["←", ":=", "="].iter().find_map(|op| {
        let k = s.find(op)?;
        let next = s[k + op.len()..].chars().next();
        (*op != "=" || (next != Some('=') && !s[..k].ends_with(['!', '<', '>', '=', ':']))).then(|| (&s[..k], &s[k + op.len()..]))
    })?;
    let (l, r) = (split_args(lhs), split_args(rhs));
    if l.len() < 2 || l.len() % 2 != 0 || l.len() != r.len() || !l.iter().all(|t| term(t)) {
        return None;
    }
    let pairs: Vec<String> = l
        .chunks(2)
        .zip(r.chunks(2))
        .map(|(a, b)| (a[0] == b[1] && a[1] == b[0]).then(|| format!("{} with {}", a[0], a[1])))
        .collect::<Option<_>>()?;
    Some(format!("exchange {}", pairs.join(" and ")))
}

/// Arguments split at top-level commas.
pub(super) fn split_args(s: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(String::new());
                continue;
            }
            _ => {}
        }
        out.last_mut().unwrap().push(c);
    }
    out.into_iter().map(|a| a.trim().to_string()).collect()
}

/// A test or loop head without the word or mark that opens its suite: `then`, `do`,
/// a trailing `:` or `{`.
pub(super) fn opener(s: &str) -> &str {
    let t = s.trim_end();
    let t = match t.strip_suffix(['{', ':']) {
        Some(h) if !h.ends_with(':') => h.trim_end(),
        _ => t,
    };
    strip_trailing(t, &["then", "do"])
}

/// `TEST then S` (or `TEST: S`) → the test and the inline statement.
pub(super) fn split_inline(rest: &str, mk: fn(String) -> Kind) -> (Kind, Option<String>) {
    let colon = rest
        .char_indices()
        .scan(0i32, |depth, (i, c)| {
            *depth += i32::from(matches!(c, '(' | '[' | '{')) - i32::from(matches!(c, ')' | ']' | '}'));
            Some((i, c, *depth))
        })
        .find(|&(i, c, d)| c == ':' && d == 0 && !rest[i + 1..].starts_with('='))
        .map(|(i, _, _)| (i, 1));
    if let Some((i, len)) = find_word(rest, "then").map(|i| (i, 4)).or(colon) {
        let after = rest[i + len..].trim().trim_start_matches('{').trim_start();
        let test = rest[..i].trim().to_string();
        if !after.is_empty() {
            return (mk(test), Some(after.to_string()));
        }
        return (mk(test), None);
    }
    (mk(opener(rest).to_string()), None)
}

pub(super) fn strip_trailing<'a>(s: &'a str, words: &[&str]) -> &'a str {
    let t = s.trim_end();
    for w in words {
        if let Some(head) = t.strip_suffix(w) {
            if head.is_empty() || head.ends_with(' ') {
                return head.trim_end();
            }
        }
    }
    t
}

/// Byte offset of `word` as a whole word outside brackets, first occurrence.
pub(super) fn find_word(s: &str, word: &str) -> Option<usize> {
    word_positions(s, word).into_iter().next()
}

pub(super) fn word_positions(s: &str, word: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let b = s.as_bytes();
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        if depth != 0 || !s[i..].starts_with(word) {
            continue;
        }
        let before_ok = i == 0 || !(b[i - 1] as char).is_alphanumeric();
        let after = i + word.len();
        let after_ok = after >= b.len() || !(b[after] as char).is_alphanumeric();
        if before_ok && after_ok {
            out.push(i);
        }
    }
    out
}

pub(super) fn split_range(head: &str) -> Option<(String, &'static str, String)> {
    for dir in ["downto", "to"] {
        if let Some(&i) = word_positions(head, dir).last() {
            let start = head[..i].trim();
            let bound = head[i + dir.len()..].trim();
            if !start.is_empty() && !bound.is_empty() {
                return Some((start.to_string(), dir, bound.to_string()));
            }
        }
    }
    None
}

/// A procedure header may use any identifier (`F(x)`, `Euclid(a, b)`); only its place
/// at the outermost indentation distinguishes it from an instruction.
pub(super) fn header_parts(text: &str) -> Option<(String, String)> {
    let t = text.trim();
    let open = t.find('(')?;
    let inner = t.strip_suffix(')')?.get(open + 1..)?;
    let name = t[..open].trim_end();
    let ok = name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !name.ends_with('-')
        && !t.contains(['$', '@']);
    let balanced = inner.chars().try_fold(0i32, |d, c| {
        let d = d + i32::from(c == '(') - i32::from(c == ')');
        (d >= 0).then_some(d)
    }) == Some(0);
    (ok && balanced).then(|| (name.to_string(), inner.trim().to_string()))
}

/// `NAME(args)` with a textbook procedure name (upper case, hyphens allowed) and
/// balanced parentheses closing at the end.
pub(super) fn call_parts(text: &str) -> Option<(String, String)> {
    let t = text.trim();
    let open = t.find('(')?;
    let name = t[..open].trim_end();
    let upper = name.chars().filter(|c| c.is_ascii_uppercase()).count() >= 2
        && !name.chars().any(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && name.starts_with(|c: char| c.is_ascii_alphabetic());
    if !upper || !t.ends_with(')') || t.contains(['$', '@']) {
        return None;
    }
    let inner = t.strip_suffix(')')?.get(open + 1..)?;
    let mut depth = 0i32;
    for c in inner.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    }
    (depth == 0).then(|| (name.to_string(), inner.trim().to_string()))
}

/// A line indented deeper than a simple statement continues that statement.
pub(super) fn merge_continuations(lines: Vec<Line>) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::with_capacity(lines.len());
    for l in lines {
        if let Some(prev) = out.last_mut() {
            let continues =
                l.indent > prev.indent && !l.synthetic && matches!(prev.kind, Kind::Plain(_));
            if continues {
                if let (Kind::Plain(a), Kind::Plain(b)) = (&prev.kind, &l.kind) {
                    prev.kind = Kind::Plain(format!("{a} {b}"));
                    continue;
                }
            }
        }
        out.push(l);
    }
    out
}
