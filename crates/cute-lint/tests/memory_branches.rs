//! Conditions on runtime values that only memory accesses depend on (a
//! bounds predicate around a copy, a flag choosing which buffer to fill):
//! both branches are run, one after the other, in every run of the threads,
//! instead of one way of deciding them per run. However many of them a
//! kernel has, it is checked in full, and a race under one is found.

use cute_lint::{analyze_text, AnalysisOptions, Diagnostic, Severity};

/// A kernel of 128 threads with shared buffers `a` and `b` of 128 floats and
/// a runtime bound `n`, whose body is `body` (indented four spaces).
fn kernel(body: &str) -> String {
    let body: String = body.lines().map(|l| format!("    {l}\n")).collect();
    format!(
        r#"
import cutlass
import cutlass.cute as cute

@cute.struct
class SharedStorage:
    a: cute.struct.MemRange[cutlass.Float32, 128]
    b: cute.struct.MemRange[cutlass.Float32, 128]

@cute.kernel
def k(x: cute.Tensor, y: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    storage = cutlass.memory.SmemAllocator().allocate(SharedStorage)
    a = storage.a.get_tensor(cute.make_layout(128))
    b = storage.b.get_tensor(cute.make_layout(128))
{body}
@cute.jit
def host(x: cute.Tensor, y: cute.Tensor, n: cutlass.Int32):
    k(x, y, n).launch(grid=[1, 1, 1], block=[128, 1, 1])
"#
    )
}

/// The diagnostics of `body`'s kernel, each with the trimmed text of its line.
fn check(body: &str) -> Vec<(String, Diagnostic)> {
    let src = kernel(body);
    analyze_text(&src, &AnalysisOptions::default())
        .into_iter()
        .map(|d| {
            let line = src[..d.range.start as usize].matches('\n').count();
            (src.lines().nth(line).unwrap_or("").trim().to_string(), d)
        })
        .collect()
}

/// More predicated copies than one way of running the threads would decide
/// conditions for: each `if` guards only loads and stores.
fn predicated_rounds(rounds: usize, barrier: &str) -> String {
    let mut body = String::new();
    for i in 0..rounds {
        body.push_str(&format!("if tidx + {i} < n:\n    a[tidx] = x[tidx + {i}]\nelse:\n    a[tidx] = 0.0\n"));
        body.push_str(barrier);
        body.push_str(&format!("if tidx < n - {i}:\n    y[tidx] = a[127 - tidx]\n"));
        body.push_str("cute.arch.sync_threads()\n");
    }
    body
}

#[test]
fn a_kernel_with_many_predicated_copies_is_checked_in_full() {
    let rounds = cute_check::MAX_OPEN_CONDITIONS + 2;
    let found = check(&predicated_rounds(rounds, "cute.arch.sync_threads()\n"));
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_race_under_a_predicate_is_found_however_many_there_are() {
    let rounds = cute_check::MAX_OPEN_CONDITIONS + 2;
    let found = check(&predicated_rounds(rounds, ""));
    let races: Vec<&(String, Diagnostic)> = found.iter().filter(|(_, d)| d.name == "smem-race").collect();
    assert!(!races.is_empty(), "{found:?}");
    assert!(races.iter().all(|(line, _)| line.starts_with("a[tidx] = ") || line.starts_with("y[tidx] = a[")), "{races:?}");
    assert!(found.iter().all(|(_, d)| d.name != "analysis-incomplete"), "{found:?}");
}

/// The race is on the branch where the condition holds: it rests on the
/// data taking that branch, so it is a warning that names the condition.
#[test]
fn a_race_only_one_branch_makes_is_a_warning_naming_its_condition() {
    let found = check("if tidx < n:\n    a[tidx] = x[tidx]\ny[tidx] = a[127 - tidx]\n");
    let (line, race) = found.iter().find(|(_, d)| d.name == "smem-race").expect("the race");
    assert!(line.starts_with("a[tidx]") || line.starts_with("y[tidx]"), "{line}");
    assert_eq!(race.severity, Severity::Warning);
    assert!(race.notes.iter().any(|n| n.contains("(on the argument `n` of `host`)")), "{:?}", race.notes);
    // Unconditional, the same race is an error.
    let found = check("a[tidx] = x[tidx]\ny[tidx] = a[127 - tidx]\n");
    let (_, race) = found.iter().find(|(_, d)| d.name == "smem-race").expect("the race");
    assert_eq!(race.severity, Severity::Error);
}

/// Both branches write the buffer the other threads read after the barrier:
/// ordered either way, whichever branch a thread takes.
#[test]
fn both_branches_ordered_by_the_barrier_are_silent() {
    let found = check("if tidx < n:\n    a[tidx] = x[tidx]\nelse:\n    b[tidx] = x[tidx]\ncute.arch.sync_threads()\ny[tidx] = a[127 - tidx] + b[127 - tidx]\n");
    assert!(found.is_empty(), "{found:?}");
}

/// A value one branch assigns and a later access uses (`i`, the index of a
/// store after the condition) would have two values after it, and be known
/// in neither: such a condition is decided per run as before, so that the
/// index stays known on each way.
#[test]
fn a_value_a_branch_assigns_for_later_keeps_its_condition_decided_per_run() {
    let body = "i = tidx\nif tidx < n:\n    i = 127 - tidx\n    y[tidx] = x[tidx]\nb[i] = x[tidx]\ny[tidx] = b[tidx]\n";
    assert!(memory_controls(body).is_empty());
    // The same branch without the binding is run both ways.
    assert_eq!(memory_controls("i = tidx\nif tidx < n:\n    a[i] = x[tidx]\ncute.arch.sync_threads()\nb[i] = a[127 - i]\n").len(), 1);
}

/// A condition that guards synchronization is still decided per run, with
/// the accesses under it.
#[test]
fn a_condition_around_a_barrier_is_still_decided_per_run() {
    assert!(memory_controls("a[tidx] = x[tidx]\nif n > 0:\n    cute.arch.sync_threads()\ny[tidx] = a[127 - tidx]\n").is_empty());
    assert!(memory_controls("if n > 0:\n    a[tidx] = x[tidx]\n    cute.arch.sync_threads()\ny[tidx] = a[127 - tidx]\n").is_empty());
}

/// The headers `body`'s kernel keeps for memory ordering alone.
fn memory_controls(body: &str) -> Vec<cute_ir::ast::StmtId> {
    let src = kernel(body);
    let module = cute_ir::lower_text(&src).unwrap();
    let kernel = module.kernels().next().unwrap();
    cute_ir::slice_kernel(&module, kernel, &src).memory_controls.into_iter().collect()
}

/// The slice names the conditions only memory accesses depend on.
#[test]
fn the_slice_names_the_conditions_only_memory_depends_on() {
    let src = kernel("if tidx < n:\n    a[tidx] = x[tidx]\ncute.arch.sync_threads()\ny[tidx] = a[127 - tidx]\n");
    let module = cute_ir::lower_text(&src).unwrap();
    let kernel = module.kernels().next().unwrap();
    let slice = cute_ir::slice_kernel(&module, kernel, &src);
    let guard = slice.entries.iter().find(|e| e.text.starts_with("if tidx < n")).expect("the if");
    assert!(guard.kept && !guard.sync, "{guard:?}");
    assert!(slice.memory_controls.contains(&guard.id), "{:?}", slice.memory_controls);
}

/// A barrier taken only when a runtime argument allows: the threads race in
/// the ways where it is not taken, and not in the others. The race rests on
/// the data, so it is no bug report, but it is not dropped either: the
/// kernel is checked only in part, at the condition, with the race named.
#[test]
fn a_race_some_ways_of_the_data_make_is_said_at_its_condition() {
    for (body, racing) in [
        ("a[tidx] = x[tidx]\nif n > 0:\n    cute.arch.sync_threads()\ny[tidx] = a[127 - tidx]\n", "false"),
        ("a[tidx] = x[tidx]\nif n <= 0:\n    pass\nelse:\n    cute.arch.sync_threads()\ny[tidx] = a[127 - tidx]\n", "true"),
        ("b[tidx] = x[tidx]\nif 0 < n:\n    cute.arch.sync_threads()\ny[127 - tidx] = b[127 - tidx] + b[(tidx + 1) % 128]\n", "false"),
    ] {
        let found = check(body);
        assert!(found.iter().all(|(_, d)| d.name == "analysis-incomplete"), "{body}: {found:?}");
        let (line, said) = found.first().unwrap_or_else(|| panic!("{body}: silent"));
        assert!(line.starts_with("if "), "{body}: {line}");
        assert!(said.message.contains("checked only in part") && said.message.contains("(on the argument `n` of `host`)"), "{}", said.message);
        assert!(said.notes.iter().any(|n| n.contains("`smem-race`") && n.contains(&format!("{racing} only"))), "{body}: {:?}", said.notes);
    }
}

/// The same kernels with the barrier taken whatever `n` is: no way races,
/// and nothing is said.
#[test]
fn the_barrier_taken_whatever_the_data_is_silent() {
    for body in [
        "a[tidx] = x[tidx]\ncute.arch.sync_threads()\nif n > 0:\n    y[tidx] = a[127 - tidx]\n",
        "a[tidx] = x[tidx]\nif n > 0:\n    cute.arch.sync_threads()\nelse:\n    cute.arch.sync_threads()\ny[tidx] = a[127 - tidx]\n",
    ] {
        let found = check(body);
        assert!(found.is_empty(), "{body}: {found:?}");
    }
}

/// More optional buffers than one way of running the threads decides
/// conditions for, each named under its own condition on a runtime value
/// (`if n > i: ci = b`, as `if const_expr(mRes is not None): sRes =
/// smem.allocate_tensor(...)`) and used only under it: a name one branch
/// alone binds is known after it, so the conditions are run both ways, and
/// the kernel is checked in full; without the barrier, the race is found.
fn optional_buffers(rounds: usize, barrier: &str) -> String {
    let mut body = String::from("a[tidx] = x[tidx]\n");
    for i in 0..rounds {
        body.push_str(&format!("if n > {i}:\n    c{i} = b\n"));
    }
    for i in 0..rounds {
        body.push_str(&format!("if n > {i}:\n    c{i}[tidx] = x[tidx + {i}]\n"));
    }
    body.push_str(barrier);
    for i in 0..rounds {
        body.push_str(&format!("if n > {i}:\n    y[tidx] = c{i}[127 - tidx]\n"));
    }
    body.push_str("y[tidx] = a[127 - tidx]\n");
    body
}

#[test]
fn a_name_one_branch_binds_for_later_accesses_keeps_its_value() {
    let rounds = cute_check::MAX_OPEN_CONDITIONS + 2;
    let clean = optional_buffers(rounds, "cute.arch.sync_threads()\n");
    assert_eq!(memory_controls(&clean).len(), 3 * rounds);
    let found = check(&clean);
    assert!(found.is_empty(), "{found:?}");
    let found = check(&optional_buffers(rounds, ""));
    assert!(found.iter().any(|(line, d)| d.name == "smem-race" && line.contains("c0[")), "{found:?}");
    assert!(found.iter().all(|(_, d)| d.name != "analysis-incomplete"), "{found:?}");
    // Bound before the condition too, the name would have two values after
    // it: decided per run, as before (the second `if` binds nothing).
    assert_eq!(memory_controls("c = a\nif n > 0:\n    c = b\nif n > 0:\n    c[tidx] = x[tidx]\n").len(), 1);
    // So when the other branch binds it as well.
    assert!(memory_controls("if n > 0:\n    c = b\nelse:\n    c = a\nc[tidx] = x[tidx]\n").is_empty());
}

/// A tensor chosen under a test of a type not known statically (`if
/// isinstance(layout, cute.ComposedLayout): layout = layout.outer`, as the
/// epilogues of `cutlass.utils.gemm.sm100` rebuild a layout), more times
/// than one way decides conditions for: a branch that only binds values is
/// run both ways, and the kernel is checked in full; a name it leaves with
/// two values is not known after it.
#[test]
fn a_test_that_only_chooses_a_value_is_not_decided_per_run() {
    let rounds = cute_check::MAX_OPEN_CONDITIONS + 2;
    let mut body = String::new();
    for i in 0..rounds {
        body.push_str(&format!(
            "t{i} = a\nif {i} < 100 and isinstance(x, cute.ComposedLayout):\n    t{i} = a\nt{i}[tidx] = x[tidx]\ncute.arch.sync_threads()\ny[tidx] = t{i}[127 - tidx]\ncute.arch.sync_threads()\n"
        ));
    }
    let found = check(&body);
    assert!(found.is_empty(), "{found:?}");
}
