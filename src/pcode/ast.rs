//! Typed syntax tree of a p-code file. Spans are byte offsets into the original text.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn join(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Program {
    pub procs: Vec<Proc>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Proc {
    pub name: String,
    pub params: Vec<Expr>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

/// A leaf expression: `$math$`, `@text@`, a call, or an unmarked argument.
#[derive(Clone, Debug, Serialize)]
pub enum Expr {
    Math { text: String, span: Span },
    Text { text: String, span: Span },
    Call(Call),
    Bare { text: String, span: Span },
}

#[derive(Clone, Debug, Serialize)]
pub struct Call {
    pub name: String,
    pub args: Vec<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, Serialize)]
pub enum Test {
    Atom(Expr),
    Not(Box<Test>),
    And(Vec<Test>),
    Or(Vec<Test>),
    Paren(Box<Test>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Direction {
    To,
    Downto,
}

#[derive(Clone, Debug, Serialize)]
pub enum ForHead {
    /// `for $i = 1$ to $n$`, or a single item such as `for $i = 1 to n$`.
    Range {
        start: Expr,
        bound: Option<(Direction, Expr)>,
    },
    /// `for each @vertex v ∈ G.V@`.
    Each(Expr),
}

#[derive(Clone, Debug, Serialize)]
pub enum Stmt {
    Math {
        text: String,
        span: Span,
    },
    Text {
        text: String,
        span: Span,
    },
    Call(Call),
    Return {
        value: Option<Expr>,
        span: Span,
    },
    /// `if` / `elseif` arms in order, then the optional `else` suite.
    If {
        arms: Vec<Arm>,
        otherwise: Option<Vec<Stmt>>,
    },
    While {
        test: Test,
        head: Span,
        body: Vec<Stmt>,
    },
    For {
        head: ForHead,
        head_span: Span,
        body: Vec<Stmt>,
    },
    Repeat {
        body: Vec<Stmt>,
        until: Test,
        until_span: Span,
    },
}

#[derive(Clone, Debug, Serialize)]
pub struct Arm {
    pub test: Test,
    /// From the keyword to the end of the test.
    pub head: Span,
    pub body: Vec<Stmt>,
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Math { span, .. } | Expr::Text { span, .. } | Expr::Bare { span, .. } => *span,
            Expr::Call(c) => c.span,
        }
    }

    /// The expression as a node shows it: markers removed, whitespace collapsed.
    pub fn render(&self) -> String {
        match self {
            Expr::Math { text, .. } | Expr::Text { text, .. } | Expr::Bare { text, .. } => {
                crate::graph::normalize_ws(text)
            }
            Expr::Call(c) => c.render(),
        }
    }
}

impl Call {
    pub fn render(&self) -> String {
        let args: Vec<String> = self.args.iter().map(Expr::render).collect();
        format!("{}({})", self.name, args.join(", "))
    }
}

impl Test {
    pub fn render(&self) -> String {
        match self {
            Test::Atom(e) => e.render(),
            Test::Not(t) => format!("not {}", t.render()),
            Test::And(ts) => ts
                .iter()
                .map(Test::render)
                .collect::<Vec<_>>()
                .join(" and "),
            Test::Or(ts) => ts.iter().map(Test::render).collect::<Vec<_>>().join(" or "),
            Test::Paren(t) => format!("({})", t.render()),
        }
    }

    /// Every leaf expression of the test, left to right.
    pub fn atoms(&self) -> Vec<&Expr> {
        let mut out = Vec::new();
        self.collect_atoms(&mut out);
        out
    }

    fn collect_atoms<'a>(&'a self, out: &mut Vec<&'a Expr>) {
        match self {
            Test::Atom(e) => out.push(e),
            Test::Not(t) | Test::Paren(t) => t.collect_atoms(out),
            Test::And(ts) | Test::Or(ts) => ts.iter().for_each(|t| t.collect_atoms(out)),
        }
    }
}

impl ForHead {
    /// The loop header as its LoopHead node shows it, e.g. `i = 1 to n`.
    pub fn render(&self) -> String {
        match self {
            ForHead::Range { start, bound: None } => start.render(),
            ForHead::Range {
                start,
                bound: Some((dir, end)),
            } => {
                let word = match dir {
                    Direction::To => "to",
                    Direction::Downto => "downto",
                };
                format!("{} {} {}", start.render(), word, end.render())
            }
            ForHead::Each(e) => e.render(),
        }
    }

    pub fn atoms(&self) -> Vec<&Expr> {
        match self {
            ForHead::Range { start, bound } => {
                let mut v = vec![start];
                if let Some((_, e)) = bound {
                    v.push(e);
                }
                v
            }
            ForHead::Each(e) => vec![e],
        }
    }
}
