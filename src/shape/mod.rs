//! The shape of code, with no names in it: each function's nesting tree of loops and
//! branches, and for every statement what it computes (math-operator families,
//! array-index shape, calls). Source functions and pseudocode procedures get the same
//! shapes, so [`align`] can score how well a query's control flow sits inside a
//! candidate's, whatever either calls its variables.

pub mod align;
pub mod store;
pub mod subscript;
pub mod tokens;

use crate::features::{count_pcode, count_source, OpCounts};
use crate::graph::{EdgeKind, Icfg, Lang, NodeKind};
use petgraph::visit::EdgeRef;
use petgraph::graph::NodeIndex;
use std::collections::HashMap;
pub use subscript::Subscripts;

/// Most nodes kept of one function (the rest of a huge generated function adds nothing).
pub const MAX_NODES: usize = 3000;
/// "No parent": a node at the top level of its function.
pub const TOP: u16 = u16::MAX;

/// What a node is in the nesting tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Role {
    Loop = 0,
    Branch = 1,
    Statement = 2,
    Return = 3,
    Jump = 4,
    /// English in pseudocode: says what happens, not how.
    Text = 5,
}

impl Role {
    pub fn of(kind: NodeKind) -> Option<Role> {
        Some(match kind {
            NodeKind::LoopHead => Role::Loop,
            NodeKind::Condition | NodeKind::Switch | NodeKind::Case => Role::Branch,
            NodeKind::Statement | NodeKind::Declaration | NodeKind::Math | NodeKind::Call => Role::Statement,
            NodeKind::Return => Role::Return,
            NodeKind::Break | NodeKind::Continue | NodeKind::Goto | NodeKind::Throw => Role::Jump,
            NodeKind::Text => Role::Text,
            _ => return None,
        })
    }

    pub fn from_u8(b: u8) -> Option<Role> {
        [Role::Loop, Role::Branch, Role::Statement, Role::Return, Role::Jump, Role::Text].get(b as usize).copied()
    }

    pub fn name(self) -> &'static str {
        match self {
            Role::Loop => "loop",
            Role::Branch => "branch",
            Role::Statement => "statement",
            Role::Return => "return",
            Role::Jump => "jump",
            Role::Text => "text",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShapeNode {
    pub role: Role,
    /// Index of the enclosing loop or branch in [`Shape::nodes`], or [`TOP`].
    pub parent: u16,
    /// Operator counts per family (saturating), in `OpCounts` order.
    pub ops: [u8; 7],
    pub sub: Subscripts,
    /// Calls written in the node.
    pub calls: u8,
    /// Name-free sketch of the statement's tokens ([`node_sig`]); 0 for English, jumps and
    /// loops over a collection.
    pub sig: u128,
    /// Absolute first and last line.
    pub lines: (u32, u32),
    /// The node's offset from its function's ENTRY in the ICFG (node id = entry + local).
    pub local: u16,
    /// Def-use edges: how many nodes back (in this order) the last writes of the
    /// variables it reads stand, nearest first; 0 = none. Names are not kept, only
    /// which statement feeds which.
    pub flow: [u16; FLOW_SLOTS],
}

/// Def-use edges kept per node: the nearest writes of what it reads.
pub const FLOW_SLOTS: usize = 3;

/// One function (or pseudocode procedure): its nodes in text order, parents first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shape {
    pub nodes: Vec<ShapeNode>,
    /// Calls that resolved to functions of the corpus: (node, callee function).
    pub callees: Vec<(u16, u32)>,
    /// The function calls itself.
    pub recursive: bool,
    pub lines: (u32, u32),
}

fn sat(n: u32) -> u8 {
    n.min(255) as u8
}

/// Operator counts of a node as the index's embedding counts them.
pub fn node_ops(lang: Lang, kind: NodeKind, text: &str) -> OpCounts {
    match lang {
        Lang::Pcode => match kind {
            NodeKind::Math | NodeKind::Return | NodeKind::Call => count_pcode(text, false),
            NodeKind::Condition | NodeKind::LoopHead => count_pcode(text, true),
            _ => OpCounts::default(),
        },
        l => match kind {
            NodeKind::Entry | NodeKind::Exit => OpCounts::default(),
            _ => count_source(l, text),
        },
    }
}

/// The sketch of a node's text ([`tokens`]): statements, returns, conditions, and loop
/// heads read as their test; 0 for English and jumps.
pub fn node_sig(kind: NodeKind, text: &str) -> u128 {
    match kind {
        NodeKind::Statement | NodeKind::Declaration | NodeKind::Math | NodeKind::Call | NodeKind::Return => tokens::sketch(text, false),
        NodeKind::Condition => tokens::sketch(text, true),
        NodeKind::LoopHead => tokens::loop_test(text).map_or(0, |t| tokens::sketch(&t, true)),
        _ => 0,
    }
}

/// Fills each node's [`ShapeNode::flow`] from the variables the nodes read and write
/// (`texts[k]` is node k's kind and text): the last earlier write of each variable read.
/// A loop head also writes the variables of its test that its body writes (C's
/// `for (j = 0; j < n; j++)` and p-code's `for j = 1 to n` alike hand `j` to the body from
/// the head). Needs parents before children.
pub(crate) fn set_flow(nodes: &mut [ShapeNode], texts: &[(NodeKind, &str)]) {
    use tokens::Access;
    let access: Vec<Option<(Option<String>, Vec<String>)>> = texts
        .iter()
        .map(|&(kind, text)| {
            let a = match kind {
                NodeKind::LoopHead => Access::LoopHead,
                NodeKind::Condition | NodeKind::Switch | NodeKind::Case => Access::Test,
                NodeKind::Statement | NodeKind::Declaration | NodeKind::Math | NodeKind::Call | NodeKind::Return => Access::Statement,
                _ => return None,
            };
            Some(tokens::def_use(text, a))
        })
        .collect();
    let def = |k: usize| access[k].as_ref().and_then(|(d, _)| d.as_deref());
    // What each loop's body writes: every write handed up to the loops around it.
    let mut inside: HashMap<usize, Vec<&str>> = HashMap::new();
    for (j, n) in nodes.iter().enumerate() {
        let Some(d) = def(j) else { continue };
        let mut p = n.parent;
        while p != TOP {
            if nodes[p as usize].role == Role::Loop {
                inside.entry(p as usize).or_default().push(d);
            }
            p = nodes[p as usize].parent;
        }
    }
    let writes: Vec<Vec<&str>> = (0..access.len())
        .map(|k| {
            let body = inside.get(&k).map_or(&[][..], Vec::as_slice);
            let own = access[k].iter().flat_map(|(_, uses)| uses.iter().map(String::as_str).filter(|u| body.contains(u)));
            def(k).into_iter().chain(own).collect()
        })
        .collect();
    let mut last: HashMap<&str, usize> = HashMap::new();
    for k in 0..nodes.len().min(texts.len()) {
        let Some((_, uses)) = &access[k] else { continue };
        let mut from: Vec<usize> = uses.iter().filter_map(|u| last.get(u.as_str()).copied()).collect();
        from.sort_unstable_by(|a, b| b.cmp(a));
        from.dedup();
        for (slot, j) in from.into_iter().take(FLOW_SLOTS).enumerate() {
            nodes[k].flow[slot] = (k - j).min(u16::MAX as usize) as u16;
        }
        for &w in &writes[k] {
            last.insert(w, k);
        }
    }
}

impl Shape {
    /// The shape of function `f` of `icfg`. `ops(node)` gives a node's operator counts
    /// (the index passes the counts its embedding already made).
    pub fn of_function(icfg: &Icfg, f: u32, ops: &dyn Fn(NodeIndex) -> OpCounts) -> Shape {
        let func = &icfg.functions[f as usize];
        let range = icfg.function_nodes(f);
        let base = range.start;
        let mut keep: Vec<usize> = range
            .filter(|&i| Role::of(icfg.graph[NodeIndex::new(i)].kind).is_some())
            .collect();
        // Text order, except that a loop head written after its body (do-while) goes
        // before it: parents precede their children.
        let mut key: HashMap<usize, i64> = keep.iter().map(|&i| (i, 2 * icfg.graph[NodeIndex::new(i)].bytes.0 as i64)).collect();
        for &i in &keep {
            let (mut bound, mut cur) = (key[&i], i);
            while let Some(p) = icfg.graph[NodeIndex::new(cur)].parent.map(|p| base + p as usize) {
                let Some(k) = key.get_mut(&p) else { break };
                if *k < bound {
                    break;
                }
                *k = bound - 1;
                bound = *k;
                cur = p;
            }
        }
        // A `for` update (`i++`) is written in the head but runs after the body, where a
        // pseudocode loop's own last step stands: it goes after the loop's other children.
        let parent_of = |i: usize| icfg.graph[NodeIndex::new(i)].parent.map(|p| base + p as usize);
        for &i in &keep {
            let Some(p) = parent_of(i) else { continue };
            let is_update = icfg.graph[NodeIndex::new(i)].kind == NodeKind::Statement
                && icfg.graph[NodeIndex::new(p)].kind == NodeKind::LoopHead
                && icfg.graph.edges(NodeIndex::new(i)).any(|e| *e.weight() == EdgeKind::Back && e.target().index() == p);
            if is_update {
                let inside = |mut j: usize| {
                    while let Some(q) = parent_of(j) {
                        if q == p {
                            return true;
                        }
                        j = q;
                    }
                    false
                };
                let last = keep.iter().filter(|&&j| j != i && inside(j)).map(|j| key[j]).max();
                if let Some(last) = last.filter(|&l| l > key[&i]) {
                    key.insert(i, last + 1);
                }
            }
        }
        keep.sort_by_key(|&i| (key[&i], i));
        keep.truncate(MAX_NODES);
        let pos: HashMap<usize, u16> = keep.iter().enumerate().map(|(k, &i)| (i, k as u16)).collect();
        let mut nodes = Vec::with_capacity(keep.len());
        for &i in &keep {
            let n = &icfg.graph[NodeIndex::new(i)];
            let c = ops(NodeIndex::new(i));
            nodes.push(ShapeNode {
                role: Role::of(n.kind).expect("filtered above"),
                parent: n.parent.get().and_then(|p| pos.get(&(base + p as usize)).copied()).unwrap_or(TOP),
                ops: c.0.map(sat),
                sub: subscript::scan(&n.text),
                calls: sat(n.calls.len() as u32),
                sig: node_sig(n.kind, &n.text),
                lines: n.lines,
                local: (i - base).min(u16::MAX as usize) as u16,
                flow: [0; FLOW_SLOTS],
            });
        }
        // Truncation can cut a parent; the tree must stay parents-first.
        for k in 0..nodes.len() {
            if nodes[k].parent != TOP && nodes[k].parent as usize >= k {
                nodes[k].parent = TOP;
            }
        }
        let texts: Vec<(NodeKind, &str)> = keep.iter().map(|&i| (icfg.graph[NodeIndex::new(i)].kind, &*icfg.graph[NodeIndex::new(i)].text)).collect();
        set_flow(&mut nodes, &texts);
        let mut callees = Vec::new();
        let mut recursive = false;
        for site in icfg.call_sites(icfg.function_nodes(f)) {
            let Some(&k) = pos.get(&site.node.index()) else { continue };
            // An ambiguous call (overloads, copies of a function in several files) keeps
            // only a target in the caller's own file; otherwise nothing is known of it.
            let targets: Vec<u32> = if site.targets.len() > 1 {
                let own: Vec<u32> = site.targets.iter().copied().filter(|&t| icfg.functions[t as usize].meta.file == func.meta.file).collect();
                if own.len() == 1 { own } else { Vec::new() }
            } else {
                site.targets.to_vec()
            };
            if site.targets.contains(&f) {
                recursive = true;
            }
            for &t in &targets {
                if t == f {
                    recursive = true;
                } else if !callees.contains(&(k, t)) {
                    callees.push((k, t));
                }
            }
        }
        Shape { nodes, callees, recursive, lines: func.meta.lines }
    }

    /// Shapes of every function of a (small) graph, counting operators from node text:
    /// pseudocode queries and tests.
    pub fn all(icfg: &Icfg) -> Vec<Shape> {
        let ops = |n: NodeIndex| {
            let w = &icfg.graph[n];
            node_ops(w.lang, w.kind, &w.text)
        };
        (0..icfg.functions.len() as u32).map(|f| Shape::of_function(icfg, f, &ops)).collect()
    }

    /// The locals ([`ShapeNode::local`]) of the nodes of function `f` that call `f` itself.
    pub fn self_calls(icfg: &Icfg, f: u32) -> Vec<u16> {
        let range = icfg.function_nodes(f);
        let base = range.start;
        icfg.call_sites(range).iter().filter(|c| c.targets.contains(&f)).map(|c| (c.node.index() - base).min(u16::MAX as usize) as u16).collect()
    }

    /// This procedure with its tail call to itself written as a loop, the way iterative
    /// code has it: EUCLID's `if b == 0 … else return EUCLID(b, a mod b)` becomes
    /// `while b ≠ 0` with the call as the loop's last statement (the parameters' update)
    /// and the base case after the loop; MAX-HEAPIFY's closing `if largest ≠ i …
    /// MAX-HEAPIFY(A, largest)` becomes a loop around the whole body (a sift-down).
    /// `self_calls`: the locals of the nodes that call the procedure itself. `None` unless
    /// the last node is one of them and no loop holds it. Gives the shape and, for each of
    /// its nodes, the node of `self` it stands for.
    pub fn tail_call_as_loop(&self, self_calls: &[u16]) -> Option<(Shape, Vec<u16>)> {
        let last = self.nodes.len().checked_sub(1)?;
        if !self_calls.contains(&self.nodes[last].local) {
            return None;
        }
        let mut guard = None;
        let mut p = self.nodes[last].parent;
        while p != TOP {
            let n = &self.nodes[p as usize];
            if n.role == Role::Loop {
                return None;
            }
            if guard.is_none() && n.role == Role::Branch {
                guard = Some(p as usize);
            }
            p = n.parent;
        }
        let g = guard?;
        let top: Vec<usize> = (0..self.nodes.len()).filter(|&k| self.nodes[k].parent == TOP).collect();
        // (old node or the new loop head, new parent as an old node / TOP / the head)
        const HEAD: usize = usize::MAX;
        let mut order: Vec<usize> = Vec::with_capacity(self.nodes.len() + 1);
        let mut parent_of: Vec<usize> = self.nodes.iter().map(|n| if n.parent == TOP { TOP as usize } else { n.parent as usize }).collect();
        let mut loop_node = g;
        if top == [g] {
            // The whole body is the guard: it turns into the loop; base cases leave it.
            let out: Vec<usize> = (0..self.nodes.len()).filter(|&k| k != last && self.nodes[k].parent as usize == g && self.nodes[k].role == Role::Return).collect();
            order.extend((0..self.nodes.len()).filter(|k| !out.contains(k)));
            for &k in &out {
                parent_of[k] = TOP as usize;
            }
            order.extend(out);
        } else {
            loop_node = HEAD;
            order.push(HEAD);
            for &k in &top {
                parent_of[k] = HEAD;
            }
            order.extend(0..self.nodes.len());
        }
        let pos: HashMap<usize, u16> = order.iter().enumerate().map(|(i, &k)| (k, i as u16)).collect();
        let mut nodes = Vec::with_capacity(order.len());
        let mut orig = Vec::with_capacity(order.len());
        for &k in &order {
            let (mut n, parent) = if k == HEAD { (self.nodes[g], TOP as usize) } else { (self.nodes[k], parent_of[k]) };
            n.parent = if parent == TOP as usize { TOP } else { pos[&parent] };
            if k == loop_node {
                n.role = Role::Loop;
            }
            if k == HEAD {
                n.flow = [0; FLOW_SLOTS];
            }
            if k == last {
                // The call is now the update of the parameters.
                n.role = Role::Statement;
                n.calls = 0;
            }
            nodes.push(n);
            orig.push(if k == HEAD { g as u16 } else { k as u16 });
        }
        let callees = self.callees.iter().map(|&(k, t)| (pos[&(k as usize)], t)).collect();
        let recursive = self.nodes.iter().filter(|n| self_calls.contains(&n.local)).count() > 1;
        Some((Shape { nodes, callees, recursive, lines: self.lines }, orig))
    }

    /// Children of each node and the top-level nodes, in text order.
    pub fn children(&self) -> (Vec<Vec<u16>>, Vec<u16>) {
        let mut kids = vec![Vec::new(); self.nodes.len()];
        let mut top = Vec::new();
        for (k, n) in self.nodes.iter().enumerate() {
            if n.parent == TOP {
                top.push(k as u16);
            } else {
                kids[n.parent as usize].push(k as u16);
            }
        }
        (kids, top)
    }

    /// Summary numbers of the whole function (see [`Profile`]).
    pub fn profile(&self) -> Profile {
        let mut p = Profile { recursive: self.recursive, ..Profile::default() };
        let mut depth = Vec::with_capacity(self.nodes.len());
        for n in &self.nodes {
            p.count(&mut depth, n.role, n.parent, &n.ops, n.sub, n.calls);
        }
        p
    }
}

/// Whole-function counts, for a cheap first comparison of query and code.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Profile {
    pub nodes: u32,
    pub loops: u32,
    /// Deepest loop nesting (1 for a single loop).
    pub depth: u8,
    pub branches: u32,
    pub returns: u32,
    pub calls: u32,
    pub ops: [u32; 7],
    pub sub: Subscripts,
    pub recursive: bool,
}

impl Profile {
    /// Counts the next node of a function (in node order, parents first); `depth` holds
    /// the loop depth of the nodes counted so far.
    pub(crate) fn count(&mut self, depth: &mut Vec<u8>, role: Role, parent: u16, ops: &[u8; 7], sub: Subscripts, calls: u8) {
        let d = if parent == TOP { 0 } else { depth.get(parent as usize).copied().unwrap_or(0) };
        let here = d.saturating_add(u8::from(role == Role::Loop));
        depth.push(here);
        match role {
            Role::Loop => {
                self.loops += 1;
                self.depth = self.depth.max(here);
            }
            Role::Branch => self.branches += 1,
            Role::Return => self.returns += 1,
            _ => {}
        }
        for (t, &o) in self.ops.iter_mut().zip(ops) {
            *t += o as u32;
        }
        self.sub.add(sub);
        self.calls += calls as u32;
        self.nodes += 1;
    }

    /// A vector whose cosine compares two profiles: counts on a log scale, so that a long
    /// function is not far from a short one for its length alone.
    pub fn vector(&self) -> [f32; 18] {
        let l = |x: u32| (1.0 + x as f32).ln();
        let mut v = [0f32; 18];
        v[0] = 1.5 * l(self.loops);
        v[1] = 1.5 * self.depth as f32;
        v[2] = l(self.branches);
        v[3] = 0.5 * l(self.returns);
        v[4] = 0.5 * l(self.calls);
        for i in 0..7 {
            v[5 + i] = l(self.ops[i]);
        }
        let s = self.sub;
        v[12] = l(s.one as u32);
        v[13] = 1.5 * l(s.two as u32);
        v[14] = 2.0 * s.chain.min(1) as f32;
        v[15] = l(s.offset as u32);
        v[16] = l(s.nested as u32);
        v[17] = if self.recursive { 1.5 } else { 0.0 };
        v
    }

    pub fn cosine(&self, o: &Profile) -> f32 {
        let (a, b) = (self.vector(), o.vector());
        let dot: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
        let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
        if na == 0.0 || nb == 0.0 {
            0.0
        } else {
            dot / (na * nb)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FW: &str = "FLOYD-WARSHALL(W, n)\n    $D = W$\n    for $k = 1$ to $n$\n        for $i = 1$ to $n$\n            for $j = 1$ to $n$\n                $D[i][j] = min(D[i][j], D[i][k] + D[k][j])$\n    return $D$\n";

    #[test]
    fn pcode_nesting_tree() {
        let q = crate::pcode::icfg(FW, std::path::Path::new("fw.p")).unwrap();
        let s = &Shape::all(&q)[0];
        let roles: Vec<Role> = s.nodes.iter().map(|n| n.role).collect();
        assert_eq!(roles, [Role::Statement, Role::Loop, Role::Loop, Role::Loop, Role::Statement, Role::Return]);
        let parents: Vec<u16> = s.nodes.iter().map(|n| n.parent).collect();
        assert_eq!(parents, [TOP, TOP, 1, 2, 3, TOP]);
        let p = s.profile();
        assert_eq!((p.loops, p.depth, p.sub.chain), (3, 3, 1));
        // The update reads j, i, k (the nearest writes: the loop heads) and D; the return
        // reads the D the update wrote.
        let flow: Vec<[u16; FLOW_SLOTS]> = s.nodes.iter().map(|n| n.flow).collect();
        assert_eq!(flow, [[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [1, 2, 3], [1, 0, 0]]);
    }

    fn looped(src: &str, p: u32) -> Option<(Shape, Vec<u16>)> {
        let q = crate::pcode::icfg(src, std::path::Path::new("q.p")).unwrap();
        Shape::all(&q)[p as usize].tail_call_as_loop(&Shape::self_calls(&q, p))
    }

    #[test]
    fn tail_calls_to_itself_become_loops() {
        // The whole body is the test: it turns into the loop, the base case leaves it.
        let euclid = "EUCLID(a, b)\n    if $b == 0$\n        return $a$\n    else\n        return $EUCLID(b, a mod b)$\n";
        let (s, orig) = looped(euclid, 0).expect("EUCLID is tail-recursive");
        let roles: Vec<Role> = s.nodes.iter().map(|n| n.role).collect();
        assert_eq!(roles, [Role::Loop, Role::Statement, Role::Return]);
        assert_eq!(s.nodes.iter().map(|n| n.parent).collect::<Vec<_>>(), [TOP, 0, TOP]);
        assert_eq!(orig, [0, 2, 1]);
        assert!(!s.recursive);
        assert_eq!((s.profile().loops, s.profile().depth), (1, 1));
        // Statements before the closing test: a loop around the whole body (sift-down).
        let heapify = "MAX-HEAPIFY(A, i)\n    $l = 2i$\n    $r = 2i + 1$\n    $largest = i$\n    if $l ≤ n$ and $A[l] > A[largest]$\n        $largest = l$\n    if $r ≤ n$ and $A[r] > A[largest]$\n        $largest = r$\n    if $largest ≠ i$\n        $swap(A[i], A[largest])$\n        MAX-HEAPIFY(A, largest)\n";
        let plain = &Shape::all(&crate::pcode::icfg(heapify, std::path::Path::new("h.p")).unwrap())[0];
        let (s, orig) = looped(heapify, 0).expect("MAX-HEAPIFY is tail-recursive");
        assert_eq!(s.nodes.len(), plain.nodes.len() + 1);
        assert_eq!((s.nodes[0].role, s.nodes[0].parent), (Role::Loop, TOP));
        assert!(s.nodes[1..].iter().all(|n| n.parent != TOP), "everything runs inside the loop");
        assert_eq!(s.nodes.last().unwrap().role, Role::Statement);
        assert_eq!(orig[0] as usize, plain.nodes.len() - 3, "the loop stands for the last test");
        assert_eq!((s.profile().loops, s.recursive), (1, false));
        // A call that is not the last thing done, or one inside a loop, stays a call.
        let merge = "MERGE-SORT(A, p, r)\n    if $p < r$\n        $q = ⌊(p + r) / 2⌋$\n        MERGE-SORT(A, p, q)\n        MERGE-SORT(A, q + 1, r)\n        MERGE(A, p, q, r)\n";
        assert!(looped(merge, 0).is_none());
        let visit = "DFS-VISIT(G, u)\n    $u.color = GRAY$\n    for each @vertex v in G.Adj[u]@\n        if $v.color == WHITE$\n            DFS-VISIT(G, v)\n";
        assert!(looped(visit, 0).is_none());
        // QUICKSORT keeps its first call: still recursive, now around a loop.
        let quick = "QUICKSORT(A, p, r)\n    if $p < r$\n        $q = PARTITION(A, p, r)$\n        QUICKSORT(A, p, q - 1)\n        QUICKSORT(A, q + 1, r)\n";
        let (s, _) = looped(quick, 0).expect("the last call is a tail call");
        assert_eq!((s.nodes[0].role, s.recursive), (Role::Loop, true));
    }
}
