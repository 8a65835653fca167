//! A package's subclasses of the `cutlass.pipeline` classes: a subclass is
//! its base's model, created through its own `create` (a staticmethod, a
//! factory assigned after the class, or inherited) with its own keyword
//! arguments kept as fields, its overrides inlined with `self` the pipeline
//! (calling the base's method directly, through `super()` or through a
//! helper handed the base's method), in the kernel's file or in a module of
//! its package. An override the model cannot follow makes the kernel not
//! checked, naming it.

use std::path::Path;
use std::sync::Arc;

use cute_lint::{analyze_file, analyze_text, AnalysisOptions, Diagnostic};

const HEADER: &str = r#"
from dataclasses import dataclass

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as cpipe
from cutlass import const_expr
from cutlass.pipeline import PipelineAsync as PipelineAsyncOg
"#;

/// A two-stage ring over four warps: the warps `producers_test` selects
/// produce (acquire, commit), the others consume; the producer group counts
/// `producers` threads, the consumer group the 64 consumer threads.
fn kernel(classes: &str, create: &str, producers: u32, producers_test: &str) -> String {
    format!(
        r#"{HEADER}
{classes}

STAGES = 2


@cute.struct
class SharedStorage:
    mbar: cute.struct.MemRange[cutlass.Int64, 2 * STAGES]


@cute.kernel
def k(K_TILES: cutlass.Constexpr):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = cutlass.memory.SmemAllocator().allocate(SharedStorage)
    producers = cpipe.CooperativeGroup(cpipe.Agent.Thread, {producers})
    consumers = cpipe.CooperativeGroup(cpipe.Agent.Thread, 64)
    pipe = {create}(num_stages=STAGES, producer_group=producers, consumer_group=consumers, barrier_storage=storage.mbar.data_ptr(){extra})
    if {producers_test}:
        s = cpipe.make_pipeline_state(cpipe.PipelineUserType.Producer, STAGES)
        for i in cutlass.range(K_TILES, unroll=1):
            pipe.producer_acquire(s)
            pipe.producer_commit(s)
            s.advance()
        pipe.producer_tail(s)
    else:
        s = cpipe.make_pipeline_state(cpipe.PipelineUserType.Consumer, STAGES)
        for i in cutlass.range(K_TILES, unroll=1):
            pipe.consumer_wait(s)
            pipe.consumer_release(s)
            s.advance()


@cute.jit
def launch():
    k(4).launch(grid=[1, 1, 1], block=[128, 1, 1])
"#,
        extra = if classes.contains("elect_one_commit") { ", elect_one_commit=True" } else { "" },
    )
}

/// The staticmethod spelling: `create` creates the base and sets a field;
/// `producer_commit` hands the base's method to a helper that calls it
/// from one elected lane per warp when the field says so.
const STATIC_CREATE: &str = r#"
def _call_with_elect_one(parent_method, self, state, elect_one):
    if const_expr(elect_one):
        cute.arch.sync_warp()
        with cute.arch.elect_one():
            parent_method(self, state)
    else:
        parent_method(self, state)


@dataclass(frozen=True)
class MyPipeline(PipelineAsyncOg):
    _elect_one_commit: bool = False

    @staticmethod
    def create(*args, elect_one_commit: bool = False, **kwargs):
        obj = PipelineAsyncOg.create(*args, **kwargs)
        object.__setattr__(obj, "__class__", MyPipeline)
        object.__setattr__(obj, "_elect_one_commit", elect_one_commit)
        return obj

    def producer_commit(self, state):
        _call_with_elect_one(PipelineAsyncOg.producer_commit, self, state, self._elect_one_commit)
"#;

/// The `super()` spelling, the base named by its dotted name and its
/// `create` inherited.
const SUPER: &str = r#"
class MyPipeline(cpipe.PipelineAsync):
    def producer_commit(self, state):
        with cute.arch.elect_one():
            super().producer_commit(state)
"#;

/// The factory spelling: `MyPipeline.create = factory(Base, MyPipeline)`,
/// and the base's method called directly with `self`.
const FACTORY: &str = r#"
def _override_create(parent_cls, child_cls):
    @staticmethod
    def create(*args, **kwargs):
        obj = parent_cls.create(*args, **kwargs)
        object.__setattr__(obj, "__class__", child_cls)
        return obj

    return create


class MyPipeline(PipelineAsyncOg):
    def producer_commit(self, state):
        with cute.arch.elect_one():
            PipelineAsyncOg.producer_commit(self, state)


MyPipeline.create = _override_create(PipelineAsyncOg, MyPipeline)
"#;

/// The override's own barrier array: `self.sync_object_full.arrive` from
/// the elected lane (the package's `MbarrierArray`, every caller arriving
/// on the threads' side).
const ARRAY: &str = r#"
class MyPipeline(PipelineAsyncOg):
    def producer_commit(self, state):
        with cute.arch.elect_one():
            self.sync_object_full.arrive(state.index, self.producer_mask)
"#;

fn errors(diags: &[Diagnostic]) -> Vec<&'static str> {
    diags.iter().map(|d| d.name).collect()
}

/// The line of `src` that holds `offset`.
fn line_of(src: &str, offset: u32) -> &str {
    let start = src[..offset as usize].rfind('\n').map_or(0, |i| i + 1);
    src[start..].lines().next().unwrap_or("")
}

/// Every spelling, with the producers first or last: one elected lane per
/// producer warp commits, so a producer group of the 64 producer threads
/// waits for arrivals that never come, and one of the 2 warps is right.
#[test]
fn an_elect_one_commit_needs_a_group_of_warps_in_every_spelling() {
    for (name, classes) in [("staticmethod", STATIC_CREATE), ("super()", SUPER), ("factory", FACTORY), ("barrier array", ARRAY)] {
        for test in ["warp < 2", "warp >= 2"] {
            let bug = kernel(classes, "MyPipeline.create", 64, test);
            let diags = analyze_text(&bug, &AnalysisOptions::default());
            assert_eq!(errors(&diags), ["arrive-count-mismatch"], "{name}, {test}: {diags:#?}");
            let d = &diags[0];
            assert!(line_of(&bug, d.range.start).contains("MyPipeline.create("), "{name}: at the creation: {}", line_of(&bug, d.range.start));
            assert!(d.message.contains("128 arrivals") || d.message.contains("64 arrivals"), "{name}: {}", d.message);
            assert!(d.message.contains("but 2 arrive"), "{name}: one per producer warp: {}", d.message);
            assert!(!d.related.is_empty(), "{name}: a trace");
            let clean = kernel(classes, "MyPipeline.create", 2, test);
            let diags = analyze_text(&clean, &AnalysisOptions::default());
            assert!(diags.is_empty(), "{name}, {test}: {diags:#?}");
        }
    }
}

/// Without `elect_one_commit=True` the staticmethod's field keeps its
/// default, and every producer thread commits, as the base's does.
#[test]
fn a_field_not_given_keeps_its_default() {
    let src = kernel(STATIC_CREATE, "MyPipeline.create", 64, "warp < 2").replace(", elect_one_commit=True", "");
    let diags = analyze_text(&src, &AnalysisOptions::default());
    assert!(diags.is_empty(), "{diags:#?}");
    let src = kernel(STATIC_CREATE, "MyPipeline.create", 64, "warp < 2").replace("elect_one_commit=True", "elect_one_commit=False");
    assert!(analyze_text(&src, &AnalysisOptions::default()).is_empty());
}

/// A subclass that overrides nothing is its base: the same findings, at
/// the same lines, as the kernel written with the base, bug and clean.
#[test]
fn a_subclass_that_overrides_nothing_is_its_base() {
    let classes = "class MyPipeline(PipelineAsyncOg):\n    pass\n";
    for producers in [64, 48] {
        let sub = kernel(classes, "MyPipeline.create", producers, "warp < 2");
        let base = kernel(classes, "cpipe.PipelineAsync.create", producers, "warp < 2");
        let (a, b) = (analyze_text(&sub, &AnalysisOptions::default()), analyze_text(&base, &AnalysisOptions::default()));
        let summary = |d: &[Diagnostic], src: &str| d.iter().map(|d| (d.name, src[..d.range.start as usize].matches('\n').count())).collect::<Vec<_>>();
        assert_eq!(summary(&a, &sub), summary(&b, &base), "{a:#?}");
        assert_eq!(a.is_empty(), producers == 64, "{a:#?}");
    }
}

/// An override that does what the model cannot represent (an MMA's commit
/// on the threads' ring) makes the kernel not checked, naming the method;
/// so does a `create` that does more than create and set fields.
#[test]
fn what_an_override_does_that_the_model_cannot_follow_is_not_checked() {
    let unknown_arrive = "class MyPipeline(PipelineAsyncOg):\n    def producer_commit(self, state):\n        self.sync_object_full.arrive_tcgen05mma(state.index, None, None)\n";
    let diags = analyze_text(&kernel(unknown_arrive, "MyPipeline.create", 64, "warp < 2"), &AnalysisOptions::default());
    assert_eq!(errors(&diags), ["analysis-incomplete"], "{diags:#?}");
    assert!(diags[0].message.contains("sync_object_full.arrive_tcgen05mma") && diags[0].message.contains("MyPipeline.producer_commit"), "{}", diags[0].message);
    let odd_create = "class MyPipeline(PipelineAsyncOg):\n    @staticmethod\n    def create(*args, **kwargs):\n        obj = PipelineAsyncOg.create(*args, **kwargs)\n        obj.reset()\n        return obj\n";
    let diags = analyze_text(&kernel(odd_create, "MyPipeline.create", 64, "warp < 2"), &AnalysisOptions::default());
    assert_eq!(errors(&diags), ["analysis-incomplete"], "{diags:#?}");
    assert!(diags[0].message.contains("the `create` of `MyPipeline`"), "{}", diags[0].message);
    // A wait on an `if_generate` condition known only at run time.
    let runtime = "class MyPipeline(PipelineAsyncOg):\n    def producer_acquire(self, state, token=None):\n        if_generate(self.is_ready, lambda: self.sync_object_empty.wait(state.index, state.phase))\n";
    let src = kernel(runtime, "MyPipeline.create", 64, "warp < 2").replace("from cutlass import const_expr", "from cutlass import const_expr\nfrom cutlass.cutlass_dsl import if_generate");
    let diags = analyze_text(&src, &AnalysisOptions::default());
    assert!(diags.iter().any(|d| d.name == "analysis-incomplete"), "{diags:#?}");
}

/// `if_generate(cond, lambda: ...)` as the package's TMA pipelines write
/// their acquire: the lambda runs when the condition holds, so an acquire
/// that waits on `empty` through it is the base's.
#[test]
fn an_if_generate_override_of_acquire_is_the_base() {
    let acquire = r#"
class MyPipeline(PipelineAsyncOg):
    def producer_acquire(self, state, try_acquire_token=None):
        if_generate(
            try_acquire_token is None or try_acquire_token == 0,
            lambda: self.sync_object_empty.wait(state.index, state.phase),
        )
"#;
    let imports = |s: String| s.replace("from cutlass import const_expr", "from cutlass import const_expr\nfrom cutlass.cutlass_dsl import if_generate");
    let clean = imports(kernel(acquire, "MyPipeline.create", 64, "warp < 2"));
    assert!(analyze_text(&clean, &AnalysisOptions::default()).is_empty());
    // An acquire that never waits lets the producer overwrite a stage the
    // consumers still read: not the base's, and seen.
    let no_wait = imports(kernel(&acquire.replace("is None or", "is not None and"), "MyPipeline.create", 64, "warp < 2"));
    let diags = analyze_text(&no_wait, &AnalysisOptions::default());
    assert!(!diags.is_empty() && diags.iter().all(|d| d.name != "analysis-incomplete"), "{diags:#?}");
}

/// A `NamedBarrier` subclass whose `_w_index` methods offset the id: its
/// objects are named barriers, and their thread count is checked.
#[test]
fn a_named_barrier_subclass_is_a_named_barrier() {
    let src = |threads: u32| {
        format!(
            r#"
from dataclasses import dataclass
import cutlass
import cutlass.cute as cute
from cutlass.pipeline import NamedBarrier as NamedBarrierOg


@dataclass(frozen=True)
class NamedBarrier(NamedBarrierOg):
    def arrive_w_index(self, index):
        cute.arch.barrier_arrive(barrier_id=self.barrier_id + index, number_of_threads=self.num_threads)

    def arrive_and_wait_w_index(self, index):
        cute.arch.barrier(barrier_id=self.barrier_id + index, number_of_threads=self.num_threads)


@cute.kernel
def k():
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    bar = NamedBarrier(barrier_id=1, num_threads={threads})
    if warp >= 2:
        bar.arrive_w_index(1)
    else:
        bar.arrive_and_wait_w_index(1)


@cute.jit
def launch():
    k().launch(grid=[1, 1, 1], block=[128, 1, 1])
"#
        )
    };
    assert!(analyze_text(&src(128), &AnalysisOptions::default()).is_empty());
    let diags = analyze_text(&src(96), &AnalysisOptions::default());
    assert!(!diags.is_empty() && diags.iter().all(|d| d.name != "analysis-incomplete"), "{diags:#?}");
}

/// Files in memory, for a package.
struct Files(Vec<(&'static str, String)>);

impl cute_ir::link::Sources for Files {
    fn read(&self, path: &Path) -> Option<Arc<str>> {
        self.0.iter().find(|(p, _)| Path::new(p) == path).map(|(_, t)| Arc::from(t.as_str()))
    }
}

/// The subclass in a module of the kernel's package, created through the
/// factory spelling, imported under another name.
#[test]
fn a_subclass_in_another_module_of_the_package() {
    let module = format!("{HEADER}\n{FACTORY}");
    let kernel_text = |producers: u32| {
        kernel("from . import pipes as pipes_custom\n", "pipes_custom.MyPipeline.create", producers, "warp >= 2")
    };
    for (producers, bug) in [(64, true), (2, false)] {
        let text = kernel_text(producers);
        let files = Files(vec![("/r/pkg/__init__.py", String::new()), ("/r/pkg/pipes.py", module.clone()), ("/r/pkg/kernel.py", text.clone())]);
        let diags = analyze_file(Path::new("/r/pkg/kernel.py"), &text, &AnalysisOptions::default(), &files);
        match bug {
            true => assert_eq!(errors(&diags), ["arrive-count-mismatch"], "{diags:#?}"),
            false => assert!(diags.is_empty(), "{diags:#?}"),
        }
    }
}
