//! Anonymized copies of projects, made once and kept beside the indexes.

#[allow(unused_imports)]
use super::*;

/// The anonymized copy of a project (neutral names, comments removed, lines kept), made
/// once under `<work>/renamed/<project>` per revision of the anonymizer and of the walk.
pub fn renamed_root(work: &Path, project: &str, root: &Path) -> Result<PathBuf, AlgoError> {
    let out = work.join("renamed").join(project);
    let done = out.join(".done");
    let src = out.join("src");
    let stamp = format!("anonymizer {} walk {}\n", beryl::anonymize::REVISION, corpus::walk::REVISION);
    if std::fs::read_to_string(&done).is_ok_and(|d| d.starts_with(&stamp)) {
        // Copies made before trees were marked.
        if !beryl::anonymize::is_marked(&src) {
            beryl::anonymize::mark(&src).map_err(io(&src))?;
        }
        return Ok(src);
    }
    if src.exists() {
        std::fs::remove_dir_all(&src).map_err(io(&src))?;
    }
    let opts = WalkOptions::default();
    let (found, _) = corpus::walk::discover(&[root.to_path_buf()], &opts);
    let files: Vec<(PathBuf, String)> = found.into_iter().filter_map(|p| corpus::walk::read_source(&p, &opts).ok().map(|s| (p, s))).collect();
    let a = beryl::anonymize::anonymize_sources(&files, beryl::anonymize::Mode::Neutral, 0, false)
        .map_err(|e| AlgoError::Truth { path: root.to_path_buf(), msg: format!("anonymizing: {e}") })?;
    for f in &a.files {
        let rel = f.path.strip_prefix(root).unwrap_or(&f.path);
        let dest = src.join(rel);
        if let Some(d) = dest.parent() {
            std::fs::create_dir_all(d).map_err(io(d))?;
        }
        std::fs::write(&dest, &f.text).map_err(io(&dest))?;
    }
    beryl::anonymize::mark(&src).map_err(io(&src))?;
    std::fs::write(&done, format!("{stamp}{} files\n", a.files.len())).map_err(io(&done))?;
    std::fs::canonicalize(&src).map_err(io(&src))
}
