//! Real corpora from package registries, unpacked into a cache outside the repository:
//! Debian source packages (`apt-get source --download-only`, then the upstream tarball),
//! Python source distributions from PyPI (`pypi:NAME==VERSION`, by pip) and crates from
//! crates.io (`crate:NAME@VERSION`).

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
    #[error("downloading {spec} failed: {stderr}")]
    Download { spec: String, stderr: String },
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

/// Where a corpus comes from.
#[derive(Debug, PartialEq, Eq)]
enum Source<'a> {
    /// A Debian source package: `zlib`.
    Debian(&'a str),
    /// A source distribution on PyPI: `pypi:six==1.16.0`.
    Pypi(&'a str, &'a str),
    /// A crate on crates.io: `crate:itoa@1.0.9`.
    Crate(&'a str, &'a str),
}

impl<'a> Source<'a> {
    fn parse(spec: &'a str) -> Option<Source<'a>> {
        let name_ok = |n: &str| !n.is_empty() && !n.starts_with(['-', '.']) && n.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        let version_ok = |v: &str| !v.is_empty() && !v.starts_with(['-', '.']) && v.chars().all(|c| c.is_ascii_alphanumeric() || "+-._!".contains(c));
        if let Some(rest) = spec.strip_prefix("pypi:") {
            let (n, v) = rest.split_once("==")?;
            return (name_ok(n) && version_ok(v)).then_some(Source::Pypi(n, v));
        }
        if let Some(rest) = spec.strip_prefix("crate:") {
            let (n, v) = rest.split_once('@')?;
            return (name_ok(n) && version_ok(v)).then_some(Source::Crate(n, v));
        }
        let debian = !spec.is_empty()
            && spec.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c))
            && !spec.starts_with(['-', '.']);
        debian.then_some(Source::Debian(spec))
    }

    /// The cache folder's name.
    fn folder(&self) -> String {
        match self {
            Source::Debian(p) => p.to_string(),
            Source::Pypi(n, v) => format!("pypi-{n}-{v}"),
            Source::Crate(n, v) => format!("crate-{n}-{v}"),
        }
    }
}

/// The folder under the cache's `corpora` that holds the corpus `spec` names, or `None`
/// for a spec that names none.
pub fn cache_folder(spec: &str) -> Option<String> {
    Source::parse(spec).map(|s| s.folder())
}

/// Downloads and unpacks a corpus once (a Debian source package name, `pypi:NAME==VERSION`
/// or `crate:NAME@VERSION`); returns the unpacked tree.
pub fn fetch(spec: &str) -> Result<PathBuf, FetchError> {
    let source = Source::parse(spec).ok_or_else(|| FetchError::BadName(spec.to_string()))?;
    let base = cache_dir().join("corpora").join(source.folder());
    let done = base.join(".done");
    if let Ok(p) = std::fs::read_to_string(&done) {
        let p = PathBuf::from(p.trim());
        if p.is_dir() {
            return Ok(p);
        }
    }
    let dl = base.join("download");
    std::fs::create_dir_all(&dl)?;
    let tarball = match source {
        Source::Debian(pkg) => debian_tarball(pkg, &dl)?,
        Source::Pypi(n, v) => registry_download(spec, &dl, "python3", &["-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-d", ".", &format!("{n}=={v}")])?,
        Source::Crate(n, v) => {
            let file = format!("{n}-{v}.crate");
            let url = format!("https://static.crates.io/crates/{n}/{file}");
            registry_download(spec, &dl, "curl", &["-fsSL", "--retry", "2", "-o", &file, &url])?
        }
    };
    let src = base.join("src");
    if src.exists() {
        std::fs::remove_dir_all(&src)?;
    }
    std::fs::create_dir_all(&src)?;
    let zip = tarball.extension().is_some_and(|e| e == "zip");
    let out = if zip {
        Command::new("python3").arg("-m").arg("zipfile").arg("-e").arg(&tarball).arg(&src).output()
    } else {
        Command::new("tar").arg("-xf").arg(&tarball).arg("-C").arg(&src).output()
    }
    .map_err(|source| FetchError::Spawn { cmd: if zip { "python3" } else { "tar" }.into(), source })?;
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

/// Runs a registry's download command in `dl` unless an archive is already there; the
/// one archive it leaves (`.tar.gz`, `.crate`, `.zip`).
fn registry_download(spec: &str, dl: &Path, cmd: &str, args: &[&str]) -> Result<PathBuf, FetchError> {
    let archive = |dl: &Path| -> Result<Option<PathBuf>, FetchError> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dl)?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                let n = p.to_string_lossy();
                n.ends_with(".tar.gz") || n.ends_with(".crate") || n.ends_with(".zip") || n.ends_with(".tar.bz2") || n.ends_with(".tgz")
            })
            .collect();
        v.sort();
        Ok(v.pop())
    };
    if let Some(a) = archive(dl)? {
        return Ok(a);
    }
    let out = Command::new(cmd).args(args).current_dir(dl).output().map_err(|source| FetchError::Spawn { cmd: cmd.into(), source })?;
    match archive(dl)? {
        Some(a) if out.status.success() => Ok(a),
        _ => {
            // Nothing half-written is kept for the next try.
            let _ = std::fs::remove_dir_all(dl);
            Err(FetchError::Download { spec: spec.into(), stderr: String::from_utf8_lossy(&out.stderr).trim().to_string() })
        }
    }
}

/// The upstream tarball of Debian source package `pkg`, downloaded into `dl` once.
fn debian_tarball(pkg: &str, dl: &Path) -> Result<PathBuf, FetchError> {
    // A download left by an earlier, interrupted fetch is used as it is: apt-get
    // checks its files against the index when it fetched them.
    Ok(match (find_tarball(dl)?, dsc_version(dl, pkg)) {
        (Some(t), Some(_)) => t,
        _ => {
            let out = Command::new("apt-get")
                .args(["source", "--download-only", "-qq", pkg])
                .current_dir(dl)
                .output()
                .map_err(|source| FetchError::Spawn { cmd: "apt-get".into(), source })?;
            let Some(tarball) = find_tarball(dl)? else {
                let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
                return Err(if out.status.success() { FetchError::NoTarball(pkg.into()) } else { FetchError::AptGet { pkg: pkg.into(), stderr } });
            };
            tarball
        }
    })
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
    fn registry_specs() {
        assert_eq!(Source::parse("zlib"), Some(Source::Debian("zlib")));
        assert_eq!(Source::parse("pypi:six==1.16.0"), Some(Source::Pypi("six", "1.16.0")));
        assert_eq!(Source::parse("crate:itoa@1.0.9"), Some(Source::Crate("itoa", "1.0.9")));
        for bad in ["pypi:six", "crate:../x@1", "pypi:a==1;rm", "crate:x@", "pypi:-x==1"] {
            assert!(matches!(fetch(bad), Err(FetchError::BadName(_))), "{bad}");
        }
        assert_eq!(Source::parse("crate:itoa@1.0.9").unwrap().folder(), "crate-itoa-1.0.9");
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
