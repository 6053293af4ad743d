//! `icfg.bin`: the whole ICFG of a generation (files with their unit facts, functions,
//! nodes, intraprocedural edges, call sites with their resolved targets), so that an
//! update parses only the files that changed and re-resolves only the calls whose
//! candidates changed. Call and return edges are not stored: they follow from the sites.
//!
//! Layout (little-endian): `BRYICF02`, a u32 count of sections and, for each, its stored
//! and its raw length (u64 each); then the sections, each one zstd frame: files,
//! functions, nodes, the nodes' calls, intraprocedural edges, call sites. Files and
//! functions are records (strings are a u32 length and UTF-8 bytes); nodes, edges and
//! sites are columns of numbers, most stored as the difference from the one before, which
//! compress to a fraction of records and decode without a branch per field. Statement
//! texts are left out: the database holds them, and an update reads those of the files it
//! reaches from there. Sections decode on two threads at once.
//!
//! A patch's change to the ICFG ([`delta`]) is records, nodes with their texts.

use crate::graph::{CallRef, CallSite, EdgeKind, FileUnit, Function, FunctionMeta, Icfg, Lang, Node, NodeKind, SourceFile};
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

const MAGIC: &[u8; 8] = b"BRYICF02";
/// Files, functions, nodes, calls, edges, sites.
const SECTIONS: usize = 6;
/// A language's code in the file is its place here: new languages are appended.
const LANGS: [Lang; 7] = [Lang::C, Lang::Cpp, Lang::Java, Lang::Pcode, Lang::Python, Lang::Rust, Lang::Go];

/// The record writer: a buffer handed to `out` a megabyte at a time; the first error is
/// kept and returned at the end.
struct W<'o> {
    buf: Vec<u8>,
    out: &'o mut dyn std::io::Write,
    err: Option<std::io::Error>,
    /// Bytes put so far.
    len: u64,
}

impl W<'_> {
    fn put(&mut self, b: &[u8]) {
        self.len += b.len() as u64;
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
    /// cannot make a huge allocation. A stream's end is not known: a section's counts are
    /// bounded by its raw length instead ([`bounded`]).
    fn count(&mut self, min_bytes: usize) -> Res<usize> {
        let n = self.u32()? as usize;
        if self.more.is_none() && n.saturating_mul(min_bytes) > self.b.len() - self.at {
            return Err("icfg.bin: a count exceeds the file".into());
        }
        Ok(n)
    }
}

/// zstd's level for the ICFG of `nodes` nodes: a large tree's file is a share of an index
/// that must stay within two and a half times its source, and is written once a build; a
/// small tree's is rewritten by every update, which would wait for a higher level.
fn level(nodes: usize) -> i32 {
    if nodes >= 1 << 21 { 9 } else { 3 }
}

/// `icfg.bin`'s bytes for `icfg`.
pub fn encode(icfg: &Icfg) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    write_to(icfg, &mut out).expect("writing to memory");
    out.into_inner()
}

/// Writes `icfg.bin` to `path` as it is made: neither the sections nor their compressed
/// form are held whole.
pub fn write(icfg: &Icfg, path: &std::path::Path) -> std::io::Result<()> {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    write_to(icfg, &mut file)?;
    std::io::Write::flush(&mut file)
}

/// The sections, each compressed as it is made; the table of their lengths is filled in
/// last.
fn write_to<O: std::io::Write + std::io::Seek>(icfg: &Icfg, out: &mut O) -> std::io::Result<()> {
    use std::io::SeekFrom;
    let start = out.stream_position()?;
    out.write_all(MAGIC)?;
    out.write_all(&(SECTIONS as u32).to_le_bytes())?;
    out.write_all(&[0u8; SECTIONS * 16])?;
    let level = level(icfg.graph.node_count());
    // On every core: the columns are made faster than one core compresses them. A frame
    // does not depend on the number of workers.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8) as u32;
    let mut table = Vec::with_capacity(SECTIONS);
    for section in 0..SECTIONS {
        let at = out.stream_position()?;
        let mut z = zstd::stream::Encoder::new(&mut *out, level)?;
        z.multithread(workers)?;
        let mut w = W { buf: Vec::with_capacity(1 << 20), out: &mut z, err: None, len: 0 };
        put_section(&mut w, icfg, section);
        w.flush();
        let (err, raw) = (w.err.take(), w.len);
        if let Some(e) = err {
            return Err(e);
        }
        z.finish()?;
        table.push((out.stream_position()? - at, raw));
    }
    let end = out.stream_position()?;
    out.seek(SeekFrom::Start(start + 12))?;
    for (stored, raw) in table {
        out.write_all(&stored.to_le_bytes())?;
        out.write_all(&raw.to_le_bytes())?;
    }
    out.seek(SeekFrom::Start(end))?;
    Ok(())
}

/// A column of `n` numbers, each stored as the difference from the one before when
/// `delta` (wrapping, so any sequence round-trips).
fn put_column(w: &mut W, values: impl Iterator<Item = u32>, delta: bool) {
    let mut prev = 0u32;
    for v in values {
        w.u32(if delta { v.wrapping_sub(prev) } else { v });
        prev = v;
    }
}

/// The nodes' number columns: what each holds, and whether it is stored as differences.
/// A span's end is stored as its length.
const NODE_COLUMNS: [(fn(&Node) -> u32, bool); 7] = [
    (|n| n.file, true),
    (|n| n.function, true),
    (|n| n.bytes.0, true),
    (|n| n.bytes.1.wrapping_sub(n.bytes.0), false),
    (|n| n.lines.0, true),
    (|n| n.lines.1.wrapping_sub(n.lines.0), false),
    (|n| n.parent.get().map_or(0, |p| p.wrapping_add(1)), false),
];

/// Nodes are stored in blocks of this many, each block's columns together: a reader builds
/// each node whole from a block at hand (a column at a time over every node would sweep
/// the nodes' memory once per column).
/// (Small in the unit tests, so that their corpora span several blocks.)
const BLOCK: usize = if cfg!(test) { 64 } else { 1 << 16 };

fn node_blocks(icfg: &Icfg) -> impl Iterator<Item = impl Iterator<Item = &Node> + Clone> {
    icfg.graph.raw_nodes().chunks(BLOCK).map(|b| b.iter().map(|n| &n.weight))
}

fn put_section(w: &mut W, icfg: &Icfg, section: usize) {
    let is_intra = |e: &petgraph::graph::EdgeReference<EdgeKind>| !matches!(e.weight(), EdgeKind::Call | EdgeKind::Return);
    let edges = || icfg.graph.edge_references().filter(is_intra);
    match section {
        0 => {
            w.u32(icfg.files.len() as u32);
            for f in &icfg.files {
                put_file(w, f);
            }
        }
        1 => {
            w.u32(icfg.functions.len() as u32);
            for f in &icfg.functions {
                put_function(w, f);
            }
        }
        2 => {
            w.u32(icfg.graph.node_count() as u32);
            for block in node_blocks(icfg) {
                for n in block.clone() {
                    w.u8(NodeKind::ALL.iter().position(|&k| k == n.kind).unwrap_or(0) as u8);
                }
                for n in block.clone() {
                    w.lang(n.lang);
                }
                for (get, delta) in NODE_COLUMNS {
                    put_column(w, block.clone().map(get), delta);
                }
            }
        }
        3 => {
            w.u32(icfg.graph.node_count() as u32);
            for block in node_blocks(icfg) {
                put_column(w, block.clone().map(|n| n.calls.len() as u32), false);
                for c in block.flat_map(|n| n.calls.iter()) {
                    w.str(&c.name);
                    w.str(&c.qualifier);
                    w.u32(c.argc);
                    w.u8(c.member as u8);
                }
            }
        }
        4 => {
            w.u32(edges().count() as u32);
            // In blocks, as the nodes: a reader adds a block's edges as it reads them.
            let mut block: Vec<(u32, u32, u8)> = Vec::with_capacity(BLOCK);
            let mut edges = edges().map(|e| (e.source().index() as u32, e.target().index() as u32, EdgeKind::ALL.iter().position(|k| k == e.weight()).unwrap_or(0) as u8));
            loop {
                block.clear();
                block.extend(edges.by_ref().take(BLOCK));
                if block.is_empty() {
                    break;
                }
                put_column(w, block.iter().map(|e| e.0), true);
                put_column(w, block.iter().map(|e| e.1.wrapping_sub(e.0)), false);
                for e in &block {
                    w.u8(e.2);
                }
            }
        }
        _ => {
            w.u32(icfg.calls.len() as u32);
            put_column(w, icfg.calls.iter().map(|c| c.node.index() as u32), true);
            put_column(w, icfg.calls.iter().map(|c| c.call), false);
            put_column(w, icfg.calls.iter().map(|c| c.targets.len() as u32), false);
            put_column(w, icfg.calls.iter().flat_map(|c| c.targets.iter().copied()), false);
        }
    }
}

/// Where a section's stored bytes come from: a file, opened anew for each reader, or
/// bytes in memory.
#[derive(Clone, Copy)]
enum Source<'a> {
    File(&'a std::path::Path),
    Bytes(&'a [u8]),
}

impl<'a> Source<'a> {
    fn open(self, at: u64, len: u64) -> Res<Box<dyn std::io::Read + Send + 'a>> {
        use std::io::{Read, Seek};
        match self {
            Source::File(p) => {
                let mut f = std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?;
                f.seek(std::io::SeekFrom::Start(at)).map_err(|e| format!("{}: {e}", p.display()))?;
                Ok(Box::new(std::io::BufReader::with_capacity(1 << 20, f.take(len))))
            }
            Source::Bytes(b) => {
                let (at, end) = (at as usize, (at + len) as usize);
                Ok(Box::new(b.get(at..end).ok_or("icfg.bin is truncated")?))
            }
        }
    }
}

/// Counts the bytes read through it.
struct Counting<T> {
    inner: T,
    n: u64,
}

impl<T: std::io::Read> std::io::Read for Counting<T> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.n += n as u64;
        Ok(n)
    }
}

/// Reads section `(at, stored, raw)` of `src` with `f`, which is handed the section's raw
/// length to bound its counts; the section must decompress to exactly `raw` bytes, all
/// of them read.
/// The section is decompressed on a thread of its own, a few chunks ahead of `f`: the
/// two take about as long on the largest sections, and a reading of the whole file runs
/// beside other work that leaves a core free only part of the time.
fn section<T>(src: Source, (at, stored, raw): (u64, u64, u64), f: impl FnOnce(&mut R, u64) -> Res<T>) -> Res<T> {
    let z = zstd::stream::read::Decoder::with_buffer(std::io::BufReader::with_capacity(1 << 20, src.open(at, stored)?))
        .map_err(|e| format!("icfg.bin does not decompress: {e}"))?
        .single_frame();
    let mut counted = Counting { inner: z, n: 0 };
    let (tx, rx) = std::sync::mpsc::sync_channel::<std::io::Result<Vec<u8>>>(4);
    std::thread::scope(|s| {
        let counted = &mut counted;
        s.spawn(move || {
            use std::io::Read;
            loop {
                let mut chunk = vec![0u8; 1 << 20];
                let mut n = 0;
                let read = loop {
                    match counted.read(&mut chunk[n..]) {
                        Ok(0) => break Ok(()),
                        Ok(k) => {
                            n += k;
                            if n == chunk.len() {
                                break Ok(());
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => break Err(e),
                    }
                };
                chunk.truncate(n);
                let end = n == 0 || read.is_err();
                // A reader that has stopped ends this.
                if tx.send(read.map(|_| chunk)).is_err() || end {
                    return;
                }
            }
        });
        let mut ahead = Ahead { rx, chunk: Vec::new(), at: 0 };
        let mut r = R::stream(&mut ahead);
        let out = f(&mut r, raw)?;
        if !r.at_end() {
            return Err("icfg.bin: a section has trailing bytes".into());
        }
        Ok(out)
    })
    .and_then(|out| match counted.n == raw {
        true => Ok(out),
        false => Err("icfg.bin: a section is not as long as its table says".into()),
    })
}

/// The chunks a decompressing thread sends, read in order; an empty one ends them.
struct Ahead {
    rx: std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    at: usize,
}

impl std::io::Read for Ahead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.chunk.len() {
            match self.rx.recv() {
                Ok(Ok(c)) => (self.chunk, self.at) = (c, 0),
                Ok(Err(e)) => return Err(e),
                // The sender has ended, after an empty chunk or an error.
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// A count of records at least `min_bytes` each, bounded by the section's raw length.
fn bounded(r: &mut R, raw: u64, min_bytes: u64) -> Res<usize> {
    let n = r.u32()? as u64;
    if n.saturating_mul(min_bytes) > raw {
        return Err("icfg.bin: a count exceeds its section".into());
    }
    Ok(n as usize)
}

/// A column of `n` values `width` bytes wide, handed to `f` with its place, in chunks.
fn column(r: &mut R, n: usize, width: usize, mut f: impl FnMut(usize, &[u8])) -> Res<()> {
    let mut i = 0;
    while i < n {
        let k = (n - i).min(1 << 16);
        let b = r.take(k * width)?;
        for (j, v) in b.chunks_exact(width).enumerate() {
            f(i + j, v);
        }
        i += k;
    }
    Ok(())
}

/// A u32 column of `n` values, differences summed where `delta`.
fn u32_column(r: &mut R, n: usize, delta: bool) -> Res<Vec<u32>> {
    let mut out = Vec::with_capacity(n);
    let mut prev = 0u32;
    column(r, n, 4, |_, b| {
        let v = u32::from_le_bytes(b.try_into().expect("4 bytes"));
        prev = if delta { prev.wrapping_add(v) } else { v };
        out.push(prev);
    })?;
    Ok(out)
}

/// The ICFG of `icfg.bin` at `path` ([`write`]), with its call sites but without call and
/// return edges (`Icfg::relink` adds them, [`call_edge_rows`] lists them), and without
/// statement texts; every id is checked, so a damaged file is an error, never a panic
/// later. The caller checks the file's sum.
pub fn read(path: &std::path::Path) -> Result<Icfg, String> {
    let parts = table_of(path)?;
    decode_from(Source::File(path), parts, false).map(|(icfg, _)| icfg)
}

/// The table of the sections of `icfg.bin` at `path`: where each starts, its stored and
/// its raw length.
fn table_of(path: &std::path::Path) -> Res<[(u64, u64, u64); SECTIONS]> {
    let len = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?.len();
    let mut head = vec![0u8; 12 + SECTIONS * 16];
    {
        use std::io::Read;
        let mut f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        f.read_exact(&mut head).map_err(|_| "icfg.bin is not an ICFG file".to_string())?;
    }
    table(&head, len)
}

/// [`read`] of `icfg.bin`'s bytes in memory ([`encode`]'s).
pub fn decode(bytes: &[u8]) -> Result<Icfg, String> {
    let parts = table(bytes.get(..12 + SECTIONS * 16).ok_or("icfg.bin is not an ICFG file")?, bytes.len() as u64)?;
    decode_from(Source::Bytes(bytes), parts, false).map(|(icfg, _)| icfg)
}

/// What an update of a large index needs of `icfg.bin` first: the files, functions and
/// call sites, and each node without its calls and edges. The [`Parts`] returned give
/// nodes their calls and edges where the update reaches ([`Parts::calls_named`],
/// [`Parts::add_edges`]): on the Linux tree, millions of call names and intraprocedural
/// edges that a one-file change never reads.
pub fn read_parts(path: &std::path::Path) -> Result<(Icfg, Parts), String> {
    let table = table_of(path)?;
    let (icfg, _) = decode_from(Source::File(path), table, true)?;
    let nodes = icfg.graph.node_count();
    let edges = Edges::Unread { path: path.to_path_buf(), at: table[4] };
    let parts = Parts { calls_at: table[3], nodes, edges, done: vec![false; icfg.files.len()] };
    Ok((icfg, parts))
}

/// The calls section of `icfg.bin`, decompressed: [`Parts::calls_named`] scans it. Apart
/// from the rest, so that it can be read while the rest is.
pub fn calls_section(path: &std::path::Path) -> Result<Vec<u8>, String> {
    let (at, stored, raw_len) = table_of(path)?[3];
    use std::io::Read;
    let mut stored_bytes = Vec::with_capacity(stored as usize);
    Source::File(path).open(at, stored)?.read_to_end(&mut stored_bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let raw = zstd::bulk::decompress(&stored_bytes, raw_len as usize).map_err(|e| format!("icfg.bin does not decompress: {e}"))?;
    if raw.len() as u64 != raw_len {
        return Err("icfg.bin: a section is not as long as its table says".into());
    }
    Ok(raw)
}

/// The calls and intraprocedural edges of an ICFG [`read_parts`] read, handed out to the
/// nodes of the files that need them. Nodes and files added to the ICFG later (a patch's,
/// a change's) come whole and are not this reader's.
pub struct Parts {
    calls_at: (u64, u64, u64),
    /// How many nodes the file holds.
    nodes: usize,
    /// The edges, as the file lists them: read when first asked for, or on a thread
    /// [`Parts::read_edges`] starts.
    edges: Edges,
    /// The files whose nodes have their edges.
    done: Vec<bool>,
}

/// Where [`Parts`]' edges stand.
enum Edges {
    Unread { path: std::path::PathBuf, at: (u64, u64, u64) },
    Reading(std::thread::JoinHandle<Res<EdgeColumns>>),
    Read(EdgeColumns),
}

impl Parts {
    /// Starts reading the edges on a thread of their own: an update has work to do
    /// before it needs them (the reading of everything else does not wait for them).
    pub fn read_edges(&mut self) {
        if let Edges::Unread { path, at } = &self.edges {
            let (path, at, nodes) = (path.clone(), *at, self.nodes);
            if let Ok(h) = std::thread::Builder::new().name("icfg-edges".into()).spawn(move || edge_columns(&path, at, nodes)) {
                self.edges = Edges::Reading(h);
            }
        }
    }

    /// The edge columns, read (or waited for) when first asked for.
    fn columns(&mut self) -> Res<&EdgeColumns> {
        let read = match std::mem::replace(&mut self.edges, Edges::Read(Default::default())) {
            Edges::Unread { path, at } => edge_columns(&path, at, self.nodes)?,
            Edges::Reading(h) => h.join().unwrap_or_else(|_| Err("icfg.bin: the edges' reading thread failed".into()))?,
            Edges::Read(c) => c,
        };
        self.edges = Edges::Read(read);
        match &self.edges {
            Edges::Read(c) => Ok(c),
            _ => unreachable!("set just above"),
        }
    }

    /// Gives every node of each live function of the file that has a call whose name
    /// `wanted` selects its calls (a function's nodes all: its shape counts their calls),
    /// and returns those functions. The section, decompressed whole, is scanned in place:
    /// only the calls given out are made into strings.
    /// (`wanted` is handed each name's bytes: those of the calls given out are checked as
    /// text when read.)
    /// `raw`: the calls section, as [`calls_section`] reads it from the same file.
    pub fn calls_named(&self, raw: &[u8], icfg: &mut Icfg, wanted: &dyn Fn(&[u8]) -> bool) -> Result<Vec<u32>, String> {
        if raw.len() as u64 != self.calls_at.2 {
            return Err("icfg.bin: a section is not as long as its table says".into());
        }
        let mut found = Vec::new();
        let graph = &mut icfg.graph;
        let functions = &icfg.functions;
        let nodes = self.nodes;
        // The current function, and its nodes with calls (id, calls, where they start).
        let mut current: Option<u32> = None;
        let mut held: Vec<(usize, u32, usize)> = Vec::new();
        let mut hit = false;
        let mut give = |current: Option<u32>, held: &mut Vec<(usize, u32, usize)>, hit: bool, graph: &mut petgraph::graph::DiGraph<Node, EdgeKind>| -> Res<()> {
            if let Some(f) = current.filter(|&f| hit && !functions[f as usize].removed) {
                for &(n, k, at) in held.iter() {
                    let mut r = R::new(&raw, at);
                    let calls = (0..k).map(|_| get_call(&mut r)).collect::<Res<Vec<_>>>()?;
                    graph[NodeIndex::new(n)].calls = calls.into();
                }
                found.push(f);
            }
            held.clear();
            Ok(())
        };
        let mut r = R::new(&raw, 0);
        if r.count(4)? != nodes {
            return Err("icfg.bin: the calls are not of the nodes".into());
        }
        let mut i = 0;
        while i < nodes {
            let k = (nodes - i).min(BLOCK);
            let counts = u32_column(&mut r, k, false)?;
            for (j, &count) in counts.iter().enumerate() {
                let n = i + j;
                let f = graph[NodeIndex::new(n)].function;
                if current != Some(f) {
                    give(current, &mut held, hit, graph)?;
                    (current, hit) = (Some(f), false);
                }
                if count > 0 {
                    held.push((n, count, r.at));
                }
                for _ in 0..count {
                    let len = r.u32()? as usize;
                    let name = r.take(len)?;
                    hit |= wanted(name);
                    let q = r.u32()? as usize;
                    r.take(q + 5)?;
                }
            }
            i += k;
        }
        give(current, &mut held, hit, graph)?;
        if r.at != raw.len() {
            return Err("icfg.bin: a section has trailing bytes".into());
        }
        Ok(found)
    }

    /// Adds the intraprocedural edges of every node of `files` (those this reader read)
    /// that it has not added yet: those of a node are all added at once, in the file's
    /// order, so each node lists them as a whole read would.
    pub fn add_edges(&mut self, icfg: &mut Icfg, files: impl IntoIterator<Item = u32>) -> Result<(), String> {
        let mut new = vec![false; self.done.len()];
        let mut any = false;
        for f in files {
            if let Some(d) = self.done.get_mut(f as usize).filter(|d| !**d) {
                *d = true;
                new[f as usize] = true;
                any = true;
            }
        }
        if !any {
            return Ok(());
        }
        let nodes = self.nodes;
        let (from, to, kinds) = self.columns()?;
        // A function's nodes are one range, and a node's edges stay within its function.
        let mut wanted = vec![0u64; nodes.div_ceil(64)];
        for f in 0..icfg.functions.len() as u32 {
            let func = &icfg.functions[f as usize];
            if func.entry.index() < nodes && new.get(func.meta.file as usize) == Some(&true) {
                for n in icfg.function_nodes(f).filter(|&n| n < nodes) {
                    wanted[n / 64] |= 1 << (n % 64);
                }
            }
        }
        for ((&a, &b), &k) in from.iter().zip(to).zip(kinds) {
            if wanted[a as usize / 64] & (1 << (a % 64)) != 0 {
                icfg.graph.add_edge(NodeIndex::new(a as usize), NodeIndex::new(b as usize), EdgeKind::ALL[k as usize]);
            }
        }
        Ok(())
    }

    /// Adds the edges of every file.
    pub fn add_all_edges(&mut self, icfg: &mut Icfg) -> Result<(), String> {
        self.add_edges(icfg, 0..self.done.len() as u32)
    }
}

/// Edge columns (from, to, kind) of a read that keeps them apart.
type EdgeColumns = (Vec<u32>, Vec<u32>, Vec<u8>);

/// The edges section of `path` at `at` as columns, every end checked against the
/// `n_nodes` nodes of its ICFG.
fn edge_columns(path: &std::path::Path, at: (u64, u64, u64), n_nodes: usize) -> Res<EdgeColumns> {
    let (from, to, kinds) = section(Source::File(path), at, |r, raw| {
        let m = bounded(r, raw, 9)?;
        let (mut from, mut to, mut kinds): EdgeColumns = (Vec::with_capacity(m), Vec::with_capacity(m), Vec::with_capacity(m));
        let mut i = 0;
        while i < m {
            let k = (m - i).min(BLOCK);
            let a = u32_column(r, k, true)?;
            to.extend(u32_column(r, k, false)?.iter().zip(&a).map(|(&d, &a)| a.wrapping_add(d)));
            from.extend(a);
            column(r, k, 1, |_, b| kinds.push(b[0]))?;
            i += k;
        }
        Ok((from, to, kinds))
    })?;
    if from.iter().chain(&to).any(|&a| a as usize >= n_nodes) {
        return Err("icfg.bin: an edge out of range".into());
    }
    if kinds.iter().any(|&k| k as usize >= EdgeKind::ALL.len()) {
        return Err("icfg.bin: unknown edge kind".into());
    }
    Ok((from, to, kinds))
}

fn table(head: &[u8], len: u64) -> Res<[(u64, u64, u64); SECTIONS]> {
    if &head[..8] != MAGIC || u32::from_le_bytes(head[8..12].try_into().expect("4 bytes")) as usize != SECTIONS {
        return Err("icfg.bin is not an ICFG file of this beryl".into());
    }
    let mut at = head.len() as u64;
    let mut parts = [(0u64, 0u64, 0u64); SECTIONS];
    for (i, p) in parts.iter_mut().enumerate() {
        let field = |k: usize| u64::from_le_bytes(head[12 + i * 16 + k..20 + i * 16 + k].try_into().expect("8 bytes"));
        *p = (at, field(0), field(8));
        at = at.checked_add(p.1).ok_or("icfg.bin: a section's length is damaged")?;
    }
    if at != len {
        return Err(format!("icfg.bin holds {len} bytes, its sections {at}"));
    }
    Ok(parts)
}

/// The ICFG of the sections `parts` of `src`; with `apart`, its nodes without calls, and
/// its edges returned as columns instead of added to the graph.
fn decode_from(src: Source, parts: [(u64, u64, u64); SECTIONS], apart: bool) -> Result<(Icfg, Option<EdgeColumns>), String> {
    // Files, functions, sites and edges on one thread; nodes and their calls, which the
    // graph is built from, on this one, which then adds the edges the other hands it a
    // block at a time (eleven million on the Linux tree: held whole beside the graph's own,
    // they would raise the peak by a tenth).
    type Rest = (Vec<SourceFile>, Vec<Function>, Vec<CallSite>, Option<EdgeColumns>);
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Vec<(u32, u32, u8)>)>(4);
    let (rest, graph) = std::thread::scope(|s| {
        let rest = move || -> Res<Rest> {
            let files = section(src, parts[0], |r, raw| (0..bounded(r, raw, 30)?).map(|_| get_file(r)).collect::<Res<Vec<_>>>())?;
            let functions = section(src, parts[1], |r, raw| (0..bounded(r, raw, 40)?).map(|_| get_function(r)).collect::<Res<Vec<_>>>())?;
            let sites = section(src, parts[5], |r, raw| {
                let n = bounded(r, raw, 12)?;
                let nodes = u32_column(r, n, true)?;
                let calls = u32_column(r, n, false)?;
                let counts = u32_column(r, n, false)?;
                let total: u64 = counts.iter().map(|&c| c as u64).sum();
                if total.saturating_mul(4) > raw {
                    return Err("icfg.bin: a count exceeds its section".into());
                }
                let targets = u32_column(r, total as usize, false)?;
                let mut at = 0usize;
                let mut sites = Vec::with_capacity(n);
                sites.extend((0..n).map(|i| {
                    let t = targets[at..at + counts[i] as usize].to_vec();
                    at += counts[i] as usize;
                    CallSite { node: NodeIndex::new(nodes[i] as usize), call: calls[i], targets: t.into() }
                }));
                Ok(sites)
            })?;
            if apart {
                // The edges are read apart, by [`Parts`].
                drop(tx);
                return Ok((files, functions, sites, None));
            }
            section(src, parts[4], |r, raw| {
                let m = bounded(r, raw, 9)?;
                // The count first, then the blocks; a reader that has stopped ends this.
                if tx.send((m, Vec::new())).is_err() {
                    return Ok(());
                }
                let mut i = 0;
                while i < m {
                    let k = (m - i).min(BLOCK);
                    let a = u32_column(r, k, true)?;
                    let d = u32_column(r, k, false)?;
                    let mut block: Vec<(u32, u32, u8)> = a.iter().zip(&d).map(|(&a, &d)| (a, a.wrapping_add(d), 0)).collect();
                    column(r, k, 1, |j, b| block[j].2 = b[0])?;
                    if tx.send((k, block)).is_err() {
                        return Ok(());
                    }
                    i += k;
                }
                Ok(())
            })?;
            Ok((files, functions, sites, None))
        };
        let rest = s.spawn(rest);
        let graph = read_nodes(src, parts[2], (!apart).then_some(parts[3])).and_then(|mut graph| {
            let n_nodes = graph.node_count();
            let mut blocks = rx.iter();
            if let Some((m, _)) = blocks.next() {
                graph.reserve_edges(m);
            }
            for (_, block) in blocks {
                for (a, b, k) in block {
                    let kind = *EdgeKind::ALL.get(k as usize).ok_or("icfg.bin: unknown edge kind")?;
                    if a as usize >= n_nodes || b as usize >= n_nodes {
                        return Err("icfg.bin: an edge out of range".into());
                    }
                    graph.add_edge(NodeIndex::new(a as usize), NodeIndex::new(b as usize), kind);
                }
            }
            Ok(graph)
        });
        // Unblocks the other thread if this one stopped first.
        drop(rx);
        (rest.join().unwrap_or_else(|_| Err("icfg.bin: a reading thread failed".into())), graph)
    });
    // The other thread's error first: it explains edges that stopped short.
    let (files, functions, mut sites, edges) = rest?;
    let mut icfg = Icfg { graph: graph?, files, functions, calls: Vec::new() };
    check_ids(&icfg, (0, 0, 0))?;
    let (n_nodes, n_functions) = (icfg.graph.node_count(), icfg.functions.len());
    if sites.iter().any(|c| c.node.index() >= n_nodes || c.targets.iter().any(|&t| t as usize >= n_functions)) {
        return Err("icfg.bin: a call site out of range".into());
    }
    sites.sort_by_key(|c| (c.node.index(), c.call));
    icfg.calls = sites;
    Ok((icfg, edges))
}

/// The graph's nodes, each built whole from its block of the node columns and of the
/// calls (the two sections are read side by side); without calls when `calls_at` is none.
fn read_nodes(src: Source, nodes_at: (u64, u64, u64), calls_at: Option<(u64, u64, u64)>) -> Res<petgraph::graph::DiGraph<Node, EdgeKind>> {
    let mut graph = petgraph::graph::DiGraph::new();
    section(src, nodes_at, |r, raw| match calls_at {
        Some(at) => section(src, at, |rc, raw_calls| add_nodes(&mut graph, r, raw, Some((rc, raw_calls)))),
        None => add_nodes(&mut graph, r, raw, None),
    })?;
    Ok(graph)
}

/// The nodes of the node section `r` (`raw` bytes), with their calls from `calls` where
/// given.
fn add_nodes(graph: &mut petgraph::graph::DiGraph<Node, EdgeKind>, r: &mut R, raw: u64, mut calls: Option<(&mut R, u64)>) -> Res<()> {
    let n = bounded(r, raw, 30)?;
    if let Some((rc, raw_calls)) = calls.as_mut() {
        if bounded(rc, *raw_calls, 4)? != n {
            return Err("icfg.bin: the calls are not of the nodes".into());
        }
    }
    graph.reserve_nodes(n);
    let mut cols: [Vec<u32>; 7] = Default::default();
    let mut counts = Vec::new();
    let mut i = 0;
    while i < n {
        let k = (n - i).min(BLOCK);
        let kinds = r.take(k)?.to_vec();
        let langs = r.take(k)?.to_vec();
        for (col, (_, delta)) in cols.iter_mut().zip(NODE_COLUMNS) {
            *col = u32_column(r, k, delta)?;
        }
        if let Some((rc, raw_calls)) = calls.as_mut() {
            counts = u32_column(rc, k, false)?;
            if counts.iter().map(|&c| c as u64).sum::<u64>().saturating_mul(13) > *raw_calls {
                return Err("icfg.bin: a count exceeds its section".into());
            }
        }
        for j in 0..k {
            let kind = *NodeKind::ALL.get(kinds[j] as usize).ok_or("icfg.bin: unknown node kind")?;
            let lang = *LANGS.get(langs[j] as usize).ok_or("icfg.bin: unknown language")?;
            let node_calls: crate::graph::Thin<CallRef> = match calls.as_mut() {
                Some((rc, _)) => (0..counts[j])
                    .map(|_| get_call(rc))
                    .collect::<Res<Vec<_>>>()?
                    .into(),
                None => Default::default(),
            };
            let c = |x: usize| cols[x][j];
            graph.add_node(Node {
                kind,
                lang,
                file: c(0),
                function: c(1),
                bytes: (c(2), c(2).wrapping_add(c(3))),
                lines: (c(4), c(4).wrapping_add(c(5))),
                text: Default::default(),
                calls: node_calls,
                parent: crate::graph::Parent::of(c(6).checked_sub(1)),
            });
        }
        i += k;
    }
    Ok(())
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
    for v in [n.file, n.function, n.bytes.0, n.bytes.1, n.lines.0, n.lines.1, n.parent.get().unwrap_or(u32::MAX)] {
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
    Ok(CallSite { node: NodeIndex::new(node), call, targets: targets.into() })
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

fn get_call(r: &mut R) -> Res<CallRef> {
    Ok(CallRef { name: r.str()?, qualifier: r.str()?, argc: r.u32()?, member: r.u8()? == 1 })
}

fn get_node(r: &mut R) -> Res<Node> {
    let kind = *NodeKind::ALL.get(r.u8()? as usize).ok_or("icfg.bin: unknown node kind")?;
    let lang = r.lang()?;
    let mut v = [0u32; 7];
    for x in &mut v {
        *x = r.u32()?;
    }
    let text = r.str()?;
    let calls = (0..r.count(13)?)
        .map(|_| get_call(r))
        .collect::<Res<Vec<_>>>()?;
    let parent = Some(v[6]).filter(|&p| p != u32::MAX);
    Ok(Node { kind, lang, file: v[0], function: v[1], bytes: (v[2], v[3]), lines: (v[4], v[5]), text: text.into(), calls: calls.into(), parent: crate::graph::Parent::of(parent) })
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
        let mut w = W { buf: Vec::new(), out: &mut raw, err: None, len: 0 };
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
        // Millions of sites, a few resolved anew: where the sites are in order (as an
        // update leaves them), the resolved pairs in order are passed along with them.
        let key = |c: &CallSite| (c.node.index() as u32, c.call);
        let sites: Vec<&CallSite> = match icfg.calls.is_sorted_by_key(key) {
            true => {
                let again = in_order(resolved);
                let mut resolved_again = member_in_order(&again);
                icfg.calls.iter().filter(|c| resolved_again(key(c)) || c.node.index() >= base.2).collect()
            }
            false => icfg.calls.iter().filter(|c| c.node.index() >= base.2 || resolved.contains(&key(c))).collect(),
        };
        w.u32(sites.len() as u32);
        for c in sites {
            put_site(&mut w, c);
        }
        w.flush();
    }
    zstd::bulk::compress(&raw, 3).expect("compressing in memory")
}

/// The (node, call) pairs of `set`, in order.
fn in_order(set: &std::collections::HashSet<(u32, u32)>) -> Vec<(u32, u32)> {
    let mut v: Vec<(u32, u32)> = set.iter().copied().collect();
    v.sort_unstable();
    v
}

/// Whether each key asked is among `sorted`, for keys asked in ascending order (the call
/// sites in node order): a pass beside them instead of a hash of each of millions.
fn member_in_order(sorted: &[(u32, u32)]) -> impl FnMut((u32, u32)) -> bool + '_ {
    let mut next = sorted.iter().peekable();
    move |key| {
        while next.next_if(|&&k| k < key).is_some() {}
        next.peek().is_some_and(|&&k| k == key)
    }
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
        let n = get_node(&mut r)?;
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
    // Millions of sites are kept, a few dropped: neither hashed nor looked up one by one.
    let again = in_order(&resolved);
    let mut resolved_again = member_in_order(&again);
    let live = icfg.live_sites();
    let mut i = 0;
    icfg.calls.retain(|c| {
        let keep = !resolved_again((c.node.index() as u32, c.call)) && live[i];
        i += 1;
        keep
    });
    icfg.calls.extend(sites);
    icfg.calls.sort_by_key(|c| (c.node.index(), c.call));
    Ok(resolved)
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
        let many: String = (0..40).map(|i| format!("int m{i}(int x) {{ while (x > {i}) {{ if (x % 2) x = sq(x); else x--; }} return m{}(x); }}\n", (i + 1) % 40)).collect();
        std::fs::write(dir.path().join("c.c"), format!("int sq(int x);\n{many}")).unwrap();
        let icfg = crate::corpus::load(&[dir.path().to_path_buf()], &Default::default()).icfg;
        assert!(icfg.graph.node_count() > 4 * BLOCK && icfg.graph.edge_count() > 4 * BLOCK, "the corpus spans blocks");
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
        assert!(back.graph.node_weights().all(|n| n.text.is_empty()), "statement texts are the database's");
        assert_eq!(back.graph.node_weights().map(|n| (n.kind, n.lang, n.file, n.function, n.bytes, n.lines, n.parent, n.calls.clone())).collect::<Vec<_>>(),
            icfg.graph.node_weights().map(|n| (n.kind, n.lang, n.file, n.function, n.bytes, n.lines, n.parent, n.calls.clone())).collect::<Vec<_>>());
        for cut in [9, 100, bytes.len() / 2, bytes.len() - 1] {
            assert!(decode(&bytes[..cut]).is_err());
        }
        let mut longer = bytes.clone();
        longer.extend(b"tail");
        assert!(decode(&longer).is_err());
        // Damage inside a section (a count made huge; a byte of the last frame flipped) is
        // an error, not a panic.
        for at in [12 + SECTIONS * 16 + 20, bytes.len() - 6] {
            let mut bad = bytes.clone();
            bad[at] ^= 0x5a;
            let _ = decode(&bad);
        }
        let mut bad = bytes.clone();
        bad[12..20].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode(&bad).is_err());
        // From a file: the same ICFG; a truncated or missing file is an error.
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("icfg.bin");
        write(&icfg, &p).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), bytes);
        assert_eq!(encode(&read(&p).unwrap()), bytes);
        std::fs::write(&p, &bytes[..bytes.len() - 1]).unwrap();
        assert!(read(&p).is_err());
        assert!(read(&dir.path().join("missing")).is_err());
        assert!(read_parts(&p).is_err());
    }

    #[test]
    fn a_read_in_parts_gives_the_nodes_asked_for_what_a_whole_read_does() {
        let dir = tempfile::tempdir().unwrap();
        let many: String = (0..40).map(|i| format!("int m{i}(int x) {{ while (x > {i}) {{ if (x % 2) x = sq(x); else x--; }} return m{}(x); }}\n", (i + 1) % 40)).collect();
        std::fs::write(dir.path().join("a.c"), "int sq(int x) { return x * x; }\nint f(int n) { int s = 0; for (int i = 0; i < n; i++) s += sq(i); return s; }\n").unwrap();
        std::fs::write(dir.path().join("c.c"), format!("int sq(int x);\n{many}")).unwrap();
        std::fs::write(dir.path().join("d.c"), "int lone(int y) { if (y) return 1; return 0; }\n").unwrap();
        let icfg = crate::corpus::load(&[dir.path().to_path_buf()], &Default::default()).icfg;
        let p = dir.path().join("icfg.bin");
        write(&icfg, &p).unwrap();
        let whole = read(&p).unwrap();
        let (mut part, mut parts) = read_parts(&p).unwrap();
        assert_eq!(part.graph.node_count(), whole.graph.node_count());
        assert_eq!(part.graph.edge_count(), 0);
        assert!(part.graph.node_weights().all(|n| n.calls.is_empty()));
        assert_eq!(part.calls.len(), whole.calls.len());
        // Calls of `m7`: m6 makes one; each of its nodes gets its calls, no other node.
        let calls = calls_section(&p).unwrap();
        let found = parts.calls_named(&calls, &mut part, &|name| name == b"m7").unwrap();
        assert_eq!(found.iter().map(|&f| part.functions[f as usize].meta.name.as_str()).collect::<Vec<_>>(), ["m6"]);
        for i in part.graph.node_indices() {
            let asked = part.graph[i].function == found[0];
            assert_eq!(part.graph[i].calls, if asked { whole.graph[i].calls.clone() } else { Default::default() });
        }
        // Edges of one file, then of all: each node's as the whole read lists them.
        let d = part.files.iter().position(|f| f.path.ends_with("d.c")).unwrap() as u32;
        parts.read_edges();
        parts.add_edges(&mut part, [d]).unwrap();
        let in_d = |g: &Icfg, i: NodeIndex| g.graph[i].file == d;
        let listed = |g: &Icfg, i: NodeIndex| g.graph.edges(i).map(|e| (e.target(), *e.weight())).collect::<Vec<_>>();
        for i in part.graph.node_indices() {
            let expect = if in_d(&whole, i) { listed(&whole, i) } else { Vec::new() };
            assert_eq!(listed(&part, i), expect);
        }
        parts.add_edges(&mut part, [d]).unwrap();
        parts.add_all_edges(&mut part).unwrap();
        assert_eq!(part.graph.edge_count(), whole.graph.edge_count());
        for i in part.graph.node_indices() {
            assert_eq!(listed(&part, i), listed(&whole, i));
        }
        assert!(parts.calls_named(&calls, &mut part, &|_| true).unwrap().len() >= 41);
        assert!(parts.calls_named(&calls[1..], &mut part, &|_| true).is_err());
        assert_eq!(part.graph.node_weights().map(|n| n.calls.clone()).collect::<Vec<_>>(), whole.graph.node_weights().map(|n| n.calls.clone()).collect::<Vec<_>>());
    }
}
