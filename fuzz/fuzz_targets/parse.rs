//! Any input: parsing, graph building, call linking and rendering must not panic,
//! and errors must point inside the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use beryl::pcode;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    match pcode::graphs(src, 0) {
        Ok(procs) => {
            let calls = pcode::call_sites(&procs);
            let _ = pcode::render::to_dot(&procs, &calls);
            for p in &procs {
                for &(a, b, _) in &p.cfg.edges {
                    assert!((a as usize) < p.cfg.nodes.len() && (b as usize) < p.cfg.nodes.len());
                }
            }
        }
        Err(e) => {
            let s = e.syntax().expect("parse errors are syntax errors");
            assert!(s.line >= 1 && s.col >= 1);
            assert!(s.line as usize <= src.split('\n').count());
            let _ = e.to_string();
        }
    }
});
