//! `icfg.bin`: the whole ICFG of a generation (files with their unit facts, functions,
//! nodes, intraprocedural edges, call sites with their resolved targets), so that an
//! update parses only the files that changed and re-resolves only the calls whose
//! candidates changed. Call and return edges are not stored: they follow from the sites.
//!
//! Layout (little-endian): `BRYICF01`, then counts and records written by [`encode`];
//! strings are a u32 length and UTF-8 bytes. The file holds that as one zstd frame: only
//! updates read it, and statement texts, paths and small ids compress about four-fold.

use crate::graph::{CallRef, CallSite, EdgeKind, FileUnit, Function, FunctionMeta, Icfg, Lang, Node, NodeKind, SourceFile};
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

const MAGIC: &[u8; 8] = b"BRYICF01";
/// A language's code in the file is its place here: new languages are appended.
const LANGS: [Lang; 7] = [Lang::C, Lang::Cpp, Lang::Java, Lang::Pcode, Lang::Python, Lang::Rust, Lang::Go];

/// The record writer: a buffer handed to `out` a megabyte at a time; the first error is
/// kept and returned at the end.
struct W<'o> {
    buf: Vec<u8>,
    out: &'o mut dyn std::io::Write,
    err: Option<std::io::Error>,
}

impl W<'_> {
    fn put(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
        if self.buf.len() >= 1 << 20 {
            self.flush();
        }
    }
    fn flush(&mut self) {
        if self.err.is_none() {
            self.err = self.out.write_all(&self.buf).err();
        }
        self.buf.clear();
    }
    fn u8(&mut self, v: u8) {
        self.put(&[v]);
    }
    fn u32(&mut self, v: u32) {
        self.put(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.put(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.put(s.as_bytes());
    }
    fn lang(&mut self, l: Lang) {
        self.u8(LANGS.iter().position(|&x| x == l).unwrap_or(0) as u8);
    }
}

/// The record reader: over bytes in memory, or over a stream read a megabyte at a time
/// (the whole tree's records are about a gigabyte).
struct R<'a> {
    b: std::borrow::Cow<'a, [u8]>,
    at: usize,
    more: Option<&'a mut dyn std::io::Read>,
}

type Res<T> = Result<T, String>;

impl<'a> R<'a> {
    fn new(b: &'a [u8], at: usize) -> R<'a> {
        R { b: b.into(), at, more: None }
    }

    fn stream(src: &'a mut dyn std::io::Read) -> R<'a> {
        R { b: Vec::new().into(), at: 0, more: Some(src) }
    }

    fn take(&mut self, n: usize) -> Res<&[u8]> {
        if self.b.len() - self.at < n {
            self.fill(n)?;
        }
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len()).ok_or("icfg.bin is truncated")?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    /// Reads on until `n` bytes are at hand (a stream's; bytes in memory have no more).
    fn fill(&mut self, n: usize) -> Res<()> {
        let Some(src) = self.more.as_mut() else { return Err("icfg.bin is truncated".into()) };
        // No record is this long (a statement's text is a part of a file read): a damaged
        // length, which must not make the reader allocate what it says.
        if n > 64 << 20 {
            return Err("icfg.bin: a record's length is damaged".into());
        }
        let buf = self.b.to_mut();
        buf.drain(..self.at);
        self.at = 0;
        while buf.len() < n {
            let old = buf.len();
            buf.resize(old + (n - old).max(1 << 20), 0);
            let got = loop {
                match src.read(&mut buf[old..]) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    r => break r.map_err(|e| format!("icfg.bin: {e}"))?,
                }
            };
            buf.truncate(old + got);
            if got == 0 {
                return Err("icfg.bin is truncated".into());
            }
        }
        Ok(())
    }

    /// Whether every byte was read.
    fn at_end(&mut self) -> bool {
        self.at == self.b.len() && self.fill(1).is_err()
    }
    fn u8(&mut self) -> Res<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Res<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn u64(&mut self) -> Res<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    fn str(&mut self) -> Res<String> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| "icfg.bin holds a string that is not UTF-8".into())
    }
    fn lang(&mut self) -> Res<Lang> {
        LANGS.get(self.u8()? as usize).copied().ok_or_else(|| "icfg.bin: unknown language".into())
    }
    /// A count of records at least `min_bytes` each: bounded by what is left, so damage
    /// cannot make a huge allocation. A stream's end is not known: its records are read
    /// until it ends, and what is reserved for them is capped ([`R::room`]).
    fn count(&mut self, min_bytes: usize) -> Res<usize> {
        let n = self.u32()? as usize;
        if self.more.is_none() && n.saturating_mul(min_bytes) > self.b.len() - self.at {
            return Err("icfg.bin: a count exceeds the file".into());
        }
        Ok(n)
    }

    /// Room to reserve for `n` records: all of them when they are in memory.
    fn room(&self, n: usize) -> usize {
        if self.more.is_some() { n.min(1 << 24) } else { n }
    }
}

/// `icfg.bin` as written: [`encode`], compressed.
pub fn to_file(icfg: &Icfg) -> Vec<u8> {
    let mut out = Vec::new();
    compress_into(icfg, &mut out).expect("writing to memory");
    out
}

/// Writes `icfg.bin` ([`to_file`]'s bytes) to `path` as it is made: neither the records
/// nor their compressed form are held whole.
pub fn write(icfg: &Icfg, path: &std::path::Path) -> std::io::Result<()> {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    compress_into(icfg, &mut file)?;
    std::io::Write::flush(&mut file)
}

/// zstd's level for the ICFG of `nodes` nodes. On the whole Linux tree (9.85 M nodes, 973 MB
/// of records) level 3 makes 282 MB in 5.8 s on one core, 6 makes 257 MB in 14.1 s, 9 makes
/// 251 MB in 24.8 s: there the file is an eighth of an index that must stay within two and
/// a half times its source. On a tree of a few hundred thousand lines the file is a few
/// megabytes, and an update, which rewrites it whole, would wait 0.2 s more at level 9.
fn level(nodes: usize) -> i32 {
    if nodes >= 1 << 21 { 9 } else { 3 }
}

fn compress_into(icfg: &Icfg, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut z = zstd::stream::Encoder::new(out, level(icfg.graph.node_count()))?;
    // On every core: the records are made faster than one core compresses them. The frame
    // does not depend on the number of workers.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8) as u32;
    z.multithread(workers)?;
    encode_into(icfg, &mut z)?;
    z.finish()?;
    Ok(())
}

/// The ICFG of the `icfg.bin` at `path`, read, decompressed and decoded a block at a time
/// (on two threads), and the BLAKE3 sum of the file's bytes ([`super::checksum`]'s): neither
/// the file nor its records are held whole.
pub fn read(path: &std::path::Path) -> (Result<Icfg, String>, Result<String, String>) {
    read_with(path, true)
}

/// [`read`], leaving every statement text empty unless `texts`: an update that writes a
/// patch reads the texts of the few files it touches from the database instead
/// ([`super::store::Store::fill_texts`]), which spares it millions of allocations.
pub fn read_with(path: &std::path::Path, texts: bool) -> (Result<Icfg, String>, Result<String, String>) {
    use std::io::{BufRead, Read};
    /// Sums what passes through.
    struct Summing<T> {
        inner: T,
        sum: blake3::Hasher,
    }
    impl<T: Read> Read for Summing<T> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.sum.update(&buf[..n]);
            Ok(n)
        }
    }
    impl<T: BufRead> BufRead for Summing<T> {
        fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
            self.inner.fill_buf()
        }
        fn consume(&mut self, n: usize) {
            if let Ok(b) = self.inner.fill_buf() {
                self.sum.update(&b[..n.min(b.len())]);
            }
            self.inner.consume(n)
        }
    }
    /// The blocks another thread sends, read as one stream.
    struct Blocks {
        rx: std::sync::mpsc::Receiver<Vec<u8>>,
        cur: Vec<u8>,
        at: usize,
    }
    impl Read for Blocks {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            while self.at == self.cur.len() {
                match self.rx.recv() {
                    Ok(b) => (self.cur, self.at) = (b, 0),
                    Err(_) => return Ok(0),
                }
            }
            let n = buf.len().min(self.cur.len() - self.at);
            buf[..n].copy_from_slice(&self.cur[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return (Err(format!("{}: {e}", path.display())), Err(e.to_string())),
    };
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
    let reader = std::thread::spawn(move || -> Result<String, String> {
        let mut src = Summing { inner: std::io::BufReader::with_capacity(1 << 20, file), sum: blake3::Hasher::new() };
        let zstd = src.fill_buf().map_err(|e| e.to_string())?.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]);
        {
            let mut records: Box<dyn Read + '_> = if zstd {
                Box::new(zstd::stream::read::Decoder::with_buffer(&mut src).map_err(|e| e.to_string())?.single_frame())
            } else {
                Box::new(&mut src)
            };
            loop {
                let mut block = vec![0u8; 4 << 20];
                let mut got = 0;
                while got < block.len() {
                    match records.read(&mut block[got..]) {
                        Ok(0) => break,
                        Ok(n) => got += n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(format!("icfg.bin does not decompress: {e}")),
                    }
                }
                block.truncate(got);
                // The decoder gave up reading (a damaged file): its sum tells.
                if got == 0 || tx.send(block).is_err() {
                    break;
                }
            }
        }
        // Bytes past the frame are summed too, as the file's sum covers them.
        std::io::copy(&mut src, &mut std::io::sink()).map_err(|e| e.to_string())?;
        Ok(src.sum.finalize().to_hex().to_string())
    });
    let mut blocks = Blocks { rx, cur: Vec::new(), at: 0 };
    let decoded = decode_from(&mut R::stream(&mut blocks), texts);
    drop(blocks);
    let sum = reader.join().unwrap_or_else(|_| Err("icfg.bin: the reading thread failed".to_string()));
    (decoded, sum)
}

/// The ICFG of `icfg.bin` ([`to_file`]; generations written before compression hold
/// [`encode`]'s bytes as they are).
pub fn from_file(bytes: &[u8]) -> Result<Icfg, String> {
    const ZSTD: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
    if bytes.starts_with(&ZSTD) {
        let raw = zstd::stream::decode_all(bytes).map_err(|e| format!("icfg.bin does not decompress: {e}"))?;
        decode(&raw)
    } else {
        decode(bytes)
    }
}

pub fn encode(icfg: &Icfg) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 * icfg.graph.node_count());
    encode_into(icfg, &mut out).expect("writing to memory");
    out
}

/// [`encode`]'s bytes, handed to `out` as they are made.
fn encode_into(icfg: &Icfg, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut w = W { buf: Vec::with_capacity(1 << 20), out, err: None };
    w.put(MAGIC);
    w.u32(icfg.files.len() as u32);
    for f in &icfg.files {
        put_file(&mut w, f);
    }
    w.u32(icfg.functions.len() as u32);
    for f in &icfg.functions {
        put_function(&mut w, f);
    }
    w.u32(icfg.graph.node_count() as u32);
    for n in icfg.graph.node_weights() {
        put_node(&mut w, n);
    }
    let is_intra = |e: &petgraph::graph::EdgeReference<EdgeKind>| !matches!(e.weight(), EdgeKind::Call | EdgeKind::Return);
    w.u32(icfg.graph.edge_references().filter(is_intra).count() as u32);
    for e in icfg.graph.edge_references().filter(is_intra) {
        put_edge(&mut w, e);
    }
    w.u32(icfg.calls.len() as u32);
    for c in &icfg.calls {
        put_site(&mut w, c);
    }
    w.flush();
    w.err.map_or(Ok(()), Err)
}

fn put_file(w: &mut W, f: &SourceFile) {
    w.str(&f.path.to_string_lossy());
    w.lang(f.lang);
    w.u32(f.lines);
    w.u64(f.bytes);
    w.u32(f.error_regions);
    w.u8(f.removed as u8);
    w.str(&f.unit.package);
    w.u32(f.unit.imports.len() as u32);
    for i in &f.unit.imports {
        w.str(i);
    }
}

fn put_function(w: &mut W, f: &Function) {
    let m = &f.meta;
    w.str(&m.name);
    w.u32(m.scope.len() as u32);
    for s in &m.scope {
        w.str(s);
    }
    w.u32(m.arity.map_or(u32::MAX, |a| a));
    w.u32(m.min_arity);
    w.u8(m.file_local as u8);
    w.lang(m.lang);
    for v in [m.file, m.lines.0, m.lines.1, m.bytes.0, m.bytes.1, f.entry.index() as u32, f.exit.index() as u32] {
        w.u32(v);
    }
    w.u8(f.removed as u8);
}

fn put_node(w: &mut W, n: &Node) {
    w.u8(NodeKind::ALL.iter().position(|&k| k == n.kind).unwrap_or(0) as u8);
    w.lang(n.lang);
    for v in [n.file, n.function, n.bytes.0, n.bytes.1, n.lines.0, n.lines.1, n.parent.unwrap_or(u32::MAX)] {
        w.u32(v);
    }
    w.str(&n.text);
    w.u32(n.calls.len() as u32);
    for c in &n.calls {
        w.str(&c.name);
        w.str(&c.qualifier);
        w.u32(c.argc);
        w.u8(c.member as u8);
    }
}

fn put_edge(w: &mut W, e: petgraph::graph::EdgeReference<EdgeKind>) {
    w.u32(e.source().index() as u32);
    w.u32(e.target().index() as u32);
    w.u8(EdgeKind::ALL.iter().position(|k| k == e.weight()).unwrap_or(0) as u8);
}

fn put_site(w: &mut W, c: &CallSite) {
    w.u32(c.node.index() as u32);
    w.u32(c.call);
    w.u32(c.targets.len() as u32);
    for &t in &c.targets {
        w.u32(t);
    }
}

/// An edge between two of the first `n_nodes` nodes.
fn get_edge(r: &mut R, n_nodes: usize) -> Res<(NodeIndex, NodeIndex, EdgeKind)> {
    let (a, b) = (r.u32()? as usize, r.u32()? as usize);
    let kind = *EdgeKind::ALL.get(r.u8()? as usize).ok_or("icfg.bin: unknown edge kind")?;
    if a >= n_nodes || b >= n_nodes {
        return Err("icfg.bin: an edge out of range".into());
    }
    Ok((NodeIndex::new(a), NodeIndex::new(b), kind))
}

/// A call site of one of the first `n_nodes` nodes, its targets among `n_functions`.
fn get_site(r: &mut R, n_nodes: usize, n_functions: usize) -> Res<CallSite> {
    let (node, call) = (r.u32()? as usize, r.u32()?);
    let targets = (0..r.count(4)?).map(|_| r.u32()).collect::<Res<Vec<_>>>()?;
    if node >= n_nodes || targets.iter().any(|&t| t as usize >= n_functions) {
        return Err("icfg.bin: a call site out of range".into());
    }
    Ok(CallSite { node: NodeIndex::new(node), call, targets })
}

fn get_file(r: &mut R) -> Res<SourceFile> {
    let path = r.str()?.into();
    let lang = r.lang()?;
    let (lines, bytes, error_regions, removed) = (r.u32()?, r.u64()?, r.u32()?, r.u8()? == 1);
    let package = r.str()?;
    let imports = (0..r.count(4)?).map(|_| r.str()).collect::<Res<Vec<_>>>()?;
    Ok(SourceFile { path, lang, lines, bytes, error_regions, unit: FileUnit { package, imports }, removed, project: 0 })
}

fn get_function(r: &mut R) -> Res<Function> {
    let name = r.str()?;
    let scope = (0..r.count(4)?).map(|_| r.str()).collect::<Res<Vec<_>>>()?;
    let arity = Some(r.u32()?).filter(|&a| a != u32::MAX);
    let min_arity = r.u32()?;
    let file_local = r.u8()? == 1;
    let lang = r.lang()?;
    let mut v = [0u32; 7];
    for x in &mut v {
        *x = r.u32()?;
    }
    let removed = r.u8()? == 1;
    let meta = FunctionMeta { name, scope, arity, min_arity, file_local, lang, file: v[0], lines: (v[1], v[2]), bytes: (v[3], v[4]) };
    Ok(Function { meta, entry: NodeIndex::new(v[5] as usize), exit: NodeIndex::new(v[6] as usize), removed })
}

fn get_node(r: &mut R, texts: bool) -> Res<Node> {
    let kind = *NodeKind::ALL.get(r.u8()? as usize).ok_or("icfg.bin: unknown node kind")?;
    let lang = r.lang()?;
    let mut v = [0u32; 7];
    for x in &mut v {
        *x = r.u32()?;
    }
    let text = match texts {
        true => r.str()?,
        false => {
            let n = r.u32()? as usize;
            r.take(n)?;
            String::new()
        }
    };
    let calls = (0..r.count(13)?)
        .map(|_| Ok(CallRef { name: r.str()?, qualifier: r.str()?, argc: r.u32()?, member: r.u8()? == 1 }))
        .collect::<Res<Vec<_>>>()?;
    let parent = Some(v[6]).filter(|&p| p != u32::MAX);
    Ok(Node { kind, lang, file: v[0], function: v[1], bytes: (v[2], v[3]), lines: (v[4], v[5]), text: text.into(), calls: calls.into(), parent })
}

/// Checks what `icfg` holds from `from` (files, functions, nodes) on refers only to ids it
/// has.
fn check_ids(icfg: &Icfg, from: (usize, usize, usize)) -> Res<()> {
    let n_nodes = icfg.graph.node_count();
    let (n_files, n_functions) = (icfg.files.len(), icfg.functions.len());
    let bad = |what: &str| format!("icfg.bin: {what} out of range");
    for f in &icfg.functions[from.1..] {
        if f.meta.file as usize >= n_files || f.entry.index() >= n_nodes || f.exit.index() >= n_nodes {
            return Err(bad("a function"));
        }
    }
    if icfg.graph.node_weights().skip(from.2).any(|n| n.function as usize >= n_functions || n.file as usize >= n_files) {
        return Err(bad("a node"));
    }
    Ok(())
}

const DELTA_MAGIC: &[u8; 8] = b"BRYICD01";

/// What `icfg` changed over a base of `base` (files, functions, nodes), as an update leaves
/// it: base files and functions removed since, everything past the base, and the call
/// sites of base nodes that `resolved` names (node, call), resolved anew since the base.
/// Compressed: [`apply_delta`] reads it.
pub fn delta(icfg: &Icfg, base: (usize, usize, usize), resolved: &std::collections::HashSet<(u32, u32)>) -> Vec<u8> {
    let mut raw = Vec::new();
    {
        let mut w = W { buf: Vec::new(), out: &mut raw, err: None };
        w.put(DELTA_MAGIC);
        for v in [base.0, base.1, base.2] {
            w.u32(v as u32);
        }
        let gone_files: Vec<u32> = (0..base.0 as u32).filter(|&f| icfg.files[f as usize].removed).collect();
        let gone_functions: Vec<u32> = (0..base.1 as u32).filter(|&f| icfg.functions[f as usize].removed).collect();
        for ids in [&gone_files, &gone_functions] {
            w.u32(ids.len() as u32);
            for &i in ids.iter() {
                w.u32(i);
            }
        }
        w.u32((icfg.files.len() - base.0) as u32);
        for f in &icfg.files[base.0..] {
            put_file(&mut w, f);
        }
        w.u32((icfg.functions.len() - base.1) as u32);
        for f in &icfg.functions[base.1..] {
            put_function(&mut w, f);
        }
        w.u32((icfg.graph.node_count() - base.2) as u32);
        for n in icfg.graph.node_weights().skip(base.2) {
            put_node(&mut w, n);
        }
        let new_intra =
            |e: &petgraph::graph::EdgeReference<EdgeKind>| e.source().index() >= base.2 && !matches!(e.weight(), EdgeKind::Call | EdgeKind::Return);
        w.u32(icfg.graph.edge_references().filter(new_intra).count() as u32);
        for e in icfg.graph.edge_references().filter(new_intra) {
            put_edge(&mut w, e);
        }
        let sites: Vec<&CallSite> =
            icfg.calls.iter().filter(|c| c.node.index() >= base.2 || resolved.contains(&(c.node.index() as u32, c.call))).collect();
        w.u32(sites.len() as u32);
        for c in sites {
            put_site(&mut w, c);
        }
        w.flush();
    }
    zstd::bulk::compress(&raw, 3).expect("compressing in memory")
}

/// Applies [`delta`]'s bytes to the base ICFG [`decode`] read (its call sites, no call
/// edges): the ICFG the update that wrote them left, without call edges. Returns the base
/// call sites it holds anew, for the next delta.
pub fn apply_delta(icfg: &mut Icfg, bytes: &[u8]) -> Result<std::collections::HashSet<(u32, u32)>, String> {
    let raw = zstd::stream::decode_all(bytes).map_err(|e| format!("icfg delta does not decompress: {e}"))?;
    if raw.len() < 20 || &raw[..8] != DELTA_MAGIC {
        return Err("not an icfg delta".into());
    }
    let mut r = R::new(&raw, 8);
    let base = (r.u32()? as usize, r.u32()? as usize, r.u32()? as usize);
    if base != (icfg.files.len(), icfg.functions.len(), icfg.graph.node_count()) {
        return Err("the icfg delta is not over this base".into());
    }
    let bad = |what: &str| format!("icfg delta: {what} out of range");
    for _ in 0..r.count(4)? {
        let f = r.u32()? as usize;
        icfg.files.get_mut(f).ok_or_else(|| bad("a file"))?.removed = true;
    }
    for _ in 0..r.count(4)? {
        let f = r.u32()?;
        if f as usize >= base.1 {
            return Err(bad("a function"));
        }
        icfg.remove_function(f);
    }
    for _ in 0..r.count(30)? {
        let f = get_file(&mut r)?;
        icfg.files.push(f);
    }
    for _ in 0..r.count(40)? {
        let f = get_function(&mut r)?;
        icfg.functions.push(f);
    }
    let nodes = r.count(34)?;
    icfg.graph.reserve_nodes(nodes);
    for _ in 0..nodes {
        let n = get_node(&mut r, true)?;
        icfg.graph.add_node(n);
    }
    check_ids(icfg, (0, base.1, base.2))?;
    let n_nodes = icfg.graph.node_count();
    for _ in 0..r.count(9)? {
        let (a, b, kind) = get_edge(&mut r, n_nodes)?;
        icfg.graph.add_edge(a, b, kind);
    }
    let n_functions = icfg.functions.len();
    let mut sites = Vec::new();
    for _ in 0..r.count(12)? {
        sites.push(get_site(&mut r, n_nodes, n_functions)?);
    }
    if r.at != raw.len() {
        return Err("icfg delta: trailing bytes".into());
    }
    let resolved: std::collections::HashSet<(u32, u32)> =
        sites.iter().filter(|c| c.node.index() < base.2).map(|c| (c.node.index() as u32, c.call)).collect();
    let (functions, graph) = (&icfg.functions, &icfg.graph);
    icfg.calls.retain(|c| !resolved.contains(&(c.node.index() as u32, c.call)) && !functions[graph[c.node].function as usize].removed);
    icfg.calls.extend(sites);
    icfg.calls.sort_by_key(|c| (c.node.index(), c.call));
    Ok(resolved)
}

/// The ICFG [`encode`] wrote, with its call sites but without call and return edges
/// (`Icfg::relink` adds them, [`call_edge_rows`] lists them); every id is checked, so a
/// damaged file is an error, never a panic later.
pub fn decode(bytes: &[u8]) -> Result<Icfg, String> {
    decode_from(&mut R::new(bytes, 0), true)
}

fn decode_from(r: &mut R, texts: bool) -> Result<Icfg, String> {
    if r.take(8).ok() != Some(&MAGIC[..]) {
        return Err("icfg.bin is not an ICFG file".into());
    }
    let mut icfg = Icfg::default();
    for _ in 0..r.count(30)? {
        let f = get_file(r)?;
        icfg.files.push(f);
    }
    for _ in 0..r.count(40)? {
        let f = get_function(r)?;
        icfg.functions.push(f);
    }
    let nodes = r.count(34)?;
    icfg.graph.reserve_nodes(r.room(nodes));
    for _ in 0..nodes {
        let n = get_node(r, texts)?;
        icfg.graph.add_node(n);
    }
    check_ids(&icfg, (0, 0, 0))?;
    let (n_nodes, n_functions) = (icfg.graph.node_count(), icfg.functions.len());
    let edges = r.count(9)?;
    icfg.graph.reserve_edges(r.room(edges));
    for _ in 0..edges {
        let (a, b, kind) = get_edge(r, n_nodes)?;
        icfg.graph.add_edge(a, b, kind);
    }
    let n_sites = r.count(12)?;
    let mut sites = Vec::with_capacity(r.room(n_sites));
    for _ in 0..n_sites {
        sites.push(get_site(r, n_nodes, n_functions)?);
    }
    if !r.at_end() {
        return Err("icfg.bin: trailing bytes".into());
    }
    sites.sort_by_key(|c| (c.node.index(), c.call));
    icfg.calls = sites;
    Ok(icfg)
}

/// The call and return edges `Icfg::add_call_edges` would add for the sites of an ICFG
/// [`decode`] read (whose graph holds intraprocedural edges only), as database rows.
pub fn call_edge_rows(icfg: &Icfg) -> Vec<(u32, u32, u8)> {
    let code = |k: EdgeKind| EdgeKind::ALL.iter().position(|&q| q == k).unwrap_or(0) as u8;
    let mut rows = Vec::new();
    for site in &icfg.calls {
        for &t in &site.targets {
            let f = &icfg.functions[t as usize];
            rows.push((site.node.index() as u32, f.entry.index() as u32, code(EdgeKind::Call)));
            for a in icfg.graph.neighbors_directed(site.node, petgraph::Direction::Outgoing) {
                rows.push((f.exit.index() as u32, a.index() as u32, code(EdgeKind::Return)));
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_read_from_the_sites_are_those_of_the_adjacency() {
        // A callee with more callers than a hub has, one with fewer, a call into another
        // file and a loop back to the call: every kind of edge the rows take from sites.
        let dir = tempfile::tempdir().unwrap();
        let callers: String = (0..crate::graph::csr::HUB_CALLERS + 2).map(|i| format!("int c{i}(int x) {{ if (x) x = hub(x); return few(x); }}\n")).collect();
        std::fs::write(dir.path().join("a.c"), format!("int hub(int x) {{ return x + 1; }}\nint few(int x) {{ while (x > 0) x = hub(x) - 2; return x; }}\n{callers}")).unwrap();
        std::fs::write(dir.path().join("b.c"), "int far(int n) { int s = 0; for (int i = 0; i < n; i++) s += few(i); return s; }\n").unwrap();
        let icfg = crate::corpus::load(&[dir.path().to_path_buf()], &Default::default()).icfg;
        let decoded = decode(&encode(&icfg)).unwrap();
        assert!(decoded.graph.edge_count() < icfg.graph.edge_count(), "the file holds no call or return edge");
        let mut rows = crate::graph::Rows::new(&decoded);
        for same_file in [false, true] {
            let whole = if same_file { crate::graph::Csr::within_files(&icfg) } else { crate::graph::Csr::from_icfg(&icfg) };
            for n in 0..icfg.graph.node_count() as u32 {
                assert_eq!(rows.row(n, same_file), whole.neighbors(n), "row {n}, within files: {same_file}");
            }
        }
        let hub = icfg.functions.iter().position(|f| f.meta.name == "hub").unwrap() as u32;
        assert!(rows.callers(hub) > crate::graph::csr::HUB_CALLERS);
    }

    #[test]
    fn round_trips_a_parsed_corpus_and_refuses_damage() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.c"), "static int sq(int x) { return x * x; }\nint f(int n) { int s = 0; for (int i = 0; i < n; i++) s += sq(i); return s; }\n").unwrap();
        std::fs::write(dir.path().join("B.java"), "package p; import q.R;\nclass B { int g() { return new B().h(2); } int h(int k) { return k; } }\n").unwrap();
        let icfg = crate::corpus::load(&[dir.path().to_path_buf()], &Default::default()).icfg;
        let bytes = encode(&icfg);
        let mut back = decode(&bytes).unwrap();
        assert_eq!(encode(&back), bytes);
        let mut rows = crate::index::store::edge_rows(&back);
        rows.extend(call_edge_rows(&back));
        rows.sort_unstable();
        rows.dedup();
        back.relink(Vec::new());
        assert_eq!(rows, crate::index::store::edge_rows(&back), "the rows listed are the edges relinking adds");
        assert_eq!(back.graph.edge_count(), icfg.graph.edge_count());
        assert_eq!(back.calls.len(), icfg.calls.len());
        assert_eq!(back.files[1].unit.imports, icfg.files[1].unit.imports);
        for cut in [9, bytes.len() / 2, bytes.len() - 1] {
            assert!(decode(&bytes[..cut]).is_err());
        }
        let mut bad = bytes.clone();
        let last = bad.len() - 4;
        bad[last..].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(&bad).is_err());
        // The file form: compressed, read back alike; the raw form of older files too;
        // a damaged frame is an error.
        let file = to_file(&icfg);
        assert!(file.len() < bytes.len());
        assert_eq!(encode(&from_file(&file).unwrap()), bytes);
        assert_eq!(encode(&from_file(&bytes).unwrap()), bytes);
        assert!(from_file(&file[..file.len() / 2]).is_err());
        // Read from a file as a stream, with the file's sum: compressed, raw, damaged.
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("icfg.bin");
        for form in [&file, &bytes] {
            std::fs::write(&p, form).unwrap();
            let (got, sum) = read(&p);
            assert_eq!(encode(&got.unwrap()), bytes);
            assert_eq!(sum.unwrap(), crate::index::checksum(form));
        }
        for cut in [file.len() / 2, file.len() - 1] {
            std::fs::write(&p, &file[..cut]).unwrap();
            let (got, sum) = read(&p);
            assert!(got.is_err() || sum.unwrap() != crate::index::checksum(&file));
        }
        let mut longer = file.clone();
        longer.extend(b"tail");
        std::fs::write(&p, &longer).unwrap();
        assert_eq!(read(&p).1.unwrap(), crate::index::checksum(&longer));
        assert!(read(&dir.path().join("missing")).0.is_err());
    }
}
