//! Synchronization the checker does not model is reported, never passed over
//! in silence.

use cute_lint::{analyze_text, AnalysisOptions, Severity};

#[test]
fn pipeline_classes_are_reported_as_not_checked() {
    let src = r#"
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline

@cute.kernel
def k(x: cute.Tensor):
    warp = cute.arch.warp_idx()
    pipe = pipeline.PipelineAsync.create(num_stages=2, producer_group=None, consumer_group=None)
    state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
    if warp == 0:
        for i in range(4):
            pipe.producer_acquire(state)
            pipe.producer_commit(state)
            state.advance()
"#;
    let diags = analyze_text(src, &AnalysisOptions::default());
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].name, "analysis-incomplete");
    assert_eq!(diags[0].severity, Severity::Info);
    assert!(diags[0].message.contains("cutlass.pipeline"), "{}", diags[0].message);
}

#[test]
fn an_unresolved_parity_is_reported_where_it_is() {
    let src = r#"
import cutlass
import cutlass.cute as cute

@cute.kernel
def k(x: cute.Tensor, flags: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bar = cutlass.utils.SmemAllocator().allocate_array(cutlass.Int64, 1)
    if tidx == 0:
        cute.arch.mbarrier_init(bar, 128)
    cute.arch.sync_threads()
    cute.arch.mbarrier_arrive(bar)
    cute.arch.mbarrier_wait(bar, flags[0])

@cute.jit
def host(x: cute.Tensor, flags: cute.Tensor):
    k(x, flags).launch(grid=[1, 1, 1], block=[128, 1, 1])
"#;
    let diags = analyze_text(src, &AnalysisOptions::default());
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].name, "analysis-incomplete");
    assert!(diags[0].message.contains("parity"), "{}", diags[0].message);
    let line = src[..diags[0].range.start as usize].matches('\n').count();
    assert_eq!(src.lines().nth(line).map(str::trim), Some("cute.arch.mbarrier_wait(bar, flags[0])"));
}

/// A device function checked on its own (no kernel of the file calls it)
/// that synchronizes through a pipeline or a named barrier it is handed: the
/// note names the argument, not a method the model would lack; and calls on a pipeline
/// whose `create` is not modelled add no note to the one `create` has.
#[test]
fn a_pipeline_handed_in_is_named_as_such() {
    let src = r#"
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline

@cute.jit
def epilogue(acc_pipeline: pipeline.PipelineAsync, state: pipeline.PipelineState):
    acc_pipeline.consumer_wait(state)
    acc_pipeline.consumer_release(state)

@cute.jit
def epilogue_sync(epilogue_barrier: pipeline.NamedBarrier):
    epilogue_barrier.arrive_and_wait()

@cute.kernel
def k(n: cutlass.Int32):
    producers = pipeline.CooperativeGroup(pipeline.Agent.Thread, 1)
    consumers = pipeline.CooperativeGroup(pipeline.Agent.Thread, n)
    p = pipeline.PipelineTmaUmma.create(num_stages=2, producer_group=producers, consumer_group=consumers, barrier_storage=None)
    s = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
    p.consumer_wait(s)
    p.consumer_release(s)
"#;
    let diags = analyze_text(src, &AnalysisOptions::default());
    assert_eq!(diags.len(), 3, "{diags:?}");
    let of = |kernel: &str| diags.iter().find(|d| d.message.starts_with(&format!("`{kernel}`"))).unwrap();
    let handed = of("epilogue");
    assert_eq!(handed.name, "analysis-incomplete");
    assert!(handed.message.contains("a pipeline it is passed (`acc_pipeline`)"), "{}", handed.message);
    assert!(!handed.message.contains("does not cover"), "{}", handed.message);
    let barrier = of("epilogue_sync");
    assert!(barrier.message.contains("a named barrier it is passed (`epilogue_barrier`)"), "{}", barrier.message);
    let created = of("k");
    assert!(created.message.contains("PipelineTmaUmma.create"), "{}", created.message);
    assert!(created.notes.iter().all(|n| !n.contains("consumer_wait") && !n.contains("consumer_release")), "{:?}", created.notes);
}

/// A pipeline made by a function of another module (a package's own
/// subclass of a `cutlass.pipeline` class): the note names the function as
/// the import resolves it, and each other call on such a pipeline is related
/// information at its own line, said once (not again as a note).
#[test]
fn a_pipeline_made_in_another_file_is_named_with_its_module() {
    let src = r#"
import cutlass
import cutlass.cute as cute
from cutlass import pipeline
from flash_attn.cute import pipeline as pipeline_custom

@cute.kernel
def k(n: cutlass.Int32):
    warp = cute.arch.warp_idx()
    producers = pipeline.CooperativeGroup(pipeline.Agent.Thread, 1)
    consumers = pipeline.CooperativeGroup(pipeline.Agent.Thread, 32)
    p = pipeline_custom.PipelineAsync.create(num_stages=2, producer_group=producers, consumer_group=consumers, barrier_storage=None)
    s = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
    if warp == 0:
        p.consumer_wait(s)
        p.consumer_release(s)
"#;
    let diags = analyze_text(src, &AnalysisOptions::default());
    assert_eq!(diags.len(), 1, "{diags:?}");
    let d = &diags[0];
    assert_eq!(d.name, "analysis-incomplete");
    assert!(
        d.message.contains("(`flash_attn.cute.pipeline.PipelineAsync.create`, from another module)"),
        "{}",
        d.message
    );
    let line_of = |offset: u32| src[..offset as usize].matches('\n').count();
    let release = d.related.iter().find(|r| r.message.contains("consumer_release")).expect("the release is related");
    assert_eq!(src.lines().nth(line_of(release.range.start)).map(str::trim), Some("p.consumer_release(s)"));
    assert!(d.notes.iter().all(|n| !n.contains("consumer_release")), "said twice: {:?}", d.notes);
}

/// A kernel whose barriers depend on three flags known only at run time,
/// with `ROUNDS` barriers per thread.
fn flags_kernel(rounds: u32) -> String {
    r#"
import cutlass
import cutlass.cute as cute


@cute.kernel
def k(a: cutlass.Int32, b: cutlass.Int32, c: cutlass.Int32):
    for i in cutlass.range_constexpr(ROUNDS):
        cute.arch.sync_threads()
    if a > 0:
        cute.arch.sync_threads()
    if b > 0:
        cute.arch.sync_threads()
    if c > 0:
        cute.arch.sync_threads()


@cute.jit
def host(a: cutlass.Int32, b: cutlass.Int32, c: cutlass.Int32):
    k(a, b, c).launch(grid=[1, 1, 1], block=[512, 1, 1])
"#
    .replace("ROUNDS", &rounds.to_string())
}

#[test]
fn ways_of_deciding_runtime_conditions_that_would_not_fit_the_budget_are_not_run() {
    // 512 threads running 40 barriers: the 8 ways fit, and are all run.
    let diags = analyze_text(&flags_kernel(40), &AnalysisOptions::default());
    assert!(diags.is_empty(), "{diags:?}");
    // 1,000 barriers: each way runs more than 500,000 statements, and the 7
    // runs beyond the first would pass the 1,000,000 the threads may run.
    let diags = analyze_text(&flags_kernel(1000), &AnalysisOptions::default());
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].name, "analysis-incomplete");
    let message = &diags[0].message;
    assert!(message.starts_with("`k` was not checked"), "{message}");
    assert!(message.contains("(lines 10, 12, 14)"), "{message}");
    assert!(message.contains("8 ways"), "{message}");
    assert!(diags[0].help.as_deref().is_some_and(|h| h.contains("Constexpr")), "{:?}", diags[0].help);
}

/// The consumer releases through a function of another module, handed the
/// pipeline: what that function does is not followed, so the kernel is
/// not checked, naming the call (it was a hang: nothing ever released).
#[test]
fn a_pipeline_handed_to_a_function_of_another_file_is_reported() {
    let src = r#"
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils as utils
from .epilogues import drain


@cute.kernel
def k(x: cute.Tensor):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 4)
    pipe = pipeline.PipelineAsync.create(
        num_stages=2,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        barrier_storage=storage,
    )
    if warp == 0:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
        for i in cutlass.range(4, unroll=1):
            pipe.producer_acquire(state)
            pipe.producer_commit(state)
            state.advance()
    if warp == 1:
        drain(pipe, x)


@cute.jit
def host(x: cute.Tensor):
    k(x).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#;
    let diags = analyze_text(src, &AnalysisOptions::default());
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].name, "analysis-incomplete");
    assert!(
        diags[0].message.contains("it hands `pipe` to `drain(...)`, which is not defined in this file"),
        "{}",
        diags[0].message
    );
    let line = src[..diags[0].range.start as usize].matches('\n').count() + 1;
    assert_eq!(line, src[..src.find("drain(pipe, x)").unwrap()].matches('\n').count() + 1);
}

/// A `PipelineOrder` whose group or size is known only at run time, and a
/// method of it the model does not know, are reported where they are.
#[test]
fn a_pipeline_order_not_known_statically_is_reported() {
    let src = |group: &str, call: &str| {
        format!(
            r#"
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils as utils

@cute.kernel
def k(x: cute.Tensor, g: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 4)
    order = pipeline.PipelineOrder.create(
        barrier_storage=storage,
        depth=2,
        length=2,
        group_id={group},
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 128),
    )
    order.wait()
    {call}

@cute.jit
def host(x: cute.Tensor, g: cutlass.Int32):
    k(x, g).launch(grid=[1, 1, 1], block=[256, 1, 1])
"#
        )
    };
    let found = analyze_text(&src("g", "order.arrive()"), &AnalysisOptions::default());
    assert!(found.iter().any(|d| d.name == "analysis-incomplete" && d.message.contains("its `group_id` is not known statically")), "{found:?}");
    let found = analyze_text(&src("tidx // 128", "order.get_barrier_for_current_stage_idx(0)"), &AnalysisOptions::default());
    assert!(
        found.iter().any(|d| d.name == "analysis-incomplete" && d.message.contains("`get_barrier_for_current_stage_idx` of a `PipelineOrder`")),
        "{found:?}"
    );
}

/// One warp arrives on an mbarrier and another waits on it; `HANDOFF` is
/// a call that is handed the barrier (`bar`, or `done`, which the waiter
/// waits on).
fn handed_barrier_kernel(imports: &str, handoff: &str) -> String {
    format!(
        r#"
import cutlass
import cutlass.cute as cute
import cutlass.utils as utils
{imports}

@cute.kernel
def k(x: cute.Tensor):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 2)
    bar = storage
    done = storage + 1
    if warp == 0:
        with cute.arch.elect_one():
            cute.arch.mbarrier_init(bar, 1)
            cute.arch.mbarrier_init(done, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    if warp == 0:
        with cute.arch.elect_one():
            cute.arch.mbarrier_arrive(bar)
            HANDOFF
    if warp == 1:
        cute.arch.mbarrier_wait(bar, 0)
        cute.arch.mbarrier_wait(done, 0)

@cute.jit
def host(x: cute.Tensor):
    k(x).launch(grid=[1, 1, 1], block=[64, 1, 1])
"#
    )
    .replace("HANDOFF", handoff)
}

/// A call the checker does not know that is handed an mbarrier (a function
/// of a module it does not read, a method of an object it does not know;
/// positionally, by keyword or inside a tuple) may arrive on it: the kernel
/// is not checked, and the note names the call. Dropped, the waiter on
/// `done` would be reported as a hang.
#[test]
fn a_call_handed_an_mbarrier_that_the_model_does_not_know_is_reported() {
    for (imports, handoff, callee) in [
        ("import mylib", "mylib.umma_arrive(done)", "`mylib.umma_arrive(...)`"),
        ("from mylib import umma_arrive", "umma_arrive(done)", "`umma_arrive(...)`"),
        ("import mylib", "mylib.signal(mbar_ptr=done, count=1)", "`mylib.signal(...)`"),
        ("import mylib", "mylib.signal_all((bar, done))", "`mylib.signal_all(...)`"),
        ("import mylib", "mylib.Signaller().arrive_on(done + 0)", "`Signaller(...).arrive_on(...)`"),
        // An attribute of the storage, not a name bound to it.
        ("import mylib", "mylib.umma_arrive(storage + 1)", "`mylib.umma_arrive(...)`"),
        // A function of the DSL the model follows only with a peer rank known
        // statically: here it is handed none.
        ("", "cute.arch.store_async_dsmem(x.iterator, cutlass.Int32(0), done)", "`cute.arch.store_async_dsmem`"),
    ] {
        let src = handed_barrier_kernel(imports, handoff);
        let diags = analyze_text(&src, &AnalysisOptions::default());
        assert!(diags.len() == 1 && diags[0].name == "analysis-incomplete", "{handoff}: {diags:?}");
        assert!(diags[0].message.contains(callee), "{handoff}: {}", diags[0].message);
        let line = src[..diags[0].range.start as usize].matches('\n').count();
        assert_eq!(src.lines().nth(line).map(str::trim), Some(handoff), "{handoff}");
    }
    // The same call through a helper of the file, which is inlined: the
    // call inside it is the one reported.
    let helper = handed_barrier_kernel("import mylib", "signal(done)")
        .replace("@cute.kernel", "@cute.jit\ndef signal(mbar):\n    mylib.umma_arrive(mbar)\n\n@cute.kernel");
    let diags = analyze_text(&helper, &AnalysisOptions::default());
    assert!(diags.len() == 1 && diags[0].message.contains("mylib.umma_arrive"), "{diags:?}");
}

/// Calls that only read a barrier pointer, or that the model follows, are no
/// reason not to check: printing it, an `mbarrier_init`, a helper of the file
/// that computes with it, a view of it; and a call handed other shared memory
/// than mbarriers is none either.
#[test]
fn calls_that_only_read_a_barrier_are_not_reported() {
    for (imports, handoff) in [
        ("", r#"cute.printf("bar %d", bar)"#),
        ("", "print(done)"),
        ("", "offset(done)"),
        ("", "cute.arch.mbarrier_arrive(done)"),
        ("import mylib", "mylib.fill(x, cute.arch.thread_idx()[0])\n            cute.arch.mbarrier_arrive(done)"),
    ] {
        let src = handed_barrier_kernel(imports, handoff)
            .replace("@cute.kernel", "@cute.jit\ndef offset(mbar):\n    return mbar + 0\n\n@cute.kernel");
        let diags = analyze_text(&src, &AnalysisOptions::default());
        let silent = if handoff.contains("mbarrier_arrive") { diags.is_empty() } else { diags.iter().all(|d| d.name == "deadlock") };
        assert!(silent, "{handoff}: {diags:?}");
    }
    // Other shared memory handed to an unknown call.
    let src = handed_barrier_kernel("import mylib", "mylib.fill(data)\n            cute.arch.mbarrier_arrive(done)")
        .replace("    bar = storage\n", "    bar = storage\n    data = utils.SmemAllocator().allocate_array(cutlass.Float32, 32)\n");
    let diags = analyze_text(&src, &AnalysisOptions::default());
    assert!(diags.is_empty(), "{diags:?}");
}

/// A grid larger than the CTAs modelled: a consumer that waits for every
/// producer waits, in the model, for producers that are not all there. The
/// CTAs not modelled add to the counter as the modelled producers do, so
/// the verdict is the one of four CTAs, with the CTAs modelled named; a
/// count that only more producers than the grid has could reach is a hang. (`grid_sizes.rs` runs the family at every size.)
#[test]
fn a_consumer_waiting_for_producers_not_modelled_is_said() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/missing_acquire/relaxed_spin_bug.py");
    let four = std::fs::read_to_string(path).unwrap();
    assert!(four.contains("NUM_CTAS = 4\n"));
    let diags = cute_lint::analyze_text(&four, &cute_lint::AnalysisOptions::default());
    assert!(diags.iter().any(|d| d.name == "missing-acquire"), "{diags:#?}");
    for n in [5, 8] {
        let text = four.replace("NUM_CTAS = 4\n", &format!("NUM_CTAS = {n}\n"));
        let diags = cute_lint::analyze_text(&text, &cute_lint::AnalysisOptions::default());
        let found = diags.iter().find(|d| d.name == "missing-acquire").unwrap_or_else(|| panic!("{n} CTAs: {diags:#?}"));
        assert!(found.notes.iter().any(|note| note.contains(&format!("the grid has {n} clusters; clusters 0, 1, 2, {} are modelled", n - 1))), "{found:#?}");
        // Waiting for one more producer than the grid has: no grid gets
        // past it, and the consumer hangs.
        let over = text.replace(") < NUM_PRODUCERS:", ") < NUM_PRODUCERS + 1:");
        assert_ne!(over, text);
        let diags = cute_lint::analyze_text(&over, &cute_lint::AnalysisOptions::default());
        assert!(diags.iter().any(|d| d.name == "deadlock" && d.message.contains(&format!("waits for `ctr` to reach {n}, but the {n} CTAs of the grid add {} to it in all", n - 1))), "{n} CTAs: {diags:#?}");
    }
}

/// The groups of `cp.async` copies are not followed: a kernel that waits
/// for its copies with `cp_async_wait_group` is not checked (its copies
/// would be taken to land at once, and a read before the wait pass), named
/// at the call, however the module is spelled.
#[test]
fn cp_async_groups_make_a_kernel_not_checked() {
    let kernel = |commit: &str, wait: &str| {
        format!(
            r#"
import cutlass
import cutlass.cute as cute
from cutlass.cute.arch import cp_async_wait_group

@cute.kernel
def k(src: cute.Tensor, dst: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    sbuf = cutlass.utils.SmemAllocator().allocate_tensor(cutlass.Float32, cute.make_layout(128))
    atom = cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), cutlass.Float32, num_bits_per_copy=32)
    cute.copy(atom, cute.local_tile(src, (1,), (tidx,)), cute.local_tile(sbuf, (1,), (tidx,)))
    {commit}
    dst[tidx] = sbuf[(tidx + 1) % 128]
    {wait}
"#
        )
    };
    for (commit, wait, named) in [
        ("cute.arch.cp_async_commit_group()", "cute.arch.cp_async_wait_group(0)", "cp_async_commit_group"),
        ("pass", "cp_async_wait_group(0)", "cp_async_wait_group"),
        ("pass", "cutlass.cute.arch.cp_async_wait_group(n=0)", "cp_async_wait_group"),
    ] {
        let src = kernel(commit, wait);
        let diags = analyze_text(&src, &AnalysisOptions::default());
        assert_eq!(diags.len(), 1, "{src}\n{diags:?}");
        assert_eq!(diags[0].name, "analysis-incomplete");
        assert!(diags[0].message.contains(named) && diags[0].message.contains("not modelled"), "{}", diags[0].message);
    }
}
