//! Who may touch an index directory: one writer at a time (`DIR/lock`, exclusive).
//!
//! It is a `flock`: the kernel drops it when its process ends, however it ends. A lock
//! file can be removed while someone waits on it (a failed first build removes the lock it
//! made), so a lock counts only while its file is still linked; otherwise the taker tries
//! again.

use super::IndexError;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The writer lock of an index directory.
const WRITER: &str = "lock";
/// Whether `f`'s file still has a name: a lock on a removed file guards nothing.
fn linked(f: &File) -> bool {
    f.metadata().is_ok_and(|m| m.nlink() > 0)
}

/// The one writer's hold on an index directory. Dropped without [`Claim::keep`] (the run
/// failed, or panicked), it removes what the run made: its scratch generation, the lock
/// file, and the directory (with any parents made for it) when nothing else is there.
pub(super) struct Claim {
    dir: PathBuf,
    lock: File,
    /// Folders this run made, outermost first.
    made: Vec<PathBuf>,
    created_lock: bool,
    kept: bool,
}

impl Claim {
    /// Creates `dir` and its lock as needed and locks it, or says who holds it.
    pub(super) fn take(dir: &Path) -> Result<Claim, IndexError> {
        let mut made = Vec::new();
        let mut missing: Vec<&Path> = dir.ancestors().take_while(|a| !a.as_os_str().is_empty() && !a.exists()).collect();
        missing.reverse();
        for d in missing {
            match std::fs::create_dir(d) {
                Ok(()) => made.push(d.to_path_buf()),
                // Made meanwhile by someone else: theirs.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && d.is_dir() => {}
                Err(e) => {
                    remove_made(&made);
                    return Err(IndexError::Io { path: d.to_path_buf(), source: e });
                }
            }
        }
        let path = dir.join(WRITER);
        let taken = loop {
            let (f, created) = match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(f) => (f, true),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match OpenOptions::new().write(true).open(&path) {
                    Ok(f) => (f, false),
                    // Removed since by a run that failed: make it anew.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => break Err(IndexError::Io { path: path.clone(), source: e }),
                },
                Err(e) => break Err(IndexError::Io { path: path.clone(), source: e }),
            };
            match f.try_lock() {
                Ok(()) if linked(&f) => break Ok((f, created)),
                Ok(()) => continue,
                Err(TryLockError::WouldBlock) => {
                    // The pid a holder wrote, while that process lives (it may be a past holder's).
                    let holder = std::fs::read_to_string(&path)
                        .ok()
                        .and_then(|s| s.trim().parse::<u32>().ok())
                        .filter(|pid| Path::new("/proc").join(pid.to_string()).exists());
                    break Err(IndexError::Busy { dir: dir.to_path_buf(), holder });
                }
                Err(TryLockError::Error(e)) => break Err(IndexError::Io { path: path.clone(), source: e }),
            }
        };
        let (mut lock, created_lock) = match taken {
            Ok(t) => t,
            Err(e) => {
                remove_made(&made);
                return Err(e);
            }
        };
        // Who holds it, for the message of a second writer; the lock is what counts.
        let _ = lock.set_len(0).and_then(|()| write!(lock, "{}", std::process::id()));
        Ok(Claim { dir: dir.to_path_buf(), lock, made, created_lock, kept: false })
    }

    /// The run succeeded: the lock file stays for the next writer.
    pub(super) fn keep(mut self) {
        self.kept = true;
    }
}

/// Removes the folders in `made` (outermost first) that hold nothing.
fn remove_made(made: &[PathBuf]) {
    for d in made.iter().rev() {
        // Fails, as it should, when anything else is there.
        let _ = std::fs::remove_dir(d);
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if self.kept {
            return;
        }
        let scratch = format!(".tmp-{}", std::process::id());
        if let Ok(rd) = std::fs::read_dir(&self.dir) {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with("gen-") && name.ends_with(&scratch) {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        // Removed while still locked, so no one else can have taken it in between.
        if self.created_lock {
            let _ = std::fs::remove_file(self.dir.join(WRITER));
        }
        remove_made(&self.made);
        let _ = self.lock.unlock();
    }
}
