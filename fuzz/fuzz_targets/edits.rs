//! Fuzz target `edits`: a database with one file, the text before the first
//! NUL byte, edited by the script after it (fuzz/src/lib.rs); after each
//! edit the incremental diagnostics must equal those of `analyze_text` on the
//! same text, or the target panics with a divergence.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    cute_lsp_fuzz::run_target("edits", "edits", data);
});
