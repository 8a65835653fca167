//! Two ways of running fewer threads per core build the model every lane
//! builds run in sequence, to the index, on every kernel of the fixtures
//! and the corpus: threads run on several cores, and lanes that an earlier
//! lane of their warp stands in for.

use std::path::PathBuf;

use cute_check::{instantiate, InstantiateOptions, Scenario};
use cute_ir::launch::Launches;

mod files;
use files::repository_files;

/// What [`compare`] saw.
#[derive(Default)]
struct Compared {
    kernels: usize,
    /// Kernels with at least 64 threads (spread over cores).
    spread: usize,
    /// Kernels where a lane stood in for others.
    stood_in: usize,
    /// Kernels not compared: a run ran out of time, so the two may stop at
    /// different threads.
    out_of_time: usize,
    /// Kernels spread over cores whose threads ran past the statement budget.
    spread_over_budget: usize,
}

/// Instantiates every kernel of `files` both ways and asserts the models and
/// open conditions are equal.
fn compare(files: &[PathBuf], sequential: InstantiateOptions, other: InstantiateOptions) -> Compared {
    let mut seen = Compared::default();
    files::for_each_kernel(files, |k| {
        let run = |options: &InstantiateOptions| instantiate(k.module, k.kernel, &k.kept, &k.launch, &Scenario::new(), options);
        let (one, two) = (run(&sequential), run(&other));
        if one.model.out_of_time || two.model.out_of_time {
            seen.out_of_time += 1;
            return;
        }
        assert_eq!(one.model, two.model, "{}: {}", k.path.display(), k.kernel.name);
        assert_eq!(one.open_conditions, two.open_conditions, "{}: {}", k.path.display(), k.kernel.name);
        seen.kernels += 1;
        seen.spread += usize::from(one.model.ctas * one.model.threads_per_cta >= 64);
        seen.stood_in += usize::from(two.threads_run < one.threads_run);
        let over_budget = one.model.unresolved.iter().any(|u| u.what.contains("statements together"));
        seen.spread_over_budget += usize::from(over_budget && one.model.ctas * one.model.threads_per_cta >= 64);
    });
    seen
}

const SEQUENTIAL: InstantiateOptions = InstantiateOptions {
    unknown_trip_count: 3,
    max_ops_per_thread: 50_000,
    max_steps_per_thread: 200_000,
    max_steps_total: 1_000_000,
    workers: 1,
    stand_ins: false,
    both_ways: true,
};

#[test]
fn several_cores_build_the_sequential_model() {
    let seen = compare(&repository_files(), SEQUENTIAL, InstantiateOptions { workers: 3, ..SEQUENTIAL });
    // Most fixture kernels are large enough to be spread.
    assert!(seen.spread * 2 > seen.kernels, "{} of {} kernels ran on several cores", seen.spread, seen.kernels);
}

#[test]
fn a_statement_budget_met_on_several_cores_stops_where_the_sequential_run_does() {
    // Where the budget falls inside a run of threads, the threads of that
    // run before it are run again after the runs before, as in sequence.
    const TIGHT: InstantiateOptions = InstantiateOptions { max_steps_total: 3_000, ..SEQUENTIAL };
    let seen = compare(&repository_files(), TIGHT, InstantiateOptions { workers: 3, ..TIGHT });
    assert!(seen.spread_over_budget * 4 > seen.spread, "{} of {} kernels spread over cores ran past the budget", seen.spread_over_budget, seen.spread);
}

#[test]
fn lanes_standing_in_build_the_model_of_every_lane() {
    let seen = compare(&repository_files(), SEQUENTIAL, InstantiateOptions { stand_ins: true, ..SEQUENTIAL });
    assert_eq!(seen.out_of_time, 0);
    // The fixtures split their warps often (lane tests, `elect_one`), but a
    // good part of them has warps lane 1 stands in for.
    assert!(seen.stood_in * 4 > seen.kernels, "lanes stood in for others in {} of {} kernels", seen.stood_in, seen.kernels);
    eprintln!("lanes stood in for others in {} of {} kernels", seen.stood_in, seen.kernels);
}

/// The same on the code bases named by `CUTE_LSP_COMPARE_DIRS` (paths
/// separated by `:`), e.g. public code bases fetched for a sweep:
/// `CUTE_LSP_COMPARE_DIRS=/src/quack cargo test --release -p cute-check
/// --test parallel -- --ignored`.
#[test]
#[ignore = "needs CUTE_LSP_COMPARE_DIRS"]
fn lanes_standing_in_build_the_model_of_every_lane_on_other_code() {
    let files = files::files_to_compare_on();
    let seen = compare(&files, InstantiateOptions { workers: 0, ..SEQUENTIAL }, InstantiateOptions { workers: 0, stand_ins: true, ..SEQUENTIAL });
    eprintln!(
        "{} kernels compared, lanes stood in for others in {}; {} not compared (out of time)",
        seen.kernels, seen.stood_in, seen.out_of_time
    );
}

/// A lane read inside a helper reaches the kernel through the helper's
/// return value (`lane() < 16` splits the warp into halves); lane 1 must
/// not stand in for lanes 16 to 30.
#[test]
fn a_lane_returned_by_a_helper_keeps_the_lanes_apart() {
    let text = "\
import cutlass
import cutlass.cute as cute


@cute.jit
def lane():
    return cute.arch.lane_idx()


@cute.kernel
def k():
    bar = cutlass.utils.SmemAllocator().allocate_array(cutlass.Int64, 2)
    if cute.arch.warp_idx() == 0:
        with cute.arch.elect_one():
            cute.arch.mbarrier_init(bar, 1)
    cute.arch.sync_threads()
    if lane() < 16:
        cute.arch.barrier_arrive(barrier_id=1, number_of_threads=64)
    if lane() >= 16:
        cute.arch.barrier_arrive(barrier_id=2, number_of_threads=64)
    cute.arch.mbarrier_wait(bar, 0)


@cute.jit
def host():
    k().launch(grid=[1, 1, 1], block=[96, 1, 1])
";
    let (every_lane, standing_in) = every_lane_and_standing_in(text);
    // Lanes 0 to 15 of each warp register with barrier 1, lanes 16 to 31
    // with barrier 2.
    let m = &every_lane.model;
    assert_eq!((registered(m, 1), registered(m, 2)), (48, 48), "{:?}", m.barrier_uses);
    assert_eq!(every_lane.model, standing_in.model);
}

/// Instantiates the kernel `k` of `text`.
fn instantiate_k(text: &str, options: &InstantiateOptions, scenario: &Scenario) -> cute_check::Instantiated {
    let module = cute_ir::lower_text(text).unwrap();
    let launches = Launches::of_module(&module);
    let kernel = module.kernels().find(|f| f.name == "k").expect("the kernel");
    let launch = launches.of_kernel(&module, kernel);
    let kept = cute_ir::slice_kernel(&module, kernel, text).kept_ids();
    instantiate(&module, kernel, &kept, &launch, scenario, options)
}

/// The kernel `k` of `text` with every lane running and with lanes standing
/// in: the models, and how many threads ran each way.
fn every_lane_and_standing_in(text: &str) -> (cute_check::Instantiated, cute_check::Instantiated) {
    let run = |stand_ins| instantiate_k(text, &InstantiateOptions { stand_ins, ..SEQUENTIAL }, &Scenario::new());
    (run(false), run(true))
}

/// [`every_lane_and_standing_in`] for a kernel of 128 threads whose lanes
/// stand in for others: asserts the two models equal and that fewer than 32
/// threads ran; the model.
fn stood_in_for(text: &str) -> cute_check::Model {
    let (every_lane, standing_in) = every_lane_and_standing_in(text);
    assert_eq!(every_lane.model, standing_in.model);
    assert!(standing_in.threads_run < 32, "{} threads ran", standing_in.threads_run);
    every_lane.model
}

/// The threads that register with named barrier `id` in `model`.
fn registered(model: &cute_check::Model, id: i64) -> usize {
    model.barrier_uses.iter().filter(|u| u.id == id).map(|u| u.threads.len()).sum()
}

/// `tidx < n` with `n` known only at run time is unknown in every lane,
/// and every lane takes the branch the scenario decides: lane 1 stands in.
#[test]
fn a_lane_compared_with_a_runtime_count_does_not_keep_the_lanes_apart() {
    let text = "\
import cutlass
import cutlass.cute as cute


@cute.kernel
def k(n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    if tidx < n:
        cute.arch.barrier_arrive(barrier_id=1, number_of_threads=128)
    cute.arch.sync_threads()


@cute.jit
def host(n: cutlass.Int32):
    k(n).launch(grid=[1, 1, 1], block=[128, 1, 1])
";
    let (every_lane, standing_in) = every_lane_and_standing_in(text);
    assert_eq!(every_lane.model, standing_in.model);
    assert_eq!(every_lane.threads_run, 128);
    assert!(standing_in.threads_run < 32, "{} threads ran", standing_in.threads_run);
}

/// A helper given the lane returns a value its caller takes as
/// lane-dependent already (a call with a lane-dependent argument): lane 1
/// follows the lane into it and stands in for the others.
#[test]
fn a_helper_given_the_lane_returns_to_a_caller_that_knows_it() {
    let text = "\
import cutlass
import cutlass.cute as cute


@cute.jit
def step(t, count):
    cute.arch.sync_threads()
    return count + 1


@cute.kernel
def k():
    tidx, _, _ = cute.arch.thread_idx()
    count = 0
    for i in range(3):
        count = step(tidx, count)


@cute.jit
def host():
    k().launch(grid=[1, 1, 1], block=[128, 1, 1])
";
    stood_in_for(text);
}

/// `if tidx == 0:` and an argument computed from the warp's group
/// (`tidx // GROUP`, `GROUP` a constant of the kernel) are the same in
/// lanes 2 to 30 of every warp: lane 1 stands in for them.
#[test]
fn a_lane_test_every_stood_in_lane_decides_alike_does_not_keep_them_apart() {
    let text = "\
import cutlass
import cutlass.cute as cute


@cute.kernel
def k():
    GROUP = 64
    tidx, _, _ = cute.arch.thread_idx()
    group = tidx // GROUP
    bar = cutlass.utils.SmemAllocator().allocate_array(cutlass.Int64, 2)
    if tidx == 0:
        cute.arch.mbarrier_init(bar, 1)
    cute.arch.sync_threads()
    cute.arch.barrier_arrive(barrier_id=1 + group, number_of_threads=64)
    if tidx == 0:
        cute.arch.mbarrier_arrive(bar)
    cute.arch.mbarrier_wait(bar, 0)


@cute.jit
def host():
    k().launch(grid=[1, 1, 1], block=[128, 1, 1])
";
    let m = &stood_in_for(text);
    assert_eq!((registered(m, 1), registered(m, 2)), (64, 64), "{:?}", m.barrier_uses);
}

/// `if lane < 16:` on `lane = tidx % 32` splits the warp, and every lane
/// arrives on its own in the branch it takes: every lane runs.
#[test]
fn a_lane_test_that_splits_the_stood_in_lanes_keeps_them_apart() {
    let text = "\
import cutlass
import cutlass.cute as cute


@cute.kernel
def k():
    tidx, _, _ = cute.arch.thread_idx()
    lane = tidx % 32
    cute.arch.sync_threads()
    if lane < 16:
        cute.arch.barrier_arrive(barrier_id=1, number_of_threads=64)
    if lane >= 16:
        cute.arch.barrier_arrive(barrier_id=2, number_of_threads=64)
    cute.arch.sync_threads()


@cute.jit
def host():
    k().launch(grid=[1, 1, 1], block=[128, 1, 1])
";
    let (every_lane, standing_in) = every_lane_and_standing_in(text);
    let m = &every_lane.model;
    assert_eq!((registered(m, 1), registered(m, 2)), (64, 64), "{:?}", m.barrier_uses);
    assert_eq!(every_lane.model, standing_in.model);
    assert_eq!(standing_in.threads_run, 128);
}

/// A construct the model cannot represent makes the kernel not checked: the
/// threads after the first that meets it are not run, on one core or on
/// several.
#[test]
fn threads_stop_after_the_first_that_meets_an_unmodelled_construct() {
    let text = "\
import cutlass
import cutlass.cute as cute


@cute.kernel
def k(n: cutlass.Int32):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    cute.arch.sync_threads()
    if warp == 2:
        cute.arch.barrier(barrier_id=n, number_of_threads=32)
    cute.arch.sync_threads()


@cute.jit
def host(n: cutlass.Int32):
    k(n).launch(grid=[1, 1, 1], block=[128, 1, 1])
";
    let run = |options: &InstantiateOptions| instantiate_k(text, options, &Scenario::new());
    let (one, several) = (run(&SEQUENTIAL), run(&InstantiateOptions { workers: 3, ..SEQUENTIAL }));
    assert!(one.model.unresolved.iter().any(|u| u.what.contains("id of this named barrier")), "{:?}", one.model.unresolved);
    // Thread 64, lane 0 of warp 2, is the first to meet it.
    assert_eq!(one.threads_run, 65);
    assert_eq!(one.model, several.model);
    assert_eq!(several.threads_run, 65);
}

/// With conditions on runtime values open, the first run stops once the
/// runs for the other ways of deciding them would pass the statement
/// budget together (the kernel cannot be checked then), at the same thread
/// on one core or on several, and records nothing unresolved: the caller
/// reads the verdict off the statements and conditions.
#[test]
fn the_first_run_stops_once_the_other_ways_would_pass_the_budget() {
    let text = "\
import cutlass
import cutlass.cute as cute


@cute.kernel
def k(a: cutlass.Int32, b: cutlass.Int32):
    for i in cutlass.range_constexpr(20):
        cute.arch.sync_threads()
    if a > 0:
        cute.arch.sync_threads()
    if b > 0:
        cute.arch.sync_threads()


@cute.jit
def host(a: cutlass.Int32, b: cutlass.Int32):
    k(a, b).launch(grid=[1, 1, 1], block=[128, 1, 1])
";
    // About 25 statements a thread: the 3 other ways pass 3,000 statements
    // once some 40 threads have run.
    const TIGHT: InstantiateOptions = InstantiateOptions { max_steps_total: 3_000, ..SEQUENTIAL };
    let run = |options: &InstantiateOptions| instantiate_k(text, options, &Scenario::new());
    let (one, several) = (run(&TIGHT), run(&InstantiateOptions { workers: 3, ..TIGHT }));
    assert!(one.model.unresolved.is_empty(), "{:?}", one.model.unresolved);
    assert_eq!(one.open_conditions.len(), 2);
    assert!(one.threads_run < 64, "{} threads ran", one.threads_run);
    assert!(one.steps * 3 > TIGHT.max_steps_total);
    assert_eq!(one.model, several.model);
    assert_eq!(one.threads_run, several.threads_run);
    // A way of deciding them is a model to check: it runs on to the budget
    // of its own statements.
    let mut scenario = Scenario::new();
    scenario.insert(one.open_conditions[0].stmt, cute_check::Decision::Alike(true));
    let decided = instantiate_k(text, &TIGHT, &scenario);
    assert!(decided.threads_run > 100, "{} threads ran", decided.threads_run);
}

/// `lane == 0` on `lane = tidx % 16` is true in lane 16 alone of the lanes
/// lane 1 would stand in for: lane 16 runs on its own and lane 1 goes on
/// standing in for the others. Lanes 0, 1, 16 and 31 of each warp run, and
/// lane 2 of the first: there lane 1 is the first thread to use barrier 1,
/// and a thread that adds to the model's tables does not stand in.
#[test]
fn a_lane_that_decides_otherwise_runs_on_its_own_and_the_others_stay_stood_in_for() {
    let text = "\
import cutlass
import cutlass.cute as cute


@cute.kernel
def k():
    tidx, _, _ = cute.arch.thread_idx()
    lane = tidx % 16
    bar = 1
    if lane == 0:
        bar = 2
    cute.arch.barrier_arrive(barrier_id=bar, number_of_threads=120)


@cute.jit
def host():
    k().launch(grid=[1, 1, 1], block=[128, 1, 1])
";
    let (every_lane, standing_in) = every_lane_and_standing_in(text);
    let m = &every_lane.model;
    assert_eq!((registered(m, 1), registered(m, 2)), (120, 8), "{:?}", m.barrier_uses);
    assert_eq!(every_lane.model, standing_in.model);
    assert_eq!(standing_in.threads_run, 4 * 4 + 1);
}

/// A name lane-dependent in a branch the kernel does not take (`row = tidx`
/// under `MODE == 1`) holds the warp group where it is read: the lanes
/// compute the same barrier from it, and lane 1 stands in for them.
#[test]
fn a_name_lane_dependent_only_in_a_branch_not_taken_does_not_keep_the_lanes_apart() {
    let text = "\
import cutlass
import cutlass.cute as cute

MODE = 0


@cute.kernel
def k():
    tidx, _, _ = cute.arch.thread_idx()
    if MODE == 1:
        row = tidx
    else:
        row = tidx // 64
    cute.arch.barrier_arrive(barrier_id=1 + row, number_of_threads=64)


@cute.jit
def host():
    k().launch(grid=[1, 1, 1], block=[128, 1, 1])
";
    let m = &stood_in_for(text);
    assert_eq!((registered(m, 1), registered(m, 2)), (64, 64), "{:?}", m.barrier_uses);
}

/// A helper given `tidx // GROUP` (`GROUP` a name of the kernel), the same
/// in every lane of a warp, branches on it: its parameter does not vary in
/// the lanes lane 1 stands in for.
#[test]
fn a_helper_given_a_value_the_same_in_the_stood_in_lanes_does_not_keep_them_apart() {
    let text = "\
import cutlass
import cutlass.cute as cute


@cute.jit
def arrive_for(group):
    bar = 1
    if group == 1:
        bar = 2
    cute.arch.barrier_arrive(barrier_id=bar, number_of_threads=64)


@cute.kernel
def k():
    GROUP = 64
    tidx, _, _ = cute.arch.thread_idx()
    arrive_for(tidx // GROUP)


@cute.jit
def host():
    k().launch(grid=[1, 1, 1], block=[128, 1, 1])
";
    let m = &stood_in_for(text);
    assert_eq!((registered(m, 1), registered(m, 2)), (64, 64), "{:?}", m.barrier_uses);
}

/// A helper given the thread index decides on the lane inside itself and
/// returns the warp: lane 1 follows what its names and its result hold in
/// the lanes it stands in for, as in the kernel, and goes on standing in.
#[test]
fn a_helper_followed_into_decides_and_returns_as_in_the_kernel() {
    let text = "\
import cutlass
import cutlass.cute as cute


@cute.jit
def warp_of(tidx):
    lane = tidx % 32
    warp = tidx // 32
    if lane < 32:
        return warp
    return -1


@cute.kernel
def k():
    tidx, _, _ = cute.arch.thread_idx()
    w = warp_of(tidx)
    cute.arch.barrier_arrive(barrier_id=1 + w // 2, number_of_threads=64)


@cute.jit
def host():
    k().launch(grid=[1, 1, 1], block=[128, 1, 1])
";
    let m = &stood_in_for(text);
    assert_eq!((registered(m, 1), registered(m, 2)), (64, 64), "{:?}", m.barrier_uses);
}

/// A loop whose trip count is not known runs as many iterations in every
/// lane that starts it where lane 1 does (`range(tidx // 16, n)`: lanes 2
/// to 15): lane 1 stands in for them, and lane 16 for lanes 17 to 30.
#[test]
fn a_loop_of_unknown_trip_count_started_alike_does_not_keep_the_lanes_apart() {
    let text = "\
import cutlass
import cutlass.cute as cute


@cute.kernel
def k(n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    for i in range(tidx // 16, n):
        cute.arch.barrier(barrier_id=1, number_of_threads=128)


@cute.jit
def host(n: cutlass.Int32):
    k(n).launch(grid=[1, 1, 1], block=[128, 1, 1])
";
    let m = &stood_in_for(text);
    // Three iterations explored from 0, two from 1, one from 2.
    assert_eq!(registered(m, 1), 48 + 32 + 16, "{:?}", m.barrier_uses);
}

/// A loop of unknown trip count started at the lane (`range(tidx, n)`) is
/// explored for fewer iterations the later it starts: the lanes are not
/// stood in for, and the model is the one every lane builds.
#[test]
fn a_loop_of_unknown_trip_count_started_at_the_lane_keeps_the_lanes_apart() {
    let text = "\
import cutlass
import cutlass.cute as cute


@cute.kernel
def k(n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    for i in range(tidx, n):
        cute.arch.barrier(barrier_id=1, number_of_threads=128)


@cute.jit
def host(n: cutlass.Int32):
    k(n).launch(grid=[1, 1, 1], block=[128, 1, 1])
";
    let (every_lane, standing_in) = every_lane_and_standing_in(text);
    assert_eq!(every_lane.model, standing_in.model);
    assert!(registered(&every_lane.model, 1) > 0, "{:?}", every_lane.model.barrier_uses);
}

/// A number or pointer converted for inline assembly (`v.ir_value()`,
/// `ptr.toint()`) is the value it converts, in every lane as in the one
/// that runs.
#[test]
fn a_converted_value_is_evaluated_in_the_stood_in_lanes() {
    let text = "\
import cutlass
import cutlass.cute as cute


@cute.kernel
def k():
    tidx, _, _ = cute.arch.thread_idx()
    half = cutlass.Int32(tidx // 16 % 2)
    cute.arch.barrier_arrive(barrier_id=1 + half.ir_value(), number_of_threads=64)


@cute.jit
def host():
    k().launch(grid=[1, 1, 1], block=[128, 1, 1])
";
    let m = &stood_in_for(text);
    assert_eq!((registered(m, 1), registered(m, 2)), (64, 64), "{:?}", m.barrier_uses);
}

/// What the lanes of a warp exchange (`warp_reduction_sum(tidx)`) is the
/// same unknown in every lane, as data read from memory is: a condition on
/// it is decided alike in the lanes lane 1 stands in for.
#[test]
fn a_value_exchanged_between_lanes_is_the_same_unknown_in_the_stood_in_lanes() {
    let text = "\
import cutlass
import cutlass.cute as cute


@cute.kernel
def k():
    tidx, _, _ = cute.arch.thread_idx()
    total = cute.arch.warp_reduction_sum(tidx)
    if total > 0:
        cute.arch.barrier(barrier_id=1, number_of_threads=128)


@cute.jit
def host():
    k().launch(grid=[1, 1, 1], block=[128, 1, 1])
";
    let m = &stood_in_for(text);
    assert_eq!(registered(m, 1), 0, "the condition is decided false: {:?}", m.barrier_uses);
}

/// A condition unknown in every lane (`tidx < n`, `n` known only at run
/// time) is decided by the scenario alike in all of them: the warp stays
/// converged in the branch taken (here the `else`: the run decides it
/// false), lane 0 records the warp's store there, and lane 1 stands in for
/// the lanes after it.
#[test]
fn a_branch_on_a_runtime_bound_does_not_split_the_warp() {
    let text = "\
import cutlass
import cutlass.cute as cute


@cute.kernel
def k(g: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    buf = smem.allocate_array(cutlass.Float32, 128)
    if tidx >= n:
        buf[tidx] = 0.0
    else:
        buf[tidx] = g[tidx]
    cute.arch.sync_threads()
    g[tidx] = buf[127 - tidx]


@cute.jit
def host(g: cute.Tensor, n: cutlass.Int32):
    k(g, n).launch(grid=[1, 1, 1], block=[128, 1, 1])
";
    stood_in_for(text);
}

/// A warp collective reached while the warp is split (`if lane < 16:`
/// around a full-warp shuffle) is reached by the lanes lane 1 stands in
/// for as by lane 1: they are recorded as reaching it, and not run.
#[test]
fn a_collective_in_a_split_warp_is_recorded_for_the_stood_in_lanes() {
    let text = "\
import cutlass
import cutlass.cute as cute


@cute.kernel
def k(x: cutlass.Float32):
    tidx, _, _ = cute.arch.thread_idx()
    lane = tidx % 32
    v = x
    if lane < 16:
        v = cute.arch.shuffle_sync_bfly(v, offset=1)
    cute.arch.sync_threads()


@cute.jit
def host(x: cutlass.Float32):
    k(x).launch(grid=[1, 1, 1], block=[128, 1, 1])
";
    let m = &stood_in_for(text);
    let [(_, _, cta, reached, missing)] = m.partial_warp_collectives.as_slice() else {
        panic!("one collective reached by part of a warp: {:?}", m.partial_warp_collectives);
    };
    let lanes = |low_half: bool| (0..128).filter(|t| (t % 32 < 16) == low_half).collect::<Vec<u32>>();
    assert_eq!((*cta, reached.clone(), missing.clone()), (0, lanes(true), lanes(false)));
}

/// Each lane's tile of a global tensor (`cute.local_tile(g, (4,),
/// (tidx,))`) is a view of the same tensor in every lane: copying it does
/// not set the lanes apart.
#[test]
fn a_per_lane_view_of_one_tensor_does_not_keep_the_lanes_apart() {
    let text = "\
import cutlass
import cutlass.cute as cute


@cute.kernel
def k(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    tile = cute.local_tile(g, (4,), (tidx,))
    frag = cute.make_rmem_tensor(cute.make_layout(4), cutlass.Float32)
    cute.autovec_copy(tile, frag)
    cute.arch.sync_threads()


@cute.jit
def host(g: cute.Tensor):
    k(g).launch(grid=[1, 1, 1], block=[128, 1, 1])
";
    stood_in_for(text);
}

/// A kernel of four warps whose ring is made with `tidx=TIDX` (in the
/// CUTLASS examples, the thread's index less the warps before the
/// consumers'), filled by warp 0 and drained by the other three through
/// its methods (a wait handed what a `try_wait` gave).
fn ring_made_with_tidx(tidx: &str) -> String {
    ring_made_with_tidx_used(
        tidx,
        "ring",
        "    if warp == 0:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
        for i in cutlass.range(4):
            ring.producer_acquire(state)
            state.advance()
    else:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
        for i in cutlass.range(4):
            peek = ring.consumer_try_wait(state)
            ring.consumer_wait(state, peek)
            ring.consumer_release(state)
            state.advance()
",
    )
}

/// [`ring_made_with_tidx`] with the ring, or its participants when `made`
/// names two, bound to `made` and used by `uses`.
fn ring_made_with_tidx_used(tidx: &str, made: &str, uses: &str) -> String {
    "\
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils as utils


@cute.struct
class SharedStorage:
    mbar: cute.struct.MemRange[cutlass.Int64, 4]


@cute.kernel
def k():
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = utils.SmemAllocator().allocate(SharedStorage)
    consumer_tidx = TIDX
    MADE = pipeline.PipelineTmaAsync.create(
        num_stages=2,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 3),
        tx_count=64,
        barrier_storage=storage.mbar.data_ptr(),
        tidx=consumer_tidx,
    )CHAIN
USES

@cute.jit
def host():
    k().launch(grid=[1, 1, 1], block=[128, 1, 1])
"
    .replace("TIDX", tidx)
    .replace("MADE", made)
    .replace("CHAIN", if made.contains(',') { ".make_participants()" } else { "" })
    .replace("USES", uses)
}

/// A pipeline made with `tidx=` each lane's own index less whole warps is
/// the same pipeline in every lane: lanes stand in for the others through
/// its creation and its methods. A lane whose `tidx=` names another lane
/// (which the model does not represent) is set apart and runs on its own.
#[test]
fn a_pipeline_made_with_each_lanes_index_does_not_keep_the_lanes_apart() {
    let model = stood_in_for(&ring_made_with_tidx("tidx - 32 if tidx >= 32 else tidx"));
    assert!(model.unresolved.is_empty(), "{:?}", model.unresolved);
    assert_eq!(model.groups.len(), 2, "{:?}", model.groups);

    let (every_lane, standing_in) = every_lane_and_standing_in(&ring_made_with_tidx("tidx + 1 if tidx % 32 == 5 else tidx"));
    assert_eq!(every_lane.model, standing_in.model);
    assert!(every_lane.model.unresolved.iter().any(|u| u.what.contains("another lane")), "{:?}", every_lane.model.unresolved);
}

/// The same through the participants the ring makes (`producer.tail()`,
/// `consumer.wait_and_advance()`, the handle's `release()`).
#[test]
fn participants_of_a_pipeline_made_with_each_lanes_index_do_not_keep_the_lanes_apart() {
    let uses = "    if warp == 0:
        for i in cutlass.range(4):
            handle = producer.acquire_and_advance()
        producer.tail()
    else:
        for i in cutlass.range(4):
            handle = consumer.wait_and_advance()
            handle.release()
";
    let made = "producer, consumer";
    let model = stood_in_for(&ring_made_with_tidx_used("tidx - 32 if tidx >= 32 else tidx", made, uses));
    assert!(model.unresolved.is_empty(), "{:?}", model.unresolved);
}
