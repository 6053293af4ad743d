//! Grouping matched source nodes into fragments (Beryllium §5, eqs. 6–7).
//!
//! Matched nodes are clustered agglomeratively with complete linkage over ICFG shortest
//! paths: the distance of two groups is the longest shortest path between their members.
//! Pairs farther apart than the search radius, or not connected, are at ∞ and never merge.
//! Clustering runs per connected component of the finite-distance pairs (a component is
//! exactly what can ever merge), with kodama; every group formed at any step, and every
//! single node, is a candidate scored γ = QC + 1/d, QC = query nodes covered and d the
//! longest shortest path inside the group (1 for a single node, as for two adjacent ones).
//!
//! A query node counts as covered when a maximum one-to-one matching of query nodes to
//! the group's nodes (through their top-k lists) gives it a node of its own. Counting every
//! query node with any match instead lets one short statement (`d;`) cover several query
//! lines and outrank whole implementations.

use kodama::{linkage, Method};

/// A matched source node: which query nodes matched it, and how well.
#[derive(Clone, Debug)]
pub struct Matched {
    pub node: u32,
    /// Bit q set when query node q has this node among its top-k.
    pub covers: Vec<u64>,
    /// Best similarity to each covering query node, aligned with the set bits.
    pub sims: Vec<(u32, f32)>,
}

/// The best similarity of a matched node to any query node.
pub fn best(m: &Matched) -> f32 {
    m.sims.iter().map(|s| s.1).fold(f32::MIN, f32::max)
}

/// A candidate fragment: indices into the matched list.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub members: Vec<usize>,
    pub covered: Vec<u32>,
    pub distance: u32,
    pub score: f64,
    /// Sum over covered query nodes of the best similarity: breaks ties of γ.
    pub similarity: f64,
    /// What breaks ties of both, in the order clusters are made: a single node by its
    /// place in the matched list (0, place, 0); a merged group after every single node, by
    /// its component's first member and its merge step (1, first member, step). Merges
    /// never cross components, so the order holds for any subset of components.
    pub tie: (u8, usize, usize),
}

struct Cluster {
    covers: Vec<u64>,
    best: Vec<f32>,
    height: f64,
    children: Option<(usize, usize)>,
    leaf: Option<usize>,
    parent: Option<usize>,
    tie: (u8, usize, usize),
}

fn bits(words: &[u64]) -> Vec<u32> {
    let mut out = Vec::new();
    for (w, &word) in words.iter().enumerate() {
        let mut x = word;
        while x != 0 {
            let b = x.trailing_zeros();
            out.push(w as u32 * 64 + b);
            x &= x - 1;
        }
    }
    out
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

/// Groups above this size are scored by the bound min(query nodes matched, members):
/// matching them costs more than it changes, they have nodes for nearly every query node.
const MATCH_MAX: usize = 400;

/// Query nodes covered by a maximum one-to-one matching onto `members` (Kuhn's augmenting
/// paths, trying the more similar node first) and the summed similarity of the pairs.
fn matching(members: &[usize], size: usize, matched: &[Matched], n_query: usize, any: &[u32], best: &[f32]) -> (Vec<u32>, f64) {
    if size > MATCH_MAX || any.len() <= 1 {
        let qs: Vec<u32> = any.iter().copied().take(size).collect();
        let sim = qs.iter().map(|&q| best[q as usize] as f64).sum();
        return (qs, sim);
    }
    // Edges query → member positions, most similar first.
    let mut adj: Vec<Vec<(usize, f32)>> = vec![Vec::new(); n_query];
    for (pos, &m) in members.iter().enumerate() {
        for &(q, s) in &matched[m].sims {
            if let Some(a) = adj.get_mut(q as usize) {
                a.push((pos, s));
            }
        }
    }
    for a in &mut adj {
        a.sort_by(|x, y| y.1.total_cmp(&x.1));
    }
    let mut owner: Vec<Option<u32>> = vec![None; members.len()];
    let mut seen = vec![0u32; members.len()];
    fn augment(q: usize, adj: &[Vec<(usize, f32)>], owner: &mut [Option<u32>], seen: &mut [u32], stamp: u32) -> bool {
        for &(m, _) in &adj[q] {
            if seen[m] == stamp {
                continue;
            }
            seen[m] = stamp;
            if owner[m].is_none_or(|o| augment(o as usize, adj, owner, seen, stamp)) {
                owner[m] = Some(q as u32);
                return true;
            }
        }
        false
    }
    for (stamp, &q) in any.iter().enumerate() {
        augment(q as usize, &adj, &mut owner, &mut seen, stamp as u32 + 1);
    }
    let mut qs = Vec::new();
    let mut sim = 0.0;
    for (pos, o) in owner.iter().enumerate() {
        if let Some(q) = *o {
            qs.push(q);
            sim += adj[q as usize].iter().find(|e| e.0 == pos).map_or(0.0, |e| e.1 as f64);
        }
    }
    qs.sort_unstable();
    (qs, sim)
}

/// Clusters `matched` given finite pairwise distances (`pairs`: (i, j, d), i ≠ j) and
/// returns the best `top` candidates, no two sharing a node: a group inside a better one
/// (its subset) adds nothing, and a group around a better one (its superset) repeats it.
pub fn rank(matched: &[Matched], pairs: &[(usize, usize, u32)], n_query: usize, top: usize) -> Vec<Candidate> {
    let n = matched.len();
    // Components of the finite-distance graph.
    let mut uf: Vec<usize> = (0..n).collect();
    for &(i, j, _) in pairs {
        let (a, b) = (find(&mut uf, i), find(&mut uf, j));
        if a != b {
            uf[a] = b;
        }
    }
    let mut comps: std::collections::HashMap<usize, Vec<usize>> = std::collections::HashMap::new();
    for i in 0..n {
        let r = find(&mut uf, i);
        comps.entry(r).or_default().push(i);
    }
    let mut dist_of: std::collections::HashMap<(usize, usize), u32> = std::collections::HashMap::with_capacity(pairs.len());
    for &(i, j, d) in pairs {
        let key = (i.min(j), i.max(j));
        let e = dist_of.entry(key).or_insert(d);
        *e = (*e).min(d);
    }

    // The forest of all clusters: leaves first, then merges.
    let words = n_query.div_ceil(64).max(1);
    let mut clusters: Vec<Cluster> = matched
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mut best = vec![0f32; n_query];
            for &(q, s) in &m.sims {
                if let Some(b) = best.get_mut(q as usize) {
                    *b = b.max(s);
                }
            }
            let mut covers = m.covers.clone();
            covers.resize(words, 0);
            Cluster { covers, best, height: 0.0, children: None, leaf: Some(i), parent: None, tie: (0, i, 0) }
        })
        .collect();
    let mut comp_list: Vec<Vec<usize>> = comps.into_values().collect();
    comp_list.sort_by_key(|c| c[0]);
    for comp in comp_list.iter().filter(|c| c.len() >= 2) {
        let k = comp.len();
        let mut condensed = Vec::with_capacity(k * (k - 1) / 2);
        for a in 0..k {
            for b in a + 1..k {
                let key = (comp[a].min(comp[b]), comp[a].max(comp[b]));
                condensed.push(dist_of.get(&key).map_or(f64::INFINITY, |&d| d as f64));
            }
        }
        let dend = linkage(&mut condensed, k, Method::Complete);
        // kodama numbers the leaves 0..k and the cluster of step s as k + s.
        let mut ids: Vec<usize> = comp.clone();
        for (s, step) in dend.steps().iter().enumerate() {
            if !step.dissimilarity.is_finite() {
                // Steps come in order of height: the rest join groups at ∞.
                break;
            }
            let (a, b) = (ids[step.cluster1], ids[step.cluster2]);
            let covers: Vec<u64> = clusters[a].covers.iter().zip(&clusters[b].covers).map(|(x, y)| x | y).collect();
            let best: Vec<f32> = clusters[a].best.iter().zip(&clusters[b].best).map(|(x, y)| x.max(*y)).collect();
            let id = clusters.len();
            clusters.push(Cluster { covers, best, height: step.dissimilarity, children: Some((a, b)), leaf: None, parent: None, tie: (1, comp[0], s) });
            clusters[a].parent = Some(id);
            clusters[b].parent = Some(id);
            ids.push(id);
        }
    }

    // Leaves of every cluster up to MATCH_MAX (children come before parents).
    let mut leaves: Vec<Vec<usize>> = Vec::with_capacity(clusters.len());
    let mut size: Vec<usize> = Vec::with_capacity(clusters.len());
    for c in &clusters {
        let (l, s) = match (c.leaf, c.children) {
            (Some(l), _) => (vec![l], 1),
            (None, Some((a, b))) if size[a] + size[b] <= MATCH_MAX => ([leaves[a].as_slice(), leaves[b].as_slice()].concat(), size[a] + size[b]),
            (None, Some((a, b))) => (Vec::new(), size[a] + size[b]),
            _ => (Vec::new(), 0),
        };
        leaves.push(l);
        size.push(s);
    }
    let mut covered: Vec<Vec<u32>> = Vec::with_capacity(clusters.len());
    let mut order: Vec<(usize, f64, f64)> = Vec::with_capacity(clusters.len());
    for (i, c) in clusters.iter().enumerate() {
        let (qs, sim) = matching(&leaves[i], size[i], matched, n_query, &bits(&c.covers), &c.best);
        let d = c.height.max(1.0);
        order.push((i, qs.len() as f64 + 1.0 / d, sim));
        covered.push(qs);
    }
    order.sort_by(|x, y| y.1.total_cmp(&x.1).then(y.2.total_cmp(&x.2)).then(x.0.cmp(&y.0)));

    let mut kept = vec![false; clusters.len()];
    let mut kept_below = vec![false; clusters.len()];
    let mut out = Vec::new();
    for (i, s, sim) in order {
        if out.len() >= top {
            break;
        }
        if kept_below[i] {
            continue;
        }
        let mut p = clusters[i].parent;
        let mut inside_kept = false;
        while let Some(x) = p {
            if kept[x] {
                inside_kept = true;
                break;
            }
            p = clusters[x].parent;
        }
        if inside_kept {
            continue;
        }
        kept[i] = true;
        let mut p = clusters[i].parent;
        while let Some(x) = p {
            kept_below[x] = true;
            p = clusters[x].parent;
        }
        // Members by walking down the tree.
        let mut members = Vec::new();
        let mut stack = vec![i];
        while let Some(x) = stack.pop() {
            match (clusters[x].leaf, clusters[x].children) {
                (Some(l), _) => members.push(l),
                (None, Some((a, b))) => {
                    stack.push(a);
                    stack.push(b);
                }
                _ => {}
            }
        }
        members.sort_unstable();
        out.push(Candidate {
            members,
            covered: std::mem::take(&mut covered[i]),
            distance: clusters[i].height as u32,
            score: s,
            similarity: sim,
            tie: clusters[i].tie,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(node: u32, qs: &[u32]) -> Matched {
        let mut covers = vec![0u64; 1];
        for &q in qs {
            covers[0] |= 1 << q;
        }
        Matched { node, covers, sims: qs.iter().map(|&q| (q, 0.5)).collect() }
    }

    #[test]
    fn close_nodes_covering_more_query_nodes_win() {
        // 0,1,2 are a chain (0-1: 1, 1-2: 1, 0-2: 2); 3 is alone, covering 2 query nodes.
        let matched = vec![m(10, &[0]), m(11, &[1]), m(12, &[2]), m(13, &[0, 1])];
        let pairs = vec![(0, 1, 1), (1, 2, 1), (0, 2, 2)];
        let r = rank(&matched, &pairs, 3, 10);
        // Best: {0,1,2} covers 3 query nodes at distance 2 → 3.5.
        assert_eq!(r[0].members, vec![0, 1, 2]);
        assert!((r[0].score - 3.5).abs() < 1e-9);
        assert_eq!(r[0].distance, 2);
        // Next: node 3 alone; one node covers one query node: 1 + 1/1. Subsets and
        // supersets of the best are gone.
        assert_eq!(r[1].members, vec![3]);
        assert!((r[1].score - 2.0).abs() < 1e-9);
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn never_merge_at_infinity() {
        let matched = vec![m(1, &[0]), m(2, &[1])];
        let r = rank(&matched, &[], 2, 10);
        assert_eq!(r.len(), 2);
        assert!(r.iter().all(|c| c.members.len() == 1));
    }

    #[test]
    fn complete_linkage_uses_the_longest_path() {
        // a-b 1, b-c 1, a-c 5: the group {a,b,c} has distance 5.
        let matched = vec![m(1, &[0]), m(2, &[1]), m(3, &[2])];
        let pairs = vec![(0, 1, 1), (1, 2, 1), (0, 2, 5)];
        let r = rank(&matched, &pairs, 3, 1);
        assert_eq!(r[0].members, vec![0, 1, 2]);
        assert_eq!(r[0].distance, 5);
        assert!((r[0].score - 3.2).abs() < 1e-9);
    }

    #[test]
    fn a_node_covers_one_query_node() {
        // Node 0 alone matches all three query nodes; nodes 1-2 (adjacent) match two.
        let matched = vec![m(1, &[0, 1, 2]), m(2, &[0]), m(3, &[1])];
        let pairs = vec![(1, 2, 1)];
        let r = rank(&matched, &pairs, 3, 10);
        assert_eq!(r[0].members, vec![1, 2], "two distinct nodes for two query nodes");
        assert_eq!(r[0].covered, vec![0, 1]);
        assert_eq!(r[1].members, vec![0]);
        assert!((r[1].score - 2.0).abs() < 1e-9, "one node: QC 1 + 1/1");
        // Augmenting paths: {a: q0,q1; b: q0} matches both, whichever a tries first.
        let (qs, _) = matching(&[0, 1], 2, &[m(1, &[0, 1]), m(2, &[0])], 2, &[0, 1], &[0.5, 0.5]);
        assert_eq!(qs, vec![0, 1]);
    }
}
