//! Who may touch an index directory: one writer at a time (`DIR/lock`, exclusive), and
//! readers that pin the generation they opened (`gen-N/readers.lock`, shared), so that a
//! writer's clean-up never removes a generation from under a search.
//!
//! Both are `flock`s: the kernel drops them when their process ends, however it ends. A
//! lock file can be removed while someone waits on it (a failed first build removes the
//! lock it made; a sweep removes a generation with its reader lock), so a lock counts only
//! while its file is still linked; otherwise the taker tries again.
//!
//! An index folder may arrive with a cloned repository, so a writer trusts nothing in it:
//! it writes only into a folder that holds nothing but what beryl writes ([`check_layout`]),
//! and never through a symbolic link.

use super::{current_generation, io, IndexError};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The reader lock of a generation, written with it.
pub(super) const READERS: &str = "readers.lock";
/// The writer lock of an index directory.
const WRITER: &str = "lock";
/// Times a reader follows `current` to a generation swept before it could pin it. Each
/// retry means a build finished in between, so more than a few never happen.
const PIN_TRIES: usize = 64;

/// The prefix of the folder an update copies the database into early (`PREFIX.tmp-PID`).
pub(super) const COPY_SCRATCH: &str = "gen-copy";

/// Whether `name` is a generation's (`gen-` and at least six digits), as `current` names it.
pub(super) fn is_generation_name(name: &str) -> bool {
    name.strip_prefix("gen-").is_some_and(|d| d.len() >= 6 && d.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `name` is `PREFIX.tmp-PID`, with `PREFIX` passing `prefix`.
fn is_scratch_name(name: &str, prefix: impl Fn(&str) -> bool) -> bool {
    name.split_once(".tmp-").is_some_and(|(p, pid)| prefix(p) && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

/// Why the entry `name` at the top of an index folder is not one beryl writes, if it is not.
fn foreign(dir: &Path, name: &str) -> Option<String> {
    let p = dir.join(name);
    let Ok(m) = std::fs::symlink_metadata(&p) else { return None };
    let t = m.file_type();
    let has_file = |f: &str| std::fs::symlink_metadata(p.join(f)).is_ok_and(|m| m.file_type().is_file());
    if name == WRITER {
        return (!t.is_file()).then(|| "the writer lock is not a plain file".into());
    }
    if name == "current" {
        if !t.is_symlink() {
            return Some("`current` is not a symbolic link".into());
        }
        let target = std::fs::read_link(&p).ok()?;
        return (!target.to_str().is_some_and(is_generation_name)).then(|| format!("`current` points at {}, not at a generation", target.display()));
    }
    if is_scratch_name(name, |p| p == "current") {
        return (!t.is_symlink()).then(|| "not a symbolic link".into());
    }
    if is_generation_name(name) {
        if !t.is_dir() {
            return Some("not a folder".into());
        }
        return (!has_file(READERS) && !has_file("meta.json")).then(|| "a folder that holds no index".into());
    }
    if is_scratch_name(name, is_generation_name) {
        return (!t.is_dir()).then(|| "not a folder".into());
    }
    // An update's early copy of the database (`update::DbCopy`): a folder holding that
    // file alone, or nothing once it was moved into the new generation.
    if is_scratch_name(name, |p| p == COPY_SCRATCH) {
        let only_db = std::fs::read_dir(&p).is_ok_and(|rd| rd.flatten().all(|e| e.file_name() == super::DATABASE && e.file_type().is_ok_and(|t| t.is_file())));
        return (!t.is_dir() || !only_db).then(|| "not a folder holding an update's copy of the database alone".into());
    }
    Some("not a file beryl writes".into())
}

/// Refuses an index folder that holds anything beryl did not write there (or a planted
/// link where beryl writes): such a folder is someone else's, and a build would replace
/// or remove what it holds. A missing or empty folder passes.
pub(super) fn check_layout(dir: &Path) -> Result<(), IndexError> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(IndexError::Io { path: dir.to_path_buf(), error: e }),
    };
    let mut names: Vec<String> = rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    for name in names {
        if let Some(why) = foreign(dir, &name) {
            return Err(IndexError::Foreign { dir: dir.to_path_buf(), entry: name, why });
        }
    }
    Ok(())
}

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
            Err(e) => return Err(IndexError::Io { path, error: e }),
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
        check_layout(dir)?;
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
                    return Err(IndexError::Io { path: d.to_path_buf(), error: e });
                }
            }
        }
        let path = dir.join(WRITER);
        // Never through a link: one planted as `lock` would have its target overwritten.
        let open = |create: bool| OpenOptions::new().write(true).create_new(create).custom_flags(libc::O_NOFOLLOW).open(&path);
        let taken = loop {
            let (f, created) = match open(true) {
                Ok(f) => (f, true),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match open(false) {
                    Ok(f) => (f, false),
                    // Removed since by a run that failed: make it anew.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                        break Err(IndexError::Foreign { dir: dir.to_path_buf(), entry: WRITER.into(), why: "the writer lock is a symbolic link".into() })
                    }
                    Err(e) => break Err(IndexError::Io { path: path.clone(), error: e }),
                },
                Err(e) => break Err(IndexError::Io { path: path.clone(), error: e }),
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
                Err(TryLockError::Error(e)) => break Err(IndexError::Io { path: path.clone(), error: e }),
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
                // `remove_dir_all` removes a link itself, never what it points at.
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
