//! Building an index, or bringing one up to date: parse, vectors (reusing cached ones),
//! FAISS, SQLite, BM25F and shapes written to a new generation, which then replaces the
//! current one in one rename.

#[allow(unused_imports)]
use super::*;

/// Removes generations other than `keep` that no reader has open, and scratch folders of
/// runs that are gone. A generation a reader pins stays for a later build to remove.
pub(super) fn sweep(dir: &Path, keep: Option<&Path>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("gen-") || Some(p.as_path()) == keep {
            continue;
        }
        // Held until the folder is gone, so no reader can pin it half removed.
        let mut _held = None;
        if let Some(pid) = name.split(".tmp-").nth(1) {
            // Another live `index` may own it; the lock makes that rare, but check.
            if Path::new("/proc").join(pid).exists() && pid != std::process::id().to_string() {
                continue;
            }
        } else {
            match lock::unpinned(&p) {
                Ok(Some(held)) => _held = held,
                Ok(None) => {
                    log::info!("kept old index generation {}: a search has it open", p.display());
                    continue;
                }
                Err(err) => {
                    log::warn!("kept old index generation {}: {err}", p.display());
                    continue;
                }
            }
        }
        if let Err(err) = std::fs::remove_dir_all(&p) {
            log::warn!("could not remove old index generation {}: {err}", p.display());
        }
    }
}

/// Refuses to replace an index of a newer format: this beryl cannot know what it holds.
fn refuse_newer(dir: &Path) -> Result<(), IndexError> {
    match current_generation(dir).and_then(|g| format_of(&g)) {
        Some(found) if found > FORMAT as u64 => Err(IndexError::Newer { dir: dir.to_path_buf(), found }),
        _ => Ok(()),
    }
}

/// Builds (or brings up to date) the index at `dir` for the sources under `roots`.
pub fn build(
    roots: &[PathBuf],
    dir: &Path,
    opts: &IndexOptions,
    model_dir: &Path,
    encs: &TextEncoders,
    progress: Progress,
) -> Result<BuildReport, IndexError> {
    let t0 = Instant::now();
    let mut report = BuildReport::default();
    // The inputs first: a run that cannot succeed creates nothing.
    refuse_newer(dir)?;
    let enc = encs.statements()?;
    let fenc = encs.functions()?;
    let model = Model::load(model_dir, FEATURE_SCHEMA, enc.hash())?;
    let model_sha = model_sha256(model_dir)?;
    let (files, walk_skipped) = corpus::walk::discover(roots, &opts.walk);
    let empty_roots = || roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ");
    if files.is_empty() {
        return Err(IndexError::Empty(empty_roots()));
    }
    // From here on a failure (or panic) removes what this run made; see `Claim`.
    let claim = lock::Claim::take(dir)?;
    // Checked again under the lock: a newer beryl may have written since.
    refuse_newer(dir)?;

    progress("parse", 0, 0);
    let corpus = corpus::load_found(files, walk_skipped, &opts.walk, t0);
    report.skipped = corpus.skipped_by_reason();
    let icfg = corpus.icfg;
    if icfg.files.is_empty() {
        let reasons: Vec<String> = report.skipped.iter().map(|(r, n)| format!("{r} {n}")).collect();
        return Err(IndexError::Empty(format!("{} (skipped: {})", empty_roots(), reasons.join(", "))));
    }
    // Content hashes; the text is kept for the function texts below.
    let sources: Vec<String> = icfg
        .files
        .par_iter()
        .map(|f| std::fs::read(&f.path).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default())
        .collect();
    let hashes: Vec<String> = sources.par_iter().map(|s| sha256_hex(s.as_bytes())).collect();
    report.parse_seconds = t0.elapsed().as_secs_f64();
    report.files = icfg.files.len();
    report.lines = icfg.files.iter().map(|f| f.lines as u64).sum();
    report.source_bytes = icfg.files.iter().map(|f| f.bytes).sum();
    report.nodes = icfg.graph.node_count();
    report.functions = icfg.functions.len();

    let anonymized = !roots.is_empty() && roots.iter().all(|r| crate::anonymize::is_marked(r));
    // Compare with the index in place: by path and content hash.
    let previous = current_generation(dir).and_then(|g| Store::open(&g.join("index.sqlite")).ok().map(|s| (g, s)));
    let mut same_identity = false;
    if let Some((g, store)) = &previous {
        let old: std::collections::HashMap<String, String> =
            store.files()?.into_iter().map(|f| (f.path, f.hash)).collect();
        for (f, h) in icfg.files.iter().zip(&hashes) {
            match old.get(f.path.to_string_lossy().as_ref()) {
                Some(oh) if oh == h => report.unchanged_files += 1,
                Some(_) => report.changed_files += 1,
                None => report.new_files += 1,
            }
        }
        report.removed_files = old.len() - report.unchanged_files - report.changed_files;
        let complete = FILES.iter().all(|f| g.join(f).exists());
        same_identity = complete && read_meta(g).is_ok_and(|m| {
            m.format == FORMAT
                && m.model_sha256 == model_sha
                && m.encoder == enc.hash()
                && m.function_encoder == fenc.hash()
                && m.features == opts.features
                && m.anonymized == anonymized
                && opts.factory.as_ref().is_none_or(|f| *f == m.node_factory)
        });
    } else {
        report.new_files = report.files;
    }
    // A damaged index is never up to date: its error message sends the user here.
    let intact = |g: &Path| read_meta(g).is_ok_and(|m| checksums_hold(g, &m));
    if same_identity
        && !opts.force
        && report.unchanged_files == report.files
        && report.removed_files == 0
        && previous.as_ref().is_some_and(|(g, _)| intact(g))
    {
        report.up_to_date = true;
        report.total_seconds = t0.elapsed().as_secs_f64();
        claim.keep();
        return Ok(report);
    }
    drop(previous);

    // Node vectors. Unchanged files cost no encoding: their texts come from the vector cache.
    let t1 = Instant::now();
    let stats = || {
        let (a, b) = (enc.stats(), fenc.stats());
        if std::ptr::eq(enc, fenc) { (a.encoded, a.cache_hits) } else { (a.encoded + b.encoded, a.cache_hits + b.cache_hits) }
    };
    let before = stats();
    let hidden = model.gcn.hidden as usize;
    let file_of_node: Vec<u32> = icfg.graph.node_weights().map(|n| n.file).collect();
    let total_files = icfg.files.len();
    let rows = embed_with_progress(&model, &icfg, enc, &mut |done, total| {
        let files_done = if done >= total { total_files } else { file_of_node.get(done).map_or(total_files, |&f| f as usize) };
        progress("embed", files_done, total_files);
    })?;
    let width = hidden + crate::model::embed::IN_DIM;
    // Shapes read the operator counts the embedding made (ln(1 + count) after the GCN block).
    progress("shapes", 0, icfg.functions.len());
    let ops = |n: petgraph::graph::NodeIndex| {
        let r = &rows[n.index() * width + hidden..n.index() * width + hidden + 7];
        crate::features::OpCounts(std::array::from_fn(|i| (r[i].exp() - 1.0).round().max(0.0) as u32))
    };
    let shapes: Vec<crate::shape::Shape> =
        (0..icfg.functions.len() as u32).into_par_iter().map(|f| crate::shape::Shape::of_function(&icfg, f, &ops)).collect();
    let shape_bytes = crate::shape::store::encode(&shapes);
    drop(shapes);
    let docs = lexical::documents(&icfg, &sources, &|f| {
        function_comment(&icfg, f, &sources[icfg.functions[f as usize].meta.file as usize]).to_string()
    });
    let lexical_bytes = lexical::encode(&docs);
    drop(docs);
    let dim = opts.features.dim(hidden);
    let mut ids = Vec::new();
    let mut search_rows = Vec::new();
    for n in icfg.graph.node_indices() {
        if vectors::searchable(icfg.graph[n].kind) {
            ids.push(n.index() as u64);
            opts.features.search_vector(&rows[n.index() * width..(n.index() + 1) * width], hidden, &mut search_rows);
        }
    }
    drop(rows);
    // Function texts for natural-language search.
    progress("functions", 0, icfg.functions.len());
    let ftexts: Vec<String> = (0..icfg.functions.len() as u32)
        .into_par_iter()
        .map(|f| function_text(&icfg, f, &sources[icfg.functions[f as usize].meta.file as usize]))
        .collect();
    // Large chunks: the encoder sorts each by length, so rows of a batch pad little.
    const FUNCTION_CHUNK: usize = 4096;
    let mut fvecs = Vec::with_capacity(ftexts.len() * crate::features::DIM);
    for (chunk_no, chunk) in ftexts.chunks(FUNCTION_CHUNK).enumerate() {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        for v in fenc.encode(&refs)? {
            fvecs.extend_from_slice(&v);
        }
        progress("functions", (chunk_no * FUNCTION_CHUNK + chunk.len()).min(ftexts.len()), ftexts.len());
    }
    let after = stats();
    report.texts_encoded = after.0 - before.0;
    report.texts_from_cache = after.1 - before.1;
    report.embed_seconds = t1.elapsed().as_secs_f64();

    // Write the new generation aside.
    let t2 = Instant::now();
    progress("write", 0, 1);
    let next = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("gen-")?.split('.').next()?.parse::<u64>().ok())
        .max()
        .map_or(1, |n| n + 1);
    let gen_name = format!("gen-{next:06}");
    let tmp = dir.join(format!("{gen_name}.tmp-{}", std::process::id()));
    std::fs::create_dir_all(tmp.join("model")).map_err(io(&tmp))?;
    // Readers pin the generation by this file (see `lock`); it exists before anyone can.
    let readers = tmp.join(lock::READERS);
    std::fs::write(&readers, b"").map_err(io(&readers))?;
    let node_factory = vectors::factory_for(ids.len(), opts.flat_max, opts.factory.as_deref());
    let nodes_index = if vectors::projects(ids.len()) {
        let p = Projection::fit(&search_rows, dim, vectors::PCA_DIM)?;
        p.write(&tmp.join("nodes.pca"))?;
        vectors::build(&node_factory, p.d_out, &p.apply(&search_rows)?)?
    } else {
        vectors::build(&node_factory, dim, &search_rows)?
    };
    vectors::write(&nodes_index, &tmp.join("nodes.faiss"))?;
    drop(nodes_index);
    // Vector number → ICFG node, for factories that cannot store ids themselves.
    let ids_path = tmp.join("nodes.ids");
    let id_bytes: Vec<u8> = ids.iter().flat_map(|&i| (i as u32).to_le_bytes()).collect();
    std::fs::write(&ids_path, id_bytes).map_err(io(&ids_path))?;
    let function_factory = vectors::function_factory(ftexts.len());
    let f_index = vectors::build(&function_factory, crate::features::DIM, &fvecs)?;
    vectors::write(&f_index, &tmp.join("functions.faiss"))?;
    for (name, bytes) in [("shapes.bin", &shape_bytes), ("lexical.bin", &lexical_bytes)] {
        let p = tmp.join(name);
        std::fs::write(&p, bytes).map_err(io(&p))?;
    }
    let csr = Csr::from_icfg(&icfg);
    let gpath = tmp.join("graph.bin");
    std::fs::write(&gpath, csr.to_bytes()).map_err(io(&gpath))?;
    for f in ["weights.safetensors", "manifest.json"] {
        let (from, to) = (model_dir.join(f), tmp.join("model").join(f));
        std::fs::copy(&from, &to).map_err(io(&from))?;
    }
    let mut checksums = std::collections::BTreeMap::new();
    for name in CHECKSUMMED {
        let p = tmp.join(name);
        match std::fs::read(&p) {
            Ok(bytes) => {
                checksums.insert(name.to_string(), sha256_hex(&bytes));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && name == "nodes.pca" => {}
            Err(e) => return Err(IndexError::Io { path: p, source: e }),
        }
    }
    let meta = IndexMeta {
        format: FORMAT,
        beryl: env!("CARGO_PKG_VERSION").to_string(),
        feature_schema: FEATURE_SCHEMA,
        encoder: enc.hash().to_string(),
        statement_model: encs.statements,
        function_encoder: fenc.hash().to_string(),
        function_model: encs.functions,
        model_sha256: model_sha,
        model_lang: model.manifest.lang.clone(),
        hidden,
        features: opts.features,
        node_factory,
        function_factory,
        roots: roots.iter().map(|r| r.display().to_string()).collect(),
        anonymized,
        files: icfg.files.len(),
        lines: report.lines,
        source_bytes: report.source_bytes,
        functions: icfg.functions.len(),
        nodes: icfg.graph.node_count(),
        indexed_nodes: ids.len(),
        edges: icfg.graph.edge_count(),
        skipped: corpus.skipped.len(),
        created_unix: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        checksums,
    };
    let meta_json = serde_json::to_string_pretty(&meta).map_err(|e| IndexError::Corrupt(e.to_string()))?;
    Store::create(
        &tmp.join("index.sqlite"),
        &icfg,
        &hashes,
        &[("schema", FORMAT.to_string()), ("meta", meta_json.clone())],
    )?;
    let mpath = tmp.join("meta.json");
    std::fs::write(&mpath, meta_json).map_err(io(&mpath))?;
    for entry in std::fs::read_dir(&tmp).map_err(io(&tmp))?.flatten() {
        if let Ok(f) = std::fs::File::open(entry.path()) {
            let _ = f.sync_all();
        }
    }
    // Fault-injection tests kill the process here, with the new generation written aside.
    if let Some(ms) = std::env::var("BERYL_TEST_PAUSE_BEFORE_SWAP_MS").ok().and_then(|v| v.parse::<u64>().ok()) {
        progress("swap", 0, 1);
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    // Swap: the finished folder gets its final name, then `current` moves to it at once.
    let gen = dir.join(&gen_name);
    std::fs::rename(&tmp, &gen).map_err(io(&gen))?;
    let link_tmp = dir.join(format!("current.tmp-{}", std::process::id()));
    let _ = std::fs::remove_file(&link_tmp);
    std::os::unix::fs::symlink(&gen_name, &link_tmp).map_err(io(&link_tmp))?;
    std::fs::rename(&link_tmp, dir.join("current")).map_err(io(dir))?;
    sweep(dir, Some(&gen));
    report.write_seconds = t2.elapsed().as_secs_f64();
    report.index_bytes = dir_bytes(&gen);
    report.total_seconds = t0.elapsed().as_secs_f64();
    progress("done", 1, 1);
    claim.keep();
    Ok(report)
}

pub(super) fn same_encoder<'e>(level: &str, want: &str, want_model: TextModel, model: TextModel, enc: &'e Encoder) -> Result<&'e Encoder, IndexError> {
    if enc.hash() == want {
        return Ok(enc);
    }
    Err(IndexError::Mismatch(format!(
        "its {level} vectors come from text encoder {} ({}), this search loaded {} ({})",
        want_model.name(),
        &want[..want.len().min(16)],
        model.name(),
        &enc.hash()[..16]
    )))
}

pub(super) fn dir_bytes(p: &Path) -> u64 {
    let mut total = 0;
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => total += dir_bytes(&e.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}
