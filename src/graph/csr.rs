//! The ICFG as an undirected adjacency list (CSR) on disk, for bounded shortest-path
//! searches at query time without loading the edge table or rebuilding the graph.

use super::{EdgeKind, Icfg};
use petgraph::visit::EdgeRef;
use std::collections::HashMap;

const MAGIC: &[u8; 8] = b"BRYLCSR1";

/// Callees with more callers than this do not join their callers into one neighbourhood:
/// a path through `vector_size` says nothing about two statements belonging together, and
/// such hubs would make every bounded search visit half the corpus.
pub const HUB_CALLERS: usize = 24;

#[derive(Debug, Default, Clone)]
pub struct Csr {
    offsets: Words,
    targets: Words,
    /// Rows an update replaced or added over this adjacency ([`Csr::with_overlay`]).
    overlay: Option<std::sync::Arc<Overlay>>,
}

/// Rows that replace a base adjacency's (or extend it past its last node): an update
/// writes these instead of the whole adjacency again.
#[derive(Debug, Default)]
struct Overlay {
    /// Nodes of the patched graph.
    n: usize,
    /// The rows held, ascending.
    rows: Vec<u32>,
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

const OVERLAY_MAGIC: &[u8; 8] = b"BRYLCSRP";

/// A run of `u32`s, in memory or read in place from a mapped `graph.bin` (an index opens
/// without reading its adjacency: a query touches a few thousand rows of it).
enum Words {
    Owned(Vec<u32>),
    /// `len` words from byte `start` of `map`; `start` is a multiple of 4 and the map is
    /// page aligned, and the file is little-endian as the words are (checked at mapping).
    Mapped { map: std::sync::Arc<crate::mapped::Bytes>, start: usize, len: usize },
}

impl Default for Words {
    fn default() -> Words {
        Words::Owned(Vec::new())
    }
}

impl Clone for Words {
    fn clone(&self) -> Words {
        match self {
            Words::Owned(v) => Words::Owned(v.clone()),
            Words::Mapped { map, start, len } => Words::Mapped { map: map.clone(), start: *start, len: *len },
        }
    }
}

impl std::fmt::Debug for Words {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} words", self.len())
    }
}

impl std::ops::Deref for Words {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        match self {
            Words::Owned(v) => v,
            // SAFETY: `Csr::mapped` made this only for an aligned, in-bounds range of a
            // little-endian map, which lives as long as `self`.
            Words::Mapped { map, start, len } => unsafe { std::slice::from_raw_parts(map.as_ptr().add(*start).cast::<u32>(), *len) },
        }
    }
}

/// Whether the edge `(a, b, kind)` is in the adjacency: not a call into a hub, nor a
/// return out of one (`hub` says of a callee's ENTRY), not a loop, and with `same_file`
/// within one file.
fn kept(icfg: &Icfg, (a, b, k): (u32, u32, EdgeKind), same_file: bool, hub: &mut dyn FnMut(usize) -> bool) -> bool {
    let node = |i: u32| &icfg.graph[petgraph::graph::NodeIndex::new(i as usize)];
    let skip = match k {
        EdgeKind::Call => hub(b as usize),
        // A return edge leaves the callee's EXIT; its ENTRY is the function's first node.
        EdgeKind::Return => icfg.functions.get(node(a).function as usize).is_some_and(|f| hub(f.entry.index())),
        _ => false,
    };
    !skip && a != b && (!same_file || node(a).file == node(b).file)
}

impl Csr {
    pub fn node_count(&self) -> usize {
        self.overlay.as_ref().map_or_else(|| self.base_count(), |o| o.n)
    }

    fn base_count(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn neighbors(&self, n: u32) -> &[u32] {
        if let Some(o) = &self.overlay {
            if let Ok(i) = o.rows.binary_search(&n) {
                return &o.targets[o.offsets[i] as usize..o.offsets[i + 1] as usize];
            }
        }
        self.base_neighbors(n)
    }

    /// `n`'s row in the adjacency under any overlay.
    fn base_neighbors(&self, n: u32) -> &[u32] {
        let i = n as usize;
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            // A mapped graph's rows are checked as they are read.
            (Some(&a), Some(&b)) => self.targets.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Both directions of every ICFG edge, minus call/return edges of hub callees.
    pub fn from_icfg(icfg: &Icfg) -> Csr {
        Csr::edges_of(icfg, false)
    }

    fn edges_of(icfg: &Icfg, same_file: bool) -> Csr {
        let g = &icfg.graph;
        Csr::build(icfg, || g.edge_references().map(|e| (e.source().index() as u32, e.target().index() as u32, *e.weight())), same_file)
    }

    /// [`Csr::from_icfg`] (or with `same_file`, [`Csr::within_files`]) of the graph of
    /// `icfg`'s nodes and functions with the edges `edges` instead of its own.
    pub fn from_edges(icfg: &Icfg, edges: &[(u32, u32, EdgeKind)], same_file: bool) -> Csr {
        Csr::build(icfg, || edges.iter().copied(), same_file)
    }

    /// The adjacency of the edges `edges()` yields (each pass the same), counted, then
    /// filled: what it holds is the adjacency itself, not a list of edges beside it.
    fn build<I: Iterator<Item = (u32, u32, EdgeKind)>>(icfg: &Icfg, edges: impl Fn() -> I, same_file: bool) -> Csr {
        let g = &icfg.graph;
        let n = g.node_count();
        let mut callers = vec![0usize; n];
        for (_, b, k) in edges() {
            if k == EdgeKind::Call {
                callers[b as usize] += 1;
            }
        }
        let hub = |callee_entry: usize| callers[callee_entry] > HUB_CALLERS;
        Csr::from_pair_source(n, || edges().filter(|&e| kept(icfg, e, same_file, &mut |x| hub(x))).flat_map(|(a, b, _)| [(a, b), (b, a)]))
    }

    /// The adjacency of `n` nodes with the given rows (each ascending, no repeats) and
    /// every other row empty.
    /// Held as rows over an empty adjacency: an update asks for the rows of a few files
    /// among millions of nodes, where offsets for every node would cost more than the rows.
    pub fn from_rows(n: usize, rows: &[(u32, Vec<u32>)]) -> Csr {
        let mut pairs: Vec<(u32, u32)> = rows.iter().flat_map(|(a, r)| r.iter().map(move |&b| (*a, b))).collect();
        pairs.sort_unstable();
        pairs.dedup();
        let (mut ids, mut offsets, mut targets) = (Vec::new(), vec![0u32], Vec::with_capacity(pairs.len()));
        for (a, b) in pairs {
            assert!((a as usize) < n && (b as usize) < n, "row {a} -> {b} of an adjacency of {n} nodes");
            if ids.last() != Some(&a) {
                if !ids.is_empty() {
                    offsets.push(targets.len() as u32);
                }
                ids.push(a);
            }
            targets.push(b);
        }
        if !ids.is_empty() {
            offsets.push(targets.len() as u32);
        }
        Csr { overlay: Some(std::sync::Arc::new(Overlay { n, rows: ids, offsets, targets })), ..Csr::default() }
    }

    /// The adjacency of `n` nodes holding the directed `pairs` (duplicates dropped).
    pub fn from_pairs(n: usize, pairs: Vec<(u32, u32)>) -> Csr {
        Csr::from_pair_source(n, || pairs.iter().copied())
    }

    /// As [`Csr::from_pairs`], from pairs that `pairs()` yields again on each call: counted,
    /// placed, then each row sorted and its repeats dropped.
    fn from_pair_source<I: Iterator<Item = (u32, u32)>>(n: usize, pairs: impl Fn() -> I) -> Csr {
        let mut offsets = vec![0u32; n + 1];
        for (a, _) in pairs() {
            offsets[a as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut targets = vec![0u32; offsets[n] as usize];
        let mut next: Vec<u32> = offsets[..n].to_vec();
        for (a, b) in pairs() {
            targets[next[a as usize] as usize] = b;
            next[a as usize] += 1;
        }
        drop(next);
        // Rows sorted and deduplicated in place, moved down over the repeats dropped before them.
        let mut write = 0usize;
        for i in 0..n {
            let (lo, hi) = (offsets[i] as usize, offsets[i + 1] as usize);
            targets[lo..hi].sort_unstable();
            offsets[i] = write as u32;
            let mut last = None;
            for r in lo..hi {
                let t = targets[r];
                if last != Some(t) {
                    targets[write] = t;
                    write += 1;
                    last = Some(t);
                }
            }
        }
        offsets[n] = write as u32;
        targets.truncate(write);
        targets.shrink_to_fit();
        Csr { offsets: Words::Owned(offsets), targets: Words::Owned(targets), overlay: None }
    }

    /// The graph the GCN reads: [`Csr::from_icfg`] restricted to edges between two nodes
    /// of one file. A node's vector then depends on its own file alone (the model was
    /// trained on subgraphs of whole files), and an edit changes the vectors of its file
    /// and of the files whose own edges it changes (a callee that became a hub, say).
    pub fn within_files(icfg: &Icfg) -> Csr {
        Csr::edges_of(icfg, true)
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + 4 * (self.offsets.len() + self.targets.len()));
        self.write_to(&mut out).expect("writing to memory");
        out
    }

    /// [`Csr::to_bytes`]'s bytes, handed to `out` a block at a time.
    pub fn write_to(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        if self.overlay.is_some() {
            // A patched graph is written as the one graph it reads as.
            let n = self.node_count() as u32;
            return Csr::from_pair_source(n as usize, || (0..n).flat_map(|a| self.neighbors(a).iter().map(move |&b| (a, b)))).write_to(out);
        }
        out.write_all(MAGIC)?;
        out.write_all(&(self.offsets.len() as u64).to_le_bytes())?;
        out.write_all(&(self.targets.len() as u64).to_le_bytes())?;
        let mut buf = Vec::with_capacity(1 << 16);
        for block in self.offsets.chunks(1 << 14).chain(self.targets.chunks(1 << 14)) {
            buf.clear();
            for v in block {
                buf.extend_from_slice(&v.to_le_bytes());
            }
            out.write_all(&buf)?;
        }
        Ok(())
    }

    /// Parses [`Csr::to_bytes`]; `None` when the bytes are not a well-formed graph.
    pub fn from_bytes(b: &[u8]) -> Option<Csr> {
        if b.len() < 24 || &b[..8] != MAGIC {
            return None;
        }
        let no = u64::from_le_bytes(b[8..16].try_into().ok()?) as usize;
        let nt = u64::from_le_bytes(b[16..24].try_into().ok()?) as usize;
        let body = &b[24..];
        if no == 0 || body.len() != 4 * no.checked_add(nt)? {
            return None;
        }
        let words: Vec<u32> = body.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let (offsets, targets) = words.split_at(no);
        let nodes = no - 1;
        let ok = offsets[0] == 0
            && offsets.windows(2).all(|w| w[0] <= w[1])
            && offsets[nodes] as usize == nt
            && targets.iter().all(|&t| (t as usize) < nodes);
        ok.then(|| Csr { offsets: Words::Owned(offsets.to_vec()), targets: Words::Owned(targets.to_vec()), overlay: None })
    }

    /// [`Csr::from_bytes`] over a mapped file, read in place: only the header and the two
    /// ends of the offsets are checked here, since checking every word would read the whole
    /// file; what a damaged row could hold is checked where rows are read (`neighbors`
    /// slices with `get`, [`Bfs`] skips targets out of range). Decoded instead where the
    /// map cannot be read as words (a big-endian machine).
    pub fn mapped(map: crate::mapped::Bytes) -> Option<Csr> {
        let b = &map[..];
        if b.len() < 24 || &b[..8] != MAGIC {
            return None;
        }
        let no = u64::from_le_bytes(b[8..16].try_into().ok()?) as usize;
        let nt = u64::from_le_bytes(b[16..24].try_into().ok()?) as usize;
        if no == 0 || b.len() - 24 != 4 * no.checked_add(nt)? {
            return None;
        }
        if cfg!(target_endian = "big") || (map.as_ptr() as usize) % 4 != 0 {
            return Csr::from_bytes(b);
        }
        let word = |i: usize| u32::from_le_bytes(b[24 + 4 * i..28 + 4 * i].try_into().expect("4 bytes"));
        if word(0) != 0 || word(no - 1) as usize != nt {
            return None;
        }
        let map = std::sync::Arc::new(map);
        Some(Csr {
            offsets: Words::Mapped { map: map.clone(), start: 24, len: no },
            targets: Words::Mapped { map, start: 24 + 4 * no, len: nt },
            overlay: None,
        })
    }

    /// The rows of `new` that differ from this graph's (every row past this graph's last
    /// node among them), as [`Csr::with_overlay`] reads them: what
    /// [`Csr::overlay_updated`] must equal, for the tests.
    #[cfg(test)]
    pub fn overlay_of(&self, new: &Csr) -> Vec<u8> {
        let (mut rows, mut offsets, mut targets) = (Vec::new(), vec![0u32], Vec::new());
        for n in 0..new.node_count() as u32 {
            let row = new.neighbors(n);
            if n as usize >= self.node_count() || self.neighbors(n) != row {
                rows.push(n);
                targets.extend_from_slice(row);
                offsets.push(targets.len() as u32);
            }
        }
        overlay_bytes(new.node_count(), &rows, &offsets, &targets)
    }

    /// The overlay (as [`Csr::with_overlay`] reads it) of the graph of `n` nodes that this one (a base graph, with or
    /// without an overlay) becomes when `rows` (ascending) replace its rows: the
    /// overlay's rows and `rows`, less those that equal the base's.
    pub fn overlay_updated(&self, n: usize, rows: &[(u32, Vec<u32>)]) -> Vec<u8> {
        let held: &[u32] = self.overlay.as_ref().map_or(&[], |o| &o.rows);
        let base = self.base_count();
        let mut ids: Vec<u32> = held.iter().copied().chain(rows.iter().map(|r| r.0)).chain(base as u32..n as u32).filter(|&r| (r as usize) < n).collect();
        ids.sort_unstable();
        ids.dedup();
        let (mut out_rows, mut offsets, mut targets) = (Vec::new(), vec![0u32], Vec::new());
        for id in ids {
            let row = match rows.binary_search_by_key(&id, |r| r.0) {
                Ok(i) => &rows[i].1[..],
                Err(_) => self.neighbors(id),
            };
            if id as usize >= base || self.base_neighbors(id) != row {
                out_rows.push(id);
                targets.extend_from_slice(row);
                offsets.push(targets.len() as u32);
            }
        }
        overlay_bytes(n, &out_rows, &offsets, &targets)
    }

    /// This graph with the rows of [`Csr::overlay_of`]'s `bytes` in place of its own;
    /// `None` when they are not well formed or reach past the nodes they state.
    pub fn with_overlay(mut self, b: &[u8]) -> Option<Csr> {
        if b.len() < 32 || &b[..8] != OVERLAY_MAGIC {
            return None;
        }
        let word64 = |i: usize| u64::from_le_bytes(b[8 + 8 * i..16 + 8 * i].try_into().expect("8 bytes")) as usize;
        let (n, nr, nt) = (word64(0), word64(1), word64(2));
        let body = &b[32..];
        if n < self.base_count() || body.len() != nr.checked_mul(2)?.checked_add(1)?.checked_add(nt)?.checked_mul(4)? {
            return None;
        }
        let words: Vec<u32> = body.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let (rows, rest) = words.split_at(nr);
        let (offsets, targets) = rest.split_at(nr + 1);
        let ok = rows.windows(2).all(|w| w[0] < w[1])
            && rows.last().is_none_or(|&r| (r as usize) < n)
            && offsets[0] == 0
            && offsets.windows(2).all(|w| w[0] <= w[1])
            && offsets[nr] as usize == nt
            && targets.iter().all(|&t| (t as usize) < n);
        self.overlay = Some(std::sync::Arc::new(Overlay { n, rows: rows.to_vec(), offsets: offsets.to_vec(), targets: targets.to_vec() }));
        ok.then_some(self)
    }
}

fn overlay_bytes(n: usize, rows: &[u32], offsets: &[u32], targets: &[u32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 + 4 * (2 * rows.len() + 1 + targets.len()));
    out.extend(OVERLAY_MAGIC);
    for v in [n, rows.len(), targets.len()] {
        out.extend((v as u64).to_le_bytes());
    }
    for w in rows.iter().chain(offsets).chain(targets) {
        out.extend(w.to_le_bytes());
    }
    out
}

/// What [`Rows`] holds beside its ICFG ([`Rows::release`]).
pub struct Naming {
    offsets: Vec<u32>,
    naming: Vec<u32>,
    callers: HashMap<u32, usize>,
}

/// Rows of [`Csr::from_icfg`] (or with `same_file`, [`Csr::within_files`]) read from an
/// ICFG whose graph holds its intraprocedural edges only, the call and return edges taken
/// from its sites, as an update holds it: the rows a change touches, without the
/// millions of call edges a whole adjacency needs.
pub struct Rows<'a> {
    icfg: &'a Icfg,
    /// The sites (indexes into `icfg.calls`) that name each function, by function id.
    offsets: Vec<u32>,
    naming: Vec<u32>,
    callers: HashMap<u32, usize>,
}

impl<'a> Rows<'a> {
    pub fn new(icfg: &'a Icfg) -> Rows<'a> {
        let live_site = icfg.live_sites();
        let mut offsets = vec![0u32; icfg.functions.len() + 1];
        for c in icfg.calls.iter().zip(&live_site).filter(|(_, &l)| l).map(|(c, _)| c) {
            for &t in &c.targets {
                offsets[t as usize + 1] += 1;
            }
        }
        for i in 0..icfg.functions.len() {
            offsets[i + 1] += offsets[i];
        }
        let mut naming = vec![0u32; offsets[icfg.functions.len()] as usize];
        let mut next = offsets.clone();
        for (i, c) in icfg.calls.iter().enumerate().filter(|&(i, _)| live_site[i]) {
            for &t in &c.targets {
                naming[next[t as usize] as usize] = i as u32;
                next[t as usize] += 1;
            }
        }
        Rows { icfg, offsets, naming, callers: HashMap::new() }
    }

    /// What the rows are read with, apart from the ICFG: kept while the ICFG gains nodes'
    /// edges (its sites unchanged), then given back to [`Rows::resume`].
    pub fn release(self) -> Naming {
        Naming { offsets: self.offsets, naming: self.naming, callers: self.callers }
    }

    /// [`Rows::new`] of `icfg` with what [`Rows::release`] kept: `icfg`'s sites must be
    /// those they were.
    pub fn resume(icfg: &'a Icfg, n: Naming) -> Rows<'a> {
        Rows { icfg, offsets: n.offsets, naming: n.naming, callers: n.callers }
    }

    /// The files whose intraprocedural edges [`Rows::row`] reads for node `n`, into `out`:
    /// its own, and for a function's EXIT the files of its callers (the return edges go
    /// to the nodes after their calls), unless it is a hub, whose return edges the rows
    /// leave out.
    pub fn files_read(&mut self, n: u32, out: &mut Vec<u32>) {
        let icfg = self.icfg;
        let node = &icfg.graph[petgraph::graph::NodeIndex::new(n as usize)];
        out.push(node.file);
        let f = &icfg.functions[node.function as usize];
        if !f.removed && f.exit.index() == n as usize && self.callers(node.function) <= HUB_CALLERS {
            out.extend(self.naming(node.function).map(|c| icfg.graph[c.node].file));
        }
    }

    /// The live sites that name function `f`, in node order.
    pub fn naming(&self, f: u32) -> impl Iterator<Item = &'a crate::graph::CallSite> + '_ {
        let icfg = self.icfg;
        self.naming[self.offsets[f as usize] as usize..self.offsets[f as usize + 1] as usize].iter().map(move |&i| &icfg.calls[i as usize])
    }

    /// The edges [`Icfg::relink`] would leave: the intraprocedural edges between live
    /// nodes, a call edge per site node and live callee, a return edge per callee EXIT and
    /// successor of a site node calling it.
    pub fn edge_count(&self) -> usize {
        let icfg = self.icfg;
        let g = &icfg.graph;
        let live = |n: petgraph::graph::NodeIndex| !icfg.functions[g[n].function as usize].removed;
        // The graph holds intraprocedural edges alone, each within one function: those of
        // removed functions' nodes are the ones that do not count.
        let gone: usize = (0..icfg.functions.len() as u32)
            .filter(|&f| icfg.functions[f as usize].removed)
            .flat_map(|f| icfg.function_nodes(f))
            .map(|n| g.edges_directed(petgraph::graph::NodeIndex::new(n), petgraph::Direction::Outgoing).count())
            .sum();
        let intra = g.edge_count() - gone;
        // Live callees of a run of sites, into `out` (sorted, once each).
        let live_callees = |c: &[crate::graph::CallSite], out: &mut Vec<u32>| {
            out.clear();
            out.extend(c.iter().flat_map(|c| c.targets.iter().copied()).filter(|&t| !icfg.functions[t as usize].removed));
            out.sort_unstable();
            out.dedup();
        };
        let (mut calls, mut returns) = (0usize, 0usize);
        let (mut callees, mut exits, mut before) = (Vec::new(), Vec::new(), Vec::new());
        // A node after calls returns from each callee once, whichever call before it made
        // the edge: counted when first reached, over every call before it.
        let mut counted = vec![0u64; g.node_count().div_ceil(64)];
        let sites = &icfg.calls;
        let mut i = 0;
        while i < sites.len() {
            let n = sites[i].node;
            let j = i + sites[i..].partition_point(|c| c.node == n);
            if live(n) {
                live_callees(&sites[i..j], &mut callees);
                calls += callees.len();
                for a in icfg.successors_within(n) {
                    let (w, bit) = (a.index() / 64, 1u64 << (a.index() % 64));
                    if counted[w] & bit != 0 {
                        continue;
                    }
                    counted[w] |= bit;
                    before.clear();
                    before.extend(g.edges_directed(a, petgraph::Direction::Incoming).filter(|e| !matches!(e.weight(), EdgeKind::Call | EdgeKind::Return)).map(|e| e.source()));
                    before.sort_unstable();
                    before.dedup();
                    if before.len() == 1 {
                        returns += callees.len();
                    } else {
                        let mut all: Vec<u32> = Vec::new();
                        for &p in before.iter().filter(|&&p| live(p)) {
                            live_callees(icfg.sites_at(p), &mut exits);
                            all.extend_from_slice(&exits);
                        }
                        all.sort_unstable();
                        all.dedup();
                        returns += all.len();
                    }
                }
            }
            i = j;
        }
        intra + calls + returns
    }

    /// Nodes with a call edge into function `f`'s ENTRY.
    pub fn callers(&mut self, f: u32) -> usize {
        if let Some(&c) = self.callers.get(&f) {
            return c;
        }
        let mut nodes: Vec<u32> = self.naming(f).map(|c| c.node.index() as u32).collect();
        nodes.dedup();
        self.callers.insert(f, nodes.len());
        nodes.len()
    }

    /// Node `n`'s row: empty for a removed function's node, which has no edges.
    pub fn row(&mut self, n: u32, same_file: bool) -> Vec<u32> {
        use petgraph::graph::NodeIndex;
        let icfg = self.icfg;
        let g = &icfg.graph;
        let idx = NodeIndex::new(n as usize);
        let live_fn = |f: u32| !icfg.functions[f as usize].removed;
        let own = g[idx].function;
        if !live_fn(own) {
            return Vec::new();
        }
        // (a, b, kind) of every edge at `n`, call and return edges from the sites.
        let mut edges: Vec<(u32, u32, EdgeKind)> = Vec::new();
        let intra = |e: &petgraph::graph::EdgeReference<EdgeKind>| !matches!(e.weight(), EdgeKind::Call | EdgeKind::Return);
        for e in g.edges_directed(idx, petgraph::Direction::Outgoing).filter(intra) {
            edges.push((n, e.target().index() as u32, *e.weight()));
        }
        for e in g.edges_directed(idx, petgraph::Direction::Incoming).filter(intra) {
            edges.push((e.source().index() as u32, n, *e.weight()));
            // A call in the node before returns here.
            for c in icfg.sites_at(e.source()) {
                for &t in c.targets.iter().filter(|&&t| live_fn(t)) {
                    edges.push((icfg.functions[t as usize].exit.index() as u32, n, EdgeKind::Return));
                }
            }
        }
        for c in icfg.sites_at(idx) {
            for &t in c.targets.iter().filter(|&&t| live_fn(t)) {
                edges.push((n, icfg.functions[t as usize].entry.index() as u32, EdgeKind::Call));
            }
        }
        let f = &icfg.functions[own as usize];
        if f.entry == idx {
            edges.extend(self.naming(own).map(|c| (c.node.index() as u32, n, EdgeKind::Call)));
        }
        if f.exit == idx {
            for c in self.naming(own) {
                edges.extend(icfg.successors_within(c.node).map(|a| (n, a.index() as u32, EdgeKind::Return)));
            }
        }
        let mut row = Vec::new();
        for e in edges {
            let mut hub = |entry: usize| {
                let f = g[NodeIndex::new(entry)].function;
                self.callers(f) > HUB_CALLERS
            };
            if kept(icfg, e, same_file, &mut hub) {
                row.push(if e.0 == n { e.1 } else { e.0 });
            }
        }
        row.sort_unstable();
        row.dedup();
        row
    }
}

/// Bounded breadth-first searches that reuse one distance array.
pub struct Bfs<'a> {
    csr: &'a Csr,
    /// Distance + 1 of each node reached, 0 for the others: zeroed memory, which the
    /// system hands out untouched, so a search over millions of nodes pays only for the
    /// pages it reaches.
    seen: Vec<u32>,
    touched: Vec<u32>,
    queue: Vec<u32>,
}

impl<'a> Bfs<'a> {
    pub fn new(csr: &'a Csr) -> Self {
        Bfs { csr, seen: vec![0; csr.node_count()], touched: Vec::new(), queue: Vec::new() }
    }

    /// Distances from `from` to those of `wanted` within `radius` edges. The search stops
    /// at the first distance by which it has reached `max_visits` nodes, so the cost of one
    /// call is bounded; it stops between distances, never inside one, so what it finds does
    /// not depend on the order of neighbours (that is, on how nodes happen to be numbered).
    pub fn distances(&mut self, from: u32, radius: u32, max_visits: usize, wanted: &HashMap<u32, usize>) -> Vec<(usize, u32)> {
        for &t in &self.touched {
            self.seen[t as usize] = 0;
        }
        self.touched.clear();
        self.queue.clear();
        let mut found = Vec::new();
        if from as usize >= self.seen.len() {
            return found;
        }
        self.seen[from as usize] = 1;
        self.touched.push(from);
        self.queue.push(from);
        let mut head = 0;
        while head < self.queue.len() {
            let n = self.queue[head];
            let d = self.seen[n as usize] - 1;
            // A new distance begins: go on only within the budget.
            if (head == 0 || self.seen[self.queue[head - 1] as usize] - 1 != d) && self.touched.len() >= max_visits && d > 0 {
                break;
            }
            head += 1;
            if let Some(&slot) = wanted.get(&n) {
                found.push((slot, d));
            }
            if d == radius {
                continue;
            }
            for &m in self.csr.neighbors(n) {
                // A target out of range is a damaged mapped graph: not followed.
                if let Some(s @ 0) = self.seen.get_mut(m as usize) {
                    *s = d + 2;
                    self.touched.push(m);
                    self.queue.push(m);
                }
            }
        }
        // Nodes reached (at the next distance) but not expanded when the budget ran out.
        for &n in &self.queue[head..] {
            if let Some(&slot) = wanted.get(&n) {
                found.push((slot, self.seen[n as usize] - 1));
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overlay_reads_as_the_graph_it_was_taken_from() {
        let base = chain(6);
        let new = Csr::from_pairs(8, vec![(0, 1), (1, 0), (1, 2), (2, 1), (3, 7), (7, 3), (6, 5), (5, 6), (4, 5), (5, 4)]);
        let b = base.overlay_of(&new);
        let patched = chain(6).with_overlay(&b).unwrap();
        assert_eq!(patched.node_count(), 8);
        for n in 0..8 {
            assert_eq!(patched.neighbors(n), new.neighbors(n), "row {n}");
        }
        // Written whole, it is the graph itself.
        assert_eq!(patched.to_bytes(), new.to_bytes());
        // Rows of a graph smaller than the base, or cut, are refused.
        assert!(chain(9).with_overlay(&b).is_none());
        assert!(chain(6).with_overlay(&b[..b.len() - 4]).is_none());
    }

    fn chain(n: u32) -> Csr {
        let mut offsets = vec![0];
        let mut targets = vec![];
        for i in 0..n {
            if i > 0 {
                targets.push(i - 1);
            }
            if i + 1 < n {
                targets.push(i + 1);
            }
            offsets.push(targets.len() as u32);
        }
        Csr { offsets: Words::Owned(offsets), targets: Words::Owned(targets), overlay: None }
    }

    #[test]
    fn a_mapped_graph_reads_as_the_decoded_one_and_damage_does_not_panic() {
        let c = chain(50);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("graph.bin");
        std::fs::write(&p, c.to_bytes()).unwrap();
        let m = Csr::mapped(crate::mapped::Bytes::map(&p).unwrap()).unwrap();
        assert!(matches!(m.targets, Words::Mapped { .. }));
        assert_eq!(m.node_count(), 50);
        for n in 0..52 {
            assert_eq!(m.neighbors(n), c.neighbors(n), "node {n}");
        }
        let wanted: HashMap<u32, usize> = (0..50).map(|n| (n, n as usize)).collect();
        assert_eq!(Bfs::new(&m).distances(10, 5, 1000, &wanted), Bfs::new(&c).distances(10, 5, 1000, &wanted));
        assert!(Csr::mapped(crate::mapped::Bytes::map(&p).unwrap()).is_some());
        // A target past the nodes and a row that runs backwards, which only a full
        // decode would notice: read as no edge and an empty row.
        let mut bad = c.to_bytes();
        let (no, first_target) = (51usize, 24 + 4 * 51);
        bad[first_target..first_target + 4].copy_from_slice(&999u32.to_le_bytes());
        bad[24 + 4 * 20..24 + 4 * 21].copy_from_slice(&90u32.to_le_bytes());
        std::fs::write(&p, &bad).unwrap();
        assert!(Csr::from_bytes(&bad).is_none());
        let m = Csr::mapped(crate::mapped::Bytes::map(&p).unwrap()).unwrap();
        assert_eq!(m.node_count(), no - 1);
        assert_eq!(m.neighbors(0), &[999]);
        assert_eq!(m.neighbors(20), &[] as &[u32]);
        let d = Bfs::new(&m).distances(0, 50, 1000, &wanted);
        assert_eq!(d, vec![(0, 0)]);
        // Sizes that disagree with the header are refused.
        std::fs::write(&p, &bad[..bad.len() - 4]).unwrap();
        assert!(Csr::mapped(crate::mapped::Bytes::map(&p).unwrap()).is_none());
    }

    #[test]
    fn pairs_become_sorted_rows_without_repeats() {
        // Out of order, repeated, a node with no pairs (3) and one with only repeats (4).
        let pairs = vec![(2, 0), (0, 4), (2, 1), (0, 1), (2, 0), (4, 2), (4, 2), (0, 4), (1, 2)];
        let c = Csr::from_pairs(5, pairs);
        let rows: Vec<&[u32]> = (0..5).map(|i| c.neighbors(i)).collect();
        assert_eq!(rows, [&[1, 4][..], &[2], &[0, 1], &[], &[2]]);
        assert_eq!(c.targets.len(), 6);
        assert_eq!(c.offsets[..], [0, 2, 3, 5, 5, 6]);
        let mut written = Vec::new();
        c.write_to(&mut written).unwrap();
        assert_eq!(written, c.to_bytes());
        assert_eq!(Csr::from_bytes(&written).unwrap().neighbors(2), &[0, 1]);
    }

    #[test]
    fn rows_read_as_the_pairs_they_hold() {
        // Out of order, a row given twice, repeats within a row, and rows left empty.
        let rows = vec![(7, vec![3, 1, 3]), (2, vec![9]), (7, vec![0, 1]), (4, vec![])];
        let pairs: Vec<(u32, u32)> = rows.iter().flat_map(|(a, r): &(u32, Vec<u32>)| r.iter().map(move |&b| (*a, b))).collect();
        let (sparse, dense) = (Csr::from_rows(10, &rows), Csr::from_pairs(10, pairs));
        assert_eq!(sparse.node_count(), 10);
        for n in 0..12 {
            assert_eq!(sparse.neighbors(n), dense.neighbors(n), "row {n}");
        }
        assert_eq!(sparse.neighbors(7), &[0, 1, 3]);
        assert_eq!(Csr::from_rows(3, &[]).node_count(), 3);
    }

    #[test]
    fn bytes_round_trip_and_reject_damage() {
        let c = chain(5);
        let b = c.to_bytes();
        let back = Csr::from_bytes(&b).unwrap();
        assert_eq!(back.neighbors(2), &[1, 3]);
        assert!(Csr::from_bytes(&b[..b.len() - 1]).is_none());
        let mut bad = b.clone();
        let last = bad.len() - 4;
        bad[last..].copy_from_slice(&99u32.to_le_bytes());
        assert!(Csr::from_bytes(&bad).is_none());
        assert!(Csr::from_bytes(b"garbage").is_none());
    }

    #[test]
    fn bounded_distances() {
        let c = chain(10);
        let mut bfs = Bfs::new(&c);
        let wanted: HashMap<u32, usize> = [(0, 0), (3, 1), (9, 2)].into_iter().collect();
        let mut d = bfs.distances(0, 5, usize::MAX, &wanted);
        d.sort();
        assert_eq!(d, vec![(0, 0), (1, 3)]);
        // The array is reset between calls.
        let mut d = bfs.distances(9, 6, usize::MAX, &wanted);
        d.sort();
        assert_eq!(d, vec![(1, 6), (2, 0)]);
    }

    #[test]
    fn a_budget_stops_between_distances_whatever_the_numbering() {
        // A star: centre 0 with leaves 1..=6, and leaf 6 continues to 7.
        let star = |order: &[u32]| {
            let mut adj: Vec<Vec<u32>> = vec![Vec::new(); 8];
            for &l in order {
                adj[0].push(l);
                adj[l as usize].push(0);
            }
            adj[6].push(7);
            adj[7].push(6);
            let mut offsets = vec![0];
            let mut targets = vec![];
            for a in adj {
                targets.extend(a);
                offsets.push(targets.len() as u32);
            }
            Csr { offsets: Words::Owned(offsets), targets: Words::Owned(targets), overlay: None }
        };
        let wanted: HashMap<u32, usize> = (0..8).map(|n| (n, n as usize)).collect();
        for order in [[1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1]] {
            let c = star(&order);
            let mut d = Bfs::new(&c).distances(0, 5, 3, &wanted);
            d.sort();
            // Every leaf at distance 1 is found, node 7 (distance 2) never: the budget of 3
            // ran out within distance 1, which is finished whatever the order.
            assert_eq!(d, (0..7).map(|n| (n, u32::from(n > 0))).collect::<Vec<_>>(), "{order:?}");
        }
    }
}
