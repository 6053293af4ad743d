//! Who may touch an index directory: one writer at a time (`DIR/lock`, exclusive), and
//! readers that pin the generation they opened (`gen-N/readers.lock`, shared), so that a
//! writer's clean-up never removes a generation from under a search.
//!
//! Both are `flock`s: the kernel drops them when their process ends, however it ends. A
//! lock file can be removed while someone waits on it (a failed first build removes the
//! lock it made; a sweep removes a generation with its reader lock), so a lock counts only
//! while its file is still linked; otherwise the taker tries again.

use super::{current_generation, io, IndexError};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The reader lock of a generation, written with it.
pub(super) const READERS: &str = "readers.lock";
/// The writer lock of an index directory.
const WRITER: &str = "lock";
/// Times a reader follows `current` to a generation swept before it could pin it. Each
/// retry means a build finished in between, so more than a few never happen.
const PIN_TRIES: usize = 64;

/// Whether `f`'s file still has a name: a lock on a removed file guards nothing.
fn linked(f: &File) -> bool {
    f.metadata().is_ok_and(|m| m.nlink() > 0)
}

/// A shared lock on the reader lock of the generation `current` names, held as long as the
/// returned file is open. `None` for a generation without a reader lock (an older format,
/// which opening refuses anyway).
pub(super) fn pin_current(dir: &Path) -> Result<(PathBuf, Option<File>), IndexError> {
    for _ in 0..PIN_TRIES {
        let gen = current_generation(dir).ok_or_else(|| {
            if std::fs::symlink_metadata(dir.join("current")).is_ok() {
                IndexError::Corrupt(format!("{}/current points at no index", dir.display()))
            } else {
                IndexError::Missing(dir.to_path_buf())
            }
        })?;
        let path = gen.join(READERS);
        let f = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // Swept between reading `current` and opening: `current` has moved on.
                if current_generation(dir).as_ref() != Some(&gen) {
                    continue;
                }
                return Ok((gen, None));
            }
            Err(e) => return Err(IndexError::Io { path, source: e }),
        };
        // A sweep holds the exclusive lock only while it removes the folder.
        f.lock_shared().map_err(io(&path))?;
        if linked(&f) {
            return Ok((gen, Some(f)));
        }
    }
    Err(IndexError::Corrupt(format!("{} changed {PIN_TRIES} times while it was being opened", dir.display())))
}

/// Takes generation `gen` away from readers for good, if none has it open: `Some` (hold it
/// while removing the folder) or `None` when a reader pins it. A generation without a
/// reader lock has no readers to wait for.
pub(super) fn unpinned(gen: &Path) -> std::io::Result<Option<Option<File>>> {
    let f = match File::open(gen.join(READERS)) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Some(None)),
        Err(e) => return Err(e),
    };
    match f.try_lock() {
        Ok(()) => Ok(Some(Some(f))),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(e),
    }
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
                    // A holder that has just taken the lock writes its pid a moment later.
                    let read = || {
                        std::fs::read_to_string(&path)
                            .ok()
                            .and_then(|s| s.trim().parse::<u32>().ok())
                            .filter(|pid| Path::new("/proc").join(pid.to_string()).exists())
                    };
                    let mut holder = read();
                    for _ in 0..20 {
                        if holder.is_some() {
                            break;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(10));
                        holder = read();
                    }
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
