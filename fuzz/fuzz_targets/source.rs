//! Any text as a source file in any language beryl reads: parsing, CFG building, call
//! linking and operator counting must not panic, and every edge and line span must lie
//! inside what was read. The first byte picks the language (its extension), as the walker
//! would; the rest is the file, invalid UTF-8 replaced as the walker's reader does.
#![no_main]

use beryl::features::math;
use beryl::graph::{Icfg, SourceFile};
use beryl::lang::parse_file;
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

const FILES: [&str; 7] = ["a.c", "a.cc", "a.h", "A.java", "a.py", "a.rs", "a.go"];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    // Larger files add run time, not new paths: the readers work per statement.
    if rest.len() > 32 * 1024 {
        return;
    }
    let name = FILES[pick as usize % FILES.len()];
    let src = String::from_utf8_lossy(rest);
    let lines = src.split('\n').count() as u32;
    let Ok(parsed) = parse_file(std::path::Path::new(name), &src, 0) else { return };
    let mut counted = 0;
    for (meta, cfg) in &parsed.functions {
        assert!(meta.lines.0 <= meta.lines.1 && meta.lines.1 <= lines, "{meta:?}");
        for &(a, b, _) in &cfg.edges {
            assert!((a as usize) < cfg.nodes.len() && (b as usize) < cfg.nodes.len());
        }
        for n in &cfg.nodes {
            assert!(n.lines.0 <= n.lines.1 && n.lines.1 <= lines, "{:?} {:?}", n.lines, n.text);
            assert!(n.bytes.0 <= n.bytes.1 && n.bytes.1 as usize <= src.len());
            // Operator counting re-parses each text; a few per input keep the runs fast.
            if counted < 16 {
                let _ = math::count_source(n.lang, &n.text);
                counted += 1;
            }
        }
    }
    // Two copies of the file in two folders: calls resolve within and across files.
    let mut icfg = Icfg::default();
    for dir in ["p", "q"] {
        let again = parse_file(std::path::Path::new(name), &src, 0).expect("parsed once already");
        let file = SourceFile {
            path: PathBuf::from(dir).join(name),
            lang: again.lang,
            lines,
            bytes: src.len() as u64,
            error_regions: again.error_regions,
            unit: again.unit,
            removed: false,
            project: 0,
        };
        icfg.add_file(file, again.functions);
    }
    icfg.link();
    for site in &icfg.calls {
        assert!(site.targets.iter().all(|&t| (t as usize) < icfg.functions.len()));
    }
});
