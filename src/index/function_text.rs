//! The text of a function as the function encoder reads it: its name as words, the prose
//! of the comment above it, and its body, each within a budget of characters.

#[allow(unused_imports)]
use super::*;

/// The comment block that ends right before `start`, if one does.
pub(super) fn leading_comment(before: &str) -> &str {
    let t = before.trim_end();
    if t.ends_with("*/") {
        if let Some(i) = t.rfind("/*") {
            return &t[i..];
        }
    }
    let mut begin = t.len();
    for line in t.lines().rev() {
        // Rust attributes (`#[inline]`) may stand between a doc comment and its item.
        let l = line.trim_start();
        if l.starts_with("//") || l.starts_with("#[") {
            begin = begin.saturating_sub(line.len() + 1);
        } else {
            break;
        }
    }
    t.get(begin.min(t.len())..).unwrap_or("").trim_start()
}

/// The comment right above function `f` (after the previous function of its file).
pub fn function_comment<'a>(icfg: &Icfg, f: u32, src: &'a str) -> &'a str {
    let m = &icfg.functions[f as usize].meta;
    let s = (m.bytes.0 as usize).min(src.len());
    let prev_end = if f > 0 && icfg.functions[f as usize - 1].meta.file == m.file {
        (icfg.functions[f as usize - 1].meta.bytes.1 as usize).min(s)
    } else {
        s.saturating_sub(2000)
    };
    let before = src.get(prev_end..s).unwrap_or("");
    if m.lang == crate::graph::Lang::Python {
        let e = (m.bytes.1 as usize).min(src.len()).max(s);
        return python_docstring(src.get(s..e).unwrap_or("")).unwrap_or_else(|| hash_comment(before));
    }
    leading_comment(before)
}

/// The docstring of a Python `def` (decorators first, maybe): the string literal that
/// is the first statement after the header's `:`, quotes included.
fn python_docstring(def: &str) -> Option<&str> {
    let b = def.as_bytes();
    let (mut i, mut depth) = (0usize, 0i32);
    // The header ends at the first `:` outside brackets and strings.
    loop {
        match *b.get(i)? {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            q @ (b'"' | b'\'') => i += def[i + 1..].find(q as char)? + 1,
            b':' if depth == 0 => break,
            _ => {}
        }
        i += 1;
    }
    let rest = &def[i + 1..];
    let body = rest.trim_start();
    let start = def.len() - body.len();
    let body = body.trim_start_matches(['r', 'R', 'u', 'U']);
    let quote = ["\"\"\"", "'''", "\"", "'"].into_iter().find(|q| body.starts_with(q))?;
    let open = def.len() - body.len();
    let close = def[open + quote.len()..].find(quote)? + open + 2 * quote.len();
    def.get(start..close)
}

/// `#` comment lines right above a Python definition.
fn hash_comment(before: &str) -> &str {
    let t = before.trim_end();
    let mut begin = t.len();
    for line in t.lines().rev() {
        if line.trim_start().starts_with('#') {
            begin = begin.saturating_sub(line.len() + 1);
        } else {
            break;
        }
    }
    t.get(begin.min(t.len())..).unwrap_or("").trim_start()
}

/// The prose of a doc comment for the text encoder: no comment markers (`/**`, `*`,
/// `//`), no markup (`<p>`, `{@code x}` → `x`), no tag words (`@param`, `\brief`; the text
/// after them stays: parameter descriptions name what the function works on), no heading
/// lines (`\function name`), at most `PROSE_CHARS`, cut after a sentence where one ends.
/// With markers and markup a long Javadoc filled the encoder's whole window.
pub fn doc_prose(comment: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    'lines: for line in comment.lines() {
        if line.trim_start().starts_with("#[") {
            continue;
        }
        let l = line.trim().trim_start_matches("\"\"\"").trim_start_matches("'''").trim_start_matches('#').trim_end_matches("\"\"\"").trim_end_matches("'''");
        let l = l.trim().trim_start_matches("/**").trim_start_matches("/*!").trim_start_matches("/*").trim_start_matches("///").trim_start_matches("//!").trim_start_matches("//");
        let l = l.trim_end_matches("*/").trim().trim_start_matches('*').trim();
        for w in l.split_whitespace() {
            if let Some(tag) = w.strip_prefix('@').or_else(|| w.strip_prefix('\\')) {
                let tag = tag.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
                match tag {
                    // Headings name what the comment documents: the rest of their line goes.
                    "function" | "fn" | "class" | "struct" | "union" | "enum" | "typedef" | "define" | "var" | "file" | "ingroup"
                    | "addtogroup" | "defgroup" | "name" | "page" | "section" | "subsection" | "namespace" | "interface" => continue 'lines,
                    // Bookkeeping, not prose.
                    "author" | "version" | "since" | "serial" | "serialField" | "serialData" => continue 'lines,
                    // Any other tag word (`@param`, `\brief`, `{@code`) is markup; its text stays.
                    t if !t.is_empty() => continue,
                    _ => {}
                }
            }
            let mut clean = String::with_capacity(w.len());
            let mut in_tag = false;
            for c in w.chars() {
                match c {
                    '<' => in_tag = true,
                    '>' if in_tag => in_tag = false,
                    '{' | '}' if !in_tag => {}
                    _ if !in_tag => clean.push(c),
                    _ => {}
                }
            }
            let clean = clean.trim_start_matches("@code").trim_start_matches("@link").trim_start_matches("@literal");
            if !clean.is_empty() {
                words.push(clean.to_string());
            }
        }
    }
    let mut out = String::new();
    for w in &words {
        if out.len() + w.len() + 1 > PROSE_CHARS {
            // Back to the last sentence end, when there is one.
            if let Some(i) = out.rfind(". ").or_else(|| out.ends_with('.').then(|| out.len() - 1)) {
                out.truncate(i + 1);
            }
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// What the natural-language index reads for a function: its name as words, the prose
/// of the comment above it, then its code, cut to a length the encoder reads in full.
pub fn function_text(icfg: &Icfg, f: u32, src: &str) -> String {
    let m = &icfg.functions[f as usize].meta;
    let (s, e) = (m.bytes.0 as usize, (m.bytes.1 as usize).min(src.len()));
    let comment = doc_prose(function_comment(icfg, f, src));
    let body = src.get(s..e).unwrap_or("");
    let mut t = format!("{}. {} {}", name_words(&m.name), comment, crate::graph::normalize_ws(body));
    if t.len() > FUNCTION_TEXT_CHARS {
        let mut cut = FUNCTION_TEXT_CHARS;
        while !t.is_char_boundary(cut) {
            cut -= 1;
        }
        t.truncate(cut);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_above_functions() {
        assert_eq!(leading_comment("int x;\n/* sorts */\n"), "/* sorts */");
        assert_eq!(leading_comment("x;\n// one\n// two\n"), "// one\n// two");
        assert_eq!(leading_comment("int x;\n"), "");
        assert_eq!(leading_comment("}\n/// Sorts.\n#[inline]\n"), "/// Sorts.\n#[inline]");
        assert_eq!(doc_prose("/// Sorts.\n#[inline]"), "Sorts.");
    }

    #[test]
    fn python_docstrings_and_hash_comments() {
        let def = "@cache\ndef gcd(a: int, b=(1, 2)) -> int:\n    \"\"\"Greatest common\n    divisor.\"\"\"\n    return a\n";
        assert_eq!(python_docstring(def), Some("\"\"\"Greatest common\n    divisor.\"\"\""));
        assert_eq!(doc_prose(python_docstring(def).unwrap()), "Greatest common divisor.");
        assert_eq!(python_docstring("def f(x):\n    return x\n"), None);
        assert_eq!(python_docstring("def f(x): 'one line'\n"), Some("'one line'"));
        assert_eq!(hash_comment("x = 1\n# Sorts in place.\n# Stable.\n"), "# Sorts in place.\n# Stable.");
        assert_eq!(doc_prose("# Sorts in place.\n# Stable."), "Sorts in place. Stable.");
    }

    #[test]
    fn doc_prose_drops_markers_and_markup() {
        let javadoc = "/**\n * Returns the <em>greatest</em> common divisor of {@code a} and {@code b}.\n *\n * @param a first value\n * @return the gcd\n * @since 1.2\n */";
        assert_eq!(doc_prose(javadoc), "Returns the greatest common divisor of a and b. a first value the gcd");
        let doxygen = "/**\n * \\function graph_bfs\n * \\brief Breadth-first search.\n *\n * \\param graph The graph.\n */";
        assert_eq!(doc_prose(doxygen), "Breadth-first search. graph The graph.");
        assert_eq!(doc_prose("// sorts the array\n// in place"), "sorts the array in place");
        assert_eq!(doc_prose(""), "");
        // Long prose is cut after its last whole sentence within the limit.
        let long = format!("/* {} Second sentence that runs on {} */", "First sentence here.", "and on ".repeat(60));
        assert_eq!(doc_prose(&long), "First sentence here.");
        assert!(doc_prose(&"word ".repeat(100)).len() <= PROSE_CHARS);
    }
}
