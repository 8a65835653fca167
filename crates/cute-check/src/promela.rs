//! Export of a [`Model`] as a Promela program for the SPIN model checker, so
//! that a verdict of [`explore`](crate::explore()) can be checked by an
//! independent tool.
//!
//! The program follows the transition relation of `semantics.rs` exactly:
//!
//! * every thread is one process; threads of a group run the same proctype,
//!   `G<k>`, whose body is the group's operations as a straight-line sequence
//!   and ends by incrementing `finished` (not `done`: pan.c has a variable of that name);
//! * a barrier is three global arrays indexed by barrier: `mbar_expected`
//!   (0 while not initialised), `mbar_pending` and `mbar_parity`; barriers
//!   with a preset count are initialised by `init` before any thread runs;
//! * `Init`, `Arrive` and `Wait` are the `atomic` inlines `mbar_init`,
//!   `mbar_arrive` (decrement, and on completion flip the parity and reload,
//!   extra arrivals spilling into the next phase) and `mbar_wait` (the guard
//!   `mbar_parity[b] != p`);
//! * the hazards of the semantics (arrive or wait before initialisation,
//!   initialisation while arrivals are pending) are assertions;
//! * the claim `ltl all_done { <> (finished == NTHREADS) }` states termination,
//!   so that with `./pan -a` a deadlock is reported as an acceptance cycle.
//!
//! `errors: 0` from `./pan -a` therefore means: no deadlock and no hazard is
//! reachable, i.e. `explore` says `Clean` and records no hazard.
//!
//! The model is exported as given: SPIN runs at most 255 processes, and its
//! state space grows by an order of magnitude per thread, so models for SPIN
//! should be built small (a kernel launched with a small block, see
//! `cute-lsp promela --threads`). Shrinking a model here, by dropping threads
//! of a group, would change the arrival counts the barriers expect and with
//! them the verdict. [`spin_limits`] says whether a model can run at all.
//! (`cute-check`'s models stand a converged warp by its lane 0, so a model
//! usually has far fewer processes than the kernel has threads.)

use std::fmt::Write;

use cute_syntax::TextRange;

use crate::model::{BarrierKind, Model, OpKind};

/// Processes SPIN can run, `init` and the never claim of `ltl all_done`
/// included (measured with SPIN 6.5.2: 253 threads run, 254 give
/// `too many processes`).
pub const SPIN_MAX_PROCESSES: u32 = 255;

/// Threads SPIN can run beside `init` and the termination claim.
pub const SPIN_MAX_THREADS: u32 = SPIN_MAX_PROCESSES - 2;

pub struct PromelaOptions<'a> {
    /// How an operation's site is named in the comment after it
    /// (e.g. `line 75: mbarrier_wait`). Without it, sites are given as byte
    /// ranges; empty ranges are left out.
    pub describe_site: Option<&'a dyn Fn(TextRange) -> String>,
    /// Lines for the header comment (source file, assumptions, ...).
    pub notes: Vec<String>,
    /// Emit the termination claim (`ltl all_done`). Without it, `./pan`
    /// still finds hazards and, as invalid end states, deadlocks.
    pub termination_claim: bool,
}

impl Default for PromelaOptions<'_> {
    fn default() -> Self {
        PromelaOptions { describe_site: None, notes: Vec::new(), termination_claim: true }
    }
}

/// Why SPIN cannot run this model as exported, if it cannot.
pub fn spin_limits(model: &Model) -> Result<(), String> {
    let threads = model.thread_count();
    if threads > SPIN_MAX_THREADS {
        return Err(format!(
            "the model has {threads} threads; SPIN runs at most {SPIN_MAX_THREADS} beside `init` and the termination claim"
        ));
    }
    Ok(())
}

/// The Promela program of `model`.
pub fn to_promela(model: &Model, options: &PromelaOptions<'_>) -> String {
    let mut out = String::new();
    let threads = model.thread_count();
    let nbars = model.barriers.len().max(1);

    // Header.
    let title = if model.kernel.is_empty() { "a synchronization model".to_string() } else { format!("`{}`", model.kernel) };
    let _ = writeln!(out, "/* Synchronization skeleton of {}, exported by cute-check.", comment_safe(&title));
    let _ = writeln!(
        out,
        " * {} CTA(s) x {} threads per CTA; {} synchronizing threads in {} group(s), {} barrier(s).",
        model.ctas,
        model.threads_per_cta,
        threads,
        model.groups.len(),
        model.barriers.len()
    );
    for note in model.assumptions.iter().chain(options.notes.iter()) {
        let _ = writeln!(out, " * {}", comment_safe(note));
    }
    let _ = writeln!(out, " *");
    let _ = writeln!(out, " * Check:  spin -a model.pml && cc -O2 -DVECTORSZ=4096 -o pan pan.c && ./pan -a");
    let _ = writeln!(out, " * errors: 0 means every interleaving runs to the end. An acceptance cycle of");
    let _ = writeln!(out, " * all_done is a deadlock; an assertion violation is an arrive or wait before");
    let _ = writeln!(out, " * initialisation, or an initialisation while arrivals are pending. */");
    let _ = writeln!(out);
    let _ = writeln!(out, "#define NBARS {nbars}");
    let _ = writeln!(out, "#define NTHREADS {threads}");
    let _ = writeln!(out);

    for (i, b) in model.barriers.iter().enumerate() {
        let kind = match b.kind {
            BarrierKind::Mbarrier => "mbarrier".to_string(),
            BarrierKind::CtaBarrier => "CTA barrier".to_string(),
            BarrierKind::NamedBarrier(id) => format!("named barrier {id}"),
            BarrierKind::ClusterBarrier => "cluster barrier".to_string(),
        };
        let preset = match b.preset_count {
            Some(n) => format!(", {n} arrivals per phase"),
            None => String::new(),
        };
        let _ = writeln!(out, "/* barrier {i}: {} ({kind}{preset}) */", comment_safe(&b.display(model.ctas)));
    }

    // Counts: the largest value a count variable takes.
    let max_count = model
        .barriers
        .iter()
        .filter_map(|b| b.preset_count)
        .chain(model.groups.iter().flat_map(|g| g.ops.iter()).filter_map(|op| match op.kind {
            OpKind::Init { count, .. } => Some(count),
            OpKind::Arrive { count, .. } => Some(count),
            OpKind::Wait { .. } => None,
        }))
        .max()
        .unwrap_or(0);
    let count_type = if max_count <= 255 {
        "byte"
    } else if max_count <= 32767 {
        "short"
    } else {
        "int"
    };
    let done_type = if threads <= 255 { "byte" } else { "short" };
    for (decl, what) in [
        (format!("{count_type} mbar_expected[NBARS];"), "arrivals per phase; 0 while not initialised"),
        (format!("{count_type} mbar_pending[NBARS];"), "arrivals still missing in the current phase"),
        ("bit mbar_parity[NBARS];".to_string(), "parity of the current phase"),
        (format!("{done_type} finished;"), "threads that ran to their end"),
    ] {
        let _ = writeln!(out, "{decl:<27} /* {what} */");
    }
    let _ = writeln!(out);

    out.push_str(INLINES);
    let _ = writeln!(out);

    for (g, group) in model.groups.iter().enumerate() {
        let _ = writeln!(
            out,
            "/* group {g}: {} ({} thread{}) */",
            comment_safe(&group.describe(model.ctas)),
            group.size(),
            if group.size() == 1 { "" } else { "s" }
        );
        let _ = writeln!(out, "proctype G{g}() {{");
        for op in &group.ops {
            let stmt = match op.kind {
                OpKind::Init { bar, count } => format!("mbar_init({bar}, {count});"),
                OpKind::Arrive { bar, count } => format!("mbar_arrive({bar}, {count});"),
                OpKind::Wait { bar, parity } => format!("mbar_wait({bar}, {parity});"),
            };
            let site = match options.describe_site {
                Some(f) => Some(f(op.site)),
                None if op.site.start == op.site.end => None,
                None => Some(format!("bytes {}..{}", op.site.start, op.site.end)),
            };
            match site {
                Some(s) => {
                    let _ = writeln!(out, "    {stmt:<24} /* {} */", comment_safe(&s));
                }
                None => {
                    let _ = writeln!(out, "    {stmt}");
                }
            }
        }
        let _ = writeln!(out, "    finished++");
        let _ = writeln!(out, "}}");
        let _ = writeln!(out);
    }

    let _ = writeln!(out, "init {{");
    let _ = writeln!(out, "    atomic {{");
    for (i, b) in model.barriers.iter().enumerate() {
        if let Some(n) = b.preset_count {
            let _ = writeln!(out, "        mbar_expected[{i}] = {n}; mbar_pending[{i}] = {n};");
        }
    }
    for (g, group) in model.groups.iter().enumerate() {
        for _ in 0..group.size() {
            let _ = writeln!(out, "        run G{g}();");
        }
    }
    if model.groups.is_empty() {
        let _ = writeln!(out, "        skip");
    }
    let _ = writeln!(out, "    }}");
    let _ = writeln!(out, "}}");

    if options.termination_claim {
        let _ = writeln!(out);
        let _ = writeln!(out, "/* Every thread runs to its end. */");
        let _ = writeln!(out, "ltl all_done {{ <> (finished == NTHREADS) }}");
    }
    out
}

const INLINES: &str = "\
/* mbarrier_init: no arrivals of the current phase may be pending. */
inline mbar_init(b, n) {
    atomic {
        assert(mbar_expected[b] == 0 || mbar_pending[b] == mbar_expected[b]);
        mbar_expected[b] = n;
        mbar_pending[b] = n;
        mbar_parity[b] = 0
    }
}

/* n arrivals; the last one of a phase flips the parity and reloads the
 * count, arrivals beyond it count towards the next phase. */
inline mbar_arrive(b, n) {
    atomic {
        assert(mbar_expected[b] > 0);
        if
        :: mbar_expected[b] == 0 -> skip /* the assertion above failed */
        :: mbar_expected[b] > 0 && n < mbar_pending[b] ->
            mbar_pending[b] = mbar_pending[b] - n
        :: mbar_expected[b] > 0 && n >= mbar_pending[b] ->
            mbar_pending[b] = mbar_expected[b] - (n - mbar_pending[b]) % mbar_expected[b];
            mbar_parity[b] = 1 - mbar_parity[b]
        fi
    }
}

/* Block while the current phase has parity p. */
inline mbar_wait(b, p) {
    atomic {
        (mbar_expected[b] == 0 || mbar_parity[b] != p);
        assert(mbar_expected[b] > 0)
    }
}
";

/// Text that can stand inside a `/* */` comment.
fn comment_safe(s: &str) -> String {
    s.replace("*/", "* /").replace("/*", "/ *").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Barrier, Group, Op};

    fn op(kind: OpKind) -> Op {
        Op { kind, site: TextRange::new(10, 20) }
    }

    #[test]
    fn exports_every_operation_and_thread() {
        let model = Model {
            kernel: "k".into(),
            ctas: 1,
            threads_per_cta: 2,
            barriers: vec![Barrier { name: "bar".into(), cta: 0, kind: BarrierKind::Mbarrier, preset_count: None }],
            groups: vec![
                Group {
                    ops: vec![op(OpKind::Init { bar: 0, count: 2 }), op(OpKind::Arrive { bar: 0, count: 1 })],
                    threads: vec![(0, 0)],
                },
                Group { ops: vec![op(OpKind::Arrive { bar: 0, count: 1 }), op(OpKind::Wait { bar: 0, parity: 0 })], threads: vec![(0, 1)] },
            ],
            ..Model::default()
        };
        let describe = |r: TextRange| format!("line {}: op */", r.start);
        let text = to_promela(&model, &PromelaOptions { describe_site: Some(&describe), ..Default::default() });
        assert!(text.contains("mbar_init(0, 2);"));
        assert!(text.contains("mbar_wait(0, 0);"));
        assert!(text.contains("/* line 10: op * / */"));
        assert_eq!(text.matches("run G0();").count(), 1);
        assert_eq!(text.matches("run G1();").count(), 1);
        assert!(text.contains("#define NTHREADS 2"));
        assert!(text.contains("ltl all_done { <> (finished == NTHREADS) }"));
        assert!(spin_limits(&model).is_ok());
    }
}
