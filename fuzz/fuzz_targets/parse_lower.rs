//! Fuzz target `parse_lower`: any bytes, as text, parsed, lowered with
//! recovery, every kernel sliced and its launch resolved (fuzz/src/lib.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    cute_lsp_fuzz::run_target("parse_lower", "parse_lower", data);
});
