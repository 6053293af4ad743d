//! A single function's control-flow graph, as the front ends build it, before it joins
//! the corpus-wide ICFG.

use super::node::{EdgeKind, Lang, Node, NodeKind};
use serde::{Deserialize, Serialize};

/// Index of a node inside one [`FnCfg`]. ENTRY is always 0 and EXIT always 1.
pub type LocalId = u32;
pub const ENTRY: LocalId = 0;
pub const EXIT: LocalId = 1;

/// What the corpus knows about a function besides its graph.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FunctionMeta {
    /// Simple name (`sort`, `<init>` is written as the class name for constructors,
    /// `lambda$N` for lambdas).
    pub name: String,
    /// Enclosing scopes, outermost first: C++ namespaces/classes, Java package then classes.
    pub scope: Vec<String>,
    /// Number of declared parameters; `None` for variadic C/C++ functions.
    pub arity: Option<u32>,
    /// Minimum number of arguments (fewer with C++ default arguments).
    pub min_arity: u32,
    /// C/C++ `static` at file scope: visible only inside its file.
    pub file_local: bool,
    pub lang: Lang,
    pub file: u32,
    pub lines: (u32, u32),
    pub bytes: (u32, u32),
}

impl FunctionMeta {
    /// `scope::name` with the language's separator.
    pub fn qualified(&self) -> String {
        let sep = self.lang.scope_sep();
        let mut s = self.scope.join(sep);
        if !s.is_empty() {
            s.push_str(sep);
        }
        s.push_str(&self.name);
        s
    }

    pub fn accepts(&self, argc: u32) -> bool {
        match self.arity {
            Some(n) => argc >= self.min_arity && argc <= n,
            None => argc >= self.min_arity,
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FnCfg {
    pub nodes: Vec<Node>,
    pub edges: Vec<(LocalId, LocalId, EdgeKind)>,
}

impl FnCfg {
    /// A graph holding ENTRY and EXIT for a function at `bytes`/`lines` of `file`.
    pub fn new(lang: Lang, file: u32, function: u32, bytes: (u32, u32), lines: (u32, u32)) -> Self {
        let mk = |kind| Node {
            kind,
            lang,
            file,
            function,
            bytes,
            lines,
            text: Default::default(),
            calls: Default::default(),
            parent: Default::default(),
        };
        FnCfg {
            nodes: vec![mk(NodeKind::Entry), mk(NodeKind::Exit)],
            edges: Vec::new(),
        }
    }

    pub fn add(&mut self, node: Node) -> LocalId {
        self.nodes.push(node);
        (self.nodes.len() - 1) as LocalId
    }

    pub fn edge(&mut self, from: LocalId, to: LocalId, kind: EdgeKind) {
        if !self.edges.contains(&(from, to, kind)) {
            self.edges.push((from, to, kind));
        }
    }

    /// Successors of `n` inside this function.
    pub fn succ(&self, n: LocalId) -> impl Iterator<Item = (LocalId, EdgeKind)> + '_ {
        self.edges.iter().filter(move |e| e.0 == n).map(|e| (e.1, e.2))
    }

    /// Edge set as `(from text, to text, kind)` triples; used by fixture tests.
    pub fn edge_triples(&self) -> Vec<(String, String, EdgeKind)> {
        let label = |i: LocalId| {
            let n = &self.nodes[i as usize];
            match n.kind {
                NodeKind::Entry => "ENTRY".to_string(),
                NodeKind::Exit => "EXIT".to_string(),
                _ => n.text.to_string(),
            }
        };
        let mut v: Vec<_> = self.edges.iter().map(|&(a, b, k)| (label(a), label(b), k)).collect();
        v.sort();
        v
    }
}
