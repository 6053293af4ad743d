//! Errors of the p-code stage. Syntax errors carry a 1-based line and column, the
//! offending line and what the parser expected there.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum PcodeError {
    #[error("{}", fmt_syntax(.0))]
    Syntax(Box<SyntaxError>),
    // Not a `source`: the message names the cause, so a chain of contexts prints it once.
    #[error("{path}: {error}")]
    Io { path: PathBuf, error: std::io::Error },
    #[error("classifier model {path}: {reason}")]
    Model { path: PathBuf, reason: String },
    #[error("training corpus: {0}")]
    Corpus(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// File name for messages; empty when the text did not come from a file.
    pub file: String,
    pub line: u32,
    pub col: u32,
    /// The whole offending line, without its newline.
    pub line_text: String,
    /// What could have stood at `line:col`, e.g. "math `$…$`", "`else`".
    pub expected: Vec<String>,
    /// The text found at `line:col` (up to the end of its word or a few characters).
    pub found: String,
    /// Extra explanation when the error is not a plain "expected" one.
    pub message: Option<String>,
}

impl PcodeError {
    pub fn syntax(&self) -> Option<&SyntaxError> {
        match self {
            PcodeError::Syntax(s) => Some(s),
            _ => None,
        }
    }

    /// Sets the file name shown in syntax errors.
    pub fn with_file(mut self, file: &str) -> Self {
        if let PcodeError::Syntax(s) = &mut self {
            s.file = file.to_string();
        }
        self
    }
}

fn fmt_syntax(e: &SyntaxError) -> String {
    let file = if e.file.is_empty() {
        "<input>"
    } else {
        &e.file
    };
    let what = match (&e.message, e.expected.as_slice()) {
        (Some(m), _) => m.clone(),
        (None, []) => "unexpected input".to_string(),
        (None, [one]) => format!("expected {one}"),
        (None, many) => {
            let (last, rest) = many
                .split_last()
                .map(|(l, r)| (l.clone(), r.join(", ")))
                .unwrap_or_default();
            format!("expected {rest} or {last}")
        }
    };
    // A caret under the column; columns count characters, not bytes.
    let pad: String = e
        .line_text
        .chars()
        .take(e.col.saturating_sub(1) as usize)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let found = if e.found.is_empty() {
        "end of line".to_string()
    } else {
        format!("`{}`", e.found)
    };
    format!(
        "{file}:{}:{}: {what}, found {found}\n  | {}\n  | {pad}^",
        e.line, e.col, e.line_text
    )
}
