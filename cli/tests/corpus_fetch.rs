//! `beryl corpus fetch` beside another fetch of the same corpus: it waits for the other
//! to finish instead of emptying the folder the other unpacks into, then finds its tree.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

fn fetch(cache: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_beryl"));
    c.args(["corpus", "fetch", "a52dec"]).env("BERYL_CACHE", cache).stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

fn files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| match e.file_type().unwrap() {
            t if t.is_dir() => files(&e.path()),
            t if t.is_file() => 1,
            _ => 0,
        })
        .sum()
}

#[test]
fn a_fetch_waits_for_one_under_way() {
    let cache = tempfile::tempdir().unwrap();
    let base = cache.path().join("corpora/a52dec");
    std::fs::create_dir_all(&base).unwrap();
    // Another fetch under way, as this test holds it.
    let held = std::fs::File::create(base.join(".lock")).unwrap();
    held.lock().unwrap();
    let mut waiting = fetch(cache.path()).spawn().unwrap();
    std::thread::sleep(Duration::from_secs(3));
    assert!(waiting.try_wait().unwrap().is_none(), "the fetch ended while another held the corpus");
    assert!(!base.join("download").exists() && !base.join("src").exists(), "the fetch wrote beside one under way");
    drop(held);
    let out = waiting.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let root = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(root.starts_with(&base), "{}", root.display());
    // The whole upstream tarball is there.
    let tarball = std::fs::read_dir(base.join("download")).unwrap().flatten().map(|e| e.path()).find(|p| p.to_string_lossy().contains(".orig.tar")).expect("the upstream tarball");
    let listing = Command::new("tar").arg("-tvf").arg(&tarball).output().unwrap();
    let in_tarball = String::from_utf8_lossy(&listing.stdout).lines().filter(|l| l.starts_with('-')).count();
    assert!(in_tarball > 10);
    assert_eq!(files(&base.join("src")), in_tarball);
    // Two more at once find it fetched.
    let again: Vec<_> = (0..2).map(|_| fetch(cache.path()).spawn().unwrap()).collect();
    for c in again {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()), root);
    }
}
