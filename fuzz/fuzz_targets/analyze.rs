//! Fuzz target `analyze`: any bytes, as text, through the whole-file
//! analysis with small budgets (fuzz/src/lib.rs). An input over its budget
//! must be reported as such, not run on: libFuzzer's `-timeout` counts it as
//! a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    cute_lsp_fuzz::run_target("analyze", "analyze", data);
});
