//! A code-aware tokenizer for lexical search: natural language and source code become
//! the same kind of terms, so `toLowerCase`, `to_lower_case` and "to lower case" match.
//!
//! Rules: split at every character that is not a letter or digit (punctuation, `_`,
//! whitespace); inside a word split camelCase (`parseHTTPHeader` → parse http header) and
//! letter/digit boundaries (`utf8to16` → utf 8 to 16); lowercase; strip a plural `s`
//! (so "strings" meets `string`); drop one-letter terms (loop indices and the like) and
//! stop words: common English function words and C/C++/Java keywords, which occur in
//! nearly every function and carry no topic.

use crate::text::{split, Split};

/// Terms of `text`, in order.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    // Digits are words of their own: `utf8to16` and "UTF-8 to UTF-16" meet.
    let how = Split { digits: true, ..Split::WORDS };
    for part in split(text, &how) {
        let t = stem(&part.to_lowercase());
        if t.chars().count() >= 2 && !is_stop(&t) {
            out.push(t);
        }
    }
    out
}

/// Initials of every run of at least three consecutive words: `breadth first search` →
/// `bfs`, so an abbreviated name meets a spelled-out one.
pub fn acronyms(words: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let ws: Vec<char> = words.iter().filter_map(|w| w.chars().next()).filter(|c| c.is_alphabetic()).collect();
    if ws.len() != words.len() {
        return out;
    }
    for a in 0..ws.len() {
        for b in a + 3..=ws.len().min(a + 6) {
            let s: String = ws[a..b].iter().collect();
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out
}

/// Strips a plural `s` from words of four letters or more (not `ss`, `us`, `is`): a light
/// stemmer that only joins singular and plural.
fn stem(t: &str) -> String {
    if t.len() >= 4 && t.ends_with('s') && !t.ends_with("ss") && !t.ends_with("us") && !t.ends_with("is") {
        if let Some(base) = t.strip_suffix("ies") {
            return format!("{base}y");
        }
        return t[..t.len() - 1].to_string();
    }
    t.to_string()
}

const STOP: &[&str] = &[
    // English function words
    "a", "about", "above", "after", "again", "all", "also", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "doe",
    "does", "doing", "down", "during", "each", "either", "etc", "few", "from", "further", "given", "had",
    "has", "have", "having", "he", "her", "here", "him", "his", "how", "however", "in", "into", "is", "it",
    "its", "itself", "just", "may", "might", "more", "most", "must", "no", "nor", "not", "of", "off", "on",
    "once", "one", "only", "or", "other", "otherwise", "our", "out", "over", "own", "same", "shall", "she",
    "should", "so", "some", "such", "than", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "those", "through", "thus", "to", "too", "under", "until", "up", "upon", "us", "very",
    "was", "we", "were", "what", "when", "where", "whether", "which", "while", "who", "whom", "whose",
    "why", "will", "with", "within", "without", "would", "you", "your",
    // C, C++ and Java keywords and modifiers. Type names (`double`, `char`, `long`),
    // `case`/`default`/`new` and `union` stay: they are also English words queries use
    // (UNION of union-find, `UF_union`, `unionSets`).
    "auto", "break", "catch", "class", "const", "constexpr", "continue", "define", "else", "endif", "enum",
    "explicit", "extends", "extern", "final", "for", "friend", "goto", "if", "ifdef", "ifndef", "implements",
    "import", "include", "inline", "int", "namespace", "noexcept", "nullptr", "operator", "override",
    "package", "private", "protected", "public", "register", "return", "signed", "sizeof", "static", "std",
    "struct", "super", "switch", "template", "throw", "throws", "try", "typedef", "typename",
    "unsigned", "using", "virtual", "void", "volatile",
];

fn is_stop(t: &str) -> bool {
    STOP.contains(&t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acronyms_of_word_runs() {
        let w = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();
        assert_eq!(acronyms(&w("breadth first search")), ["bfs"]);
        assert_eq!(acronyms(&w("graph strongly connected component")), ["gsc", "gscc", "scc"]);
        assert!(acronyms(&w("edit distance")).is_empty());
    }

    #[test]
    fn splits_identifiers() {
        assert_eq!(tokens("toLowerCase(to_lower_case)"), ["lower", "case", "lower", "case"]);
        assert_eq!(tokens("parseHTTPHeader"), ["parse", "http", "header"]);
        assert_eq!(tokens("utf8to16 x2 int32"), ["utf", "16", "32"]);
        assert_eq!(tokens("MAX_BUFFER_SIZE"), ["max", "buffer", "size"]);
    }

    #[test]
    fn drops_keywords_stop_words_and_single_letters() {
        assert_eq!(tokens("static int i = 0; return x;"), Vec::<String>::new());
        assert_eq!(tokens("The function returns the sum of the values"), ["function", "sum", "value"]);
        assert_eq!(tokens("UF_union(struct node *u)"), ["uf", "union", "node"]);
    }

    #[test]
    fn plural_stem() {
        assert_eq!(tokens("strings entries class bus"), ["string", "entry", "bus"]);
        assert_eq!(tokens("Strings"), tokens("string"));
    }
}
