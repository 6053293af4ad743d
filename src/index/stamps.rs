//! What a file looked like when its content was hashed: size, times and inode. An update
//! reads again only the files whose look changed, as git's index does, so finding the few
//! edited files of a large tree costs a `stat` per file, not a read. The change time
//! cannot be set by a user (`touch -d`, an archive restoring times), so a file rewritten
//! with its old size and modification time still shows. A file changed shortly before the
//! hashing began gets no stamp: file systems keep times in ticks, and a later write in the
//! same tick would look the same; such a file is read each time until it settles.

use super::sha256_hex;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long before the hashing began a file must have last changed for its times to be
/// trusted: coarser than any file system's tick (FAT's is 2 s).
const SETTLE: Duration = Duration::from_secs(3);

/// A file's look when its content hashed to `hash`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub ino: u64,
    pub hash: String,
}

/// (size, modification time, change time, inode) of `path`.
#[cfg(unix)]
fn look(path: &Path) -> Option<(u64, i64, i64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    let ns = |s: i64, n: i64| s.saturating_mul(1_000_000_000).saturating_add(n);
    Some((m.len(), ns(m.mtime(), m.mtime_nsec()), ns(m.ctime(), m.ctime_nsec()), m.ino()))
}

/// Without change times and inodes a look proves nothing: every file is read.
#[cfg(not(unix))]
fn look(_: &Path) -> Option<(u64, i64, i64, u64)> {
    None
}

impl Stamp {
    /// The stamp of `path`, whose content hashed to `hash` when read at or after `began`;
    /// none if the file changed too close to `began` (or cannot be looked at).
    pub fn observe(path: &Path, hash: &str, began: SystemTime) -> Option<Stamp> {
        if hash.is_empty() {
            return None;
        }
        let (size, mtime_ns, ctime_ns, ino) = look(path)?;
        let limit = i64::try_from(began.checked_sub(SETTLE)?.duration_since(UNIX_EPOCH).ok()?.as_nanos()).ok()?;
        // The look is taken after the read: a last change before `limit` came before the
        // read too, so the hash is of the content the look describes.
        (ctime_ns < limit && mtime_ns < limit).then(|| Stamp { size, mtime_ns, ctime_ns, ino, hash: hash.to_string() })
    }

    /// Whether `path` still looks as stamped.
    fn holds(&self, path: &Path) -> bool {
        look(path).is_some_and(|l| l == (self.size, self.mtime_ns, self.ctime_ns, self.ino))
    }
}

/// Content hashes of `paths` (over the text as a build reads it; empty for a file that
/// cannot be read), taken from `known` stamps where a file still looks as stamped.
pub struct Hashed {
    pub hashes: Vec<String>,
    /// The stamps to keep: those that held and those of the files read that had settled.
    pub stamps: Vec<(String, Stamp)>,
    /// Files whose content was read.
    pub read: usize,
}

pub fn hash_files(paths: &[PathBuf], known: &HashMap<String, Stamp>) -> Hashed {
    let began = SystemTime::now();
    let each: Vec<(String, Option<Stamp>, bool)> = paths
        .par_iter()
        .map(|p| {
            if let Some(s) = known.get(p.to_string_lossy().as_ref()).filter(|s| s.holds(p)) {
                return (s.hash.clone(), Some(s.clone()), false);
            }
            let hash = std::fs::read(p).map(|b| sha256_hex(String::from_utf8_lossy(&b).as_bytes())).unwrap_or_default();
            let stamp = Stamp::observe(p, &hash, began);
            (hash, stamp, true)
        })
        .collect();
    let read = each.iter().filter(|e| e.2).count();
    let mut stamps = Vec::new();
    let mut hashes = Vec::with_capacity(each.len());
    for (p, (hash, stamp, _)) in paths.iter().zip(each) {
        if let Some(s) = stamp {
            stamps.push((p.to_string_lossy().into_owned(), s));
        }
        hashes.push(hash);
    }
    Hashed { hashes, stamps, read }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_settled_file_is_not_read_again_until_it_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a.c"), tmp.path().join("b.c"));
        std::fs::write(&a, "int a;\n").unwrap();
        std::fs::write(&b, "int b;\n").unwrap();
        let paths = vec![a.clone(), b.clone()];
        // Just written: read, and not stamped.
        let first = hash_files(&paths, &HashMap::new());
        assert_eq!((first.read, first.stamps.len()), (2, 0));
        std::thread::sleep(SETTLE + Duration::from_millis(200));
        let second = hash_files(&paths, &HashMap::new());
        assert_eq!((second.read, second.stamps.len()), (2, 2));
        assert_eq!(second.hashes, first.hashes);
        let known: HashMap<String, Stamp> = second.stamps.into_iter().collect();
        let third = hash_files(&paths, &known);
        assert_eq!((third.read, third.hashes.clone()), (0, first.hashes.clone()));
        // Rewritten with the same size and its old modification time: the change time
        // still tells.
        let old = std::fs::metadata(&a).unwrap().modified().unwrap();
        std::fs::write(&a, "int c;\n").unwrap();
        std::fs::File::options().write(true).open(&a).unwrap().set_modified(old).unwrap();
        let fourth = hash_files(&paths, &known);
        assert_eq!(fourth.read, 1);
        assert_ne!(fourth.hashes[0], first.hashes[0]);
        assert_eq!(fourth.hashes[1], first.hashes[1]);
        // The changed file has not settled: no stamp; the other keeps its own.
        assert_eq!(fourth.stamps.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(), vec![b.to_string_lossy()]);
        // Gone: nothing to read, an empty hash.
        std::fs::remove_file(&b).unwrap();
        let fifth = hash_files(&paths, &known);
        assert!(fifth.hashes[1].is_empty());
    }
}
