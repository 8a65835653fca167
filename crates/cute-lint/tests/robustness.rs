//! Bad input never panics or hangs: every fixture, mutated at random
//! (lines dropped, duplicated, truncated, tokens spliced in), is analysed
//! to completion within its budget.

use std::path::Path;
use std::time::{Duration, Instant};

use cute_lint::{analyze_text, AnalysisOptions};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const TOKENS: &[&str] = &[
    "(", ")", ":", "\n    ", "if tidx == 0:\n", "cute.arch.mbarrier_wait(gate, ", "phase ^= 1\n", "for i in range(3):\n",
    "return\n", "é𝜙", "\"\"\"", "cute.arch.mbarrier_arrive(gate, 7)\n", "while True:\n", "0x", "**", "lambda: 0",
];

fn mutate(text: &str, rng: &mut Rng) -> String {
    let lines: Vec<&str> = text.lines().collect();
    match rng.below(4) {
        0 => {
            let a = rng.below(lines.len());
            let b = (a + 1 + rng.below(6)).min(lines.len());
            [&lines[..a], &lines[b..]].concat().join("\n")
        }
        1 => {
            let a = rng.below(lines.len());
            let b = (a + 1 + rng.below(8)).min(lines.len());
            [&lines[..b], &lines[a..b], &lines[b..]].concat().join("\n")
        }
        2 => {
            let mut cut = rng.below(text.len());
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text[..cut].to_string()
        }
        _ => {
            let mut at = rng.below(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            format!("{}{}{}", &text[..at], TOKENS[rng.below(TOKENS.len())], &text[at..])
        }
    }
}

/// An analysis still running after this long hangs. Every exploration
/// here has 300 ms, but a mutated file has many ways and kernels, and the
/// suite runs beside other test binaries on a machine that may be busy
/// (one input that takes a few seconds alone took 11 s there): as in
/// `fuzz_replay.rs`, this asks only that every analysis ends.
const HANG: Duration = Duration::from_secs(60);

#[test]
fn mutated_fixtures_are_analysed_without_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut files = Vec::new();
    // Every fixture, the modules of package fixtures too.
    let mut dirs = vec![dir];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "py") {
                files.push(std::fs::read_to_string(path).unwrap());
            }
        }
    }
    files.sort();
    let options = AnalysisOptions { max_time: Duration::from_millis(300), ..AnalysisOptions::default() };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let start = Instant::now();
    let mut runs = 0;
    for text in &files {
        for _ in 0..25 {
            let mutated = mutate(text, &mut rng);
            let t = Instant::now();
            let _ = analyze_text(&mutated, &options);
            assert!(t.elapsed() < HANG, "analysis ran {:?} on:\n{mutated}", t.elapsed());
            runs += 1;
        }
    }
    eprintln!("{runs} mutated files analysed in {:?}", start.elapsed());
}

#[test]
fn a_large_file_is_analysed() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/untoggled_phase/jacobi_cluster_clean.py");
    let text = std::fs::read_to_string(path).unwrap();
    // Many copies of the kernel under different names: a few megabytes.
    let mut big = String::new();
    for i in 0..300 {
        big.push_str(&text.replace("def jacobi_kernel", &format!("def jacobi_kernel_{i}")));
    }
    assert!(big.len() > 1_000_000);
    let diags = analyze_text(&big, &AnalysisOptions::default());
    assert!(diags.iter().all(|d| d.severity != cute_lint::Severity::Error), "{:?}", diags.first());
}

/// Deeply nested code: expressions thousands of levels deep (generated
/// sums, parentheses, nested calls and lists) and hundreds of nested blocks
/// and functions are analysed on a thread with the default 2 MB stack, the
/// one the command line's and the server's workers have; an expression too
/// deep to follow is not known statically, which a synchronization that
/// depends on it reports.
#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    let kernel = |body: String| format!("import cutlass\nimport cutlass.cute as cute\n\n\n@cute.kernel\ndef k(n: cutlass.Int32):\n{body}");
    let nested_blocks = |open: &dyn Fn(usize) -> String, depth: usize| {
        let mut body: String = (0..depth).map(|i| format!("{}{}\n", "    ".repeat(i + 1), open(i))).collect();
        body.push_str(&format!("{}cute.arch.sync_threads()\n", "    ".repeat(depth + 1)));
        body
    };
    let cases = [
        ("parentheses", kernel(format!("    x = {}1{}\n    cute.arch.sync_threads()\n", "(".repeat(3000), ")".repeat(3000)))),
        ("a long sum", kernel(format!("    x = {}\n    cute.arch.sync_threads()\n", vec!["1"; 20_000].join(" + ")))),
        ("nested lists", kernel(format!("    x = {}{}\n    cute.arch.sync_threads()\n", "[".repeat(5000), "]".repeat(5000)))),
        (
            "a barrier id of nested calls",
            kernel(format!("    cute.arch.barrier(barrier_id={}1{}, number_of_threads=128)\n", "abs(".repeat(2000), ")".repeat(2000))),
        ),
        ("nested ifs", kernel(nested_blocks(&|i| format!("if n > {i}:"), 300))),
        // Past Python's own limit of 100 levels: a syntax error, said.
        ("2,000 nested blocks", kernel(nested_blocks(&|i| format!("if n > {i}:"), 2000))),
        ("nested loops", kernel(nested_blocks(&|i| format!("for i{i} in range(2):"), 60))),
    ];
    for (what, text) in cases {
        let analysed = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || analyze_text(&text, &AnalysisOptions::default()))
            .unwrap()
            .join()
            .unwrap_or_else(|_| panic!("{what}: the analysis panicked"));
        if what == "2,000 nested blocks" {
            assert!(analysed.iter().any(|d| d.name == "analysis-incomplete"), "{what}: {analysed:?}");
        }
        if what == "a barrier id of nested calls" {
            assert!(
                analysed.iter().any(|d| d.name == "analysis-incomplete" && d.message.contains("not known statically")),
                "{what}: {analysed:?}"
            );
        }
    }
}

/// A file of 50,000 functions and one kernel that calls the last: the
/// kernel is checked (the helper it calls is found among them all), on a
/// thread with the default 2 MB stack.
#[test]
fn a_file_of_fifty_thousand_functions_is_analysed() {
    let mut text = String::from("import cutlass\nimport cutlass.cute as cute\n\n");
    for i in 0..50_000 {
        text.push_str(&format!("def f{i}(x):\n    return x + {i}\n\n"));
    }
    text.push_str("@cute.jit\ndef wait_twice(mbar):\n    cute.arch.mbarrier_wait(mbar, 0)\n    cute.arch.mbarrier_wait(mbar, 0)\n\n");
    text.push_str("@cute.kernel\ndef k(n: cutlass.Int32):\n    smem = cutlass.utils.SmemAllocator()\n    mbar = smem.allocate_array(cutlass.Int64, 1)\n    if cute.arch.thread_idx()[0] == 0:\n        cute.arch.mbarrier_init(mbar, 1)\n    cute.arch.mbarrier_init_fence()\n    cute.arch.sync_threads()\n    wait_twice(mbar)\n");
    let found = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || analyze_text(&text, &AnalysisOptions::default()))
        .unwrap()
        .join()
        .expect("the analysis panicked");
    // Nobody arrives, and the helper waits twice on one parity: found
    // through the 50,000.
    assert!(found.iter().any(|d| ["deadlock", "untoggled-phase"].contains(&d.name) && !d.related.is_empty()), "{found:?}");
}
