//! The node and edge vocabulary shared by source-code and p-code graphs.

use super::thin::{Text, Thin};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    C,
    Cpp,
    Java,
    Pcode,
    Python,
    Rust,
    Go,
}

impl Lang {
    pub fn name(self) -> &'static str {
        match self {
            Lang::C => "c",
            Lang::Cpp => "cpp",
            Lang::Java => "java",
            Lang::Pcode => "pcode",
            Lang::Python => "python",
            Lang::Rust => "rust",
            Lang::Go => "go",
        }
    }

    /// A source language by the name `--lang` and `--type-add` take (`c++`, `py`, ...).
    pub fn named(name: &str) -> Option<Lang> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "c" => Lang::C,
            "cpp" | "c++" | "cxx" => Lang::Cpp,
            "java" => Lang::Java,
            "python" | "py" => Lang::Python,
            "rust" | "rs" => Lang::Rust,
            "go" | "golang" => Lang::Go,
            _ => return None,
        })
    }

    /// The languages source files are read in, in the order `--lang` lists them.
    pub const SOURCE: [Lang; 6] = [Lang::C, Lang::Cpp, Lang::Java, Lang::Python, Lang::Rust, Lang::Go];

    /// The separator of a qualified name: `a::b` in C++ and Rust, `a.b` elsewhere.
    pub fn scope_sep(self) -> &'static str {
        match self {
            Lang::Java | Lang::Python | Lang::Go => ".",
            _ => "::",
        }
    }
}

/// What a CFG node stands for. Source and p-code graphs use the same kinds so that
/// later stages can compare them; p-code adds `Math` and `Text` for its marked statements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Entry,
    Exit,
    /// An expression statement (assignment, call, increment, ...).
    Statement,
    /// A declaration with an initializer.
    Declaration,
    /// The test of an if / else-if (or a ternary-free branch point).
    Condition,
    /// The head of a loop: its test, or the iteration of a for-each.
    LoopHead,
    /// The scrutinee of a switch.
    Switch,
    /// A case or default label.
    Case,
    Break,
    Continue,
    Return,
    Goto,
    Label,
    Throw,
    Try,
    Catch,
    Finally,
    /// Java `synchronized (lock)`.
    Synchronized,
    /// A statement that is only a call (p-code `CALL(args)`).
    Call,
    /// p-code math statement `$…$`.
    Math,
    /// p-code natural-language statement `@…@`.
    Text,
}

impl NodeKind {
    pub const ALL: [NodeKind; 21] = [
        NodeKind::Entry,
        NodeKind::Exit,
        NodeKind::Statement,
        NodeKind::Declaration,
        NodeKind::Condition,
        NodeKind::LoopHead,
        NodeKind::Switch,
        NodeKind::Case,
        NodeKind::Break,
        NodeKind::Continue,
        NodeKind::Return,
        NodeKind::Goto,
        NodeKind::Label,
        NodeKind::Throw,
        NodeKind::Try,
        NodeKind::Catch,
        NodeKind::Finally,
        NodeKind::Synchronized,
        NodeKind::Call,
        NodeKind::Math,
        NodeKind::Text,
    ];

    pub fn name(self) -> &'static str {
        match self {
            NodeKind::Entry => "entry",
            NodeKind::Exit => "exit",
            NodeKind::Statement => "statement",
            NodeKind::Declaration => "declaration",
            NodeKind::Condition => "condition",
            NodeKind::LoopHead => "loop_head",
            NodeKind::Switch => "switch",
            NodeKind::Case => "case",
            NodeKind::Break => "break",
            NodeKind::Continue => "continue",
            NodeKind::Return => "return",
            NodeKind::Goto => "goto",
            NodeKind::Label => "label",
            NodeKind::Throw => "throw",
            NodeKind::Try => "try",
            NodeKind::Catch => "catch",
            NodeKind::Finally => "finally",
            NodeKind::Synchronized => "synchronized",
            NodeKind::Call => "call",
            NodeKind::Math => "math",
            NodeKind::Text => "text",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// Straight-line flow.
    Seq,
    /// A condition or loop test that holds (also: switch to a case, for-each to its body).
    True,
    /// A condition or loop test that fails (also: switch with no matching case).
    False,
    /// From the end of a loop body back to its head.
    Back,
    /// break / continue / return / goto / throw without a handler in the function.
    Jump,
    /// From a try region to its handlers.
    Exception,
    /// Call site → callee ENTRY.
    Call,
    /// Callee EXIT → the node after the call site.
    Return,
}

impl EdgeKind {
    pub const ALL: [EdgeKind; 8] = [
        EdgeKind::Seq,
        EdgeKind::True,
        EdgeKind::False,
        EdgeKind::Back,
        EdgeKind::Jump,
        EdgeKind::Exception,
        EdgeKind::Call,
        EdgeKind::Return,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::Seq => "seq",
            EdgeKind::True => "true",
            EdgeKind::False => "false",
            EdgeKind::Back => "back",
            EdgeKind::Jump => "jump",
            EdgeKind::Exception => "exception",
            EdgeKind::Call => "call",
            EdgeKind::Return => "return",
        }
    }
}

/// A call written in a node: the callee as the syntax names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallRef {
    /// The last name component (`foo` in `a.b::foo(x)`).
    pub name: String,
    /// The qualifier as written (`a.b` or `ns::Cls`), empty when unqualified.
    pub qualifier: String,
    pub argc: u32,
    /// `obj.m()` / `p->m()` in C++ and Java: resolution needs the receiver's type.
    pub member: bool,
}

/// One node of a CFG. Line numbers are 1-based and inclusive; byte spans half-open.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Node {
    pub kind: NodeKind,
    pub lang: Lang,
    pub file: u32,
    pub function: u32,
    pub bytes: (u32, u32),
    pub lines: (u32, u32),
    /// Source text with whitespace runs collapsed to one space. Behind one pointer, as are
    /// the calls: a corpus's nodes are held for a whole build, and most have no calls.
    pub text: Text,
    pub calls: Thin<CallRef>,
    /// The loop head, condition or switch whose body holds this node (a local id in the
    /// function's CFG, as `FnCfg` numbers them); `None` at the top level of the body.
    #[serde(default, skip_serializing_if = "Parent::is_none")]
    pub parent: Parent,
}

/// A node's `parent`: an `Option<u32>` in four bytes (the id plus one, zero for none),
/// since a corpus holds millions of nodes. Local ids never reach `u32::MAX`.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Parent(Option<std::num::NonZeroU32>);

impl Parent {
    pub fn of(id: Option<u32>) -> Parent {
        Parent(id.and_then(|p| std::num::NonZeroU32::new(p.wrapping_add(1))))
    }

    pub fn get(self) -> Option<u32> {
        self.0.map(|p| p.get() - 1)
    }

    pub fn is_none(&self) -> bool {
        self.0.is_none()
    }

    pub fn map<T>(self, f: impl FnOnce(u32) -> T) -> Option<T> {
        self.get().map(f)
    }
}

impl PartialEq<Option<u32>> for Parent {
    fn eq(&self, other: &Option<u32>) -> bool {
        self.get() == *other
    }
}

impl std::fmt::Debug for Parent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

impl Serialize for Parent {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Parent {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Parent, D::Error> {
        Option::<u32>::deserialize(d).map(Parent::of)
    }
}

/// Collapses every whitespace run to one space and trims the ends.
pub fn normalize_ws(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}
