//! Real corpora from Debian source packages: `apt-get source --download-only`, then the
//! upstream tarball unpacked into a cache outside the repository.

use std::path::{Path, PathBuf};
use std::process::Command;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum FetchError {
    #[error("invalid package name {0:?}")]
    BadName(String),
    #[error("cannot run {cmd}: {source}")]
    Spawn { cmd: String, source: std::io::Error },
    #[error("`apt-get source --download-only {pkg}` failed (is a deb-src entry configured? scripts/setup.sh adds one): {stderr}")]
    AptGet { pkg: String, stderr: String },
    #[error("no upstream tarball for {0} among the downloaded files")]
    NoTarball(String),
    #[error("unpacking {path} failed: {stderr}")]
    Unpack { path: PathBuf, stderr: String },
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// `$BERYL_CACHE`, else `$XDG_CACHE_HOME/beryl`, else `~/.cache/beryl`.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("BERYL_CACHE") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("beryl");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    home.join(".cache").join("beryl")
}

/// Downloads and unpacks source package `pkg` once; returns the unpacked tree.
pub fn fetch(pkg: &str) -> Result<PathBuf, FetchError> {
    let valid = !pkg.is_empty()
        && pkg.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c))
        && !pkg.starts_with(['-', '.']);
    if !valid {
        return Err(FetchError::BadName(pkg.to_string()));
    }
    let base = cache_dir().join("corpora").join(pkg);
    let done = base.join(".done");
    if let Ok(p) = std::fs::read_to_string(&done) {
        let p = PathBuf::from(p.trim());
        if p.is_dir() {
            return Ok(p);
        }
    }
    let dl = base.join("download");
    std::fs::create_dir_all(&dl)?;
    // A download left by an earlier, interrupted fetch is used as it is: apt-get
    // checks its files against the index when it fetched them.
    let tarball = match (find_tarball(&dl)?, dsc_version(&dl, pkg)) {
        (Some(t), Some(_)) => t,
        _ => {
            let out = Command::new("apt-get")
                .args(["source", "--download-only", "-qq", pkg])
                .current_dir(&dl)
                .output()
                .map_err(|source| FetchError::Spawn { cmd: "apt-get".into(), source })?;
            let Some(tarball) = find_tarball(&dl)? else {
                let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
                return Err(if out.status.success() { FetchError::NoTarball(pkg.into()) } else { FetchError::AptGet { pkg: pkg.into(), stderr } });
            };
            tarball
        }
    };
    let src = base.join("src");
    if src.exists() {
        std::fs::remove_dir_all(&src)?;
    }
    std::fs::create_dir_all(&src)?;
    let out = Command::new("tar")
        .arg("-xf")
        .arg(&tarball)
        .arg("-C")
        .arg(&src)
        .output()
        .map_err(|source| FetchError::Spawn { cmd: "tar".into(), source })?;
    if !out.status.success() {
        // A damaged download (an interrupted transfer) is fetched anew next time.
        let _ = std::fs::remove_dir_all(&dl);
        return Err(FetchError::Unpack {
            path: tarball,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    // Most tarballs hold one top directory; use it when so.
    let entries: Vec<_> = std::fs::read_dir(&src)?.filter_map(Result::ok).collect();
    let root = match entries.as_slice() {
        [one] if one.path().is_dir() => one.path(),
        _ => src,
    };
    std::fs::write(&done, root.to_string_lossy().as_bytes())?;
    Ok(root)
}

/// The Debian version of fetched package `pkg` (from its `.dsc`), once it was fetched.
pub fn fetched_version(pkg: &str) -> Option<String> {
    dsc_version(&cache_dir().join("corpora").join(pkg).join("download"), pkg)
}

fn dsc_version(dir: &Path, pkg: &str) -> Option<String> {
    // The source package may be named otherwise than `pkg` (apt-get accepts binary names).
    let mut found: Vec<(bool, String)> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let n = e.file_name().to_str()?.strip_suffix(".dsc")?.to_string();
            let (name, version) = n.split_once('_')?;
            Some((name == pkg, version.to_string()))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, v)| v)
}

/// The upstream `*.orig.tar.*`, or for native packages the one `*.tar.*` that is not
/// the Debian packaging.
fn find_tarball(dir: &Path) -> Result<Option<PathBuf>, FetchError> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)?.filter_map(Result::ok).map(|e| e.path()).collect();
    names.sort();
    let name = |p: &PathBuf| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let orig = names.iter().find(|p| {
        let n = name(p);
        n.contains(".orig.tar.") && !n.ends_with(".asc") && !n.ends_with(".part")
    });
    if let Some(o) = orig {
        return Ok(Some(o.clone()));
    }
    Ok(names
        .iter()
        .find(|p| {
            let n = name(p);
            n.contains(".tar.") && !n.contains(".debian.tar.") && !n.ends_with(".asc") && !n.ends_with(".part")
        })
        .cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_names_that_are_not_package_names() {
        for bad in ["", "-rf", "../etc", "a b", "Foo"] {
            assert!(matches!(fetch(bad), Err(FetchError::BadName(_))), "{bad}");
        }
    }

    #[test]
    fn prefers_orig_tarball() {
        let d = tempfile::tempdir().unwrap();
        for f in ["x_1.0-1.debian.tar.xz", "x_1.0.orig.tar.gz", "x_1.0.orig.tar.gz.asc", "x_1.0-1.dsc"] {
            std::fs::write(d.path().join(f), b"").unwrap();
        }
        let t = find_tarball(d.path()).unwrap().unwrap();
        assert!(t.ends_with("x_1.0.orig.tar.gz"));
    }
}
