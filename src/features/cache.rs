//! The persistent text-vector cache: an append-only file of fixed-size records, read into a
//! hash map at open. A record is written whole with its checksum, so a crash leaves at
//! worst a torn or bad tail, which is cut off at the next open (with a warning). A file
//! for another encoder or dimension, or one that is not a cache at all, is started afresh.
//!
//! Layout: `MAGIC` (8 bytes), encoder hash (32), dimension (u32 LE); then records of
//! key (16 bytes) · vector (dim × f32 LE) · FNV-1a 64 of key and vector (u64 LE).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"BERYLTV1";
const HEADER: usize = 8 + 32 + 4;
pub type Key = [u8; 16];

pub struct TextCache {
    path: PathBuf,
    file: File,
    dim: usize,
    index: HashMap<Key, usize>,
    /// Vectors back to back, `dim` floats each.
    data: Vec<f32>,
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

impl TextCache {
    /// Opens or creates the cache at `path` for vectors of `dim` floats from the encoder
    /// whose hash is `encoder`. Only I/O failures (unwritable folder, ...) are errors.
    pub fn open(path: &Path, encoder: &[u8; 32], dim: usize) -> io::Result<TextCache> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)?;
        let mut header = Vec::with_capacity(HEADER);
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(encoder);
        header.extend_from_slice(&(dim as u32).to_le_bytes());

        let len = file.metadata()?.len();
        let mut found = vec![0u8; HEADER];
        let header_ok = len >= HEADER as u64 && {
            file.read_exact(&mut found)?;
            found == header
        };
        let mut cache = TextCache { path: path.into(), file, dim, index: HashMap::new(), data: Vec::new() };
        if !header_ok {
            if len > 0 {
                log::warn!(
                    "text cache {}: not a cache of this encoder (or damaged header); starting it afresh",
                    path.display()
                );
            }
            cache.file.set_len(0)?;
            cache.file.seek(SeekFrom::Start(0))?;
            cache.file.write_all(&header)?;
            cache.file.flush()?;
            return Ok(cache);
        }
        let good = cache.load_records(len)?;
        if good < len {
            log::warn!(
                "text cache {}: {} bytes of torn or damaged records at the end dropped (kept {} vectors)",
                path.display(),
                len - good,
                cache.len()
            );
            cache.file.set_len(good)?;
        }
        cache.file.seek(SeekFrom::End(0))?;
        Ok(cache)
    }

    fn record_len(&self) -> usize {
        16 + self.dim * 4 + 8
    }

    /// Reads records after the header; returns the byte length of the valid prefix.
    fn load_records(&mut self, len: u64) -> io::Result<u64> {
        let rl = self.record_len();
        let mut r = BufReader::with_capacity(1 << 20, &self.file);
        r.seek(SeekFrom::Start(HEADER as u64))?;
        let mut rec = vec![0u8; rl];
        let mut good = HEADER as u64;
        while good + rl as u64 <= len {
            r.read_exact(&mut rec)?;
            let (body, sum) = rec.split_at(rl - 8);
            if fnv1a(body) != u64::from_le_bytes(sum.try_into().unwrap_or_default()) {
                break; // damaged: nothing after it can be trusted to be aligned
            }
            let mut key = [0u8; 16];
            key.copy_from_slice(&body[..16]);
            let at = self.data.len();
            self.data.extend(body[16..].chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])));
            self.index.insert(key, at);
            good += rl as u64;
        }
        Ok(good)
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn get(&self, key: &Key) -> Option<&[f32]> {
        self.index.get(key).map(|&at| &self.data[at..at + self.dim])
    }

    /// Appends new vectors (skipping keys already present) in one write.
    /// Appends `items` to the cache at `path` without reading it (as [`TextCache::open`]
    /// would, whole): for a few vectors computed by a process that never opened the cache.
    /// A file of another encoder is left alone; a missing one is started.
    pub fn append_unread<'v>(path: &Path, encoder: &[u8; 32], dim: usize, items: impl IntoIterator<Item = (Key, &'v [f32])>) -> io::Result<()> {
        let mut header = Vec::with_capacity(HEADER);
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(encoder);
        header.extend_from_slice(&(dim as u32).to_le_bytes());
        let mut f = OpenOptions::new().read(true).append(true).create(true).open(path)?;
        let len = f.metadata()?.len();
        if len == 0 {
            f.write_all(&header)?;
        } else {
            let mut found = vec![0u8; HEADER];
            if len < HEADER as u64 || f.read_exact(&mut found).is_err() || found != header {
                return Ok(());
            }
        }
        let mut buf = Vec::new();
        for (key, v) in items {
            if v.len() != dim {
                continue;
            }
            let start = buf.len();
            buf.extend_from_slice(&key);
            for x in v {
                buf.extend_from_slice(&x.to_le_bytes());
            }
            let sum = fnv1a(&buf[start..]);
            buf.extend_from_slice(&sum.to_le_bytes());
        }
        f.write_all(&buf)?;
        f.flush()
    }

    pub fn insert_all<'v>(&mut self, items: impl IntoIterator<Item = (Key, &'v [f32])>) -> io::Result<()> {
        let mut buf = Vec::new();
        let mut rec = Vec::with_capacity(self.record_len());
        for (key, v) in items {
            if v.len() != self.dim || self.index.contains_key(&key) {
                continue;
            }
            rec.clear();
            rec.extend_from_slice(&key);
            for x in v {
                rec.extend_from_slice(&x.to_le_bytes());
            }
            let sum = fnv1a(&rec);
            rec.extend_from_slice(&sum.to_le_bytes());
            buf.extend_from_slice(&rec);
            let at = self.data.len();
            self.data.extend_from_slice(v);
            self.index.insert(key, at);
        }
        if !buf.is_empty() {
            // O_APPEND: each write lands at the end even when another process (a test, a
            // second `beryl`) appended since we opened, so records never overwrite others.
            let mut f = OpenOptions::new().append(true).open(&self.path)?;
            f.write_all(&buf)?;
            f.flush()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u8) -> Key {
        [i; 16]
    }

    #[test]
    fn round_trip_and_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.bin");
        let enc = [7u8; 32];
        {
            let mut c = TextCache::open(&p, &enc, 3).unwrap();
            c.insert_all([(key(1), &[1.0, 2.0, 3.0][..]), (key(2), &[4.0, 5.0, 6.0][..])]).unwrap();
        }
        let full = std::fs::metadata(&p).unwrap().len();
        // Tear the last record in half.
        let f = OpenOptions::new().write(true).open(&p).unwrap();
        f.set_len(full - 10).unwrap();
        drop(f);
        let mut c = TextCache::open(&p, &enc, 3).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c.get(&key(1)), Some(&[1.0, 2.0, 3.0][..]));
        assert_eq!(c.get(&key(2)), None);
        // Appending after the cut keeps records aligned.
        c.insert_all([(key(3), &[7.0, 8.0, 9.0][..])]).unwrap();
        drop(c);
        let c = TextCache::open(&p, &enc, 3).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c.get(&key(3)), Some(&[7.0, 8.0, 9.0][..]));
    }

    #[test]
    fn other_encoder_starts_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.bin");
        let mut c = TextCache::open(&p, &[1u8; 32], 2).unwrap();
        c.insert_all([(key(1), &[1.0, 2.0][..])]).unwrap();
        drop(c);
        assert_eq!(TextCache::open(&p, &[2u8; 32], 2).unwrap().len(), 0);
        assert_eq!(TextCache::open(&p, &[2u8; 32], 2).unwrap().len(), 0);
    }
}
