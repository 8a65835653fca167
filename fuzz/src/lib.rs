//! What the fuzz targets of cute-lsp run, one function per target, so that
//! the replay test (`crates/cute-lint/tests/fuzz_replay.rs`, which includes
//! this file as a module) runs a saved input exactly as the target did:
//!
//! - [`parse_lower`]: parse, lower with recovery, slice every kernel and
//!   resolve its launch;
//! - [`analyze`]: the whole-file analysis with small budgets, and the JSON of
//!   every diagnostic (positions in UTF-16 columns);
//! - [`edits`]: a salsa database with one file, edited again and again; after
//!   each edit the incremental result must be what the whole-file analysis
//!   gives for the same text. A difference panics with a message that starts
//!   with [`DIVERGENCE`].
//!
//! Each runs on a thread with a 2 MiB stack ([`on_small_stack`]), the size of
//! the threads the server and the checks run on, so that recursion too deep
//! for them is found here as a stack overflow.

use std::time::Duration;

use cute_lint::{analyze_text, lint_file_with, AnalysisOptions, Database, Diagnostic, SourceFile};
use salsa::Setter;

/// The stack of the thread each input runs on.
pub const STACK_SIZE: usize = 2 * 1024 * 1024;

/// How a difference between the database and the whole-file analysis
/// begins its panic message (what `scripts/fuzz.sh` counts as a divergence).
pub const DIVERGENCE: &str = "divergence between the database and analyze_text";

/// Edits applied to one input at most.
pub const MAX_EDITS: usize = 12;

/// Runs `f` on a fresh thread named `name` with a [`STACK_SIZE`] stack and
/// returns what it returns; a panic on that thread is resumed on the
/// caller's. (A stack overflow aborts the process, naming the thread.)
pub fn on_small_stack<T: Send>(name: &str, f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name(name.to_string())
            .stack_size(STACK_SIZE)
            .spawn_scoped(scope, f)
            .expect("a thread for the input");
        match handle.join() {
            Ok(value) => value,
            Err(payload) => std::panic::resume_unwind(payload),
        }
    })
}

/// The text of an input: invalid UTF-8 replaced, as an editor would.
pub fn text_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Parse, lower, slice every kernel and resolve every launch.
pub fn parse_lower(text: &str) {
    let _ = cute_syntax::may_define_kernels(text);
    let index = cute_syntax::LineIndex::new(text);
    let _ = index.position(text.len() as u32, cute_syntax::PositionEncoding::Utf16);
    let Ok(tree) = cute_syntax::parse(text) else { return };
    let _ = tree.error_ranges();
    let imports = cute_syntax::ImportMap::from_tree(&tree);
    let _ = cute_syntax::find_kernels(&tree, &imports);
    let module = cute_ir::lower_recovering(&tree);
    let launches = cute_ir::launch::Launches::of_module(&module);
    for (i, kernel) in module.kernels().enumerate() {
        let slice = cute_ir::slice_kernel(&module, kernel, text);
        let _ = slice.kept_count();
        let _ = launches.of_kernel(&module, kernel);
        if i == 0 {
            // The one-kernel entry point runs the host code again.
            let _ = cute_ir::launch::resolve_launch(&module, kernel);
        }
    }
}

/// The budgets of the `analyze` target: an input stays fast, and an input
/// over its budget is reported as such rather than run to the end.
pub fn analysis_options() -> AnalysisOptions {
    AnalysisOptions {
        max_states: 20_000,
        max_time: Duration::from_millis(200),
        workers: 1,
        ..AnalysisOptions::default()
    }
}

/// The whole-file analysis, and the JSON of each diagnostic.
pub fn analyze(text: &str) -> Vec<Diagnostic> {
    let diags = analyze_text(text, &analysis_options());
    let index = cute_syntax::LineIndex::new(text);
    for d in &diags {
        assert!(
            d.range.start <= d.range.end && d.range.end as usize <= text.len(),
            "diagnostic {} has range {:?} outside a text of {} bytes",
            d.code,
            d.range,
            text.len()
        );
        let _ = d.to_json("input.py", &index);
    }
    diags
}

/// The budgets of the `edits` target: explorations end by their state count,
/// never by the clock, so the database and the whole-file analysis stop at
/// the same point and must agree.
pub fn edit_options() -> AnalysisOptions {
    AnalysisOptions {
        max_states: 5_000,
        max_time: Duration::from_secs(3600),
        workers: 1,
        ..AnalysisOptions::default()
    }
}

/// Text an edit inserts or puts in place of a range.
pub const SNIPPETS: &[&str] = &[
    "\n",
    "    ",
    "(",
    ")",
    ":",
    "#",
    "\"\"\"",
    "\\\n",
    "x",
    "0",
    "1",
    "-1",
    "é𝜙",
    "\r\n",
    "\t",
    "pass\n",
    "return\n",
    "if tidx == 0:\n",
    "else:\n",
    "for i in range(3):\n",
    "for i in cutlass.range(n, unroll=1):\n",
    "while True:\n",
    "phase ^= 1\n",
    "phase = 1 - phase\n",
    "lambda: 0",
    "cute.arch.sync_threads()\n",
    "cute.arch.barrier(barrier_id=1, number_of_threads=64)\n",
    "cute.arch.mbarrier_init(gate, 128)\n",
    "cute.arch.mbarrier_init_fence()\n",
    "cute.arch.mbarrier_arrive(gate)\n",
    "cute.arch.mbarrier_wait(gate, phase)\n",
    "cute.arch.mbarrier_arrive_and_expect_tx(gate, 1024)\n",
    "cute.arch.cluster_arrive_relaxed()\n",
    "cute.arch.cluster_wait()\n",
    "cute.arch.fence_proxy(\"async.shared\", space=\"cta\")\n",
    "tidx, _, _ = cute.arch.thread_idx()\n",
    "warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())\n",
    "with cute.arch.elect_one():\n",
    "@cute.kernel\ndef k(a: cute.Tensor):\n",
    "@cute.jit\ndef host(a: cute.Tensor):\n",
    "k(a).launch(grid=[1, 1, 1], block=[128, 1, 1], cluster=[2, 1, 1])\n",
    "import cutlass\nimport cutlass.cute as cute\n",
    "from cutlass import pipeline\n",
    "state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)\n",
    "smem = cutlass.utils.SmemAllocator()\n",
    "N: cutlass.Constexpr = 4\n",
    "# cute-lsp: ignore\n",
];

/// One edit, its positions as fractions of the text's length (so the same
/// edit lands in the same part of the file whatever its length).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    Insert { at: u16, text: String },
    Delete { at: u16, len: u8 },
    Replace { at: u16, len: u8, text: String },
}

impl Edit {
    /// `text` with the edit applied, its positions clamped to the text and
    /// rounded down to character boundaries.
    pub fn apply(&self, text: &str) -> String {
        let start = |at: u16| floor_char_boundary(text, at as usize * (text.len() + 1) / 65536);
        let end = |from: usize, len: u8| floor_char_boundary(text, (from + len as usize).min(text.len())).max(from);
        let mut out = text.to_string();
        match self {
            Edit::Insert { at, text: new } => out.insert_str(start(*at), new),
            Edit::Delete { at, len } => {
                let from = start(*at);
                out.replace_range(from..end(from, *len), "");
            }
            Edit::Replace { at, len, text: new } => {
                let from = start(*at);
                out.replace_range(from..end(from, *len), new);
            }
        }
        out
    }
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The edits a script of bytes spells: per edit, a kind byte, two bytes of
/// position, a length byte, then for a raw insertion that many bytes (a
/// quarter of the length byte, up to 63) of text.
pub fn edits_of_script(script: &[u8]) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut rest = script;
    while edits.len() < MAX_EDITS && rest.len() >= 4 {
        let (kind, at, len) = (rest[0], u16::from_be_bytes([rest[1], rest[2]]), rest[3]);
        rest = &rest[4..];
        let snippet = SNIPPETS[len as usize % SNIPPETS.len()].to_string();
        edits.push(match kind % 4 {
            0 => Edit::Insert { at, text: snippet },
            1 => Edit::Delete { at, len },
            2 => Edit::Replace { at, len: len % 32, text: snippet },
            _ => {
                let n = (len as usize / 4).min(rest.len());
                let raw = text_of(&rest[..n]);
                rest = &rest[n..];
                Edit::Insert { at, text: raw }
            }
        });
    }
    edits
}

/// An input of the `edits` target: the text before the first NUL byte, and
/// the edit script after it. An input without a NUL byte (a Python file of
/// the seed corpus) is all text, and gets a few edits made from a hash of it.
pub fn split_edits_input(bytes: &[u8]) -> (String, Vec<Edit>) {
    match bytes.iter().position(|&b| b == 0) {
        Some(nul) => (text_of(&bytes[..nul]), edits_of_script(&bytes[nul + 1..])),
        None => (text_of(bytes), edits_of_script(&derived_script(bytes))),
    }
}

/// Four edits from an FNV-1a hash of `bytes`, through a xorshift generator.
fn derived_script(bytes: &[u8]) -> Vec<u8> {
    let mut state = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3)) | 1;
    let mut script = Vec::new();
    for _ in 0..4 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        // Raw insertions (kind 3) would read the next edit as their text.
        let mut edit = state.to_le_bytes()[..4].to_vec();
        if edit[0] % 4 == 3 {
            edit[0] = 0;
        }
        script.extend(edit);
    }
    script
}

/// The database's diagnostics after each edit against the whole-file
/// analysis of the same text; panics with [`DIVERGENCE`] at the first
/// difference. Returns the final text.
pub fn edits(initial: &str, edits: &[Edit]) -> String {
    let options = edit_options();
    let mut db = Database::default();
    let file = SourceFile::new(&db, "input.py".to_string(), initial.to_string());
    let mut text = initial.to_string();
    compare(&db, file, &text, &options, None);
    for (step, edit) in edits.iter().enumerate() {
        text = edit.apply(&text);
        file.set_text(&mut db).to(text.clone());
        compare(&db, file, &text, &options, Some((step, edit)));
    }
    text
}

fn compare(db: &Database, file: SourceFile, text: &str, options: &AnalysisOptions, step: Option<(usize, &Edit)>) {
    let incremental = lint_file_with(db, file, options.clone());
    let whole = analyze_text(text, options);
    if incremental.as_ref() != &whole {
        let after = match step {
            Some((i, edit)) => format!("after edit {i} ({edit:?})"),
            None => "before any edit".to_string(),
        };
        panic!(
            "{DIVERGENCE} {after}\n--- text ---\n{text}\n--- database ({} diagnostics) ---\n{incremental:#?}\n--- analyze_text ({} diagnostics) ---\n{whole:#?}",
            incremental.len(),
            whole.len()
        );
    }
}

/// Runs one input of a target (by the target's name) as the target does, on
/// a small stack whose thread is named `name`.
pub fn run_target(target: &str, name: &str, bytes: &[u8]) {
    on_small_stack(name, || match target {
        "parse_lower" => parse_lower(&text_of(bytes)),
        "analyze" => {
            analyze(&text_of(bytes));
        }
        "edits" => {
            let (text, script) = split_edits_input(bytes);
            edits(&text, &script);
        }
        other => panic!("no fuzz target named {other}"),
    })
}
