//! Any input to the plain-pseudocode converter: an error or p-code that parses,
//! never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use beryl::pcode::{self, Classifier};
use std::sync::LazyLock;

static CLF: LazyLock<Classifier> =
    LazyLock::new(|| Classifier::load(&Classifier::default_path()).expect("shipped model loads"));

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    if let Ok(conv) = pcode::convert(src, &CLF) {
        assert!(pcode::parse(&conv.pcode).is_ok());
    }
});
