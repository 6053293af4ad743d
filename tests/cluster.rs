//! A corpus as shards gives what one index of it gives. Four real projects (Debian source
//! packages: C and Java) are indexed once as one index and once as three shards with the
//! same global parts; every query of `queries/` and a set of English queries must give the
//! same report (fragments, scores, reasons) through the coordinator as through the one
//! index: with the default flat layouts (SQ8 nodes, SQ6 functions) and with IVF-PQ nodes.

use beryl::cluster::protocol::{Reply, Request};
use beryl::cluster::{Coordinator, Fanout, Local, ShardServer};
use beryl::corpus::fetch::fetch;
use beryl::features::{CacheAt, TextEncoders};
use beryl::index::global::{self, Global};
use beryl::index::{self, Index, IndexOptions};
use beryl::pcode::Classifier;
use beryl::search::hybrid::{self, Method, Ranker};
use beryl::search::{self, SearchOptions, SearchResult};
use std::path::{Path, PathBuf};

const ENGLISH: [&str; 6] = [
    "greatest common divisor of two numbers",
    "edit distance between two strings",
    "LU decomposition of a matrix",
    "modular exponentiation by squaring",
    "similarity of two sets of shingles",
    "decode an audio frame",
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn model() -> PathBuf {
    repo().join("models/default")
}

fn projects() -> Vec<PathBuf> {
    ["libtommath", "java-string-similarity", "jama", "a52dec"].iter().map(|p| fetch(p).unwrap_or_else(|e| panic!("fetching {p}: {e}"))).collect()
}

/// The report as a reader sees it: fragments and what was searched, timings aside.
fn shown(r: &SearchResult) -> String {
    assert!(r.missing_shards.is_empty(), "{:?}", r.missing_shards);
    serde_json::to_string(&(&r.fragments, &r.pcode, &r.query_nodes)).unwrap()
}

fn queries() -> Vec<PathBuf> {
    let mut q: Vec<PathBuf> = std::fs::read_dir(repo().join("queries"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "p" || e == "txt"))
        .collect();
    q.sort();
    q
}

/// Builds the global parts, three shards and one index over `projects`, and compares
/// every query; `queries` limits the pseudocode queries (all when `None`).
fn equal_results(faiss: Option<&str>, limit: Option<usize>) {
    let tmp = tempfile::tempdir().unwrap();
    let enc = TextEncoders::defaults(None, CacheAt::Default);
    let p = projects();
    let g = tmp.path().join("global");
    let opts = IndexOptions { factory: faiss.map(str::to_string), ..IndexOptions::default() };
    let m = global::fit(&p, &g, &opts, &model(), &enc, 32 << 20, &mut |_, _, _| {}).expect("global parts");
    if let Some(f) = faiss {
        assert_eq!(m.node_factory, f);
    }
    let opts = IndexOptions { global: Some(g.clone()), ..opts };
    // Two projects on one shard: calls still resolve within each.
    let shards: Vec<(PathBuf, Vec<PathBuf>)> =
        vec![(tmp.path().join("s0"), vec![p[0].clone(), p[3].clone()]), (tmp.path().join("s1"), vec![p[1].clone()]), (tmp.path().join("s2"), vec![p[2].clone()])];
    for (dir, roots) in &shards {
        index::build(roots, dir, &opts, &model(), &enc, &mut |_, _, _| {}).expect("shard");
    }
    let one = tmp.path().join("one");
    index::build(&p, &one, &opts, &model(), &enc, &mut |_, _, _| {}).expect("one index");
    let dirs: Vec<PathBuf> = shards.iter().map(|s| s.0.clone()).collect();
    let totals = global::reduce(&Global::open(&g).unwrap(), &dirs).expect("reduce");
    let mut idx = Index::open(&one, Some(&model()), 32).unwrap();
    // Queries are encoded as `beryl search` encodes them, without the vector cache: a cached
    // vector was computed in a build's batch, and f32 products round differently with the
    // batch's shape, so cache hits would make the two sides differ in the last bits.
    let qenc = idx.encoders(None);
    assert_eq!(totals.indexed_nodes, idx.meta.indexed_nodes);
    assert_eq!(totals.functions, idx.meta.functions);

    let ranker = Ranker::load(&Ranker::default_path()).unwrap();
    let mut local = Local { shards: dirs.iter().map(|d| ShardServer::open(d, &g, 32).expect("shard server")).collect() };
    let mut c = Coordinator::new(&g, Ranker::load(&Ranker::default_path()).unwrap(), None, dirs.len(), &mut local).expect("coordinator");
    let clf = Classifier::load(&Classifier::default_path()).unwrap();
    let mut alternating = Alternating { replicas: dirs.iter().map(|d| [ShardServer::open(d, &g, 32).unwrap(), ShardServer::open(d, &g, 32).unwrap()]).collect(), turn: 0 };
    let all = queries();
    let n = limit.unwrap_or(all.len()).min(all.len());
    let (mut same, mut total) = (0, 0);
    for q in all.iter().take(n) {
        let src = std::fs::read_to_string(q).unwrap();
        let a = hybrid::search(&mut idx, &qenc, &src, q, || Ok::<_, beryl::pcode::PcodeError>(&clf), &SearchOptions::default(), Method::Hybrid, Some(&ranker)).unwrap();
        let b = c.pseudo(&src, q, 10, &mut local).unwrap();
        assert!(!a.fragments.is_empty(), "{}", q.display());
        total += 1;
        // Every few queries, each step on another replica than the step before.
        let b = if total % 4 == 0 { c.pseudo(&src, q, 10, &mut alternating).unwrap() } else { b };
        if shown(&a) == shown(&b) {
            same += 1;
        } else {
            eprintln!("{}: differs\n one: {:?}\n shards: {:?}", q.display(), a.fragments.iter().map(search_key).collect::<Vec<_>>(), b.fragments.iter().map(search_key).collect::<Vec<_>>());
        }
    }
    for t in ENGLISH {
        let a = search::natural(&mut idx, &qenc, t, &SearchOptions::default()).unwrap();
        let b = c.text(t, 10, &mut local).unwrap();
        total += 1;
        if shown(&a) == shown(&b) {
            same += 1;
        } else {
            eprintln!("{t}: differs");
        }
    }
    eprintln!("sharded top-10 equals one index: {same} of {total} queries ({})", faiss.unwrap_or("default layouts"));
    assert_eq!(same, total);
}

/// Two replicas of each shard, asked in turn: no step of a query reaches the replica that
/// answered the one before, as when Ray Serve routes each request anew.
struct Alternating {
    replicas: Vec<[ShardServer; 2]>,
    turn: usize,
}

impl Fanout for Alternating {
    fn ask(&mut self, requests: Vec<(usize, Request)>) -> Vec<(usize, Result<Reply, String>)> {
        self.turn += 1;
        let t = self.turn % 2;
        requests.into_iter().map(|(s, r)| (s, Ok(self.replicas[s][t].handle(r)))).collect()
    }
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.is_file() {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn search_key(f: &beryl::search::Fragment) -> (String, (u32, u32), f64) {
    (f.spans.first().map(|s| s.path.clone()).unwrap_or_default(), f.spans.first().map_or((0, 0), |s| s.lines), f.score)
}

#[test]
fn three_shards_equal_one_index_on_every_query() {
    equal_results(None, None);
}

/// IVF: the coarse quantizer and PQ codebooks are global, so each shard probes the lists
/// one index probes and compares the same codes: equal results, not only close ones.
#[test]
fn three_shards_equal_one_index_with_ivf() {
    equal_results(Some("IVF64,PQ32np"), Some(20));
}

#[test]
fn shards_of_other_global_parts_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let enc = TextEncoders::defaults(None, CacheAt::Default);
    let p = fetch("java-string-similarity").unwrap();
    let (g1, g2) = (tmp.path().join("g1"), tmp.path().join("g2"));
    global::fit(std::slice::from_ref(&p), &g1, &IndexOptions::default(), &model(), &enc, 1 << 20, &mut |_, _, _| {}).unwrap();
    global::fit(std::slice::from_ref(&p), &g2, &IndexOptions { factory: Some("SQ4".into()), ..IndexOptions::default() }, &model(), &enc, 1 << 20, &mut |_, _, _| {}).unwrap();
    let s = tmp.path().join("s");
    index::build(std::slice::from_ref(&p), &s, &IndexOptions { global: Some(g1.clone()), ..IndexOptions::default() }, &model(), &enc, &mut |_, _, _| {}).unwrap();
    let err = global::reduce(&Global::open(&g2).unwrap(), std::slice::from_ref(&s)).unwrap_err();
    assert!(err.to_string().contains("not built with the global parts"), "{err}");
    // Before the reduce, a shard server says what is missing.
    let err = ShardServer::open(&s, &g1, 32).err().expect("no statistics yet");
    assert!(err.to_string().contains("beryl cluster reduce"), "{err}");
    global::reduce(&Global::open(&g1).unwrap(), std::slice::from_ref(&s)).unwrap();
    assert!(ShardServer::open(&s, &g1, 32).is_ok());
    // A shard updated after the reduce is refused until the statistics are summed again.
    let tree = tmp.path().join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    for e in walk(&p) {
        let to = tree.join(e.strip_prefix(&p).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&e, &to).unwrap();
    }
    let t = tmp.path().join("t");
    let opts1 = IndexOptions { global: Some(g1.clone()), ..IndexOptions::default() };
    index::build(std::slice::from_ref(&tree), &t, &opts1, &model(), &enc, &mut |_, _, _| {}).unwrap();
    global::reduce(&Global::open(&g1).unwrap(), std::slice::from_ref(&t)).unwrap();
    assert!(ShardServer::open(&t, &g1, 32).is_ok());
    let java = walk(&tree).into_iter().find(|f| f.extension().is_some_and(|e| e == "java")).unwrap();
    let mut src = std::fs::read_to_string(&java).unwrap();
    src.push_str("\nclass AddedAfterTheReduce { int twice(int levenshteinWeight) { return 2 * levenshteinWeight; } }\n");
    std::fs::write(&java, src).unwrap();
    let r = index::build(std::slice::from_ref(&tree), &t, &opts1, &model(), &enc, &mut |_, _, _| {}).unwrap();
    assert!(r.updated, "updated in place");
    let err = ShardServer::open(&t, &g1, 32).err().expect("statistics out of date");
    assert!(err.to_string().contains("reduce` again"), "{err}");
    global::reduce(&Global::open(&g1).unwrap(), std::slice::from_ref(&t)).unwrap();
    assert!(ShardServer::open(&t, &g1, 32).is_ok());
    // Damaged parts are found, not used.
    let f = g1.join("functions.trained.faiss");
    let mut b = std::fs::read(&f).unwrap();
    let last = b.len() - 1;
    b[last] ^= 0xff;
    std::fs::write(&f, b).unwrap();
    assert!(Global::open(&g1).is_err());
    assert!(Path::new(&s).exists());
}
