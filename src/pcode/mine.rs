//! Mining labeled lines from real C and Java sources (paper §3.3): comments are
//! natural language, the other lines are labeled math.
//!
//! A small lexer separates comment text from code while skipping string and character
//! literals. Two filters keep the labels meaningful without any hand labeling:
//! * comments before a file's first code line are dropped (licence headers), as are
//!   comment lines that look like commented-out code (`;`, `{`, `}`) or have fewer
//!   than three words; javadoc tags and HTML markup are stripped;
//! * code lines must contain an operator or an index (`= + - * / % < > [`); bare
//!   declarations, imports and braces are not "math" in the paper's sense.

use super::error::PcodeError;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceLang {
    C,
    Java,
}

impl SourceLang {
    fn accepts(self, path: &Path) -> bool {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        match self {
            SourceLang::C => matches!(ext, "c" | "h"),
            SourceLang::Java => ext == "java",
        }
    }
}

#[derive(Default, Debug)]
pub struct Mined {
    pub files: usize,
    pub comments: Vec<String>,
    pub code: Vec<String>,
}

/// Mines every matching file under `root`, in sorted path order (deterministic).
pub fn mine_dir(root: &Path, lang: SourceLang) -> Result<Mined, PcodeError> {
    let mut files = Vec::new();
    walk(root, lang, &mut files)?;
    files.sort();
    let mut out = Mined::default();
    for f in files {
        // Skip files that are not UTF-8 rather than failing the whole corpus.
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        out.files += 1;
        let (comments, code) = split_file(&text);
        out.comments.extend(comments);
        out.code.extend(code);
    }
    if out.files == 0 {
        return Err(PcodeError::Corpus(format!(
            "no {lang:?} files under {}",
            root.display()
        )));
    }
    Ok(out)
}

fn walk(dir: &Path, lang: SourceLang, out: &mut Vec<PathBuf>) -> Result<(), PcodeError> {
    let io = |error| PcodeError::Io {
        path: dir.to_path_buf(),
        error,
    };
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.is_dir() {
            walk(&path, lang, out)?;
        } else if lang.accepts(&path) {
            out.push(path);
        }
    }
    Ok(())
}

/// Comment lines and code lines of one file, cleaned and filtered.
pub fn split_file(text: &str) -> (Vec<String>, Vec<String>) {
    let mut comments = Vec::new();
    let mut code = Vec::new();
    let mut seen_code = false;
    let mut in_block = false;
    for line in text.lines() {
        let (c_part, k_part) = split_line(line, &mut in_block);
        let k = clean_code(&k_part);
        if !k_part.trim().is_empty() && !k_part.trim().starts_with('#') {
            seen_code = true;
        }
        if let Some(k) = k {
            code.push(k);
        }
        if seen_code {
            if let Some(c) = clean_comment(&c_part) {
                comments.push(c);
            }
        }
    }
    (comments, code)
}

/// Splits one physical line into its comment text and its code text.
fn split_line(line: &str, in_block: &mut bool) -> (String, String) {
    let mut comment = String::new();
    let mut code = String::new();
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    let mut quote: Option<char> = None;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if *in_block {
            if c == '*' && next == Some('/') {
                *in_block = false;
                i += 2;
                comment.push(' ');
                continue;
            }
            comment.push(c);
        } else if let Some(q) = quote {
            if c == '\\' {
                i += 1;
            } else if c == q {
                quote = None;
            }
            // Literal contents become a placeholder so code shape survives.
            if quote.is_none() {
                code.push('s');
            }
        } else if c == '/' && next == Some('/') {
            comment.extend(&chars[i + 2..]);
            break;
        } else if c == '/' && next == Some('*') {
            *in_block = true;
            i += 2;
            continue;
        } else if c == '"' || c == '\'' {
            quote = Some(c);
        } else {
            code.push(c);
        }
        i += 1;
    }
    (comment, code)
}

fn clean_comment(raw: &str) -> Option<String> {
    let mut s = raw
        .trim()
        .trim_start_matches(['*', '/', '!', '<'])
        .trim()
        .to_string();
    if s.starts_with('@') {
        // Javadoc tag: drop the tag and, for @param / @throws, the name after it.
        let mut parts = s.splitn(3, char::is_whitespace);
        let tag = parts.next().unwrap_or("");
        let second = parts.next().unwrap_or("");
        let rest = parts.next().unwrap_or("");
        s = if matches!(tag, "@param" | "@throws" | "@exception") {
            rest.to_string()
        } else {
            format!("{second} {rest}")
        };
    }
    let s = strip_markup(&s);
    let s = crate::graph::normalize_ws(&s);
    let words = s
        .split(' ')
        .filter(|w| w.chars().all(|c| c.is_alphabetic()) && w.len() >= 2)
        .count();
    let looks_like_code = s.ends_with(';') || s.contains('{') || s.contains('}');
    (words >= 3 && !looks_like_code && s.len() <= 160).then_some(s)
}

/// `{@link Foo}` → `Foo`, `<p>` → nothing.
fn strip_markup(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '<' if chars
                .peek()
                .is_some_and(|d| d.is_ascii_alphabetic() || *d == '/') =>
            {
                for d in chars.by_ref() {
                    if d == '>' {
                        break;
                    }
                }
            }
            '{' if chars.peek() == Some(&'@') => {
                // Skip the tag word, keep its argument.
                for d in chars.by_ref() {
                    if d.is_whitespace() {
                        break;
                    }
                }
            }
            '}' => {}
            _ => out.push(c),
        }
    }
    out
}

fn clean_code(raw: &str) -> Option<String> {
    let s = raw
        .trim()
        .trim_end_matches(['{', '}', ';', ' ', '\t'])
        .trim_start_matches(['}', ' ']);
    let s = crate::graph::normalize_ws(s);
    let mathy = s.contains(['=', '+', '-', '*', '/', '%', '<', '>', '[']);
    (s.len() >= 3 && s.len() <= 160 && mathy && !s.starts_with('#')).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separates_comments_from_code() {
        let src = "/* licence header text here */\nint f(int n) {\n  // add the two halves together\n  x = a[i] + b; /* sum of the parts */\n  s = \"// not a comment\";\n}\n";
        let (comments, code) = split_file(src);
        assert_eq!(
            comments,
            vec!["add the two halves together", "sum of the parts"]
        );
        assert_eq!(code, vec!["x = a[i] + b", "s = s"]);
    }

    #[test]
    fn javadoc_tags_are_stripped() {
        assert_eq!(
            clean_comment(" * @param n the number of {@code rows} in the matrix"),
            Some("the number of rows in the matrix".into())
        );
        assert_eq!(clean_comment(" * x = y + 1;"), None);
    }
}
