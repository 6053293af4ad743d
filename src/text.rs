//! Identifier words: the one splitter of `snake_case`, `camelCase`, `HTTPServer` and
//! `utf8to16` names that every stage uses. Callers differ only in which characters
//! separate words and which boundaries inside a word count ([`Split`]); each states its
//! choice where it makes it.

/// How [`split`] cuts text into words.
#[derive(Clone, Copy)]
pub struct Split {
    /// Characters that end a word and are dropped.
    pub sep: fn(char) -> bool,
    /// `HTTPServer` → HTTP Server: an upper-case run gives its last capital to the
    /// lower-case word after it. Without it the run and the word stay one.
    pub acronyms: bool,
    /// `utf8to16` → utf 8 to 16: ASCII digits form words of their own. Without it a digit
    /// reads as a lower-case letter (`get2D` → get2 D).
    pub digits: bool,
}

impl Split {
    /// Words of prose and code alike: every character that is not a letter or digit
    /// separates.
    pub const WORDS: Split = Split { sep: not_alphanumeric, acronyms: true, digits: false };
}

fn not_alphanumeric(c: char) -> bool {
    !c.is_alphanumeric()
}

fn boundary(prev: char, cur: char, next: Option<char>, how: &Split) -> bool {
    if how.digits && prev.is_ascii_digit() != cur.is_ascii_digit() {
        return true;
    }
    if !cur.is_uppercase() {
        return false;
    }
    prev.is_lowercase() || (!how.digits && prev.is_ascii_digit()) || (how.acronyms && prev.is_uppercase() && next.is_some_and(char::is_lowercase))
}

/// The words of `text`, in order, as slices of it (case kept; no empty words).
pub fn split<'a>(text: &'a str, how: &Split) -> Vec<&'a str> {
    let mut out = Vec::new();
    for piece in text.split(how.sep) {
        let chars: Vec<(usize, char)> = piece.char_indices().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            if boundary(chars[i - 1].1, chars[i].1, chars.get(i + 1).map(|&(_, c)| c), how) {
                out.push(&piece[chars[start].0..chars[i].0]);
                start = i;
            }
        }
        if start < chars.len() {
            out.push(&piece[chars[start].0..]);
        }
    }
    out
}

/// `identifier words` of `snake_case`, `camelCase` and qualified names, lower case, one
/// space apart: the form in which a function's name reaches the text encoder. Only the
/// separators of names split (`_ $ : . -`), so operators (`operator<`) keep their symbol,
/// and capitals in a row stay one word, as the encoder's vocabulary holds acronyms whole.
pub fn name_words(name: &str) -> String {
    let how = Split { sep: |c| matches!(c, '_' | '$' | ':' | '.' | '-'), acronyms: false, digits: false };
    split(name, &how).iter().map(|w| w.chars().flat_map(char::to_lowercase).collect::<String>()).collect::<Vec<_>>().join(" ").trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_names_of_every_style() {
        assert_eq!(split("parseHTTPHeader", &Split::WORDS), ["parse", "HTTP", "Header"]);
        assert_eq!(split("floyd_warshall(dist)", &Split::WORDS), ["floyd", "warshall", "dist"]);
        assert_eq!(split("get2D x", &Split::WORDS), ["get2", "D", "x"]);
        let digits = Split { digits: true, ..Split::WORDS };
        assert_eq!(split("utf8to16", &digits), ["utf", "8", "to", "16"]);
        let plain = Split { acronyms: false, ..Split::WORDS };
        assert_eq!(split("HTTPServer", &plain), ["HTTPServer"]);
        assert!(split("", &Split::WORDS).is_empty() && split("__", &Split::WORDS).is_empty());
    }

    #[test]
    fn name_words_are_the_encoders_form() {
        assert_eq!(name_words("graph_distances_floyd_warshall"), "graph distances floyd warshall");
        assert_eq!(name_words("insertionSort"), "insertion sort");
        assert_eq!(name_words("FLOYD-WARSHALL"), "floyd warshall");
        assert_eq!(name_words("Cls::getHTTPCode2"), "cls get httpcode2");
        assert_eq!(name_words("operator<"), "operator<");
        assert_eq!(name_words("_x"), "x");
    }
}
