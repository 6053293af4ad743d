//! The function-level baselines (BM25 over functions, name search) and what they read:
//! function records, the comment above each function, identifier words.

#[allow(unused_imports)]
use super::*;

/// A function of the corpus, as the index (or the parser) records it.
#[derive(Clone, Debug)]
pub struct FuncRec {
    pub path: String,
    pub qualified: String,
    pub lang: String,
    pub lines: (u32, u32),
}

/// Function rows of an index generation, read-only.
pub(crate) fn functions_from_sqlite(db: &Path) -> Result<Vec<FuncRec>, AlgoError> {
    use rusqlite::{Connection, OpenFlags};
    let err = |e: rusqlite::Error| AlgoError::Functions { path: db.to_path_buf(), msg: e.to_string() };
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX).map_err(err)?;
    let mut st = conn
        .prepare("SELECT fi.path, f.qualified, fi.lang, f.start_line, f.end_line FROM functions f JOIN files fi ON f.file = fi.id ORDER BY f.id")
        .map_err(err)?;
    let rows = st
        .query_map([], |r| Ok(FuncRec { path: r.get(0)?, qualified: r.get(1)?, lang: r.get(2)?, lines: (r.get(3)?, r.get(4)?) }))
        .map_err(err)?;
    rows.collect::<Result<Vec<_>, _>>().map_err(err)
}

/// The group's functions: from an index already built over exactly these roots (cheap),
/// else by parsing (the same parser the index uses, so the boundaries agree).
pub(crate) fn functions_of(roots: &[PathBuf], index_dirs: &[PathBuf]) -> Result<Vec<FuncRec>, AlgoError> {
    let want: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    for d in index_dirs {
        let Some(gen) = index::current_generation(d) else { continue };
        let same_roots = std::fs::read_to_string(gen.join("meta.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<index::IndexMeta>(&t).ok())
            .is_some_and(|m| m.roots == want);
        if same_roots {
            return functions_from_sqlite(&gen.join("index.sqlite"));
        }
    }
    let c = corpus::load(roots, &WalkOptions::default());
    let icfg = c.icfg;
    Ok(icfg
        .functions
        .iter()
        .map(|f| {
            let file = &icfg.files[f.meta.file as usize];
            FuncRec { path: file.path.display().to_string(), qualified: f.meta.qualified(), lang: file.lang.name().to_string(), lines: f.meta.lines }
        })
        .collect())
}

/// Source files read once, as lines.
#[derive(Default)]
pub(crate) struct Sources {
    files: HashMap<String, Vec<String>>,
}

impl Sources {
    pub(crate) fn lines(&mut self, path: &str) -> &[String] {
        self.files.entry(path.to_string()).or_insert_with(|| {
            std::fs::read(path).map(|b| String::from_utf8_lossy(&b).lines().map(str::to_string).collect()).unwrap_or_default()
        })
    }
}

/// The comment block right above line `start` (1-based), skipping blank and annotation
/// lines in between (Javadoc sits above `@Override`).
pub fn comment_above(lines: &[String], start: u32) -> String {
    let mut i = (start as usize).saturating_sub(1).min(lines.len());
    let mut skipped = 0;
    while i > 0 && skipped < 6 {
        let t = lines[i - 1].trim();
        if t.is_empty() || t.starts_with('@') {
            i -= 1;
            skipped += 1;
        } else {
            break;
        }
    }
    if i == 0 {
        return String::new();
    }
    let last = lines[i - 1].trim();
    let mut out: Vec<&str> = Vec::new();
    if last.ends_with("*/") {
        let mut j = i;
        while j > 0 && i - j < 200 {
            j -= 1;
            out.push(&lines[j]);
            if lines[j].contains("/*") {
                break;
            }
        }
    } else {
        let mut j = i;
        while j > 0 && lines[j - 1].trim_start().starts_with("//") && i - j < 200 {
            j -= 1;
            out.push(&lines[j]);
        }
    }
    out.reverse();
    out.join("\n")
}

pub(crate) fn stem(w: &str) -> String {
    if w.len() >= 4 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        w[..w.len() - 1].to_string()
    } else {
        w.to_string()
    }
}

/// Lower-case words of identifiers and prose: split at non-alphanumerics and camelCase,
/// plural `s` stripped. No stop words: `union` or `all` are real name words here.
pub fn name_words(text: &str) -> Vec<String> {
    split(text, &Split::WORDS).iter().map(|w| stem(&w.chars().flat_map(char::to_lowercase).collect::<String>())).collect()
}

/// Identifier words of a function: Java package components (lower-case leading parts of
/// the qualified name) are left out, the class and method names kept.
pub(crate) fn identifier_words(f: &FuncRec) -> Vec<String> {
    let parts: Vec<&str> = if f.lang == "java" { f.qualified.split('.').collect() } else { f.qualified.split("::").collect() };
    let mut keep = parts.as_slice();
    if f.lang == "java" {
        while keep.len() > 1 && keep[0].chars().next().is_some_and(|c| c.is_lowercase()) {
            keep = &keep[1..];
        }
    }
    keep.iter().flat_map(|p| name_words(p)).collect()
}

/// Name search: the fraction of the algorithm's name words found among the function's
/// identifier words and the comment above it; ties go to the shorter function.
pub fn rank_by_name(algorithm: &str, funcs: &[FuncRec], comments: &[String]) -> Vec<usize> {
    let want: BTreeSet<String> = name_words(&algorithm.replace('-', " ")).into_iter().collect();
    if want.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(f64, u32, usize)> = Vec::new();
    for (i, f) in funcs.iter().enumerate() {
        let mut have: BTreeSet<String> = identifier_words(f).into_iter().collect();
        have.extend(name_words(&comments[i]));
        let n = want.iter().filter(|w| have.contains(*w)).count();
        if n > 0 {
            scored.push((n as f64 / want.len() as f64, f.lines.1.saturating_sub(f.lines.0) + 1, i));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    scored.into_iter().take(MAX_RANK).map(|s| s.2).collect()
}

/// Plain pseudocode with the listing's line numbers (` 1 FOO(A)`) taken off.
pub fn strip_line_numbers(text: &str) -> String {
    text.lines()
        .map(|l| {
            let t = l.trim_start();
            let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            // The listing writes the number, one space, then the indented line.
            if digits > 0 && t[digits..].starts_with(' ') {
                &t[digits + 1..]
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Function-level baselines: whole functions as one-span fragments, best first.
pub(crate) fn function_ranking(
    m: Method,
    algos: &[String],
    fs: &[FuncRec],
    comments: &[String],
    src: &mut Sources,
    queries: &Path,
    loc: &Locator,
) -> Result<Vec<Vec<Vec<LocSpan>>>, AlgoError> {
    let as_frag = |i: usize| vec![loc.locate(&fs[i].path, fs[i].lines)];
    if m == Method::Name {
        return Ok(algos.iter().map(|a| rank_by_name(a, fs, comments).into_iter().map(as_frag).collect()).collect());
    }
    // BM25 documents: the comment above the function and its source lines.
    let docs: Vec<Vec<String>> = fs
        .iter()
        .zip(comments)
        .map(|(f, c)| {
            let lines = src.lines(&f.path);
            let (a, b) = ((f.lines.0 as usize).saturating_sub(1).min(lines.len()), (f.lines.1 as usize).min(lines.len()));
            let mut t = c.clone();
            t.push('\n');
            t.push_str(&lines[a..b.max(a)].join("\n"));
            tokenize::tokens(&t)
        })
        .collect();
    let bm = Bm25::new(&docs);
    let mut out = Vec::new();
    for a in algos {
        let qp = query_path(queries, a, "txt")?;
        let text = std::fs::read_to_string(&qp).map_err(io(&qp))?;
        let scores = bm.scores(&tokenize::tokens(&strip_line_numbers(&text)));
        let mut order: Vec<usize> = (0..scores.len()).filter(|&i| scores[i] > 0.0).collect();
        order.sort_by(|&x, &y| scores[y].total_cmp(&scores[x]).then(x.cmp(&y)));
        out.push(order.into_iter().take(MAX_RANK).map(as_frag).collect());
    }
    Ok(out)
}
