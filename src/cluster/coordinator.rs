//! The coordinator: converts and encodes a query once, fans each step out to the shards,
//! merges their lists into the corpus-wide ones, and ranks the merged pool with the same
//! code as one index ([`after_pool`]). It holds the encoders, the graph model and the
//! scorer, and no shard data.
//!
//! Equal scores are ordered as one index orders them, by id: one index numbers files in
//! path order and functions and nodes in file order, so across shards a hit is placed by
//! its file's path and, within a shard, by its local id.

use super::protocol::{Keyed, Kept, Reply, Request, ShardInfo};
use super::ClusterError;
use crate::features::{CacheAt, TextEncoders};
use crate::index::global::Global;
use crate::model::embed::FEATURE_SCHEMA;
use crate::model::Model;
use crate::pcode::Classifier;
use crate::search::hybrid::candidate::{CandSpan, Candidate, Ranks};
use crate::search::hybrid::retrieve::STRUCT_PRESELECT;
use crate::search::hybrid::shard::{Light, MatchedNode, ShardQuery};
use crate::search::hybrid::{after_pool, plain_words, HybridOptions, Query, Ranker};
use crate::search::{node_k, query_node_rows, text_result, to_pcode, Fragment, SearchError, SearchOptions, SearchResult, Span, TextHit, Timings};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Instant;

/// Sends requests to shards. `ask` returns one answer per request, in any order: the reply,
/// or why none came (a shard down, a timeout).
pub trait Fanout {
    fn ask(&mut self, requests: Vec<(usize, Request)>) -> Vec<(usize, Result<Reply, String>)>;
}

/// A shard as the coordinator sees it.
struct View {
    info: ShardInfo,
    /// Corpus-wide rank of each of its files by path.
    file_rank: Vec<u32>,
    rank_of_path: HashMap<String, u32>,
}

pub struct Coordinator {
    encs: TextEncoders,
    model: Model,
    global: Global,
    ranker: Ranker,
    classifier: Option<Classifier>,
    views: Vec<View>,
    indexed_nodes: usize,
}

/// Which shards still answer in this query, and the names of those that stopped.
struct Alive {
    up: Vec<bool>,
    missing: Vec<String>,
}

impl Coordinator {
    /// Loads the encoders and model the global parts at `global` were made with, and asks
    /// the `shards` shards what they hold; every one must answer and share those parts.
    pub fn new(global: &Path, ranker: Ranker, threads: Option<usize>, shards: usize, fan: &mut dyn Fanout) -> Result<Coordinator, ClusterError> {
        let g = Global::open(global)?;
        if crate::index::model_sha256(&g.model_dir())? != g.meta.model_sha256 {
            return Err(ClusterError::Setup(format!("the graph model in {} is not the one the shards were built with", g.model_dir().display())));
        }
        let encs = TextEncoders::new(g.meta.statement_model, g.meta.function_model, threads, CacheAt::None);
        let enc = encs.statements().map_err(crate::index::IndexError::from)?;
        if enc.hash() != g.meta.encoder {
            return Err(ClusterError::Setup("the statement encoder here is not the one the global parts were made with".into()));
        }
        let fenc = encs.functions().map_err(crate::index::IndexError::from)?;
        if fenc.hash() != g.meta.function_encoder {
            return Err(ClusterError::Setup("the function encoder here is not the one the global parts were made with".into()));
        }
        let model = Model::load(&g.model_dir(), FEATURE_SCHEMA, enc.hash()).map_err(crate::index::IndexError::from)?;
        let answers = fan.ask((0..shards).map(|s| (s, Request::Info)).collect());
        let mut infos: Vec<Option<ShardInfo>> = vec![None; shards];
        for (s, r) in answers {
            match r {
                Ok(Reply::Info(i)) => infos[s] = Some(i),
                Ok(other) => return Err(ClusterError::Setup(format!("shard {s} answered {other:?}"))),
                Err(e) => return Err(ClusterError::Setup(format!("shard {s} did not answer: {e}"))),
            }
        }
        let infos: Vec<ShardInfo> = infos.into_iter().enumerate().map(|(s, i)| i.ok_or_else(|| ClusterError::Setup(format!("shard {s} did not answer")))).collect::<Result<_, _>>()?;
        for i in &infos {
            if i.global != g.meta.id {
                return Err(ClusterError::Setup(format!("{} was built with other global parts", i.index)));
            }
            if i.lexical != infos[0].lexical {
                return Err(ClusterError::Setup(format!("{} scores with other BM25F statistics than {}", i.index, infos[0].index)));
            }
        }
        // Every file of every shard, ranked by path as one index numbers them.
        let mut all: Vec<(&str, usize, usize)> = infos.iter().enumerate().flat_map(|(s, i)| i.files.iter().enumerate().map(move |(f, p)| (p.as_str(), s, f))).collect();
        all.sort_by(|a, b| Path::new(a.0).cmp(Path::new(b.0)).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut ranks: Vec<Vec<u32>> = infos.iter().map(|i| vec![u32::MAX; i.files.len()]).collect();
        for (r, &(_, s, f)) in all.iter().enumerate() {
            ranks[s][f] = r as u32;
        }
        let views: Vec<View> = infos
            .into_iter()
            .zip(ranks)
            .map(|(info, file_rank)| {
                let rank_of_path = info.files.iter().zip(&file_rank).map(|(p, &r)| (p.clone(), r)).collect();
                View { info, file_rank, rank_of_path }
            })
            .collect();
        let indexed_nodes = views.iter().map(|v| v.info.indexed_nodes).sum();
        Ok(Coordinator { encs, model, global: g, ranker, classifier: None, views, indexed_nodes })
    }

    pub fn shards(&self) -> usize {
        self.views.len()
    }

    /// Lines indexed over all shards.
    pub fn lines(&self) -> u64 {
        self.views.iter().map(|v| v.info.lines).sum()
    }

    /// The corpus-wide place of local id `id` of file `file` on shard `s`.
    fn key(&self, s: usize, file: u32, id: u32) -> u64 {
        let r = self.views[s].file_rank.get(file as usize).copied().unwrap_or(u32::MAX);
        (u64::from(r) << 32) | u64::from(id)
    }

    fn span_key(&self, s: usize, sp: &CandSpan) -> u64 {
        let r = self.views[s].rank_of_path.get(&sp.path).copied().unwrap_or(u32::MAX);
        (u64::from(r) << 32) | u64::from(sp.function)
    }

    /// Sends `requests`, keeps the replies of shards that answered, and marks the others
    /// missing for the rest of the query.
    fn round(&self, fan: &mut dyn Fanout, alive: &mut Alive, requests: Vec<(usize, Request)>) -> Vec<(usize, Reply)> {
        let requests: Vec<(usize, Request)> = requests.into_iter().filter(|(s, _)| alive.up[*s]).collect();
        let Some(want) = requests.first().map(|r| r.1.name()) else { return Vec::new() };
        let asked: Vec<usize> = requests.iter().map(|r| r.0).collect();
        let mut out: Vec<(usize, Reply)> = Vec::new();
        let t = Instant::now();
        let answers = fan.ask(requests);
        log::debug!("fan-out: {:.1} ms", ms(t));
        let lose = |s: usize, why: &str, alive: &mut Alive| {
            log::warn!("shard {s} ({}): {why}", self.views[s].info.index);
            if alive.up[s] {
                alive.up[s] = false;
                alive.missing.push(self.views[s].info.index.clone());
            }
        };
        for (s, r) in answers {
            match r {
                _ if s >= self.views.len() || !asked.contains(&s) || out.iter().any(|o| o.0 == s) => log::warn!("an answer from shard {s}, which was not asked"),
                Ok(Reply::Error { message }) | Err(message) => lose(s, &message, alive),
                // A reply to another request: the conversation is out of step.
                Ok(reply) if reply.name() != want => lose(s, &format!("answered {} to {want}", reply.name()), alive),
                Ok(reply) => out.push((s, reply)),
            }
        }
        for s in asked {
            if !out.iter().any(|o| o.0 == s) {
                lose(s, "no answer", alive);
            }
        }
        out.sort_by_key(|(s, _)| *s);
        out
    }

    /// Natural-language search over function text vectors.
    pub fn text(&mut self, query: &str, top: usize, fan: &mut dyn Fanout) -> Result<SearchResult, SearchError> {
        let t0 = Instant::now();
        crate::search::limits::QueryLimits::default().check_text(query)?;
        if query.trim().is_empty() {
            return Err(SearchError::EmptyQuery);
        }
        let v = self.encs.functions()?.encode(&[query])?.remove(0);
        let embed_ms = ms(t0);
        let t1 = Instant::now();
        let k = top.max(1).saturating_mul(2);
        let mut alive = Alive { up: vec![true; self.views.len()], missing: Vec::new() };
        let reqs = (0..self.views.len()).map(|s| (s, Request::Text { query: query.to_string(), vec: v.to_vec(), k })).collect();
        let mut hits: Vec<(u64, TextHit)> = Vec::new();
        for (s, r) in self.round(fan, &mut alive, reqs) {
            if let Reply::Text { hits: h } = r {
                hits.extend(h.into_iter().map(|h| (self.key(s, h.file, h.function), h)));
            }
        }
        hits.sort_by(|a, b| b.1.similarity.total_cmp(&a.1.similarity).then(a.0.cmp(&b.0)));
        hits.truncate(k);
        let mut r = text_result(hits.into_iter().map(|h| h.1).collect(), query, top.max(1), Timings { embed_ms, knn_ms: ms(t1), group_ms: 0.0, total_ms: ms(t0) });
        r.missing_shards = alive.missing;
        Ok(r)
    }

    /// Hybrid pseudocode search: the default method of `beryl search --pseudo`.
    pub fn pseudo(&mut self, src: &str, name: &Path, top: usize, fan: &mut dyn Fanout) -> Result<SearchResult, SearchError> {
        let t0 = Instant::now();
        let top = top.max(1);
        let limits = crate::search::limits::QueryLimits::default();
        limits.check_text(src)?;
        let clf = &mut self.classifier;
        let qp = to_pcode(src, || -> Result<&Classifier, crate::pcode::PcodeError> {
            if clf.is_none() {
                *clf = Some(Classifier::load(&Classifier::default_path())?);
            }
            Ok(clf.as_ref().expect("loaded above"))
        })
        .map_err(|e| e.with_file(&name.display().to_string()))?;
        let words = plain_words(src);
        let q = Query::from_pcode(qp.clone(), words.clone(), name)?;
        limits.check_pcode(&qp.pcode, q.icfg.graph.node_count())?;
        let (qnodes, node_rows) = query_node_rows(&self.model, self.global.meta.features, self.global.meta.hidden, self.encs.statements()?, &q.icfg, &qp.line_map)?;
        // Projected once here rather than on every shard (and a seventh of the bytes).
        let node_rows = match &self.global.projection {
            Some(p) => p.apply(&node_rows).map_err(SearchError::Index)?,
            None => node_rows,
        };
        let names: Vec<String> = q.names().iter().map(|p| crate::text::name_words(p)).collect();
        let qvec = self.encs.functions()?.encode(&[format!("{}. {}", names.join(", "), q.words).as_str()])?.remove(0);
        let embed_ms = ms(t0);
        let t1 = Instant::now();
        let per = HybridOptions::default().per_retriever;
        let sq = ShardQuery { pcode: qp, words, name: name.display().to_string(), qvec: qvec.to_vec(), per_retriever: per };
        let qid = query_id(src, t0);
        let n = self.views.len();
        let n_query = qnodes.len();
        let nk = node_k(&SearchOptions::default(), self.indexed_nodes);
        let mut alive = Alive { up: vec![true; n], missing: Vec::new() };

        // 1. Each retriever's corpus-wide list from the shards' lists.
        let reqs = (0..n).map(|s| (s, Request::Lists { qid, query: sq.clone(), node_rows: node_rows.clone(), node_k: nk })).collect();
        let (mut lexical, mut dense, mut profile) = (Vec::new(), Vec::new(), Vec::new());
        let mut per_node: Vec<Vec<(f32, u64, usize, u32)>> = vec![Vec::new(); n_query];
        for (s, r) in self.round(fan, &mut alive, reqs) {
            let Reply::Lists { lexical: l, dense: d, nodes, profile: p } = r else { continue };
            let this = &*self;
            let keyed = |v: Vec<Keyed>| v.into_iter().map(move |(id, sc, file)| (sc, this.key(s, file, id), s, id)).collect::<Vec<_>>();
            lexical.extend(keyed(l));
            dense.extend(keyed(d));
            profile.extend(keyed(p));
            for (qn, list) in nodes.into_iter().enumerate().take(n_query) {
                per_node[qn].extend(keyed(list));
            }
        }
        let lexical = best(lexical, per);
        let dense = best(dense, per);
        let profile = best(profile, STRUCT_PRESELECT);
        // Node matches: each query node's k best, then the matched nodes, most similar first.
        let words_n = n_query.div_ceil(64).max(1);
        let mut matched: BTreeMap<(usize, u32), (u64, Vec<u64>, Vec<(u32, f32)>)> = BTreeMap::new();
        for (qn, list) in per_node.into_iter().enumerate() {
            for (sim, key, s, id) in best(list, nk) {
                let m = matched.entry((s, id)).or_insert_with(|| (key, vec![0; words_n], Vec::new()));
                m.1[qn / 64] |= 1 << (qn % 64);
                m.2.push((qn as u32, sim));
            }
        }
        let mut matched: Vec<((usize, u32), (u64, Vec<u64>, Vec<(u32, f32)>))> = matched.into_iter().collect();
        let top_sim = |m: &(u64, Vec<u64>, Vec<(u32, f32)>)| m.2.iter().map(|x| x.1).fold(f32::MIN, f32::max);
        matched.sort_by(|a, b| top_sim(&b.1).total_cmp(&top_sim(&a.1)).then(a.1 .0.cmp(&b.1 .0)));
        matched.truncate(SearchOptions::default().max_matches);

        // 2. Groups of matched nodes and alignments of the preselection, on their shards.
        let mut m_of: Vec<Vec<MatchedNode>> = vec![Vec::new(); n];
        for (place, ((s, node), (_, covers, sims))) in matched.into_iter().enumerate() {
            m_of[s].push(MatchedNode { node, covers, sims, place });
        }
        let mut st_of: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut key_of: HashMap<(usize, u32), u64> = HashMap::new();
        for &(_, key, s, id) in &profile {
            st_of[s].push(id);
            key_of.insert((s, id), key);
        }
        let reqs = (0..n)
            .map(|s| (s, Request::Groups { qid, query: sq.clone(), matched: std::mem::take(&mut m_of[s]), n_query, top: per / 2, structure: std::mem::take(&mut st_of[s]) }))
            .collect();
        let mut groups = Vec::new();
        let mut aligned = Vec::new();
        for (s, r) in self.round(fan, &mut alive, reqs) {
            let Reply::Groups { groups: g, aligned: a } = r else { continue };
            groups.extend(g.into_iter().map(|g| (s, g)));
            aligned.extend(a.into_iter().map(|(id, sc)| (sc, key_of.get(&(s, id)).copied().unwrap_or(u64::MAX), s, id)));
        }
        groups.sort_by(|a, b| b.1.score.total_cmp(&a.1.score).then(b.1.similarity.total_cmp(&a.1.similarity)).then(a.1.tie.cmp(&b.1.tie)));
        groups.truncate(per / 2);
        let mut beryl_list: Vec<(usize, u32)> = Vec::new();
        let mut cover: HashMap<(usize, u32), f32> = HashMap::new();
        for (s, g) in &groups {
            let cov = g.covered as f32 / n_query.max(1) as f32;
            for &f in &g.functions {
                match cover.entry((*s, f)) {
                    std::collections::hash_map::Entry::Occupied(mut e) => *e.get_mut() = e.get().max(cov),
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert(cov);
                        beryl_list.push((*s, f));
                    }
                }
            }
        }
        let structure = best(aligned, per);

        // 3. The pool: every function a list holds, read where it lies.
        let mut ranks: BTreeMap<(usize, u32), Ranks> = BTreeMap::new();
        let mut note = |list: &mut dyn Iterator<Item = (usize, u32)>, r: usize| {
            for (i, (s, f)) in list.enumerate() {
                let e = ranks.entry((s, f)).or_default();
                if e[r].is_none() {
                    e[r] = Some(i as u32);
                }
            }
        };
        note(&mut lexical.iter().map(|x| (x.2, x.3)), 0);
        note(&mut beryl_list.iter().copied(), 2);
        note(&mut dense.iter().map(|x| (x.2, x.3)), 1);
        note(&mut structure.iter().map(|x| (x.2, x.3)), 3);
        let mut ranks_of: Vec<Vec<(u32, Ranks)>> = vec![Vec::new(); n];
        for ((s, f), r) in ranks {
            ranks_of[s].push((f, r));
        }
        let mut beryl_of: Vec<Vec<(u32, f32)>> = vec![Vec::new(); n];
        for ((s, f), c) in cover {
            beryl_of[s].push((f, c));
        }
        for b in &mut beryl_of {
            b.sort_by_key(|x| x.0);
        }
        let reqs = (0..n).map(|s| (s, Request::Pool { qid, query: sq.clone(), ranks: ranks_of[s].clone(), beryllium: beryl_of[s].clone() })).collect();
        let mut lights: Vec<(usize, usize, Light)> = Vec::new();
        for (s, r) in self.round(fan, &mut alive, reqs) {
            let Reply::Pool { candidates } = r else { continue };
            lights.extend(candidates.into_iter().enumerate().map(|(i, c)| (s, i, c)));
        }
        // Corpus-wide function ids for ranking: every function a candidate names, in order.
        let mut keys: Vec<(u64, usize, u32)> = Vec::new();
        for (s, _, l) in &lights {
            keys.push((self.key(*s, l.file, l.function), *s, l.function));
            for sp in l.spans.iter().chain(&l.apart) {
                keys.push((self.span_key(*s, sp), *s, sp.function));
            }
        }
        keys.sort_unstable();
        keys.dedup();
        let ord: HashMap<(usize, u32), u32> = keys.iter().enumerate().map(|(i, k)| ((k.1, k.2), i as u32)).collect();
        let mut cands: Vec<(u64, bool, usize, usize, Candidate)> = Vec::with_capacity(lights.len());
        for (s, i, l) in &lights {
            let c = l.candidate(&|f| ord.get(&(*s, f)).copied().unwrap_or(u32::MAX))?;
            cands.push((self.key(*s, l.file, l.function), l.grown, *s, *i, c));
        }
        cands.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        let lights_fn: HashMap<(usize, usize), u32> = lights.iter().map(|(s, i, l)| ((*s, *i), l.function)).collect();
        let mut place: HashMap<(u32, bool), (usize, usize)> = HashMap::new();
        let mut pool: Vec<Candidate> = Vec::with_capacity(cands.len());
        for (_, _, s, i, c) in cands {
            place.insert((c.function, c.grown), (s, i));
            pool.push(c);
        }
        after_pool(&mut pool, &self.ranker, top);
        let group_ms = ms(t1);

        // 4. The report of the kept candidates, from their shards.
        let back: HashMap<u32, (usize, u32)> = keys.iter().enumerate().map(|(i, k)| (i as u32, (k.1, k.2))).collect();
        let mut keep_of: Vec<Vec<Kept>> = vec![Vec::new(); n];
        let mut spans_of: Vec<Vec<CandSpan>> = vec![Vec::new(); n];
        // Per kept candidate: its shard and place in that shard's render list, and each copy's.
        let mut layout: Vec<((usize, usize), Vec<(usize, usize)>)> = Vec::new();
        for c in &pool {
            let Some(&(s, i)) = place.get(&(c.function, c.grown)) else { continue };
            keep_of[s].push(Kept { index: i, function: lights_fn[&(s, i)], grown: c.grown, signals: c.signals.to_array().to_vec(), score: c.score, copies: c.copies.len() });
            let mut copies = Vec::new();
            for sp in &c.copies {
                let Some(&(cs, local)) = back.get(&sp.function) else { continue };
                spans_of[cs].push(CandSpan { function: local, ..sp.clone() });
                copies.push((cs, spans_of[cs].len() - 1));
            }
            layout.push(((s, keep_of[s].len() - 1), copies));
        }
        let reqs = keep_of
            .into_iter()
            .zip(spans_of)
            .enumerate()
            .filter(|(_, (k, sp))| !k.is_empty() || !sp.is_empty())
            .map(|(s, (keep, spans))| (s, Request::Render { qid, query: sq.clone(), ranks: ranks_of[s].clone(), beryllium: beryl_of[s].clone(), keep, spans }))
            .collect();
        let mut frags_of: Vec<Vec<Fragment>> = vec![Vec::new(); n];
        let mut rendered_of: Vec<Vec<Span>> = vec![Vec::new(); n];
        for (s, r) in self.round(fan, &mut alive, reqs) {
            if let Reply::Render { fragments, spans } = r {
                frags_of[s] = fragments;
                rendered_of[s] = spans;
            }
        }
        let mut fragments = Vec::new();
        for ((s, i), copies) in layout {
            let Some(f) = frags_of[s].get(i) else { continue };
            let mut f = f.clone();
            f.rank = fragments.len() + 1;
            f.copies = copies.iter().filter_map(|&(cs, j)| rendered_of[cs].get(j).cloned()).collect();
            fragments.push(f);
        }
        Ok(SearchResult {
            mode: "pseudocode-hybrid".into(),
            pcode: Some(q.pcode.clone()),
            converted: q.converted,
            query_nodes: q.nodes.clone(),
            fragments,
            timings: Timings { embed_ms, knn_ms: 0.0, group_ms, total_ms: ms(t0) },
            missing_shards: alive.missing,
            warnings: q.warnings.clone(),
        })
    }
}

/// The `k` best of a merged list (score, corpus-wide place, shard, local id): highest
/// score first, equal scores in corpus order.
fn best(mut v: Vec<(f32, u64, usize, u32)>, k: usize) -> Vec<(f32, u64, usize, u32)> {
    v.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    v.truncate(k);
    v
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// An id for one query's pools on the shards.
fn query_id(src: &str, t: Instant) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    src.hash(&mut h);
    t.hash(&mut h);
    std::process::id().hash(&mut h);
    h.finish()
}

/// Shards in this process: for tests, benchmarks and a corpus on one machine.
pub struct Local {
    pub shards: Vec<super::shard::ShardServer>,
}

impl Fanout for Local {
    fn ask(&mut self, requests: Vec<(usize, Request)>) -> Vec<(usize, Result<Reply, String>)> {
        requests
            .into_iter()
            .map(|(s, r)| match self.shards.get_mut(s) {
                Some(sh) => (s, Ok(sh.handle(r))),
                None => (s, Err(format!("no shard {s}"))),
            })
            .collect()
    }
}
