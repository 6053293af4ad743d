//! The query of a hybrid search: pseudocode parsed once into what every retriever and
//! signal reads (its graph, nesting tree, profile, words and procedure names).

use super::candidate::Candidate;
use crate::graph::Icfg;
use crate::pcode::{Classifier, PcodeError};
use crate::search::{to_pcode, QueryNode, SearchError};
use crate::shape::align::Tree;
use crate::shape::{Profile, Shape};
use std::collections::{BTreeSet, HashMap};
use std::borrow::Borrow;
use std::path::Path;

/// A pseudocode query, analysed once for every retriever.
pub struct Query {
    pub pcode: String,
    pub converted: bool,
    pub icfg: Icfg,
    pub(super) line_map: Vec<u32>,
    /// One per shape node of every procedure, for reporting matches.
    pub nodes: Vec<QueryNode>,
    pub(super) node_of: HashMap<(u32, u16), usize>,
    /// The query's words without markup or line numbers.
    pub words: String,
    pub procedures: Vec<String>,
    /// The procedures are named by the user (not wrapped statements).
    pub named: bool,
    /// Index of the main procedure in `procedures`.
    pub main: usize,
    pub shapes: Vec<Shape>,
    /// The main procedure with the procedures it calls hung under their calls.
    pub tree: Tree,
    pub profile: Profile,
    /// The same with tail calls to itself written as loops ([`Shape::tail_call_as_loop`]),
    /// where a procedure of the tree has one: code is as often written that way.
    pub looped: Option<(Tree, Profile)>,
    /// Lines of the query's statements.
    pub lines: u32,
    /// What the conversion read otherwise than written.
    pub warnings: Vec<crate::pcode::Warning>,
}

/// Pseudocode as plain words: no listing numbers, no `$`/`@` markup, no `▷` comments.
pub fn plain_words(src: &str) -> String {
    src.lines()
        .map(|l| {
            let t = l.trim_start();
            let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let t = if digits > 0 && t[digits..].starts_with(' ') { &t[digits + 1..] } else { l };
            t.replace(['$', '@', '▷'], " ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Query {
    pub fn parse<C: Borrow<Classifier>>(src: &str, name: &Path, clf: impl FnOnce() -> Result<C, PcodeError>) -> Result<Query, SearchError> {
        let qp = to_pcode(src, clf).map_err(|e| e.with_file(&name.display().to_string()))?;
        Query::from_pcode(qp, plain_words(src), name)
    }

    /// The query from its p-code (plain pseudocode already converted) and the words of the
    /// text the user wrote: what a shard reads, the conversion having run once.
    pub fn from_pcode(qp: crate::search::QueryPcode, words: String, name: &Path) -> Result<Query, SearchError> {
        let crate::search::QueryPcode { pcode, converted, line_map, named, warnings } = qp;
        let icfg = crate::pcode::icfg(&pcode, name).map_err(|e| e.with_file(&name.display().to_string()))?;
        let shapes = Shape::all(&icfg);
        if icfg.functions.is_empty() {
            return Err(SearchError::EmptyQuery);
        }
        let procedures: Vec<String> = icfg.functions.iter().map(|f| f.meta.name.clone()).collect();
        // The main procedure is the one whose tree, with the procedures it calls, is the
        // largest (DIJKSTRA over RELAX; UNION over MAKE-SET); the first on a tie.
        let get = |p: u32| shapes.get(p as usize).cloned();
        let trees: Vec<Tree> = (0..shapes.len() as u32).map(|p| Tree::build(p, &get, QUERY_CALL_DEPTH, QUERY_TREE_MAX)).collect();
        let main = (0..trees.len()).fold(0, |best, p| if trees[p].nodes.len() > trees[best].nodes.len() { p } else { best });
        let tree = trees.into_iter().nth(main).unwrap_or_default();
        let map = |l: u32| line_map.get(l as usize - 1).copied().unwrap_or(l);
        let mut nodes = Vec::new();
        let mut node_of = HashMap::new();
        let mut lines = BTreeSet::new();
        for (p, s) in shapes.iter().enumerate() {
            let entry = icfg.functions[p].entry.index();
            for (k, n) in s.nodes.iter().enumerate() {
                let w = &icfg.graph[petgraph::graph::NodeIndex::new(entry + n.local as usize)];
                let ls = (map(n.lines.0.max(1)), map(n.lines.1.max(1)));
                lines.extend(ls.0..=ls.1);
                node_of.insert((p as u32, k as u16), nodes.len());
                nodes.push(QueryNode { id: nodes.len(), kind: w.kind.name().into(), lines: ls, text: w.text.to_string() });
            }
        }
        let profile = profile_of(&shapes);
        let looped = looped_form(&icfg, &shapes, main as u32);
        if nodes.is_empty() {
            return Err(SearchError::EmptyQuery);
        }
        Ok(Query {
            words,
            pcode,
            converted,
            icfg,
            line_map,
            nodes,
            node_of,
            procedures,
            named,
            main,
            shapes,
            tree,
            profile,
            looped,
            lines: lines.len().max(1) as u32,
            warnings,
        })
    }

    /// The procedure names the user wrote: none for statements without a header, whose
    /// wrapper's name would match functions by accident.
    pub fn names(&self) -> &[String] {
        if self.named {
            &self.procedures
        } else {
            &[]
        }
    }

    /// The form of the query a candidate was aligned with.
    pub fn form_of(&self, c: &Candidate) -> (&Tree, &Profile) {
        match &self.looped {
            Some((t, p)) if c.looped => (t, p),
            _ => (&self.tree, &self.profile),
        }
    }
}

/// A query's tree holds the procedures it calls down to this depth, and at most this many
/// nodes.
const QUERY_CALL_DEPTH: u8 = 2;
const QUERY_TREE_MAX: usize = 500;

/// The summary numbers of a query: all its procedures together.
fn profile_of(shapes: &[Shape]) -> Profile {
    let mut profile = Profile::default();
    for s in shapes {
        let sp = s.profile();
        profile.nodes += sp.nodes;
        profile.loops += sp.loops;
        profile.depth = profile.depth.max(sp.depth);
        profile.branches += sp.branches;
        profile.returns += sp.returns;
        profile.calls += sp.calls;
        for i in 0..7 {
            profile.ops[i] += sp.ops[i];
        }
        profile.sub.add(sp.sub);
        profile.recursive |= sp.recursive;
    }
    profile
}

/// The main tree and profile with every tail-recursive procedure as a loop; `None` when
/// the main tree holds none. Tree nodes keep the origins of the written procedures.
fn looped_form(icfg: &Icfg, shapes: &[Shape], main: u32) -> Option<(Tree, Profile)> {
    let rewritten: Vec<(usize, (Shape, Vec<u16>))> =
        shapes.iter().enumerate().filter_map(|(p, s)| Some((p, s.tail_call_as_loop(&Shape::self_calls(icfg, p as u32))?))).collect();
    if rewritten.is_empty() {
        return None;
    }
    let mut alt = shapes.to_vec();
    let mut origs: HashMap<u32, Vec<u16>> = HashMap::new();
    for (p, (t, orig)) in rewritten {
        alt[p] = t;
        origs.insert(p as u32, orig);
    }
    let get = |p: u32| alt.get(p as usize).cloned();
    let mut tree = Tree::build(main, &get, QUERY_CALL_DEPTH, QUERY_TREE_MAX);
    if !tree.nodes.iter().any(|n| origs.contains_key(&n.origin.0)) {
        return None;
    }
    for n in &mut tree.nodes {
        if let Some(o) = origs.get(&n.origin.0) {
            n.origin.1 = o[n.origin.1 as usize];
        }
    }
    Some((tree, profile_of(&alt)))
}
