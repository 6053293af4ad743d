//! How large a query may be. A search costs in proportion to the query's nodes times the
//! index, so one unbounded query (a generated file, `/dev/zero`, a pasted log) could hold
//! a shared server for minutes and grow it by gigabytes. Textbook pseudocode is tens of
//! lines; the defaults leave ample room above that and refuse what is clearly not a query.

use serde::Serialize;
use std::io::Read;
use thiserror::Error;

/// The most a query may hold; every bound is checked before the work it guards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct QueryLimits {
    /// Bytes of query text (read no further than this from a file, pipe or device).
    pub bytes: usize,
    /// Lines of query text.
    pub lines: usize,
    /// Statement nodes of the query's graph (all procedures).
    pub nodes: usize,
    /// Statements nested inside one another (loops and branches).
    pub depth: usize,
}

impl Default for QueryLimits {
    fn default() -> Self {
        // The 47 algorithms of `queries/` reach 0.9 KB, 26 lines, 27 nodes and five levels
        // of nesting: the defaults leave six to seventy times that.
        QueryLimits { bytes: 64 * 1024, lines: 1000, nodes: 2000, depth: 32 }
    }
}

/// A query over one of the limits.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("query too large: {found} {what}, limit {limit} (raise it with {flag})")]
pub struct TooLarge {
    /// `bytes`, `lines`, `nodes` or `nesting levels`.
    pub what: &'static str,
    /// What was found; for a read cut at the limit, `more than LIMIT`.
    pub found: String,
    pub limit: usize,
    /// The option that raises this limit.
    pub flag: &'static str,
}

impl QueryLimits {
    fn over(what: &'static str, found: impl ToString, limit: usize, flag: &'static str) -> TooLarge {
        TooLarge { what, found: found.to_string(), limit, flag }
    }

    /// Checks the text's size before it is parsed.
    pub fn check_text(&self, text: &str) -> Result<(), TooLarge> {
        if text.len() > self.bytes {
            return Err(Self::over("bytes", text.len(), self.bytes, "--max-query-bytes"));
        }
        // Counted only up to the limit: the text is already bounded in bytes.
        let lines = text.lines().take(self.lines + 1).count();
        if lines > self.lines {
            return Err(Self::over("lines", text.lines().count(), self.lines, "--max-query-lines"));
        }
        Ok(())
    }

    /// Checks a parsed query: `nodes` statement nodes, statements nested `depth` deep.
    pub fn check_shape(&self, nodes: usize, depth: usize) -> Result<(), TooLarge> {
        if nodes > self.nodes {
            return Err(Self::over("nodes", nodes, self.nodes, "--max-query-nodes"));
        }
        if depth > self.depth {
            return Err(Self::over("nesting levels", depth, self.depth, "--max-query-depth"));
        }
        Ok(())
    }

    /// Checks a query's p-code (parsed already, so it parses) and its node count.
    pub fn check_pcode(&self, pcode: &str, nodes: usize) -> Result<(), TooLarge> {
        let d = crate::pcode::parse(pcode).map(|p| depth(&p)).unwrap_or(0);
        self.check_shape(nodes, d)
    }

    /// Reads a query from `r`, stopping one byte past the byte limit: a device or pipe that
    /// never ends is read no further.
    pub fn read(&self, r: impl Read) -> Result<String, ReadError> {
        let mut buf = Vec::new();
        r.take(self.bytes as u64 + 1).read_to_end(&mut buf).map_err(ReadError::Io)?;
        if buf.len() > self.bytes {
            return Err(ReadError::TooLarge(Self::over("bytes", format!("more than {}", self.bytes), self.bytes, "--max-query-bytes")));
        }
        let text = String::from_utf8(buf).map_err(|e| ReadError::NotUtf8(e.utf8_error().valid_up_to()))?;
        self.check_text(&text).map_err(ReadError::TooLarge)?;
        Ok(text)
    }
}

/// Why a query could not be read.
#[derive(Debug, Error)]
pub enum ReadError {
    #[error(transparent)]
    TooLarge(TooLarge),
    #[error("{0}")]
    Io(std::io::Error),
    #[error("the query is not UTF-8 text (invalid byte at offset {0})")]
    NotUtf8(usize),
}

/// How deep statements nest in a p-code program (a procedure's own statements are level 1).
pub fn depth(prog: &crate::pcode::ast::Program) -> usize {
    use crate::pcode::ast::Stmt;
    fn block(b: &[Stmt]) -> usize {
        b.iter().map(stmt).max().unwrap_or(0)
    }
    fn stmt(s: &Stmt) -> usize {
        1 + match s {
            Stmt::If { arms, otherwise } => arms.iter().map(|a| block(&a.body)).chain(otherwise.as_deref().map(block)).max().unwrap_or(0),
            Stmt::While { body, .. } | Stmt::For { body, .. } | Stmt::Repeat { body, .. } => block(body),
            _ => 0,
        }
    }
    prog.procs.iter().map(|p| block(&p.body)).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_stops_at_the_byte_limit() {
        let l = QueryLimits { bytes: 100, ..QueryLimits::default() };
        // An endless source: read only up to the limit, then refused.
        let e = l.read(std::io::repeat(b'x')).unwrap_err();
        assert!(e.to_string().starts_with("query too large: more than 100 bytes, limit 100"), "{e}");
        assert_eq!(l.read(&b"QUERY(a)\n  return a\n"[..]).unwrap(), "QUERY(a)\n  return a\n");
        assert!(matches!(l.read(&[0xff, 0xfe][..]), Err(ReadError::NotUtf8(0))));
    }

    #[test]
    fn lines_nodes_and_depth_are_bounded() {
        let l = QueryLimits { lines: 3, nodes: 10, depth: 2, ..QueryLimits::default() };
        assert!(l.check_text("a\nb\nc\n").is_ok());
        assert_eq!(l.check_text("a\nb\nc\nd\ne\n").unwrap_err().to_string(), "query too large: 5 lines, limit 3 (raise it with --max-query-lines)");
        assert!(l.check_shape(10, 2).is_ok());
        assert_eq!(l.check_shape(11, 1).unwrap_err().what, "nodes");
        assert_eq!(l.check_shape(5, 3).unwrap_err().what, "nesting levels");
    }

    #[test]
    fn depth_counts_nested_statements() {
        let p = crate::pcode::parse("F(n)\n    for $i = 1$ to $n$\n        if $i > 2$\n            $x = i$\n    return $x$\n").unwrap();
        assert_eq!(depth(&p), 3);
    }

    #[test]
    fn the_shipped_queries_fit_the_defaults() {
        let l = QueryLimits::default();
        for e in std::fs::read_dir(crate::repo_path("queries")).unwrap().flatten() {
            let text = std::fs::read_to_string(e.path()).unwrap();
            l.check_text(&text).unwrap();
            if e.path().extension().is_some_and(|x| x == "p") {
                let p = crate::pcode::parse(&text).unwrap();
                assert!(depth(&p) <= 8, "{}: depth {}", e.path().display(), depth(&p));
            }
        }
    }
}
