//! p-code text → [`Program`]: masking, a nesting guard, the pest parse, and the
//! conversion of pest pairs into the typed tree.

use super::ast::*;
use super::error::{PcodeError, SyntaxError};
use pest::iterators::{Pair, Pairs};
use pest::Parser as _;

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/pcode.pest"]
struct PestParser;

/// Deepest nesting of brackets or indentation levels accepted. pest and the tree
/// builders recurse once per level; the cap keeps any input far from the stack limit.
pub const MAX_NESTING: usize = 64;

/// Parses a whole p-code file.
pub fn parse(src: &str) -> Result<Program, PcodeError> {
    let masked = mask(src);
    check_nesting(src, &masked)?;
    let mut pairs = PestParser::parse(Rule::file, &masked).map_err(|e| from_pest(src, e))?;
    let file = pairs.next().ok_or_else(|| internal(src, 0))?;
    let mut procs = Vec::new();
    for p in file.into_inner() {
        if p.as_rule() == Rule::proc {
            procs.push(build_proc(src, p)?);
        }
    }
    Ok(Program { procs })
}

/// Replaces line numbers and comments by spaces of the same byte length, so the
/// grammar need not know about them and every offset stays valid for `src`.
pub fn mask(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    for line in src.split_inclusive('\n') {
        let (body, end) = split_line_end(line);
        let mut chars = body.char_indices().peekable();
        let mut masked = String::with_capacity(body.len());
        // Optional line number: leading digits followed by blank or end of line.
        let lead = body.len() - body.trim_start_matches([' ', '\t']).len();
        let digits = body[lead..].bytes().take_while(u8::is_ascii_digit).count();
        let after = body[lead + digits..].chars().next();
        let number_end = if digits > 0 && matches!(after, None | Some(' ') | Some('\t')) {
            lead + digits
        } else {
            0
        };
        let (mut in_math, mut in_text) = (false, false);
        while let Some((i, c)) = chars.next() {
            if i >= lead && i < number_end {
                masked.push(' ');
                continue;
            }
            let comment = !in_math
                && !in_text
                && (c == '▷' || (c == '/' && matches!(chars.peek(), Some((_, '/')))));
            if comment {
                masked.extend(std::iter::repeat_n(' ', body.len() - i));
                break;
            }
            match c {
                '$' if !in_text => in_math = !in_math,
                '@' if !in_math => in_text = !in_text,
                _ => {}
            }
            masked.push(c);
        }
        out.push_str(&masked);
        out.push_str(end);
    }
    out
}

fn split_line_end(line: &str) -> (&str, &str) {
    let body = line.trim_end_matches(['\n', '\r']);
    (body, &line[body.len()..])
}

fn check_nesting(src: &str, masked: &str) -> Result<(), PcodeError> {
    let mut depth = 0usize;
    for (i, c) in masked.char_indices() {
        match c {
            '(' | '{' => depth += 1,
            ')' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > MAX_NESTING {
            return Err(nesting_error(src, i, "brackets"));
        }
    }
    let mut levels: Vec<usize> = Vec::new();
    let mut offset = 0;
    for line in masked.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if !body.trim().is_empty() {
            let width = body.len() - body.trim_start_matches([' ', '\t']).len();
            while levels.last().is_some_and(|&w| w > width) {
                levels.pop();
            }
            if levels.last().is_none_or(|&w| w < width) {
                levels.push(width);
            }
            if levels.len() > MAX_NESTING {
                return Err(nesting_error(src, offset + width, "indentation levels"));
            }
        }
        offset += line.len();
    }
    Ok(())
}

fn nesting_error(src: &str, at: usize, what: &str) -> PcodeError {
    let mut e = syntax_at(src, at, Vec::new());
    e.message = Some(format!("more than {MAX_NESTING} nested {what}"));
    PcodeError::Syntax(Box::new(e))
}

/// 1-based line and column (in characters) of byte offset `at`.
pub fn line_col(src: &str, at: usize) -> (u32, u32) {
    let at = floor_char(src, at.min(src.len()));
    let before = &src[..at];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = src[line_start..at].chars().count() + 1;
    (line as u32, col as u32)
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn syntax_at(src: &str, at: usize, expected: Vec<String>) -> SyntaxError {
    let at = floor_char(src, at.min(src.len()));
    let (line, col) = line_col(src, at);
    let start = src[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = src[at..].find('\n').map_or(src.len(), |i| at + i);
    let line_text = src[start..end].trim_end_matches('\r').to_string();
    let rest = &src[at..end];
    let found: String = if rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
        rest.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '-')
            .take(24)
            .collect()
    } else {
        rest.chars()
            .take(8)
            .collect::<String>()
            .trim_end()
            .to_string()
    };
    SyntaxError {
        file: String::new(),
        line,
        col,
        line_text,
        expected,
        found,
        message: None,
    }
}

fn from_pest(src: &str, e: pest::error::Error<Rule>) -> PcodeError {
    let at = match e.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    };
    let mut expected: Vec<String> = match &e.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } => positives
            .iter()
            .filter_map(|r| describe(*r))
            .map(str::to_string)
            .collect(),
        pest::error::ErrorVariant::CustomError { .. } => Vec::new(),
    };
    expected.sort();
    expected.dedup();
    let mut err = syntax_at(src, at, expected);
    if let pest::error::ErrorVariant::CustomError { message } = e.variant {
        err.message = Some(message);
    }
    PcodeError::Syntax(Box::new(err))
}

/// What a rule means to a person writing p-code; `None` for rules that only
/// repeat what another rule in the same error already says.
fn describe(r: Rule) -> Option<&'static str> {
    Some(match r {
        Rule::math | Rule::math_body => "math `$…$`",
        Rule::text | Rule::text_body => "natural language `@…@`",
        Rule::call => "a call `NAME(…)`",
        Rule::NAME => "a procedure name",
        Rule::params => "parameters `(…)`",
        Rule::args | Rule::bare => "an argument",
        Rule::test | Rule::or_t | Rule::and_t | Rule::not_t | Rule::paren => "a test",
        Rule::kw_if | Rule::if_i | Rule::if_b => "`if`",
        Rule::kw_elseif | Rule::elif_i | Rule::elif_b => "`elseif`",
        Rule::kw_else | Rule::else_i | Rule::else_b => "`else`",
        Rule::kw_while | Rule::while_i | Rule::while_b => "`while`",
        Rule::kw_for | Rule::for_i | Rule::for_b => "`for`",
        Rule::kw_each | Rule::each_head => "`each`",
        Rule::range_head => "a loop range",
        Rule::kw_repeat | Rule::repeat_i | Rule::repeat_b => "`repeat`",
        Rule::kw_until | Rule::until_i => "`until`",
        Rule::kw_return | Rule::return_stmt => "`return`",
        Rule::kw_and => "`and`",
        Rule::kw_or => "`or`",
        Rule::kw_not => "`not`",
        Rule::kw_then => "`then`/`do`",
        Rule::direction | Rule::to | Rule::downto => "`to`/`downto`",
        Rule::brace_suite => "a suite `{ … }`",
        Rule::indent_suite => "an indented suite",
        Rule::proc | Rule::file => "a procedure `NAME(params)`",
        Rule::EOI => "end of input",
        _ => return None,
    })
}

fn internal(src: &str, at: usize) -> PcodeError {
    let mut e = syntax_at(src, at, Vec::new());
    e.message = Some("internal error: unexpected parse tree".to_string());
    PcodeError::Syntax(Box::new(e))
}

fn span(p: &Pair<Rule>) -> Span {
    let s = p.as_span();
    Span {
        start: s.start() as u32,
        end: s.end() as u32,
    }
}

fn next<'a>(src: &str, it: &mut Pairs<'a, Rule>, at: usize) -> Result<Pair<'a, Rule>, PcodeError> {
    it.next().ok_or_else(|| internal(src, at))
}

/// The original (unmasked) text under a pair.
fn original<'s>(src: &'s str, p: &Pair<Rule>) -> &'s str {
    let s = p.as_span();
    src.get(s.start()..s.end()).unwrap_or("")
}

fn build_proc(src: &str, p: Pair<Rule>) -> Result<Proc, PcodeError> {
    let sp = span(&p);
    let mut inner = p.into_inner();
    let name = next(src, &mut inner, sp.start as usize)?;
    let params = next(src, &mut inner, sp.start as usize)?;
    let suite = next(src, &mut inner, sp.start as usize)?;
    let params = match params.into_inner().next() {
        Some(args) => build_args(src, args)?,
        None => Vec::new(),
    };
    let body = build_suite(src, suite)?;
    // The proc span starts at the name, not at the pushed indentation.
    let start = span(&name).start;
    Ok(Proc {
        name: name.as_str().to_string(),
        params,
        body,
        span: Span { start, end: sp.end },
    })
}

fn build_suite(src: &str, p: Pair<Rule>) -> Result<Vec<Stmt>, PcodeError> {
    p.into_inner().map(|s| build_stmt(src, s)).collect()
}

fn build_stmt(src: &str, p: Pair<Rule>) -> Result<Stmt, PcodeError> {
    let sp = span(&p);
    let at = sp.start as usize;
    match p.as_rule() {
        Rule::math => Ok(Stmt::Math {
            text: marked_body(src, &p),
            span: sp,
        }),
        Rule::text => Ok(Stmt::Text {
            text: marked_body(src, &p),
            span: sp,
        }),
        Rule::call => Ok(Stmt::Call(build_call(src, p)?)),
        Rule::return_stmt => {
            let value = p
                .into_inner()
                .find(|q| q.as_rule() != Rule::kw_return)
                .map(|q| build_expr(src, q))
                .transpose()?;
            Ok(Stmt::Return { value, span: sp })
        }
        Rule::if_i | Rule::if_b => build_if(src, p),
        Rule::while_i | Rule::while_b => {
            let mut inner = p.into_inner();
            let kw = next(src, &mut inner, at)?;
            let test = next(src, &mut inner, at)?;
            let head = span(&kw).join(span(&test));
            let test = build_test(src, test)?;
            let body = suite_of(src, inner, at)?;
            Ok(Stmt::While { test, head, body })
        }
        Rule::for_i | Rule::for_b => {
            let mut inner = p.into_inner();
            let kw = next(src, &mut inner, at)?;
            let head = next(src, &mut inner, at)?;
            let head_span = span(&kw).join(span(&head));
            let head = build_for_head(src, head)?;
            let body = suite_of(src, inner, at)?;
            Ok(Stmt::For {
                head,
                head_span,
                body,
            })
        }
        Rule::repeat_i | Rule::repeat_b => {
            let mut inner = p.into_inner().filter(|q| q.as_rule() != Rule::kw_repeat);
            let suite = inner.next().ok_or_else(|| internal(src, at))?;
            let body = build_suite(src, suite)?;
            let rest: Vec<Pair<Rule>> = inner.collect();
            // repeat_i nests `until` in until_i; repeat_b has kw_until and test inline.
            let flat: Vec<Pair<Rule>> = rest
                .into_iter()
                .flat_map(|q| {
                    if q.as_rule() == Rule::until_i {
                        q.into_inner().collect()
                    } else {
                        vec![q]
                    }
                })
                .collect();
            let kw = flat
                .iter()
                .find(|q| q.as_rule() == Rule::kw_until)
                .ok_or_else(|| internal(src, at))?;
            let test = flat
                .iter()
                .find(|q| q.as_rule() == Rule::test)
                .ok_or_else(|| internal(src, at))?;
            let until_span = span(kw).join(span(test));
            let until = build_test(src, test.clone())?;
            Ok(Stmt::Repeat {
                body,
                until,
                until_span,
            })
        }
        _ => Err(internal(src, at)),
    }
}

/// The suite that follows a loop or branch header (skipping `then`/`do`).
fn suite_of(src: &str, rest: Pairs<Rule>, at: usize) -> Result<Vec<Stmt>, PcodeError> {
    for q in rest {
        if matches!(q.as_rule(), Rule::brace_suite | Rule::indent_suite) {
            return build_suite(src, q);
        }
    }
    Err(internal(src, at))
}

fn build_if(src: &str, p: Pair<Rule>) -> Result<Stmt, PcodeError> {
    let at = span(&p).start as usize;
    let mut arms = Vec::new();
    let mut otherwise = None;
    let mut kw_start: Option<Span> = None;
    let mut test: Option<Pair<Rule>> = None;
    for q in p.into_inner() {
        match q.as_rule() {
            Rule::kw_if => kw_start = kw_start.or(Some(span(&q))),
            Rule::test => test = Some(q),
            Rule::brace_suite | Rule::indent_suite => {
                let t = test.take().ok_or_else(|| internal(src, at))?;
                let head = kw_start.take().unwrap_or(span(&t)).join(span(&t));
                arms.push(Arm {
                    test: build_test(src, t)?,
                    head,
                    body: build_suite(src, q)?,
                });
            }
            Rule::elif_i | Rule::elif_b => arms.push(build_elif(src, q)?),
            Rule::else_i | Rule::else_b => {
                let at = span(&q).start as usize;
                otherwise = Some(suite_of(src, q.into_inner(), at)?);
            }
            _ => {}
        }
    }
    Ok(Stmt::If { arms, otherwise })
}

fn build_elif(src: &str, p: Pair<Rule>) -> Result<Arm, PcodeError> {
    let at = span(&p).start as usize;
    let mut head: Option<Span> = None;
    let mut test = None;
    let mut body = None;
    for q in p.into_inner() {
        match q.as_rule() {
            Rule::kw_elseif | Rule::kw_else if head.is_none() => head = Some(span(&q)),
            Rule::test => test = Some(q),
            Rule::brace_suite | Rule::indent_suite => body = Some(build_suite(src, q)?),
            _ => {}
        }
    }
    let t = test.ok_or_else(|| internal(src, at))?;
    let head = head.unwrap_or(span(&t)).join(span(&t));
    Ok(Arm {
        test: build_test(src, t)?,
        head,
        body: body.ok_or_else(|| internal(src, at))?,
    })
}

fn build_for_head(src: &str, p: Pair<Rule>) -> Result<ForHead, PcodeError> {
    let at = span(&p).start as usize;
    let rule = p.as_rule();
    let mut items = Vec::new();
    let mut dir = None;
    for q in p.into_inner() {
        match q.as_rule() {
            Rule::math | Rule::text => items.push(build_expr(src, q)?),
            Rule::direction => {
                let downto = q
                    .into_inner()
                    .next()
                    .is_some_and(|d| d.as_rule() == Rule::downto);
                dir = Some(if downto {
                    Direction::Downto
                } else {
                    Direction::To
                });
            }
            _ => {}
        }
    }
    let mut items = items.into_iter();
    let first = items.next().ok_or_else(|| internal(src, at))?;
    if rule == Rule::each_head {
        return Ok(ForHead::Each(first));
    }
    let bound = match (dir, items.next()) {
        (Some(d), Some(e)) => Some((d, e)),
        _ => None,
    };
    Ok(ForHead::Range {
        start: first,
        bound,
    })
}

fn build_test(src: &str, p: Pair<Rule>) -> Result<Test, PcodeError> {
    let at = span(&p).start as usize;
    match p.as_rule() {
        Rule::test | Rule::paren => {
            let is_paren = p.as_rule() == Rule::paren;
            let inner = p.into_inner().next().ok_or_else(|| internal(src, at))?;
            let t = build_test(src, inner)?;
            Ok(if is_paren {
                Test::Paren(Box::new(t))
            } else {
                t
            })
        }
        Rule::or_t | Rule::and_t => {
            let is_or = p.as_rule() == Rule::or_t;
            let parts: Vec<Test> = p
                .into_inner()
                .filter(|q| !matches!(q.as_rule(), Rule::kw_and | Rule::kw_or))
                .map(|q| build_test(src, q))
                .collect::<Result<_, _>>()?;
            Ok(match (parts.len(), is_or) {
                (1, _) => parts.into_iter().next().ok_or_else(|| internal(src, at))?,
                (_, true) => Test::Or(parts),
                (_, false) => Test::And(parts),
            })
        }
        Rule::not_t => {
            let mut nots = 0;
            let mut atom = None;
            for q in p.into_inner() {
                match q.as_rule() {
                    Rule::kw_not => nots += 1,
                    _ => atom = Some(q),
                }
            }
            let atom = atom.ok_or_else(|| internal(src, at))?;
            // Each `not` nests the tree one level; keep it within the nesting cap.
            if nots > MAX_NESTING {
                return Err(nesting_error(src, at, "`not`s"));
            }
            let mut t = if atom.as_rule() == Rule::paren {
                build_test(src, atom)?
            } else {
                Test::Atom(build_expr(src, atom)?)
            };
            for _ in 0..nots {
                t = Test::Not(Box::new(t));
            }
            Ok(t)
        }
        _ => Err(internal(src, at)),
    }
}

fn build_expr(src: &str, p: Pair<Rule>) -> Result<Expr, PcodeError> {
    let sp = span(&p);
    match p.as_rule() {
        Rule::math => Ok(Expr::Math {
            text: marked_body(src, &p),
            span: sp,
        }),
        Rule::text => Ok(Expr::Text {
            text: marked_body(src, &p),
            span: sp,
        }),
        Rule::call => Ok(Expr::Call(build_call(src, p)?)),
        Rule::bare => Ok(Expr::Bare {
            text: original(src, &p).trim().to_string(),
            span: sp,
        }),
        _ => Err(internal(src, sp.start as usize)),
    }
}

/// Text between the `$`/`@` markers, from the original input.
fn marked_body(src: &str, p: &Pair<Rule>) -> String {
    let s = p.as_span();
    src.get(s.start() + 1..s.end().saturating_sub(1))
        .unwrap_or("")
        .to_string()
}

fn build_call(src: &str, p: Pair<Rule>) -> Result<Call, PcodeError> {
    let sp = span(&p);
    let mut inner = p.into_inner();
    let name = next(src, &mut inner, sp.start as usize)?
        .as_str()
        .to_string();
    let args = match inner.next() {
        Some(a) => build_args(src, a)?,
        None => Vec::new(),
    };
    Ok(Call {
        name,
        args,
        span: sp,
    })
}

fn build_args(src: &str, p: Pair<Rule>) -> Result<Vec<Expr>, PcodeError> {
    p.into_inner().map(|q| build_expr(src, q)).collect()
}
