//! Real corpora from package registries, unpacked into a cache outside the repository:
//! Debian source packages (`apt-get source --download-only`, then the upstream tarball),
//! Python source distributions from PyPI (`pypi:NAME==VERSION`) and crates from crates.io
//! (`crate:NAME@VERSION`). Registry archives are downloaded as files and checked against the
//! SHA-256 the registry's index lists; nothing in them is run.

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
    /// `spec` is for callers; the message is `what` alone, since callers name the corpus.
    #[error("{what}")]
    Registry { spec: String, what: String },
    #[error("{spec}: {file} has SHA-256 {got}, the registry lists {expected}")]
    Checksum { spec: String, file: String, expected: String, got: String },
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
    let fetched = || std::fs::read_to_string(&done).ok().map(|p| PathBuf::from(p.trim())).filter(|p| p.is_dir());
    if let Some(p) = fetched() {
        return Ok(p);
    }
    // One fetch of a corpus at a time (two commands, or tests side by side): each would
    // empty the folder the other unpacks into. The kernel drops the lock with its holder.
    std::fs::create_dir_all(&base)?;
    let lock = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(base.join(".lock"))?;
    lock.lock()?;
    if let Some(p) = fetched() {
        return Ok(p);
    }
    let dl = base.join("download");
    std::fs::create_dir_all(&dl)?;
    let tarball = match source {
        Source::Debian(pkg) => debian_tarball(pkg, &dl)?,
        Source::Pypi(n, v) => {
            let (file, url, sha) = pypi_sdist(spec, n, v)?;
            download_checked(spec, &dl, &file, &url, &sha)?
        }
        Source::Crate(n, v) => {
            let sha = crate_checksum(spec, n, v)?;
            let file = format!("{n}-{v}.crate");
            let url = format!("https://static.crates.io/crates/{n}/{file}");
            download_checked(spec, &dl, &file, &url, &sha)?
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

/// `curl` of `url` to standard output, with `accept` as the Accept header.
/// Runs `curl -fsSL --retry 2 ARGS`; its standard output, or its error as a download failure of `spec`.
fn curl(spec: &str, args: &[&std::ffi::OsStr]) -> Result<Vec<u8>, FetchError> {
    let out = Command::new("curl")
        .args(["-fsSL", "--retry", "2"])
        .args(args)
        .output()
        .map_err(|source| FetchError::Spawn { cmd: "curl".into(), source })?;
    if !out.status.success() {
        return Err(FetchError::Download { spec: spec.into(), stderr: String::from_utf8_lossy(&out.stderr).trim().to_string() });
    }
    Ok(out.stdout)
}

fn curl_text(spec: &str, url: &str, accept: &str) -> Result<String, FetchError> {
    let header = format!("Accept: {accept}");
    let out = curl(spec, &["-H".as_ref(), header.as_ref(), url.as_ref()])?;
    String::from_utf8(out).map_err(|_| FetchError::Registry { spec: spec.into(), what: format!("{url} is not UTF-8") })
}

/// PyPI's name normalization (PEP 503): lower case, runs of `-_.` as one `-`.
fn pypi_normalize(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if "-_.".contains(c) {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// Whether `file` is the source distribution of `name` `version` (`name-1.0.tar.gz`, the
/// normalized `name_x-1.0.tar.gz`, or a `.zip`).
fn is_sdist_of(file: &str, name: &str, version: &str) -> bool {
    let stem = file.strip_suffix(".tar.gz").or_else(|| file.strip_suffix(".zip"));
    let Some(stem) = stem else { return false };
    let Some(project) = stem.strip_suffix(version).and_then(|p| p.strip_suffix('-')) else { return false };
    pypi_normalize(project) == pypi_normalize(name)
}

/// The file name, address and SHA-256 of a release's source distribution, from PyPI's
/// JSON simple index (PEP 691).
fn pypi_sdist(spec: &str, name: &str, version: &str) -> Result<(String, String, String), FetchError> {
    let url = format!("https://pypi.org/simple/{}/", pypi_normalize(name));
    let text = curl_text(spec, &url, "application/vnd.pypi.simple.v1+json")?;
    let index: serde_json::Value = serde_json::from_str(&text).map_err(|e| FetchError::Registry { spec: spec.into(), what: format!("{url}: {e}") })?;
    let files = index["files"].as_array().map(Vec::as_slice).unwrap_or_default();
    let found = files.iter().find(|f| f["filename"].as_str().is_some_and(|n| is_sdist_of(n, name, version)));
    let Some(f) = found else {
        return Err(FetchError::Registry { spec: spec.into(), what: format!("no source distribution of version {version} on PyPI") });
    };
    let field = |v: &serde_json::Value| v.as_str().map(str::to_string);
    match (field(&f["filename"]), field(&f["url"]), field(&f["hashes"]["sha256"])) {
        (Some(file), Some(url), Some(sha)) => Ok((file, url, sha)),
        _ => Err(FetchError::Registry { spec: spec.into(), what: "PyPI lists the file without an address or a SHA-256".into() }),
    }
}

/// The path of a crate in the crates.io sparse index: `1/a`, `2/ab`, `3/a/abc`, `se/rd/serde`.
fn crate_index_path(name: &str) -> String {
    let n = name.to_ascii_lowercase();
    match n.len() {
        1 => format!("1/{n}"),
        2 => format!("2/{n}"),
        3 => format!("3/{}/{n}", &n[..1]),
        _ => format!("{}/{}/{n}", &n[..2], &n[2..4]),
    }
}

/// The SHA-256 of a crate version's `.crate` file, from the crates.io sparse index.
fn crate_checksum(spec: &str, name: &str, version: &str) -> Result<String, FetchError> {
    let url = format!("https://index.crates.io/{}", crate_index_path(name));
    let text = curl_text(spec, &url, "text/plain")?;
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["vers"].as_str() == Some(version))
        .and_then(|e| e["cksum"].as_str().map(str::to_string))
        .ok_or_else(|| FetchError::Registry { spec: spec.into(), what: format!("no version {version} in the crates.io index") })
}

fn sha256_hex(path: &Path) -> Result<String, FetchError> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    std::io::copy(&mut std::fs::File::open(path)?, &mut h)?;
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Downloads `url` into `dl/file` unless a copy with the expected SHA-256 is there; a
/// download whose sum differs is removed and refused.
fn download_checked(spec: &str, dl: &Path, file: &str, url: &str, sha: &str) -> Result<PathBuf, FetchError> {
    let path = dl.join(file);
    if path.is_file() && sha256_hex(&path)?.eq_ignore_ascii_case(sha) {
        return Ok(path);
    }
    let part = dl.join(format!("{file}.part"));
    if let Err(e) = curl(spec, &["-o".as_ref(), part.as_os_str(), url.as_ref()]) {
        let _ = std::fs::remove_file(&part);
        return Err(e);
    }
    let got = sha256_hex(&part)?;
    if !got.eq_ignore_ascii_case(sha) {
        let _ = std::fs::remove_file(&part);
        return Err(FetchError::Checksum { spec: spec.into(), file: file.into(), expected: sha.into(), got });
    }
    std::fs::rename(&part, &path)?;
    Ok(path)
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
    fn registry_file_names() {
        assert!(is_sdist_of("rapidfuzz-0.8.2.tar.gz", "rapidfuzz", "0.8.2"));
        assert!(is_sdist_of("Django-4.2.zip", "django", "4.2"));
        assert!(is_sdist_of("zope_interface-6.0.tar.gz", "zope.interface", "6.0"));
        assert!(!is_sdist_of("rapidfuzz-0.8.2-cp311-cp311-manylinux.whl", "rapidfuzz", "0.8.2"));
        assert!(!is_sdist_of("rapidfuzz-0.8.20.tar.gz", "rapidfuzz", "0.8.2"));
        assert!(!is_sdist_of("rapidfuzz-extra-0.8.2.tar.gz", "rapidfuzz", "0.8.2"));
        assert_eq!(crate_index_path("a"), "1/a");
        assert_eq!(crate_index_path("cc"), "2/cc");
        assert_eq!(crate_index_path("syn"), "3/s/syn");
        assert_eq!(crate_index_path("Serde"), "se/rd/serde");
    }

    #[test]
    fn a_download_that_does_not_match_its_sum_is_refused() {
        let dl = tempfile::tempdir().unwrap();
        // A file:// address: curl copies it, and the sum decides.
        let src = dl.path().join("origin.crate");
        std::fs::write(&src, b"not the crate").unwrap();
        let url = format!("file://{}", src.display());
        let wrong = "0".repeat(64);
        let e = download_checked("crate:x@1", dl.path(), "x-1.crate", &url, &wrong).unwrap_err();
        assert!(matches!(e, FetchError::Checksum { .. }), "{e}");
        assert!(!dl.path().join("x-1.crate").exists() && !dl.path().join("x-1.crate.part").exists());
        let right = sha256_hex(&src).unwrap();
        let got = download_checked("crate:x@1", dl.path(), "x-1.crate", &url, &right).unwrap();
        assert_eq!(std::fs::read(got).unwrap(), b"not the crate");
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
