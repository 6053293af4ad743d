//! Which files of a generation were found whole, and what `stat` said of each then.
//!
//! Reading every byte of a large index to check its sums would cost more than opening it
//! (2 GB for the whole Linux tree), so a file is checked against its sum once: when the
//! build writes it, or when a reader first finds it changed. `verified.json` records, for
//! each file checked, its sum with its size, inode, device and modification and change
//! times. Any write to the file (a copy, a restore, a stray editor) moves its change time,
//! which the file's owner cannot set back, so the next open checks its bytes again.
//! `beryl verify` always reads every byte.
//!
//! The record is a hint and never a source of trust by itself: a missing, unreadable or
//! forged one means "check everything", and it is written only by replacing it whole.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The record's name in a generation folder.
pub const NAME: &str = "verified.json";

/// What `stat` says of a file, enough to notice that it was written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Seen {
    sum: String,
    len: u64,
    ino: u64,
    dev: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Seen {
    fn of(path: &Path, sum: &str) -> Option<Seen> {
        let m = std::fs::metadata(path).ok()?;
        Some(Seen {
            sum: sum.to_string(),
            len: m.len(),
            ino: m.ino(),
            dev: m.dev(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }
}

/// The files of one generation found whole, loaded from and saved to its record.
pub struct Verified {
    gen: PathBuf,
    seen: BTreeMap<String, Seen>,
    changed: bool,
    /// Read every file, whatever the record says.
    every: bool,
}

impl Verified {
    /// The record of `gen`; empty when it is missing or cannot be read.
    pub fn load(gen: &Path) -> Verified {
        let seen = std::fs::read(gen.join(NAME)).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
        Verified { gen: gen.to_path_buf(), seen, changed: false, every: false }
    }

    /// An empty record for `gen` (a build, which notes what it writes as it sums it).
    pub fn empty(gen: &Path) -> Verified {
        Verified { gen: gen.to_path_buf(), seen: BTreeMap::new(), changed: false, every: false }
    }

    /// The record of `gen`, with every file to be read again (`beryl verify`): a file that
    /// no longer has its sum leaves the record.
    pub fn every_byte(gen: &Path) -> Verified {
        Verified { every: true, ..Verified::load(gen) }
    }

    /// Whether `name` was found to have sum `sum` and has not been written since.
    pub fn holds(&self, name: &str, sum: &str) -> bool {
        !self.every
            && self.seen.get(name).is_some_and(|s| s.sum == sum && Seen::of(&self.gen.join(name), sum).as_ref() == Some(s))
    }

    /// Checks `name` against `sum` unless [`Verified::holds`] says it was, reading every
    /// byte; a file that matches is recorded (`stat` taken before and after the read must
    /// agree, so that a write during the read is not taken for the checked bytes).
    pub fn check(&mut self, name: &str, sum: &str) -> Result<(), String> {
        if self.holds(name, sum) {
            return Ok(());
        }
        let p = self.gen.join(name);
        let before = Seen::of(&p, sum);
        let got = super::checksum_file(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        if got != sum {
            if self.seen.remove(name).is_some() {
                self.changed = true;
            }
            return Err(format!("{} differs from the checksum meta.json records", p.display()));
        }
        if before.is_some() && Seen::of(&p, sum) == before {
            self.seen.insert(name.to_string(), before.expect("checked"));
            self.changed = true;
        }
        Ok(())
    }

    /// Records `name` as having sum `sum` without reading it: for a file this process has
    /// just written and summed.
    pub fn note(&mut self, name: &str, sum: &str) {
        if let Some(s) = Seen::of(&self.gen.join(name), sum) {
            self.seen.insert(name.to_string(), s);
            self.changed = true;
        }
    }

    /// Follows a change of `name`'s change time that did not touch its bytes: a file linked
    /// into a later generation, whose older name was then removed (both move the change
    /// time of the one file). Only its change time may differ from what was recorded:
    /// size, inode, device and modification time must be as they were.
    pub fn relinked(&mut self, name: &str) {
        let Some(old) = self.seen.get(name) else { return };
        if let Some(now) = Seen::of(&self.gen.join(name), &old.sum) {
            if now != *old && (Seen { ctime: old.ctime, ..now.clone() }) == *old {
                self.seen.insert(name.to_string(), now);
                self.changed = true;
            }
        }
    }

    /// Writes the record if anything was added, replacing it whole; a folder that cannot
    /// be written (a read-only copy of an index) keeps its old record, which only costs the
    /// next open a full check.
    pub fn save(&mut self) {
        if !self.changed {
            return;
        }
        let Ok(json) = serde_json::to_vec_pretty(&self.seen) else { return };
        let tmp = self.gen.join(format!("{NAME}.tmp-{}", std::process::id()));
        let done = std::fs::write(&tmp, json).and_then(|()| std::fs::rename(&tmp, self.gen.join(NAME)));
        if done.is_err() {
            let _ = std::fs::remove_file(&tmp);
        } else {
            self.changed = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checked_file_is_trusted_until_it_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.bin");
        std::fs::write(&p, b"some bytes").unwrap();
        let sum = super::super::checksum(b"some bytes");
        let mut v = Verified::load(dir.path());
        assert!(!v.holds("a.bin", &sum));
        v.check("a.bin", &sum).unwrap();
        v.save();
        let v = Verified::load(dir.path());
        assert!(v.holds("a.bin", &sum));
        // Another sum in meta.json is not the one checked.
        assert!(!v.holds("a.bin", &super::super::checksum(b"other")));
        // The same length, other bytes, written after the check.
        std::thread::sleep(std::time::Duration::from_millis(5));
        std::fs::write(&p, b"SOME BYTES").unwrap();
        assert!(!v.holds("a.bin", &sum));
        let mut v = Verified::load(dir.path());
        assert!(v.check("a.bin", &sum).unwrap_err().contains("differs"));
        // A damaged record is no record.
        std::fs::write(dir.path().join(NAME), b"{not json").unwrap();
        assert!(!Verified::load(dir.path()).holds("a.bin", &sum));
    }
}
