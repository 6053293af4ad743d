//! The interprocedural CFG of a whole corpus: every function's CFG in one petgraph graph,
//! joined by call and return edges.

use super::cfg::{FnCfg, FunctionMeta, ENTRY, EXIT};
use super::node::{EdgeKind, Node};
use super::resolve::Resolver;
use super::unit::{Function, SourceFile};
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use serde::Serialize;
use std::collections::{HashMap, VecDeque};

/// A call written in a node, and what it resolved to.
#[derive(Clone, Debug, Serialize)]
pub struct CallSite {
    #[serde(skip)]
    pub node: NodeIndex,
    /// Index into the node's `calls`.
    pub call: u32,
    /// Resolved callee function ids; empty means an external target (library, pointer,
    /// virtual dispatch, or a name the corpus does not define).
    pub targets: super::Thin<u32>,
}

/// A hash of node pairs for the edge sets of [`Icfg::add_call_edges`]: millions of small
/// integer keys, which the standard hasher (made to resist crafted keys) takes several
/// times longer over.
#[derive(Default, Clone, Copy)]
struct PairHash(u64);

impl std::hash::Hasher for PairHash {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type Pairs = std::hash::BuildHasherDefault<PairHash>;

/// What [`Icfg::replace_sites`] changed.
#[derive(Debug, Default)]
pub struct Replaced {
    /// The sites taken out.
    pub dropped: Vec<CallSite>,
    /// Functions a dropped or new site names, with their callers before, by id.
    pub callees: Vec<(u32, usize)>,
}

#[derive(Default)]
pub struct Icfg {
    pub graph: DiGraph<Node, EdgeKind>,
    pub files: Vec<SourceFile>,
    pub functions: Vec<Function>,
    pub calls: Vec<CallSite>,
}

impl Icfg {
    /// Adds one file's functions. Node `file`/`function` ids are rewritten to corpus ids.
    pub fn add_file(&mut self, mut file: SourceFile, functions: Vec<(FunctionMeta, FnCfg)>) -> u32 {
        let file_id = self.files.len() as u32;
        file.lang = functions.first().map(|f| f.0.lang).unwrap_or(file.lang);
        self.files.push(file);
        for (mut meta, cfg) in functions {
            let fid = self.functions.len() as u32;
            meta.file = file_id;
            let base = self.graph.node_count() as u32;
            for mut n in cfg.nodes {
                n.file = file_id;
                n.function = fid;
                self.graph.add_node(n);
            }
            for (a, b, k) in cfg.edges {
                self.graph.add_edge(NodeIndex::new((base + a) as usize), NodeIndex::new((base + b) as usize), k);
            }
            self.functions.push(Function {
                meta,
                entry: NodeIndex::new((base + ENTRY) as usize),
                exit: NodeIndex::new((base + EXIT) as usize),
                removed: false,
            });
        }
        file_id
    }

    /// Resolves every call site and adds call and return edges. Run once, after all files.
    pub fn link(&mut self) {
        let resolver = Resolver::new(&self.functions, &self.files);
        let sites = self.resolve_with(&resolver, self.graph.node_indices(), &|_, _| true);
        self.add_call_edges(sites);
    }

    /// Resolves the calls of `nodes` that `wanted(caller, call)` selects against every
    /// function not removed, looking up the candidates of the names those calls name alone.
    pub fn resolve_calls(&self, nodes: impl Iterator<Item = NodeIndex> + Clone, wanted: &dyn Fn(&Function, &super::CallRef) -> bool) -> Vec<CallSite> {
        let mut names = std::collections::HashSet::new();
        for idx in nodes.clone() {
            let node = &self.graph[idx];
            let caller = &self.functions[node.function as usize];
            names.extend(node.calls.iter().filter(|c| !caller.removed && wanted(caller, c)).map(|c| Self::callee_name(caller, c)));
        }
        let resolver = Resolver::for_names(&self.functions, &self.files, &names);
        self.resolve_with(&resolver, nodes, wanted)
    }

    fn resolve_with(&self, resolver: &Resolver, nodes: impl Iterator<Item = NodeIndex>, wanted: &dyn Fn(&Function, &super::CallRef) -> bool) -> Vec<CallSite> {
        let mut sites = Vec::new();
        for idx in nodes {
            let node = &self.graph[idx];
            for (i, call) in node.calls.iter().enumerate() {
                let caller = &self.functions[node.function as usize];
                if caller.removed || !wanted(caller, call) {
                    continue;
                }
                let targets = resolver.resolve(caller, &self.files[caller.meta.file as usize].unit, call);
                sites.push(CallSite { node: idx, call: i as u32, targets: targets.into() });
            }
        }
        sites
    }

    /// The name call `call` of a node of `caller` looks up.
    pub fn callee_name<'c>(caller: &'c Function, call: &'c super::CallRef) -> &'c str {
        Resolver::callee_name(caller, call)
    }

    /// Marks function `f` removed: its nodes become isolated placeholders (no text, no
    /// calls, not searchable); ids stay as they were. Its edges and call sites are left to
    /// [`Icfg::relink`], which drops them all in one pass.
    pub fn remove_function(&mut self, f: u32) {
        let range = self.function_nodes(f);
        self.functions[f as usize].removed = true;
        for i in range {
            let n = &mut self.graph[NodeIndex::new(i)];
            n.kind = super::NodeKind::Exit;
            n.text = Default::default();
            n.calls = Default::default();
            n.parent = Default::default();
        }
    }

    /// Replaces the call sites `sites` stands for (same node and call), adds new ones, and
    /// rebuilds every call and return edge from the sites, dropping the edges of removed
    /// functions' nodes: the graph a fresh [`Icfg::link`] of the same functions makes.
    pub fn relink(&mut self, sites: Vec<CallSite>) {
        let replaced: std::collections::HashSet<(usize, u32)> = sites.iter().map(|s| (s.node.index(), s.call)).collect();
        let functions = &self.functions;
        let graph = &self.graph;
        let mut all = std::mem::take(&mut self.calls);
        all.retain(|c| !replaced.contains(&(c.node.index(), c.call)) && !functions[graph[c.node].function as usize].removed);
        all.extend(sites);
        self.graph.retain_edges(|g, e| {
            let (a, b) = g.edge_endpoints(e).expect("an edge of the graph");
            let live = |n: NodeIndex| !functions[g[n].function as usize].removed;
            !matches!(g[e], EdgeKind::Call | EdgeKind::Return) && live(a) && live(b)
        });
        all.sort_by_key(|c| (c.node.index(), c.call));
        self.add_call_edges(all);
    }

    /// Puts `sites` in place of the sites they stand for (same node and call) or beside
    /// them, and drops the sites of removed functions' nodes, without touching an edge:
    /// an update reads call and return edges from the sites ([`crate::graph::csr::Rows`]).
    /// Returns the sites dropped, and for each function a dropped or new site names, its
    /// callers (nodes with a call edge into it) before.
    /// `removed_now` are the functions this change removed (their callers count before).
    pub fn replace_sites(&mut self, sites: Vec<CallSite>, removed_now: &[u32]) -> Replaced {
        let mut replaced: Vec<(usize, u32)> = sites.iter().map(|s| (s.node.index(), s.call)).collect();
        replaced.sort_unstable();
        // Millions of sites are looked up, a few replaced: their nodes, and the nodes of
        // removed functions (1: removed by this change, 2: before it), in tables first.
        let mut state = vec![0u8; self.graph.node_count()];
        for f in (0..self.functions.len() as u32).filter(|&f| self.functions[f as usize].removed) {
            let s = if removed_now.binary_search(&f).is_ok() { 1 } else { 2 };
            for n in self.function_nodes(f) {
                state[n] = s;
            }
        }
        let mut all = std::mem::take(&mut self.calls);
        let functions = &self.functions;
        let mut at = vec![false; state.len()];
        for &(n, _) in &replaced {
            at[n] = true;
        }
        let gone = |c: &CallSite| state[c.node.index()] != 0 || (at[c.node.index()] && replaced.binary_search(&(c.node.index(), c.call)).is_ok());
        let mut callees: Vec<u32> = sites.iter().chain(all.iter().filter(|c| gone(c))).flat_map(|c| c.targets.iter().copied()).collect();
        callees.sort_unstable();
        callees.dedup();
        callees.retain(|&t| !functions[t as usize].removed);
        let mut is_callee = vec![false; functions.len()];
        for &t in &callees {
            is_callee[t as usize] = true;
        }
        // Callers before: the distinct live nodes whose sites name each callee (the sites
        // are in node order, so a callee's callers come in order too).
        let mut last: Vec<Option<NodeIndex>> = vec![None; callees.len()];
        let mut before = vec![0usize; callees.len()];
        for c in all.iter().filter(|c| state[c.node.index()] != 2) {
            for t in c.targets.iter().filter(|&&t| is_callee[t as usize]) {
                if let Ok(i) = callees.binary_search(t) {
                    if last[i] != Some(c.node) {
                        last[i] = Some(c.node);
                        before[i] += 1;
                    }
                }
            }
        }
        let mut dropped = Vec::new();
        all.retain(|c| {
            let keep = !gone(c);
            if !keep {
                dropped.push(c.clone());
            }
            keep
        });
        all.extend(sites);
        all.sort_by_key(|c| (c.node.index(), c.call));
        self.calls = all;
        Replaced { dropped, callees: callees.into_iter().zip(before).collect() }
    }

    /// Targets of `n`'s intraprocedural edges: where control goes on after a call in `n`.
    pub fn successors_within(&self, n: NodeIndex) -> impl Iterator<Item = NodeIndex> + '_ {
        self.graph.edges_directed(n, Direction::Outgoing).filter(|e| !matches!(e.weight(), EdgeKind::Call | EdgeKind::Return)).map(|e| e.target())
    }

    /// The call sites of node `n` (the sites are kept in node order).
    pub fn sites_at(&self, n: NodeIndex) -> &[CallSite] {
        let lo = self.calls.partition_point(|c| c.node < n);
        let hi = lo + self.calls[lo..].partition_point(|c| c.node <= n);
        &self.calls[lo..hi]
    }

    /// The call edges out of `touched` and the return edges into `next` that the sites
    /// make, counting only functions `live` says are live, each edge once: a call node
    /// calls each live callee once, and a node after calls is returned to once from each
    /// callee of any call node before it. Counted before and after sites change, with
    /// `touched` every node whose sites change and `next` (at least) their successors, the
    /// two differ by as much as the whole graph's edges do.
    pub fn call_edges_of(&self, touched: &[NodeIndex], next: &[NodeIndex], live: &dyn Fn(u32) -> bool) -> usize {
        let callees = |n: NodeIndex, out: &mut Vec<u32>| {
            if live(self.graph[n].function) {
                out.extend(self.sites_at(n).iter().flat_map(|c| c.targets.iter().copied()).filter(|&t| live(t)));
            }
        };
        let mut buf = Vec::new();
        let mut count = 0;
        for &n in touched {
            buf.clear();
            callees(n, &mut buf);
            buf.sort_unstable();
            buf.dedup();
            count += buf.len();
        }
        let mut preds = Vec::new();
        for &a in next {
            preds.clear();
            preds.extend(self.graph.edges_directed(a, Direction::Incoming).filter(|e| !matches!(e.weight(), EdgeKind::Call | EdgeKind::Return)).map(|e| e.source()));
            preds.sort_unstable();
            preds.dedup();
            buf.clear();
            for &p in &preds {
                callees(p, &mut buf);
            }
            buf.sort_unstable();
            buf.dedup();
            count += buf.len();
        }
        count
    }

    /// Adds call edges (site → callee ENTRY) and return edges (callee EXIT → every
    /// intraprocedural successor of the site) for resolved call sites.
    pub fn add_call_edges(&mut self, sites: Vec<CallSite>) {
        // Edges already there, in sets: a callee with thousands of callers has thousands of
        // return edges, too many to scan for each new one.
        let mut calls: std::collections::HashSet<(NodeIndex, NodeIndex), Pairs> = Default::default();
        let mut returns: std::collections::HashSet<(NodeIndex, NodeIndex), Pairs> = Default::default();
        for e in self.graph.edge_references() {
            match e.weight() {
                EdgeKind::Call => calls.insert((e.source(), e.target())),
                EdgeKind::Return => returns.insert((e.source(), e.target())),
                _ => false,
            };
        }
        for site in &sites {
            let after: Vec<NodeIndex> = self.successors_within(site.node).collect();
            for &t in &site.targets {
                let f = &self.functions[t as usize];
                // A site resolved before its callee was removed (and not resolved again)
                // joins nothing: the callee's nodes are placeholders.
                if f.removed {
                    continue;
                }
                let (entry, exit) = (f.entry, f.exit);
                if self.graph.find_edge(site.node, entry).is_none() && calls.insert((site.node, entry)) {
                    self.graph.add_edge(site.node, entry, EdgeKind::Call);
                }
                for &a in &after {
                    if returns.insert((exit, a)) {
                        self.graph.add_edge(exit, a, EdgeKind::Return);
                    }
                }
            }
        }
        self.calls.extend(sites);
        // Kept in node order, so a function's sites are one slice (`call_sites`).
        self.calls.sort_by_key(|c| (c.node.index(), c.call));
    }

    /// Where the ICFG's memory lies, in bytes by part (for `RUST_LOG=debug`).
    pub fn heap_report(&self) -> String {
        let nodes = self.graph.node_count();
        let (mut text, mut texts, mut calls, mut call_names) = (0usize, 0usize, 0usize, 0usize);
        for n in self.graph.node_weights() {
            text += n.text.len();
            texts += usize::from(!n.text.is_empty());
            calls += n.calls.len();
            call_names += n.calls.iter().map(|c| c.name.capacity() + c.qualifier.capacity()).sum::<usize>();
        }
        let targets: usize = self.calls.iter().map(|c| c.targets.len()).sum();
        let meta: usize = self.functions.iter().map(|f| f.meta.name.capacity() + f.meta.scope.iter().map(|s| s.capacity() + 24).sum::<usize>()).sum();
        format!(
            "icfg heap: {nodes} nodes x {} B, {} edges x {} B; text {text} B in {texts} strings; calls {calls} x {} B, names {call_names} B; sites {} x {} B, targets {targets} x 4 B; functions {} x {} B + names {meta} B",
            std::mem::size_of::<Node>() + 8,
            self.graph.edge_count(),
            std::mem::size_of::<EdgeKind>().max(4) + 16,
            std::mem::size_of::<super::CallRef>(),
            self.calls.len(),
            std::mem::size_of::<CallSite>(),
            self.functions.len(),
            std::mem::size_of::<Function>(),
        )
    }

    /// The call sites whose node lies in `nodes` (a function's range, say).
    pub fn call_sites(&self, nodes: std::ops::Range<usize>) -> &[CallSite] {
        let a = self.calls.partition_point(|c| c.node.index() < nodes.start);
        let b = self.calls.partition_point(|c| c.node.index() < nodes.end);
        &self.calls[a..b.max(a)]
    }

    /// Functions named `name` (simple or qualified suffix, e.g. `Cls::run` or `Cls.run`).
    pub fn functions_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = (u32, &'a Function)> + 'a {
        self.functions.iter().enumerate().filter_map(move |(i, f)| {
            let q = f.meta.qualified();
            let hit = f.meta.name == name
                || q == name
                || q.ends_with(&format!("::{name}"))
                || q.ends_with(&format!(".{name}"));
            hit.then_some((i as u32, f))
        })
    }

    /// Whether each call site (of `calls`, in node order) is in a live function, found by
    /// walking the functions beside the sites: millions of sites, each of whose nodes
    /// would otherwise be looked up in the graph.
    pub fn live_sites(&self) -> Vec<bool> {
        let fs = &self.functions;
        let mut f = 0usize;
        self.calls
            .iter()
            .map(|c| {
                let n = c.node.index();
                while f + 1 < fs.len() && fs[f + 1].entry.index() <= n {
                    f += 1;
                }
                match fs.get(f).filter(|_| self.function_nodes(f as u32).contains(&n)) {
                    Some(func) => !func.removed,
                    None => !fs[self.graph[c.node].function as usize].removed,
                }
            })
            .collect()
    }

    /// Nodes of function `f`, ENTRY and EXIT first (nodes of one function are contiguous).
    pub fn function_nodes(&self, f: u32) -> std::ops::Range<usize> {
        let start = self.functions[f as usize].entry.index();
        let end = self
            .functions
            .get(f as usize + 1)
            .map(|g| g.entry.index())
            .unwrap_or(self.graph.node_count());
        start..end
    }

    /// Breadth-first distances from `from` to every node within `radius` edges, following
    /// edges both ways when `undirected`. Bounded, so it never touches the whole corpus.
    pub fn distances_within(&self, from: NodeIndex, radius: u32, undirected: bool) -> HashMap<NodeIndex, u32> {
        let mut dist = HashMap::new();
        dist.insert(from, 0);
        let mut queue = VecDeque::from([from]);
        while let Some(n) = queue.pop_front() {
            let d = dist[&n];
            if d == radius {
                continue;
            }
            let out = self.graph.neighbors_directed(n, Direction::Outgoing);
            let inc = undirected
                .then(|| self.graph.neighbors_directed(n, Direction::Incoming))
                .into_iter()
                .flatten();
            for m in out.chain(inc) {
                if let std::collections::hash_map::Entry::Vacant(e) = dist.entry(m) {
                    e.insert(d + 1);
                    queue.push_back(m);
                }
            }
        }
        dist
    }

    /// Length of the shortest path from `a` to `b` of at most `radius` edges.
    pub fn shortest_path(&self, a: NodeIndex, b: NodeIndex, radius: u32, undirected: bool) -> Option<u32> {
        self.distances_within(a, radius, undirected).get(&b).copied()
    }
}
