//! The p-language (Beryllium §3): parsing p-code into graphs, converting plain
//! pseudocode into p-code, and the math / natural-language line classifier.
//!
//! Typical use:
//! ```no_run
//! # fn main() -> Result<(), beryl::pcode::PcodeError> {
//! use beryl::pcode;
//! let src = std::fs::read_to_string("queries/quicksort.p").unwrap();
//! let procs = pcode::graphs(&src, 7)?;          // one FnCfg per procedure, file id 7
//! let links = pcode::call_sites(&procs);        // QUICKSORT → PARTITION
//! # let _ = links; Ok(()) }
//! ```

pub mod ast;
pub mod cfg;
pub mod classify;
pub mod convert;
pub mod error;
pub mod features;
pub mod mine;
pub mod parser;
pub mod render;

pub use cfg::{build_graphs, call_sites, ProcCall, ProcGraph};
pub use classify::{train, Classifier, LineClass, ModelParams, TrainConfig, TrainReport};
pub use convert::{classify_lines, convert, Conversion, LineDecision, LineLabel, Warning};
pub use error::{PcodeError, SyntaxError};
pub use parser::parse;

/// Parses p-code and builds the graph of each procedure; `file` goes into every node.
pub fn graphs(src: &str, file: u32) -> Result<Vec<ProcGraph>, PcodeError> {
    let prog = parse(src)?;
    Ok(build_graphs(src, &prog, file))
}

/// Reads a file as UTF-8 with typed errors.
pub fn read_file(path: &std::path::Path) -> Result<String, PcodeError> {
    std::fs::read_to_string(path).map_err(|error| PcodeError::Io {
        path: path.to_path_buf(),
        error,
    })
}

/// One p-code file as an ICFG: its procedures, linked by call and return edges where a
/// procedure calls another of the same file (QUICKSORT → PARTITION).
pub fn icfg(src: &str, path: &std::path::Path) -> Result<crate::graph::Icfg, PcodeError> {
    use crate::graph::{CallSite, Icfg, Lang, SourceFile};
    let procs = graphs(src, 0)?;
    let calls = call_sites(&procs);
    let mut icfg = Icfg::default();
    let file = SourceFile {
        path: path.to_path_buf(),
        lang: Lang::Pcode,
        lines: src.lines().count() as u32,
        bytes: src.len() as u64,
        error_regions: 0,
        unit: Default::default(),
        removed: false,
        project: 0,
    };
    let entries: Vec<usize> = procs.iter().map(|p| p.cfg.nodes.len()).collect();
    icfg.add_file(file, procs.into_iter().map(|p| (p.meta, p.cfg)).collect());
    let base: Vec<usize> = entries.iter().scan(0, |acc, &n| { let b = *acc; *acc += n; Some(b) }).collect();
    let sites = calls
        .iter()
        .map(|c| CallSite {
            node: petgraph::graph::NodeIndex::new(base[c.caller] + c.node as usize),
            call: c.call as u32,
            targets: vec![c.callee as u32].into(),
        })
        .collect();
    icfg.add_call_edges(sites);
    Ok(icfg)
}
