//! `shapes.bin`: every function's [`Shape`] in one file, read whole and decoded per
//! function on demand.
//!
//! Layout (little-endian): `BRYSHP04`, function count `n` (u32), `n + 1` record offsets
//! (u64, from the start of the file), the profile table, then the records. The profile
//! table holds each function's unit [`super::Profile`] vector (18 f32) and then one bit a
//! slot (set: a live function): the structural retriever scans every function's profile,
//! and reading it from the records would touch the whole file on every one-shot search. A
//! record: flags (u8, bit 0 = recursive), node count (u16), callee count (u16), first and
//! last line (u32 each), then 44 bytes a node (role, parent u16, seven operator counts, five
//! subscript counts, call count, first and last line as u16 offsets from the function's
//! first line, offset from the function's ENTRY node u16, token sketch u128, three def-use
//! offsets u16), then 6 bytes a callee (node u16, function u32). Files of `BRYSHP03` (no
//! profile table) are still read; their profiles are made from the records.

use super::{Role, Shape, ShapeNode, Subscripts, FLOW_SLOTS};

const MAGIC: &[u8; 8] = b"BRYSHP04";
/// The layout before the profile table.
const MAGIC_V3: &[u8; 8] = b"BRYSHP03";
const NODE_BYTES: usize = 38 + 2 * FLOW_SLOTS;
/// Width of a profile vector.
pub const PROFILE: usize = 18;
/// A unit profile vector (all zero for a function with nothing counted).
pub type ProfileRow = [f32; PROFILE];

/// Bytes of the profile table of `n` slots.
fn table_bytes(n: usize) -> usize {
    n * PROFILE * 4 + n.div_ceil(8)
}

/// [`super::Profile::vector`] scaled to unit length (left at zero when it is zero).
pub fn unit_row(p: &super::Profile) -> ProfileRow {
    let mut v = p.vector();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
    v
}

/// The profile of a record `r` (its bytes alone); `None` for a removed slot or a damaged
/// record.
fn record_profile(r: &[u8]) -> Option<super::Profile> {
    if r.len() < 13 || r[0] & REMOVED != 0 {
        return None;
    }
    let (nodes, callees) = (u16_at(r, 1) as usize, u16_at(r, 3) as usize);
    if 13 + nodes * NODE_BYTES + callees * 6 != r.len() {
        return None;
    }
    let mut p = super::Profile { recursive: r[0] & 1 == 1, ..super::Profile::default() };
    let mut depth = Vec::with_capacity(nodes);
    for k in 0..nodes {
        let at = 13 + k * NODE_BYTES;
        let role = Role::from_u8(r[at])?;
        let parent = u16_at(r, at + 1);
        if parent != super::TOP && parent as usize >= k {
            return None;
        }
        let ops: &[u8; 7] = r[at + 3..at + 10].try_into().expect("7 bytes");
        let sub = Subscripts::from_bytes(r[at + 10..at + 15].try_into().expect("5 bytes"));
        p.count(&mut depth, role, parent, ops, sub, r[at + 15]);
    }
    Some(p)
}

/// Appends the profile rows of `records` (their bytes, in slot order) to `rows` and sets
/// the live bits of those from slot `first` on.
fn add_rows<'a>(records: impl Iterator<Item = &'a [u8]>, first: usize, rows: &mut Vec<u8>, live: &mut [u8]) {
    for (i, r) in records.enumerate() {
        let row = match record_profile(r) {
            Some(p) => {
                let f = first + i;
                live[f / 8] |= 1 << (f % 8);
                unit_row(&p)
            }
            None => [0.0; PROFILE],
        };
        for x in row {
            rows.extend(x.to_le_bytes());
        }
    }
}

pub fn encode(shapes: &[Shape]) -> Vec<u8> {
    let mut body = Vec::new();
    let mut ends = Vec::with_capacity(shapes.len());
    for s in shapes {
        record(s, &mut body);
        ends.push(body.len());
    }
    assemble(&ends, body)
}

/// `shapes.bin` written to a file as the shapes are made, a chunk at a time: the records go
/// to their place after the offsets, which are written last; neither the shapes nor their
/// records are held whole. The bytes are [`encode`]'s.
pub struct FileWriter {
    out: std::io::BufWriter<std::fs::File>,
    /// The same file, for the profile table (written in place, beside the records).
    table: std::fs::File,
    n: usize,
    head: usize,
    ends: Vec<u64>,
    written: usize,
    buf: Vec<u8>,
    rows: Vec<u8>,
    live: Vec<u8>,
}

impl FileWriter {
    /// A file at `path` for `n` shapes.
    pub fn create(path: &std::path::Path, n: usize) -> std::io::Result<FileWriter> {
        use std::io::{Seek, SeekFrom};
        let head = 8 + 4 + 8 * (n + 1) + table_bytes(n);
        let file = std::fs::File::create(path)?;
        let table = file.try_clone()?;
        let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
        out.seek(SeekFrom::Start(head as u64))?;
        Ok(FileWriter { out, table, n, head, ends: Vec::with_capacity(n), written: 0, buf: Vec::new(), rows: Vec::new(), live: vec![0; n.div_ceil(8)] })
    }

    /// Appends the next shapes.
    pub fn add(&mut self, shapes: &[Shape]) -> std::io::Result<()> {
        use std::io::Write;
        use std::os::unix::fs::FileExt;
        let first = self.ends.len();
        if first + shapes.len() > self.n {
            return Err(std::io::Error::other(format!("more than the {} shapes promised", self.n)));
        }
        self.rows.clear();
        for s in shapes {
            self.buf.clear();
            record(s, &mut self.buf);
            add_rows(std::iter::once(&self.buf[..]), self.ends.len(), &mut self.rows, &mut self.live);
            self.out.write_all(&self.buf)?;
            self.written += self.buf.len();
            self.ends.push((self.head + self.written) as u64);
        }
        self.table.write_all_at(&self.rows, (12 + 8 * (self.n + 1) + first * PROFILE * 4) as u64)
    }

    /// Writes the offsets; every one of the `n` shapes must have been added.
    pub fn finish(mut self) -> std::io::Result<()> {
        use std::io::{Seek, SeekFrom, Write};
        if self.ends.len() != self.n {
            return Err(std::io::Error::other(format!("{} shapes written of {}", self.ends.len(), self.n)));
        }
        self.out.seek(SeekFrom::Start(0))?;
        self.out.write_all(MAGIC)?;
        self.out.write_all(&(self.n as u32).to_le_bytes())?;
        self.out.write_all(&(self.head as u64).to_le_bytes())?;
        for e in &self.ends {
            self.out.write_all(&e.to_le_bytes())?;
        }
        self.out.seek(SeekFrom::Current((self.n * PROFILE * 4) as i64))?;
        self.out.write_all(&self.live)?;
        self.out.flush()
    }
}

/// Flag of a removed function's slot: no nodes, and [`Shapes::get`] gives `None`.
const REMOVED: u8 = 2;

/// `old` with the slots `removed` emptied, those of `replaced` rewritten and `added`
/// appended (slot `old.len() + i` holds `added[i]`).
pub fn update(old: &Shapes, removed: &[u32], replaced: &std::collections::HashMap<u32, Shape>, added: &[Shape]) -> Vec<u8> {
    let gone: std::collections::HashSet<u32> = removed.iter().copied().collect();
    let mut body = Vec::with_capacity(old.bytes.len());
    let mut ends = Vec::with_capacity(old.n + added.len());
    for f in 0..old.n as u32 {
        if gone.contains(&f) {
            body.push(REMOVED);
            body.extend([0u8; 12]);
        } else if let Some(s) = replaced.get(&f) {
            record(s, &mut body);
        } else {
            body.extend(&old.bytes[old.offset(f as usize)..old.offset(f as usize + 1)]);
        }
        ends.push(body.len());
    }
    for s in added {
        record(s, &mut body);
        ends.push(body.len());
    }
    assemble(&ends, body)
}

fn assemble(ends: &[usize], body: Vec<u8>) -> Vec<u8> {
    let n = ends.len();
    let head = 8 + 4 + 8 * (n + 1) + table_bytes(n);
    let mut out = Vec::with_capacity(head + body.len());
    out.extend(MAGIC);
    out.extend((n as u32).to_le_bytes());
    out.extend((head as u64).to_le_bytes());
    for &e in ends {
        out.extend(((head + e) as u64).to_le_bytes());
    }
    let mut live = vec![0u8; n.div_ceil(8)];
    let starts = std::iter::once(0).chain(ends.iter().copied());
    add_rows(starts.zip(ends).map(|(a, &e)| &body[a..e]), 0, &mut out, &mut live);
    out.extend(live);
    out.extend(body);
    out
}

fn record(s: &Shape, body: &mut Vec<u8>) {
    body.push(u8::from(s.recursive));
    body.extend((s.nodes.len() as u16).to_le_bytes());
    let callees: Vec<&(u16, u32)> = s.callees.iter().take(u16::MAX as usize).collect();
    body.extend((callees.len() as u16).to_le_bytes());
    body.extend(s.lines.0.to_le_bytes());
    body.extend(s.lines.1.to_le_bytes());
    for n in &s.nodes {
        body.push(n.role as u8);
        body.extend(n.parent.to_le_bytes());
        body.extend(n.ops);
        body.extend(n.sub.to_bytes());
        body.push(n.calls);
        let rel = |l: u32| (l.saturating_sub(s.lines.0)).min(u16::MAX as u32) as u16;
        body.extend(rel(n.lines.0).to_le_bytes());
        body.extend(rel(n.lines.1).to_le_bytes());
        body.extend(n.local.to_le_bytes());
        body.extend(n.sig.to_le_bytes());
        for f in n.flow {
            body.extend(f.to_le_bytes());
        }
    }
    for &&(k, f) in &callees {
        body.extend(k.to_le_bytes());
        body.extend(f.to_le_bytes());
    }
}

/// The whole file, in memory or mapped; [`Shapes::get`] decodes one function.
pub struct Shapes {
    bytes: crate::mapped::Bytes,
    n: usize,
    /// Where the profile table starts (`None` in a `BRYSHP03` file, which has none).
    table: Option<usize>,
    /// Records an update replaced or added over this file's ([`Shapes::with_patch`]).
    patch: Option<Box<Patch>>,
}

/// Records in place of a base file's (or past its last slot), by slot.
struct Patch {
    /// Slots of the patched file.
    n: usize,
    /// The slots held, ascending; `records` holds their records in this order.
    ids: Vec<u32>,
    records: Shapes,
}

const PATCH_MAGIC: &[u8; 8] = b"BRYSHPP1";

fn parse_patch(b: &[u8]) -> Result<Patch, String> {
    let bad = || "shapes patch: damaged".to_string();
    if b.len() < 24 || &b[..8] != PATCH_MAGIC {
        return Err(bad());
    }
    let n = u64::from_le_bytes(b[8..16].try_into().expect("8 bytes")) as usize;
    let k = u64::from_le_bytes(b[16..24].try_into().expect("8 bytes")) as usize;
    let ids_end = k.checked_mul(4).and_then(|x| x.checked_add(24)).filter(|&e| e <= b.len()).ok_or_else(bad)?;
    let ids: Vec<u32> = b[24..ids_end].chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let records = Shapes::from_bytes(b[ids_end..].to_vec())?;
    if records.n != k || !ids.windows(2).all(|w| w[0] < w[1]) || ids.last().is_some_and(|&i| i as usize >= n) {
        return Err(bad());
    }
    Ok(Patch { n, ids, records })
}

/// The records [`patch_bytes`] wrote into `b`, by slot.
pub fn patch_records(b: &[u8]) -> Result<std::collections::BTreeMap<u32, Vec<u8>>, String> {
    let p = parse_patch(b)?;
    Ok(p.ids.iter().enumerate().map(|(i, &id)| (id, p.records.bytes[p.records.offset(i)..p.records.offset(i + 1)].to_vec())).collect())
}

/// The record of `s` as a shapes file holds it ([`Shapes::with_patch`] takes these).
pub fn record_bytes(s: &Shape) -> Vec<u8> {
    let mut b = Vec::new();
    record(s, &mut b);
    b
}

/// The record of a removed function's slot.
pub fn removed_record() -> Vec<u8> {
    let mut b = vec![REMOVED];
    b.extend([0u8; 12]);
    b
}

/// A patch of `n` slots holding `records` (slot → record bytes) over a base file.
pub fn patch_bytes(n: usize, records: &std::collections::BTreeMap<u32, Vec<u8>>) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend(PATCH_MAGIC);
    out.extend((n as u64).to_le_bytes());
    out.extend((records.len() as u64).to_le_bytes());
    for id in records.keys() {
        out.extend(id.to_le_bytes());
    }
    let mut body = Vec::new();
    let mut ends = Vec::with_capacity(records.len());
    for r in records.values() {
        body.extend(r);
        ends.push(body.len());
    }
    out.extend(assemble(&ends, body));
    out
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl Shapes {
    /// Checks the header and every record's bounds.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Shapes, String> {
        let s = Shapes::with_header(bytes.into())?;
        for i in 0..s.n {
            s.record(i).ok_or_else(|| format!("shapes file: record {i} is damaged"))?;
        }
        Ok(s)
    }

    /// Checks the header and the offsets alone, not the records (which would read the
    /// whole file): [`Shapes::get`] checks a record when it decodes it.
    pub fn mapped(bytes: crate::mapped::Bytes) -> Result<Shapes, String> {
        Shapes::with_header(bytes)
    }

    fn with_header(bytes: crate::mapped::Bytes) -> Result<Shapes, String> {
        let v4 = bytes.len() >= 12 && &bytes[..8] == MAGIC;
        if !v4 && (bytes.len() < 12 || &bytes[..8] != MAGIC_V3) {
            return Err("not a shapes file".into());
        }
        let n = u32_at(&bytes, 8) as usize;
        let table = v4.then_some(12 + 8 * (n + 1));
        let head = 12 + 8 * (n + 1) + if v4 { table_bytes(n) } else { 0 };
        if bytes.len() < head {
            return Err("shapes file truncated".into());
        }
        let s = Shapes { bytes, n, table, patch: None };
        let mut last = head;
        for i in 0..=n {
            let o = s.offset(i);
            if o < last || o > s.bytes.len() || (i < n && s.bytes.len() - o < 13) {
                return Err(format!("shapes file: record {i} out of bounds"));
            }
            last = o;
        }
        if last != s.bytes.len() {
            return Err("shapes file: trailing bytes".into());
        }
        Ok(s)
    }

    /// Where record `i` starts, with its node and callee counts, once its size and nodes
    /// are as [`record`] writes them (a removed slot's too); `None` for a damaged one.
    fn record(&self, i: usize) -> Option<(usize, usize, usize)> {
        let b = &self.bytes;
        let (a, end) = (self.offset(i), self.offset(i + 1));
        if end < a || end - a < 13 {
            return None;
        }
        let (nodes, callees) = (u16_at(b, a + 1) as usize, u16_at(b, a + 3) as usize);
        if 13 + nodes * NODE_BYTES + callees * 6 != end - a {
            return None;
        }
        for k in 0..nodes {
            let at = a + 13 + k * NODE_BYTES;
            let parent = u16_at(b, at + 1);
            if Role::from_u8(b[at]).is_none() || (parent != super::TOP && parent as usize >= k) {
                return None;
            }
        }
        Some((a, nodes, callees))
    }

    pub fn len(&self) -> usize {
        self.patch.as_ref().map_or(self.n, |p| p.n)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// This file with the records of [`patch_bytes`]'s `b` in place of its own; every
    /// record of the patch is checked.
    pub fn with_patch(mut self, b: &[u8]) -> Result<Shapes, String> {
        let p = parse_patch(b)?;
        if p.n < self.n {
            return Err("shapes patch: fewer slots than its base".into());
        }
        self.patch = Some(Box::new(p));
        Ok(self)
    }

    /// Where slot `f` is read: in the patch (its place there) or in this file's own
    /// records; `None` for a slot of neither.
    fn place(&self, f: u32) -> Option<(&Shapes, u32)> {
        if let Some(p) = &self.patch {
            if let Ok(i) = p.ids.binary_search(&f) {
                return Some((&p.records, i as u32));
            }
        }
        ((f as usize) < self.n).then_some((self, f))
    }

    fn offset(&self, i: usize) -> usize {
        u64::from_le_bytes(self.bytes[12 + 8 * i..20 + 8 * i].try_into().expect("8 bytes")) as usize
    }

    /// Whether slot `f` holds a function (in range and not removed).
    pub fn is_live(&self, f: u32) -> bool {
        self.place(f).is_some_and(|(s, f)| s.bytes[s.offset(f as usize)] & REMOVED == 0)
    }

    /// [`Shape::profile`] of function `f`, read off its record without decoding it.
    pub fn profile(&self, f: u32) -> Option<super::Profile> {
        let (s, f) = self.place(f)?;
        if !std::ptr::eq(s, self) {
            return s.profile(f);
        }
        if !self.is_live(f) {
            return None;
        }
        let (a, _, _) = self.record(f as usize)?;
        record_profile(&self.bytes[a..self.offset(f as usize + 1)])
    }

    /// Every slot's unit profile vector and the live slots as bits (set: a live function
    /// whose record reads), as [`unit_row`] of [`Shapes::profile`] gives them. Read off the
    /// profile table where the file has one (and off the patch's records for the slots it
    /// holds), so that the records are not touched.
    pub fn profile_rows(&self) -> (Vec<ProfileRow>, Vec<u8>) {
        use rayon::prelude::*;
        let n = self.len();
        let Some(at) = self.table else {
            let made: Vec<Option<ProfileRow>> = (0..n as u32).into_par_iter().map(|f| self.profile(f).map(|p| unit_row(&p))).collect();
            let mut live = vec![0u8; n.div_ceil(8)];
            for (f, p) in made.iter().enumerate() {
                if p.is_some() {
                    live[f / 8] |= 1 << (f % 8);
                }
            }
            return (made.into_iter().map(|p| p.unwrap_or([0.0; PROFILE])).collect(), live);
        };
        let b = &self.bytes[at..at + table_bytes(self.n)];
        let mut rows: Vec<ProfileRow> = b[..self.n * PROFILE * 4]
            .par_chunks_exact(PROFILE * 4)
            .map(|c| std::array::from_fn(|i| f32::from_le_bytes(c[4 * i..4 * i + 4].try_into().expect("4 bytes"))))
            .collect();
        let mut live = b[self.n * PROFILE * 4..].to_vec();
        rows.resize(n, [0.0; PROFILE]);
        live.resize(n.div_ceil(8), 0);
        if let Some(p) = &self.patch {
            let (prow, plive) = p.records.profile_rows();
            for (i, &f) in p.ids.iter().enumerate() {
                let f = f as usize;
                rows[f] = prow[i];
                let bit = 1 << (f % 8);
                live[f / 8] = if plive[i / 8] >> (i % 8) & 1 == 1 { live[f / 8] | bit } else { live[f / 8] & !bit };
            }
        }
        (rows, live)
    }

    /// Shape of function `f`; `None` past the end, for a removed function, or for a
    /// damaged record of a mapped file (logged).
    pub fn get(&self, f: u32) -> Option<Shape> {
        let (s, f) = self.place(f)?;
        if !std::ptr::eq(s, self) {
            return s.get(f);
        }
        if !self.is_live(f) {
            return None;
        }
        let Some((a, nodes, callees)) = self.record(f as usize) else {
            log::warn!("shapes.bin: the record of function {f} is damaged; it is left out (`beryl verify` checks the index)");
            return None;
        };
        let b = &self.bytes;
        let recursive = b[a] & 1 == 1;
        let lines = (u32_at(b, a + 5), u32_at(b, a + 9));
        let mut s = Shape { nodes: Vec::with_capacity(nodes), callees: Vec::with_capacity(callees), recursive, lines };
        for k in 0..nodes {
            let at = a + 13 + k * NODE_BYTES;
            let mut ops = [0u8; 7];
            ops.copy_from_slice(&b[at + 3..at + 10]);
            let mut sub = [0u8; 5];
            sub.copy_from_slice(&b[at + 10..at + 15]);
            s.nodes.push(ShapeNode {
                role: Role::from_u8(b[at]).unwrap_or(Role::Statement),
                parent: u16_at(b, at + 1),
                ops,
                sub: Subscripts::from_bytes(sub),
                calls: b[at + 15],
                lines: (lines.0 + u16_at(b, at + 16) as u32, lines.0 + u16_at(b, at + 18) as u32),
                local: u16_at(b, at + 20),
                sig: u128::from_le_bytes(b[at + 22..at + 38].try_into().expect("16 bytes")),
                flow: std::array::from_fn(|i| u16_at(b, at + 38 + 2 * i)),
            });
        }
        let c0 = a + 13 + nodes * NODE_BYTES;
        for i in 0..callees {
            s.callees.push((u16_at(b, c0 + 6 * i), u32_at(b, c0 + 6 * i + 2)));
        }
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shapes of the functions of `src`, read as one C file.
    fn shapes_of(src: &str) -> Vec<Shape> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.c"), src).unwrap();
        let c = crate::corpus::load(&[dir.path().to_path_buf()], &crate::corpus::WalkOptions::default());
        Shape::all(&c.icfg)
    }

    /// `b` (a `BRYSHP04` file) in the layout before the profile table.
    fn without_table(b: &[u8]) -> Vec<u8> {
        let n = u32_at(b, 8) as usize;
        let cut = table_bytes(n) as u64;
        let mut out = MAGIC_V3.to_vec();
        out.extend(&b[8..12]);
        for i in 0..=n {
            out.extend((u64::from_le_bytes(b[12 + 8 * i..20 + 8 * i].try_into().unwrap()) - cut).to_le_bytes());
        }
        out.extend(&b[12 + 8 * (n + 1) + cut as usize..]);
        out
    }

    #[test]
    fn a_file_written_in_chunks_holds_what_encode_makes() {
        let shapes = shapes_of("int f(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; return g(s); }\nint g(int x) { return x; }\nint h(void) { return f(0, 0) + g(1); }\n");
        assert_eq!(shapes.len(), 3);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shapes.bin");
        let mut w = FileWriter::create(&path, 3).unwrap();
        w.add(&shapes[..1]).unwrap();
        w.add(&[]).unwrap();
        w.add(&shapes[1..]).unwrap();
        w.finish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), encode(&shapes));
        // Fewer shapes than promised is an error, not a file with offsets missing.
        let mut short = FileWriter::create(&dir.path().join("short.bin"), 3).unwrap();
        short.add(&shapes[..2]).unwrap();
        assert!(short.finish().is_err());
    }

    #[test]
    fn a_patch_reads_as_the_file_rewritten_with_its_change() {
        let shapes = shapes_of("int f(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; return g(s); }\nint g(int x) { return x; }\nint h(void) { return f(0, 0) + g(1); }\n");
        let more = shapes_of("int k(int n) { while (n > 1) n = n % 2 ? 3 * n + 1 : n / 2; return n; }\n");
        let base = Shapes::from_bytes(encode(&shapes)).unwrap();
        let replaced: std::collections::HashMap<u32, Shape> = [(2, more[0].clone())].into();
        let rewritten = Shapes::from_bytes(update(&base, &[1], &replaced, &[shapes[0].clone()])).unwrap();
        let records = [(1, removed_record()), (2, record_bytes(&more[0])), (3, record_bytes(&shapes[0]))].into();
        let b = patch_bytes(4, &records);
        assert_eq!(patch_records(&b).unwrap(), records);
        let patched = Shapes::from_bytes(encode(&shapes)).unwrap().with_patch(&b).unwrap();
        assert_eq!(patched.len(), 4);
        for f in 0..5 {
            assert_eq!(patched.get(f), rewritten.get(f), "slot {f}");
            assert_eq!(patched.profile(f), rewritten.profile(f), "slot {f}");
            assert_eq!(patched.is_live(f), rewritten.is_live(f), "slot {f}");
        }
        // The profile table of the patched file reads as the rewritten file's, and as the
        // one made from the records of a file without a table.
        let rows = rewritten.profile_rows();
        assert_eq!(patched.profile_rows(), rows);
        assert_eq!(rows.1, vec![0b1101]);
        assert_eq!(rows.0[1], [0.0; PROFILE]);
        assert_eq!(rows.0[2], unit_row(&more[0].profile()));
        let v3 = Shapes::from_bytes(without_table(&encode(&shapes))).unwrap().with_patch(&b).unwrap();
        assert_eq!(v3.profile_rows(), rows);
        assert!(Shapes::from_bytes(encode(&shapes)).unwrap().with_patch(&b[..b.len() - 1]).is_err());
    }

    #[test]
    fn profiles_read_off_records_are_the_shapes_profiles() {
        let shapes = shapes_of("int f(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) { for (int j = 0; j < i; j++) { if (a[j] > a[i]) s += a[i] * a[j]; } } return g(s); }\nint g(int x) { return x > 1 ? g(x - 1) : 1; }\nvoid h(void) { }\n");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shapes.bin");
        std::fs::write(&path, encode(&shapes)).unwrap();
        let mapped = Shapes::mapped(crate::mapped::Bytes::map(&path).unwrap()).unwrap();
        for (f, s) in shapes.iter().enumerate() {
            assert_eq!(mapped.profile(f as u32), Some(s.profile()), "function {f}");
            assert_eq!(mapped.get(f as u32).as_ref(), Some(s));
        }
        assert_eq!(shapes[0].profile().depth, 2);
        assert_eq!(mapped.profile(3), None);
        // The table holds the profiles the records give, and so does a file without one.
        let (rows, live) = mapped.profile_rows();
        assert_eq!(live, vec![0b111]);
        for (f, s) in shapes.iter().enumerate() {
            assert_eq!(rows[f], unit_row(&s.profile()), "function {f}");
        }
        assert!(rows[0].iter().map(|x| x * x).sum::<f32>() > 0.99);
        let old = Shapes::from_bytes(without_table(&encode(&shapes))).unwrap();
        assert_eq!(old.profile_rows(), (rows, live));
        assert_eq!(old.get(0).as_ref(), Some(&shapes[0]));
        // A mapped file is checked a record at a time: a damaged record reads as none.
        let mut bad = encode(&shapes);
        let at = u64::from_le_bytes(bad[12..20].try_into().unwrap()) as usize;
        bad[at + 13] = 0xee;
        std::fs::write(&path, &bad).unwrap();
        let mapped = Shapes::mapped(crate::mapped::Bytes::map(&path).unwrap()).unwrap();
        assert_eq!((mapped.get(0), mapped.profile(0)), (None, None));
        assert_eq!(mapped.get(1).as_ref(), Some(&shapes[1]));
        assert!(Shapes::from_bytes(bad).is_err());
    }

    #[test]
    fn round_trip_and_damage() {
        let shapes = shapes_of("int f(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) { if (a[i] > 0) s += a[i]; } return g(s); }\nint g(int x) { return x; }\n");
        assert_eq!(shapes.len(), 2);
        let f = &shapes[0];
        let roles: Vec<Role> = f.nodes.iter().map(|n| n.role).collect();
        // s = 0; i = 0; i < n; the if inside the loop, then the loop's update i++ (it runs
        // after the body); the return at the top.
        assert_eq!(roles, [Role::Statement, Role::Statement, Role::Loop, Role::Branch, Role::Statement, Role::Statement, Role::Return]);
        assert_eq!((f.nodes[3].parent, f.nodes[4].parent, f.nodes[5].parent), (2, 3, 2));
        assert_eq!(f.callees, vec![(6, 1)]);
        // `s += a[i]` is sketched as `s = s + a[i]`, `i++` as `i = i + 1`; the loop head by its test.
        assert_eq!(f.nodes[4].sig, super::super::tokens::sketch("total = total + xs[k]", false));
        assert_eq!(f.nodes[5].sig, super::super::tokens::sketch("k = k + 1", false));
        assert!(f.nodes[2].sig != 0 && f.nodes[0].sig != f.nodes[5].sig);
        // Def-use: the test reads i (written by `int i = 0`, 1 back); `s += a[i]` reads
        // the i the loop head hands its body (the body writes i) and s; the return reads
        // the s that `s += a[i]` wrote, 2 back.
        assert_eq!(f.nodes[2].flow, [1, 0, 0]);
        assert_eq!(f.nodes[4].flow, [2, 4, 0]);
        assert_eq!(f.nodes[6].flow, [2, 0, 0]);
        let bytes = encode(&shapes);
        let back = Shapes::from_bytes(bytes.clone()).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back.get(0).as_ref(), Some(f));
        assert_eq!(back.get(2), None);
        assert!(Shapes::from_bytes(bytes[..bytes.len() - 3].to_vec()).is_err());
        assert!(Shapes::from_bytes(b"garbage".to_vec()).is_err());
        let mut bad = bytes.clone();
        bad[12] = 0xff;
        assert!(Shapes::from_bytes(bad).is_err());
    }
}
