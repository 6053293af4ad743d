//! How well a query's nesting tree sits inside a candidate's: an ordered tree alignment.
//!
//! A query node may map to a code node of a compatible role (loop to loop, statement to
//! statement, ...); the children of mapped nodes are aligned in order (Needleman–Wunsch
//! with free gaps), and a query node may also map anywhere below a code node, at a small
//! cost per level skipped, so extra wrapping in real code (`if (n > 0) { for … }`) does not
//! break the match. The query's top level may align with the top level of the function or
//! with the body of any one code node: that node is the tightest region holding the match.
//!
//! A mapped pair scores its role compatibility times the similarity of what the two nodes
//! compute (operator families, array-index shape). The score is normalized by the
//! query's own weight, so 1 means every query node found a perfect partner in order.
//! No name, no identifier and no literal takes part.
//!
//! One concern: the alignment and the agreements read off it; below half of the file are its tests.

use super::{Role, Shape, Subscripts};
use std::hash::{Hash, Hasher};

/// Cost of matching one level deeper than the structure says.
const DECAY: f32 = 0.9;

/// A node of an alignment tree: a shape node, possibly from an inlined callee.
#[derive(Clone, Debug)]
pub struct TreeNode {
    pub role: Role,
    pub ops: [u8; 7],
    pub sub: Subscripts,
    /// Token sketch ([`super::tokens`]).
    pub sig: u128,
    /// Def-use offsets within the node's own function ([`super::ShapeNode::flow`]).
    pub flow: [u16; super::FLOW_SLOTS],
    pub children: Vec<u32>,
    /// (function or procedure id, node index in its shape).
    pub origin: (u32, u16),
    /// Calls between this tree's root function and this node (0 in the root itself).
    pub inline_depth: u8,
}

/// Nodes are stored parents first: every child has a larger id than its parent.
#[derive(Clone, Debug, Default)]
pub struct Tree {
    pub nodes: Vec<TreeNode>,
    pub top: Vec<u32>,
}

impl Tree {
    /// The tree of function `root`, with the bodies of its resolved callees hung under the
    /// calling node down to `depth` calls (no function twice on one path), at most `max`
    /// nodes in all. `get(f)` gives the shape of function `f`.
    pub fn build(root: u32, get: &dyn Fn(u32) -> Option<Shape>, depth: u8, max: usize) -> Tree {
        let mut t = Tree::default();
        let mut path = vec![root];
        if let Some(s) = get(root) {
            t.top = t.add(root, &s, get, 0, depth, max, &mut path);
        }
        t
    }

    #[allow(clippy::too_many_arguments)]
    fn add(&mut self, fid: u32, s: &Shape, get: &dyn Fn(u32) -> Option<Shape>, level: u8, depth: u8, max: usize, path: &mut Vec<u32>) -> Vec<u32> {
        let first = self.nodes.len() as u32;
        let room = max.saturating_sub(self.nodes.len()).min(s.nodes.len());
        let mut top = Vec::new();
        for (k, n) in s.nodes.iter().take(room).enumerate() {
            let id = first + k as u32;
            self.nodes.push(TreeNode { role: n.role, ops: n.ops, sub: n.sub, sig: n.sig, flow: n.flow, children: Vec::new(), origin: (fid, k as u16), inline_depth: level });
            if n.parent == super::TOP || n.parent as usize >= room {
                top.push(id);
            } else {
                self.nodes[(first + n.parent as u32) as usize].children.push(id);
            }
        }
        if level < depth {
            for &(k, g) in &s.callees {
                if (k as usize) >= room || path.contains(&g) || self.nodes.len() >= max {
                    continue;
                }
                let Some(cs) = get(g) else { continue };
                path.push(g);
                let sub_top = self.add(g, &cs, get, level + 1, depth, max, path);
                path.pop();
                self.nodes[(first + k as u32) as usize].children.extend(sub_top);
            }
        }
        top
    }

    /// What copies of the same code share, names and place aside: a hash of every
    /// node's role, operators, subscripts, token sketch, data flow and nesting; 0 for a
    /// tree with no written statement. One statement is enough, so a row of one-line
    /// wrappers (`return search(a, 0, n - 1)`) folds too.
    pub fn copy_key(&self) -> u64 {
        if self.nodes.iter().all(|n| n.sig == 0) {
            return 0;
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for n in &self.nodes {
            (n.role, n.ops, n.sub.to_bytes(), n.sig, n.flow, &n.children, n.inline_depth).hash(&mut h);
        }
        self.top.hash(&mut h);
        h.finish().max(1)
    }

    /// Sum of node weights: the score of a perfect self-alignment.
    pub fn weight(&self) -> f32 {
        self.nodes.iter().map(|n| weight(n.role)).sum()
    }
}

pub fn weight(r: Role) -> f32 {
    match r {
        Role::Loop => 2.0,
        Role::Branch => 1.5,
        Role::Statement => 1.0,
        Role::Return | Role::Text => 0.5,
        Role::Jump => 0.3,
    }
}

/// How far a query node of role `q` may stand for a code node of role `c`.
pub fn compat(q: Role, c: Role) -> f32 {
    use Role::*;
    match (q, c) {
        (Loop, Loop) | (Branch, Branch) | (Statement, Statement) | (Return, Return) => 1.0,
        (Jump, Jump) => 0.8,
        (Statement, Return) | (Return, Statement) | (Text, Statement) => 0.5,
        (Jump, Return) | (Return, Jump) => 0.4,
        (Loop, Branch) | (Branch, Loop) | (Text, Return) => 0.3,
        (Text, Branch) | (Text, Loop) => 0.2,
        _ => 0.0,
    }
}

fn ops_similarity(a: &[u8; 7], b: &[u8; 7]) -> f32 {
    let ta: u32 = a.iter().map(|&x| x as u32).sum();
    let tb: u32 = b.iter().map(|&x| x as u32).sum();
    match (ta, tb) {
        (0, 0) => 0.6,
        (0, _) | (_, 0) => 0.15,
        _ => {
            let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
            for i in 0..7 {
                let (x, y) = ((a[i] as f32).ln_1p(), (b[i] as f32).ln_1p());
                dot += x * y;
                na += x * x;
                nb += y * y;
            }
            dot / (na.sqrt() * nb.sqrt())
        }
    }
}

fn subscript_similarity(a: Subscripts, b: Subscripts) -> f32 {
    let (a, b) = (a.to_bytes(), b.to_bytes());
    let (mut diff, mut most) = (0f32, 0f32);
    for i in 0..5 {
        let (x, y) = (a[i].min(4) as f32, b[i].min(4) as f32);
        // Two-dimensional access and chaining say the most about an algorithm.
        let w = if i == 1 || i == 2 { 2.0 } else { 1.0 };
        diff += w * (x - y).abs();
        most += w * x.max(y);
    }
    if most == 0.0 {
        1.0
    } else {
        1.0 - diff / most
    }
}

/// Similarity in [0, 1] of query node `q` standing for code node `c`.
pub fn similarity(q: &TreeNode, c: &TreeNode) -> f32 {
    let k = compat(q.role, c.role);
    if k == 0.0 {
        return 0.0;
    }
    if q.role == Role::Text {
        return k * 0.5;
    }
    let ops = ops_similarity(&q.ops, &c.ops);
    let content = if q.sub.any() || c.sub.any() { 0.6 * ops + 0.4 * subscript_similarity(q.sub, c.sub) } else { ops };
    let base = match q.role {
        Role::Loop | Role::Branch => 0.5,
        _ => 0.25,
    };
    k * (base + (1.0 - base) * content)
}

/// How closely the query's statements are written in the code, names aside
/// ([`super::tokens`]): (over the aligned pairs, best partner anywhere in `c`), each the
/// weighted mean over query nodes that have a sketch; 0 when none has.
pub fn token_agreement(q: &Tree, c: &Tree, a: &Alignment) -> (f32, f32) {
    let total: f32 = q.nodes.iter().filter(|n| n.sig != 0).map(|n| weight(n.role)).sum();
    if total <= 0.0 {
        return (0.0, 0.0);
    }
    let aligned: f32 = a
        .pairs
        .iter()
        .map(|&(i, j, _)| {
            let (qn, cn) = (&q.nodes[i as usize], &c.nodes[j as usize]);
            weight(qn.role) * super::tokens::similarity(qn.sig, cn.sig)
        })
        .sum();
    // Distinct sketches with their bit counts: |a ∩ b| / |a ∪ b| ≤ min/max of the counts,
    // which skips most pairs once a good partner is found.
    let mut sigs: Vec<u128> = c.nodes.iter().map(|n| n.sig).filter(|&s| s != 0).collect();
    sigs.sort_unstable();
    sigs.dedup();
    let counted: Vec<(u128, u32)> = sigs.into_iter().map(|s| (s, s.count_ones())).collect();
    let bag: f32 = q
        .nodes
        .iter()
        .filter(|n| n.sig != 0)
        .map(|n| {
            let qa = n.sig.count_ones();
            let mut best = 0f32;
            for &(s, cb) in &counted {
                if (qa.min(cb) as f32) <= best * qa.max(cb) as f32 {
                    continue;
                }
                best = best.max(super::tokens::similarity(n.sig, s));
            }
            weight(n.role) * best
        })
        .sum();
    (aligned / total, bag / total)
}

/// Statements of a sequence alignment: the sketched nodes in tree order.
fn sketched(t: &Tree) -> Vec<(Role, u128)> {
    t.nodes.iter().filter(|n| n.sig != 0).map(|n| (n.role, n.sig)).collect()
}

/// How well the query's statements, read in order as a flat list, match a run of the
/// code's statements written alike (token sketches), nesting ignored: a local alignment
/// (Smith–Waterman) where a pair scores its token agreement less a threshold, skipping a
/// code statement costs little and skipping a query statement costs more. The tree
/// alignment needs the same nesting; this one survives a `while` written as a `for` with
/// an `if` inside, or a loop split over two. Normalized by a perfect match, in [0, 1].
pub fn sequence_agreement(q: &Tree, c: &Tree) -> f32 {
    // A low threshold: statements written alike but with other names still count as a
    // match, which is all renamed code offers.
    const THRESHOLD: f32 = 0.15;
    const SKIP_CODE: f32 = 0.05;
    const SKIP_QUERY: f32 = 0.3;
    let (qs, cs) = (sketched(q), sketched(c));
    let best_possible: f32 = qs.iter().map(|&(r, _)| weight(r) * (1.0 - THRESHOLD)).sum();
    if qs.is_empty() || cs.is_empty() || best_possible <= 0.0 {
        return 0.0;
    }
    let w = cs.len() + 1;
    let (mut prev, mut cur) = (vec![0f32; w], vec![0f32; w]);
    let mut best = 0f32;
    for &(qr, qsig) in &qs {
        let qw = weight(qr);
        cur[0] = 0.0;
        for (b, &(cr, csig)) in cs.iter().enumerate() {
            let k = compat(qr, cr);
            let m = if k > 0.0 { qw * (k * super::tokens::similarity(qsig, csig) - THRESHOLD) } else { -qw * THRESHOLD };
            let v = (prev[b] + m).max(prev[b + 1] - SKIP_QUERY * qw).max(cur[b] - SKIP_CODE).max(0.0);
            cur[b + 1] = v;
            best = best.max(v);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    (best / best_possible).clamp(0.0, 1.0)
}

/// The share of the query's def-use edges (a statement reading what an earlier one wrote)
/// that the alignment maps onto def-use edges of the code: the same data flowing between
/// the matched statements, whatever the variables are called. An edge that goes through
/// one statement between in the code (a temporary, a copy) counts half.
pub fn flow_agreement(q: &Tree, c: &Tree, a: &Alignment) -> f32 {
    let sources = |t: &Tree, k: u32| -> [Option<u32>; super::FLOW_SLOTS] {
        let n = &t.nodes[k as usize];
        n.flow.map(|off| (off > 0 && off <= n.origin.1).then(|| k - off as u32).filter(|&j| t.nodes[j as usize].origin.0 == n.origin.0))
    };
    let mut to_code: Vec<Option<u32>> = vec![None; q.nodes.len()];
    for &(i, j, _) in &a.pairs {
        to_code[i as usize] = Some(j);
    }
    let (mut edges, mut kept) = (0u32, 0f32);
    for k in 0..q.nodes.len() as u32 {
        for src in sources(q, k).into_iter().flatten() {
            edges += 1;
            if let (Some(ck), Some(cj)) = (to_code[k as usize], to_code[src as usize]) {
                let direct = sources(c, ck);
                if direct.contains(&Some(cj)) {
                    kept += 1.0;
                } else if direct.iter().flatten().any(|&m| sources(c, m).contains(&Some(cj))) {
                    kept += 0.5;
                }
            }
        }
    }
    if edges == 0 {
        0.0
    } else {
        kept / edges as f32
    }
}

#[derive(Clone, Debug, Default)]
pub struct Alignment {
    /// Aligned weight over the query's weight, in [0, 1].
    pub score: f32,
    /// (query node, code node, similarity) of every mapped pair.
    pub pairs: Vec<(u32, u32, f32)>,
    /// The code node whose body holds the query's top level; `None` for the whole function.
    pub region: Option<u32>,
}

struct Tables<'a> {
    q: &'a Tree,
    c: &'a Tree,
    /// Best score of query node i mapped at or below code node j.
    best: Vec<f32>,
    /// Where `best` came from: -1 for j itself, else the child of j it descends to.
    from: Vec<i32>,
    scratch: Vec<f32>,
}

impl Tables<'_> {
    fn at(&self, i: u32, j: u32) -> usize {
        i as usize * self.c.nodes.len() + j as usize
    }

    /// Ordered alignment of two child lists with free gaps: the summed `best` of the pairs.
    fn seq(&mut self, qs: &[u32], cs: &[u32]) -> f32 {
        if qs.is_empty() || cs.is_empty() {
            return 0.0;
        }
        let w = cs.len() + 1;
        self.scratch.clear();
        self.scratch.resize((qs.len() + 1) * w, 0.0);
        for (a, &qi) in qs.iter().enumerate() {
            for (b, &cj) in cs.iter().enumerate() {
                let m = self.scratch[a * w + b] + self.best[self.at(qi, cj)];
                let v = m.max(self.scratch[a * w + b + 1]).max(self.scratch[(a + 1) * w + b]);
                self.scratch[(a + 1) * w + b + 1] = v;
            }
        }
        self.scratch[qs.len() * w + cs.len()]
    }

    /// The pairs of [`Tables::seq`]'s best alignment.
    fn seq_pairs(&mut self, qs: &[u32], cs: &[u32]) -> Vec<(u32, u32)> {
        if qs.is_empty() || cs.is_empty() {
            return Vec::new();
        }
        self.seq(qs, cs);
        let w = cs.len() + 1;
        let t = self.scratch.clone();
        let (mut a, mut b) = (qs.len(), cs.len());
        let mut out = Vec::new();
        while a > 0 && b > 0 {
            let here = t[a * w + b];
            if here == t[(a - 1) * w + b] {
                a -= 1;
            } else if here == t[a * w + b - 1] {
                b -= 1;
            } else {
                out.push((qs[a - 1], cs[b - 1]));
                a -= 1;
                b -= 1;
            }
        }
        out.reverse();
        out
    }

    fn trace(&mut self, i: u32, j: u32, out: &mut Vec<(u32, u32, f32)>) {
        let mut j = j;
        loop {
            let f = self.from[self.at(i, j)];
            if f < 0 {
                break;
            }
            j = f as u32;
        }
        if self.best[self.at(i, j)] <= 0.0 {
            return;
        }
        out.push((i, j, similarity(&self.q.nodes[i as usize], &self.c.nodes[j as usize])));
        let (qk, ck) = (self.q.nodes[i as usize].children.clone(), self.c.nodes[j as usize].children.clone());
        for (a, b) in self.seq_pairs(&qk, &ck) {
            self.trace(a, b, out);
        }
    }
}

/// Aligns query tree `q` into code tree `c`.
pub fn align(q: &Tree, c: &Tree) -> Alignment {
    let total = q.weight();
    if q.nodes.is_empty() || c.nodes.is_empty() || total <= 0.0 {
        return Alignment::default();
    }
    let n = q.nodes.len() * c.nodes.len();
    let mut t = Tables { q, c, best: vec![0.0; n], from: vec![-1; n], scratch: Vec::new() };
    // Children have larger ids than parents: reverse order visits them first.
    for i in (0..q.nodes.len() as u32).rev() {
        let qn = &q.nodes[i as usize];
        for j in (0..c.nodes.len() as u32).rev() {
            let cn = &c.nodes[j as usize];
            let s = similarity(qn, cn);
            let own = if s > 0.0 { weight(qn.role) * s + t.seq(&qn.children, &cn.children) } else { 0.0 };
            let mut best = own;
            let mut from = -1;
            for &k in &cn.children {
                let v = DECAY * t.best[t.at(i, k)];
                if v > best {
                    best = v;
                    from = k as i32;
                }
            }
            let at = t.at(i, j);
            t.best[at] = best;
            t.from[at] = if own > 0.0 || from >= 0 { from } else { -1 };
        }
    }
    let mut score = t.seq(&q.top, &c.top);
    let mut region = None;
    for j in 0..c.nodes.len() as u32 {
        if c.nodes[j as usize].children.is_empty() {
            continue;
        }
        let kids = c.nodes[j as usize].children.clone();
        let v = DECAY * t.seq(&q.top, &kids);
        if v > score {
            score = v;
            region = Some(j);
        }
    }
    let top_c = match region {
        Some(j) => c.nodes[j as usize].children.clone(),
        None => c.top.clone(),
    };
    let mut pairs = Vec::new();
    for (a, b) in t.seq_pairs(&q.top, &top_c) {
        t.trace(a, b, &mut pairs);
    }
    Alignment { score: (score / total).clamp(0.0, 1.0), pairs, region }
}

#[cfg(test)]
mod tests {
    use super::super::{ShapeNode, TOP};
    use super::*;

    /// A shape from (role, parent, ops, subscripts) rows.
    fn shape(rows: &[(Role, u16, [u8; 7], &str)]) -> Shape {
        let mut nodes: Vec<ShapeNode> = rows
            .iter()
            .enumerate()
            .map(|(k, &(role, parent, ops, sub))| ShapeNode {
                role,
                parent,
                ops,
                sub: super::super::subscript::scan(sub),
                calls: 0,
                sig: match role {
                    Role::Loop => super::super::tokens::loop_test(sub).map_or(0, |t| super::super::tokens::sketch(&t, true)),
                    r => super::super::tokens::sketch(sub, r == Role::Branch),
                },
                lines: (k as u32 + 1, k as u32 + 1),
                local: k as u16 + 2,
                flow: [0; super::super::FLOW_SLOTS],
            })
            .collect();
        use crate::graph::NodeKind;
        let kind = |r: Role| match r {
            Role::Loop => NodeKind::LoopHead,
            Role::Branch => NodeKind::Condition,
            _ => NodeKind::Statement,
        };
        let texts: Vec<(NodeKind, &str)> = rows.iter().map(|&(role, _, _, text)| (kind(role), text)).collect();
        super::super::set_flow(&mut nodes, &texts);
        Shape { nodes, callees: Vec::new(), recursive: false, lines: (1, rows.len() as u32) }
    }

    fn tree(s: &Shape) -> Tree {
        let s = s.clone();
        Tree::build(0, &move |_| Some(s.clone()), 0, 1000)
    }

    const REL: [u8; 7] = [0, 0, 0, 0, 0, 0, 1];
    const ADD: [u8; 7] = [1, 0, 0, 0, 0, 0, 0];
    const NONE: [u8; 7] = [0; 7];
    const IDX: [u8; 7] = [0, 0, 1, 0, 0, 0, 0];

    /// Floyd–Warshall: three nested loops around a chained 2-D min.
    fn triple_loop() -> Shape {
        shape(&[
            (Role::Loop, TOP, REL, "k <= n"),
            (Role::Loop, 0, REL, "i <= n"),
            (Role::Loop, 1, REL, "j <= n"),
            (Role::Statement, 2, [1, 0, 4, 0, 0, 0, 0], "d[i][j] = min(d[i][j], d[i][k] + d[k][j])"),
        ])
    }

    #[test]
    fn copies_share_a_key_whatever_their_names() {
        let euclid = |a: &str, b: &str, t: &str| {
            shape(&[
                (Role::Loop, TOP, REL, &format!("{b} != 0")),
                (Role::Statement, 0, NONE, &format!("{t} = {b}")),
                (Role::Statement, 0, [0, 0, 0, 1, 0, 0, 0], &format!("{b} = {a} % {b}")),
                (Role::Statement, 0, NONE, &format!("{a} = {t}")),
            ])
        };
        let key = |s: &Shape| tree(s).copy_key();
        assert_ne!(key(&euclid("a", "b", "t")), 0);
        assert_eq!(key(&euclid("a", "b", "t")), key(&euclid("x", "y", "tmp")));
        // Another statement, or another nesting, is other code.
        assert_ne!(key(&euclid("a", "b", "t")), key(&triple_loop()));
        let mut flat = euclid("a", "b", "t");
        flat.nodes[3].parent = TOP;
        assert_ne!(key(&euclid("a", "b", "t")), key(&flat));
        // One-line wrappers fold; a tree with nothing written is no copy of anything.
        let wrapper = |f: &str| shape(&[(Role::Return, TOP, NONE, &format!("return {f}(a, 0, n - 1)"))]);
        assert_ne!(key(&wrapper("search")), 0);
        assert_eq!(key(&wrapper("search")), key(&wrapper("find")));
        assert_eq!(Tree::default().copy_key(), 0);
    }

    #[test]
    fn same_nesting_scores_high() {
        let q = triple_loop();
        // Real code: a declaration first, the test split into an if, an extra guard.
        let code = shape(&[
            (Role::Statement, TOP, NONE, "int n = g->n"),
            (Role::Branch, TOP, REL, "n > 0"),
            (Role::Loop, 1, [1, 0, 0, 0, 0, 0, 1], "k < n"),
            (Role::Loop, 2, [1, 0, 0, 0, 0, 0, 1], "i < n"),
            (Role::Loop, 3, [1, 0, 0, 0, 0, 0, 1], "j < n"),
            (Role::Branch, 4, [1, 0, 3, 0, 0, 0, 1], "d[i][k] + d[k][j] < d[i][j]"),
            (Role::Statement, 5, [1, 0, 3, 0, 0, 0, 0], "d[i][j] = d[i][k] + d[k][j]"),
        ]);
        let a = align(&tree(&q), &tree(&code));
        assert!(a.score > 0.75, "{a:?}");
        // Every query node found a partner, loops on loops.
        assert_eq!(a.pairs.len(), 4, "{a:?}");
        for &(qi, cj, _) in &a.pairs {
            assert_eq!(tree(&q).nodes[qi as usize].role, tree(&code).nodes[cj as usize].role);
        }
        // Self-alignment is perfect.
        assert!((align(&tree(&q), &tree(&q)).score - 1.0).abs() < 1e-5);
    }

    #[test]
    fn different_nesting_scores_low() {
        let q = triple_loop();
        // Flat code: one loop, branches and additions, no 2-D access.
        let flat = shape(&[
            (Role::Statement, TOP, ADD, "s = s + 1"),
            (Role::Loop, TOP, REL, "i < n"),
            (Role::Branch, 1, REL, "x > 0"),
            (Role::Statement, 2, ADD, "s += x"),
            (Role::Return, TOP, NONE, "return s"),
        ]);
        let low = align(&tree(&q), &tree(&flat)).score;
        let good = align(&tree(&q), &tree(&triple_loop())).score;
        assert!(low < 0.5, "{low}");
        assert!(good - low > 0.4, "{good} vs {low}");
        // A triple loop adding matrices (no chain, no min) lies in between.
        let add = shape(&[
            (Role::Loop, TOP, REL, "i < n"),
            (Role::Loop, 0, REL, "j < n"),
            (Role::Loop, 1, REL, "k < n"),
            (Role::Statement, 2, [1, 0, 3, 0, 0, 0, 0], "c[i][j] = a[i][j] + b[i][j]"),
        ]);
        let mid = align(&tree(&q), &tree(&add)).score;
        assert!(low < mid && mid < good, "{low} {mid} {good}");
    }

    #[test]
    fn token_agreement_reads_statements_not_names() {
        // Euclid's loop, and two loops of the same nesting and operator families: one
        // with the same statements under other names, one computing something else.
        let q = shape(&[(Role::Loop, TOP, REL, "b != 0"), (Role::Statement, 0, NONE, "t = b"), (Role::Statement, 0, [0, 0, 0, 1, 0, 0, 0], "b = a mod b"), (Role::Statement, 0, NONE, "a = t")]);
        let same = shape(&[(Role::Loop, TOP, REL, "v2 != 0"), (Role::Statement, 0, NONE, "v9 = v2"), (Role::Statement, 0, [0, 0, 0, 1, 0, 0, 0], "v2 = v1 % v2"), (Role::Statement, 0, NONE, "v1 = v9")]);
        let other = shape(&[(Role::Loop, TOP, REL, "k < n"), (Role::Statement, 0, NONE, "s = x[k]"), (Role::Statement, 0, [0, 0, 0, 1, 0, 0, 0], "h = (h * 31 + s) % m"), (Role::Statement, 0, NONE, "k = 1")]);
        let (qt, st, ot) = (tree(&q), tree(&same), tree(&other));
        let (a_same, a_other) = (align(&qt, &st), align(&qt, &ot));
        let (tok_same, bag_same) = token_agreement(&qt, &st, &a_same);
        let (tok_other, bag_other) = token_agreement(&qt, &ot, &a_other);
        assert!(tok_same > 0.95 && bag_same > 0.95, "{tok_same} {bag_same}");
        assert!(tok_other < 0.4 && bag_other < 0.4, "{tok_other} {bag_other}");
        // The operator-count alignment alone barely tells the two apart.
        assert!((a_same.score - a_other.score).abs() < 0.2, "{} {}", a_same.score, a_other.score);
    }

    /// Insertion sort's shifting loop in p-code.
    fn insertion_shift() -> Shape {
        shape(&[
            (Role::Statement, TOP, IDX, "key = A[i]"),
            (Role::Statement, TOP, ADD, "j = i - 1"),
            (Role::Loop, TOP, REL, "j > 0 and A[j] > key"),
            (Role::Statement, 2, IDX, "A[j + 1] = A[j]"),
            (Role::Statement, 2, ADD, "j = j - 1"),
            (Role::Statement, TOP, IDX, "A[j + 1] = key"),
        ])
    }

    #[test]
    fn flow_agreement_follows_data_not_names() {
        // Insertion sort's inner loop: `key` flows from the first statement into the test
        // and the final store; `j` from its update into the next test.
        let q = insertion_shift();
        let rows = |names: [&'static str; 3]| {
            let [k, j, a] = names;
            let s = |t: &str| -> &'static str { Box::leak(t.replace("key", k).replace('j', j).replace('A', a).into_boxed_str()) };
            vec![
                (Role::Statement, TOP, IDX, s("key = A[i]")),
                (Role::Statement, TOP, ADD, s("j = i - 1")),
                (Role::Loop, TOP, REL, s("j > 0 && A[j] > key")),
                (Role::Statement, 2, IDX, s("A[j + 1] = A[j]")),
                (Role::Statement, 2, ADD, s("j = j - 1")),
                (Role::Statement, TOP, IDX, s("A[j + 1] = key")),
            ]
        };
        let same = shape(&rows(["v7", "v3", "v1"]));
        // The same statements, but the final store writes a value nothing computed.
        let mut cut = rows(["v7", "v3", "v1"]);
        cut[0].3 = "v8 = v1[i]";
        let cut = shape(&cut);
        let qt = tree(&q);
        let (st, ct) = (tree(&same), tree(&cut));
        let f_same = flow_agreement(&qt, &st, &align(&qt, &st));
        let f_cut = flow_agreement(&qt, &ct, &align(&qt, &ct));
        assert!(f_same > 0.99, "{f_same}");
        assert!(f_cut < f_same - 0.15, "{f_cut} {f_same}");
        assert_eq!(q.nodes[5].flow, [1, 5, 0], "j from its update, key from the first statement");
    }

    #[test]
    fn sequence_agreement_reads_order_not_nesting() {
        // Insertion sort's shifting loop; the code writes the loop as `for (;;)` with the
        // test in an `if` inside, under other names, between unrelated statements.
        let q = insertion_shift();
        let code = shape(&[
            (Role::Statement, TOP, NONE, "n = len(x)"),
            (Role::Statement, TOP, IDX, "t = x[p]"),
            (Role::Statement, TOP, ADD, "q = p - 1"),
            (Role::Loop, TOP, NONE, "for (;;)"),
            (Role::Branch, 3, REL, "q > 0 && x[q] > t"),
            (Role::Statement, 4, IDX, "x[q + 1] = x[q]"),
            (Role::Statement, 4, ADD, "q = q - 1"),
            (Role::Statement, TOP, IDX, "x[q + 1] = t"),
            (Role::Statement, TOP, NONE, "print(n)"),
        ]);
        // The same number of statements computing other things.
        let other = shape(&[
            (Role::Statement, TOP, ADD, "s = 0"),
            (Role::Loop, TOP, REL, "k < m"),
            (Role::Statement, 1, [1, 1, 2, 0, 0, 0, 0], "s = s + w[k] * w[k]"),
            (Role::Statement, 1, ADD, "k++"),
            (Role::Return, TOP, NONE, "return sqrt(s)"),
            (Role::Statement, TOP, NONE, "flag = true"),
        ]);
        let qt = tree(&q);
        let same = sequence_agreement(&qt, &tree(&code));
        let diff = sequence_agreement(&qt, &tree(&other));
        assert!(same > 0.6, "{same}");
        assert!(diff < 0.25, "{diff}");
        assert!((sequence_agreement(&qt, &qt) - 1.0).abs() < 1e-6);
        assert_eq!(sequence_agreement(&qt, &Tree::default()), 0.0);
    }

    #[test]
    fn region_is_the_body_that_holds_the_match() {
        let q = shape(&[(Role::Loop, TOP, REL, "i < n"), (Role::Statement, 0, ADD, "s += a[i]"), (Role::Return, TOP, NONE, "return s")]);
        let code = shape(&[
            (Role::Loop, TOP, REL, "t < T"),
            (Role::Statement, 0, NONE, "s = 0"),
            (Role::Loop, 0, REL, "i < n"),
            (Role::Statement, 2, ADD, "s += a[i]"),
            (Role::Return, 0, NONE, "return s"),
        ]);
        let a = align(&tree(&q), &tree(&code));
        assert_eq!(a.region, Some(0), "{a:?}");
        assert!(a.score > 0.8);
    }

    #[test]
    fn callees_hang_under_calls() {
        let caller = Shape { callees: vec![(1, 1)], ..shape(&[(Role::Loop, TOP, REL, "i < n"), (Role::Statement, 0, NONE, "relax(u, v)")]) };
        let callee = shape(&[(Role::Branch, TOP, [1, 0, 0, 0, 0, 0, 1], "d[v] > d[u] + w"), (Role::Statement, 0, ADD, "d[v] = d[u] + w")]);
        let get = move |f: u32| Some(if f == 0 { caller.clone() } else { callee.clone() });
        let flat = Tree::build(0, &get, 0, 100);
        let deep = Tree::build(0, &get, 2, 100);
        assert_eq!((flat.nodes.len(), deep.nodes.len()), (2, 4));
        assert_eq!(deep.nodes[2].origin, (1, 0));
        assert_eq!(deep.nodes[1].children, vec![2]);
        let q = shape(&[
            (Role::Loop, TOP, REL, "i < n"),
            (Role::Statement, 0, NONE, "RELAX(u, v)"),
        ]);
        let qt = Tree { nodes: Vec::new(), top: Vec::new() };
        assert_eq!(align(&qt, &deep).score, 0.0);
        let qs = Shape { callees: vec![(1, 1)], ..q };
        let qcallee = shape(&[(Role::Branch, TOP, [1, 0, 0, 0, 0, 0, 1], "v.d > u.d + w"), (Role::Statement, 0, ADD, "v.d = u.d + w")]);
        let qget = move |f: u32| Some(if f == 0 { qs.clone() } else { qcallee.clone() });
        let qdeep = Tree::build(0, &qget, 2, 100);
        assert!(align(&qdeep, &deep).score > align(&qdeep, &flat).score + 0.2);
    }
}
