//! Printing search results: grep-style text, JSON (schema in docs/guide/json.md) and an
//! HTML page that shows the query beside each fragment with mapped lines highlighted.

use crate::search::{Fragment, SearchResult};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// Version of the JSON output; bumped on any incompatible change.
pub const JSON_SCHEMA: u32 = 1;
/// Copies of a fragment named in the text report; JSON has them all.
const SHOWN_COPIES: usize = 3;

struct Paint<'a> {
    on: bool,
    /// Paths under this folder print relative to it (as a shell there names them).
    base: Option<&'a Path>,
}

impl Paint<'_> {
    /// `s` as the user at `base` would write it: relative below it, absolute elsewhere.
    fn shown(&self, s: &str) -> String {
        match self.base.and_then(|b| Path::new(s).strip_prefix(b).ok()) {
            Some(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            _ => s.to_string(),
        }
    }
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn path(&self, s: &str) -> String {
        self.wrap("35", &self.shown(s))
    }
    fn line(&self, s: &str) -> String {
        self.wrap("32", s)
    }
    fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }
    fn dim(&self, s: &str) -> String {
        self.wrap("2", s)
    }
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Grep-style text, one layout for every kind of search: each result opens with
/// `path:line: function  #rank score …`, so a filter on `  #` lists the results and an editor
/// jumps to each; further functions of a fragment follow as `path:line:` lines, then the
/// reasons and the query lines matched, indented. Results in tests, examples or benchmarks
/// are marked `[test]`. Paths under `relative_to` (the working directory) print relative
/// to it, as ripgrep prints them; the index records them absolute, and JSON keeps them so.
pub fn text(r: &SearchResult, color: bool, relative_to: Option<&Path>) -> String {
    let p = Paint { on: color, base: relative_to };
    let mut out = String::new();
    if r.fragments.is_empty() {
        out.push_str("no results\n");
    }
    let test = |s: &crate::search::Span| if s.test { " [test]" } else { "" };
    for f in &r.fragments {
        let Some(head) = f.spans.first() else { continue };
        let mut about = format!("#{} score {:.3}, lines {}-{}", f.rank, f.score, head.lines.0, head.lines.1);
        if head.function_lines != head.lines {
            let _ = write!(about, " of {}-{}", head.function_lines.0, head.function_lines.1);
        }
        if f.query_lines_total > 0 && !r.mode.starts_with("natural-language") {
            let _ = write!(about, ", query lines {}/{}", f.query_lines_covered, f.query_lines_total);
        }
        about.push_str(test(head));
        let _ = writeln!(out, "{}:{}: {}  {}", p.path(&head.path), p.line(&head.lines.0.to_string()), p.bold(&head.function), p.dim(&about));
        let part = |s: &crate::search::Span| format!("lines {}-{} of {}-{}", s.lines.0, s.lines.1, s.function_lines.0, s.function_lines.1);
        let rest = f.spans.iter().skip(1).map(|s| (s, format!("#{} also: {}", f.rank, part(s))))
            .chain(f.apart.iter().map(|s| (s, format!("#{} called, defined apart: {}", f.rank, part(s)))))
            .chain(f.copies.iter().take(SHOWN_COPIES).map(|s| (s, format!("#{} a copy: the same code, names aside, lines {}-{}", f.rank, s.lines.0, s.lines.1))));
        let mut details = false;
        for (s, note) in rest {
            let _ = writeln!(out, "{}:{}: {}  {}", p.path(&s.path), p.line(&s.lines.0.to_string()), s.function, p.dim(&format!("{note}{}", test(s))));
            details = true;
        }
        if f.copies.len() > SHOWN_COPIES {
            let _ = writeln!(out, "    {}", p.dim(&format!("… and {} more copies (--json lists them)", f.copies.len() - SHOWN_COPIES)));
        }
        for r in &f.reasons {
            let _ = writeln!(out, "    {}", p.dim(&format!("why: {r}")));
            details = true;
        }
        // A natural-language hit's one "match" is the function itself: nothing to map.
        for m in f.matches.iter().filter(|_| r.mode != "natural-language") {
            let _ = writeln!(
                out,
                "    {:>3}  {:<34} {} {}:{}: {}",
                m.query_lines.0,
                clip(&m.query_text, 34),
                p.dim(&format!("{:.2} →", m.similarity)),
                p.path(&m.path),
                p.line(&m.lines.0.to_string()),
                clip(&m.code, 70)
            );
            details = true;
        }
        if details {
            out.push('\n');
        }
    }
    let t = &r.timings;
    let method = r.mode.strip_prefix("pseudocode-").map(|m| format!("pseudocode, method {m}")).unwrap_or_else(|| r.mode.replace('-', " "));
    let line = format!(
        "{} result{}; {} query node{}; {:.0} ms (query {:.0}, search {:.0}); {method}",
        r.fragments.len(),
        if r.fragments.len() == 1 { "" } else { "s" },
        r.query_nodes.len(),
        if r.query_nodes.len() == 1 { "" } else { "s" },
        t.total_ms,
        t.embed_ms,
        t.knn_ms + t.group_ms
    );
    let _ = writeln!(out, "{}", p.dim(&line));
    out
}

/// The `--json` result as a value, for callers that embed it (the MCP server).
pub fn json_value(r: &SearchResult) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.insert("schema".into(), JSON_SCHEMA.into());
    }
    v
}

pub fn json(r: &SearchResult) -> String {
    serde_json::to_string_pretty(&json_value(r)).unwrap_or_default()
}

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '&' => o.push_str("&amp;"),
            '"' => o.push_str("&quot;"),
            c => o.push(c),
        }
    }
    o
}

const COLORS: [&str; 8] = ["#ffe08a", "#b8e0ff", "#c8f0c0", "#ffc8d8", "#e0ccff", "#ffd6b0", "#c0f0f0", "#f0f0a0"];

/// One self-contained page; `read` returns a file's lines (the indexed sources).
pub fn html(r: &SearchResult, query: &str, read: &mut dyn FnMut(&str) -> Option<Vec<String>>) -> String {
    let mut out = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>beryl results</title><style>\
body{font-family:sans-serif;margin:1em;background:#fafafa}\
.frag{background:#fff;border:1px solid #ccc;border-radius:6px;margin:1em 0;padding:.5em 1em}\
.cols{display:flex;gap:1em;align-items:flex-start}.col{flex:1;min-width:0;overflow-x:auto}\
pre{margin:0;font-size:12px;line-height:1.35}.ln{color:#999;display:inline-block;width:3.5em;text-align:right;margin-right:.6em}\
h2{font-size:15px;margin:.3em 0}.path{color:#7a2a8a;font-family:monospace}.meta{color:#666;font-size:12px}\
</style></head><body>",
    );
    let _ = write!(out, "<h1>beryl: {} fragments</h1>", r.fragments.len());
    let qlines: Vec<&str> = r.pcode.as_deref().filter(|_| !r.converted).unwrap_or(query).lines().collect();
    for f in &r.fragments {
        // One colour per query node of this fragment, shared by its query and code lines.
        let mut qcolor: HashMap<u32, &str> = HashMap::new();
        let mut ccolor: HashMap<(String, u32), &str> = HashMap::new();
        // Narrow spans first: a procedure header (ENTRY) spans the whole procedure and
        // should only colour the lines no statement claims.
        let mut order: Vec<(usize, &crate::search::LineMatch)> = f.matches.iter().enumerate().collect();
        order.sort_by_key(|(_, m)| (m.query_lines.1 - m.query_lines.0, m.lines.1.saturating_sub(m.lines.0)));
        for (i, m) in order {
            let c = COLORS[i % COLORS.len()];
            for l in m.query_lines.0..=m.query_lines.1 {
                qcolor.entry(l).or_insert(c);
            }
            for l in m.lines.0..=m.lines.1 {
                ccolor.entry((m.path.clone(), l)).or_insert(c);
            }
        }
        let _ = write!(
            out,
            "<div class=\"frag\"><h2>#{} score {:.2}</h2><div class=\"meta\">query lines {}/{}, distance {}</div><div class=\"cols\"><div class=\"col\"><pre>",
            f.rank, f.score, f.query_lines_covered, f.query_lines_total, f.distance
        );
        for (i, l) in qlines.iter().enumerate() {
            let n = i as u32 + 1;
            let bg = qcolor.get(&n).map(|c| format!(" style=\"background:{c}\"")).unwrap_or_default();
            let _ = writeln!(out, "<span{bg}><span class=\"ln\">{n}</span>{}</span>", esc(l));
        }
        out.push_str("</pre></div><div class=\"col\">");
        for s in &f.spans {
            let _ = write!(out, "<div class=\"path\">{}:{} — {}</div><pre>", esc(&s.path), s.lines.0, esc(&s.function));
            let lines = read(&s.path).unwrap_or_default();
            let (a, b) = (s.lines.0.saturating_sub(2).max(1), (s.lines.1 + 2).min(lines.len() as u32));
            for n in a..=b {
                let text = lines.get(n as usize - 1).map(String::as_str).unwrap_or("");
                let bg = ccolor.get(&(s.path.clone(), n)).map(|c| format!(" style=\"background:{c}\"")).unwrap_or_default();
                let _ = writeln!(out, "<span{bg}><span class=\"ln\">{n}</span>{}</span>", esc(text));
            }
            out.push_str("</pre>");
        }
        for s in &f.apart {
            let _ = write!(out, "<div class=\"path\">{}:{} — {} (called, defined apart)</div>", esc(&s.path), s.lines.0, esc(&s.function));
        }
        for s in &f.copies {
            let _ = write!(out, "<div class=\"path\">{}:{} — {} (a copy: the same code, names aside)</div>", esc(&s.path), s.lines.0, esc(&s.function));
        }
        out.push_str("</div></div></div>");
    }
    out.push_str("</body></html>\n");
    out
}

/// A fragment's one-line summary, for logs and tests.
pub fn summary(f: &Fragment) -> String {
    let spans: Vec<String> = f.spans.iter().map(|s| format!("{}:{}-{} {}", s.path, s.lines.0, s.lines.1, s.function)).collect();
    format!("#{} {:.2} {}", f.rank, f.score, spans.join(" + "))
}
