//! Models shared by the integration tests and the benchmark: the two-CTA
//! exchange of the Jacobi smoother built by hand, and a seeded generator of
//! small random synchronization protocols.

#![allow(dead_code)]

use std::fmt::Write;

use cute_check::explore::{explore, ExploreOptions, Verdict};
use cute_check::model::{Barrier, BarrierKind, Group, Model, Op, OpKind};
use cute_check::naive::{naive_verdict, NaiveVerdict};
use cute_syntax::TextRange;

/// The cross-CTA exchange of the Jacobi smoother: 2 CTAs of `threads`
/// threads; in each of `iters` rounds every thread arrives once on its own
/// CTA's gate and once on the peer's, then waits on its own gate, which
/// expects `2 * threads` arrivals per phase. With `hardcoded_phase` the wait
/// parity is always 0 instead of alternating (the shipped bug).
pub fn seed_exchange(threads: u32, iters: u32, hardcoded_phase: bool) -> Model {
    let barriers = (0..2)
        .map(|cta| Barrier { name: "gate".into(), cta, kind: BarrierKind::Mbarrier, preset_count: Some(2 * threads) })
        .collect();
    // Fake sites so that traces and comments can tell the three calls apart.
    let arrive_local = TextRange::new(100, 120);
    let arrive_peer = TextRange::new(130, 150);
    let wait = TextRange::new(160, 180);
    let groups = (0..2u32)
        .map(|cta| {
            let peer = 1 - cta;
            let mut ops = Vec::new();
            let mut phase = 0u8;
            for _ in 0..iters {
                ops.push(Op { kind: OpKind::Arrive { bar: cta, count: 1 }, site: arrive_local });
                ops.push(Op { kind: OpKind::Arrive { bar: peer, count: 1 }, site: arrive_peer });
                ops.push(Op { kind: OpKind::Wait { bar: cta, parity: if hardcoded_phase { 0 } else { phase } }, site: wait });
                phase ^= 1;
            }
            Group { ops, threads: (0..threads).map(|t| (cta, t)).collect() }
        })
        .collect();
    Model {
        kernel: format!("seed_exchange_{threads}x{iters}{}", if hardcoded_phase { "_bug" } else { "" }),
        ctas: 2,
        threads_per_cta: threads,
        barriers,
        groups,
        ..Model::default()
    }
}

/// xorshift64* (no dependencies, same sequence everywhere).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        // Spread small seeds; never zero.
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03 | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u32) -> u32 {
        ((self.next_u64() >> 32) % n as u64) as u32
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + self.below(hi - lo + 1)
    }

    pub fn chance(&mut self, num: u32, den: u32) -> bool {
        self.below(den) < num
    }
}

/// How a generated protocol initialises its barriers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitStyle {
    /// Every barrier has a preset count.
    Preset,
    /// Group 0 initialises the barriers, then arrives on a preset `start`
    /// barrier that every thread waits on first: no hazard is possible.
    Gated,
    /// Group 0 initialises the barriers at its start and nobody waits for
    /// it: other threads may arrive first (a hazard).
    Raw,
}

pub struct Generated {
    pub seed: u64,
    pub model: Model,
    pub init: InitStyle,
    /// The bug injected, if any.
    pub bug: Option<String>,
}

/// A small random protocol: 1-3 barriers, 2-4 groups of 1-3 threads, a loop
/// body of phases unrolled 1-3 times, each group running its projection of
/// that schedule with tracked parities; about half get one bug.
pub fn random_protocol(seed: u64) -> Generated {
    let mut rng = Rng::new(seed);
    let nbars = rng.range(1, 3) as usize;
    let ngroups = rng.range(2, 4) as usize;
    let sizes: Vec<u32> = (0..ngroups).map(|_| rng.range(1, 3)).collect();
    let init = match rng.below(4) {
        0 | 1 => InitStyle::Preset,
        2 => InitStyle::Gated,
        _ => InitStyle::Raw,
    };

    // Who arrives on each barrier (group, count per thread), who waits.
    // Three shapes:
    // * all-to-all: every arriver waits, and only they do (the two-CTA
    //   exchange); it cannot be lapped;
    // * paired: producers arrive on `full`, consumers wait on it and arrive
    //   on a companion `empty` that producers wait on (parity starting at 1,
    //   which passes on a fresh barrier) before they arrive again;
    // * free: arrivers and waiters at random, which may be lapped.
    struct Role {
        arrivers: Vec<(usize, u32)>,
        waiters: Vec<usize>,
        expected: u32,
        /// For `full` of a pair: the index of `empty`.
        empty: Option<usize>,
    }
    let mut roles: Vec<Role> = Vec::new();
    let mut main_bars = Vec::new();
    for _ in 0..nbars {
        let mut arrivers = Vec::new();
        let mut waiters = Vec::new();
        for g in 0..ngroups {
            if rng.chance(1, 2) {
                arrivers.push((g, rng.range(1, 2)));
            }
            if rng.chance(1, 2) {
                waiters.push(g);
            }
        }
        if arrivers.is_empty() {
            arrivers.push((rng.below(ngroups as u32) as usize, 1));
        }
        if waiters.is_empty() {
            waiters.push(rng.below(ngroups as u32) as usize);
        }
        let shape = rng.below(20);
        let consumers: Vec<usize> = (0..ngroups).filter(|g| !arrivers.iter().any(|a| a.0 == *g)).collect();
        let mut empty = None;
        if shape < 8 || (shape < 15 && consumers.is_empty()) {
            waiters = arrivers.iter().map(|a| a.0).collect();
        } else if shape < 15 {
            waiters = consumers.into_iter().filter(|_| rng.chance(2, 3)).collect();
            if waiters.is_empty() {
                waiters.push(*(0..ngroups).filter(|g| !arrivers.iter().any(|a| a.0 == *g)).collect::<Vec<_>>().first().unwrap());
            }
            empty = Some(usize::MAX);
        }
        let expected = arrivers.iter().map(|&(g, c)| sizes[g] * c).sum();
        main_bars.push(roles.len());
        let full = roles.len();
        roles.push(Role { arrivers, waiters, expected, empty });
        if empty.is_some() {
            let consumers = roles[full].waiters.clone();
            let producers: Vec<usize> = roles[full].arrivers.iter().map(|a| a.0).collect();
            let expected = consumers.iter().map(|&g| sizes[g]).sum();
            roles[full].empty = Some(roles.len());
            roles.push(Role { arrivers: consumers.iter().map(|&g| (g, 1)).collect(), waiters: producers, expected, empty: None });
        }
    }
    let nbars = roles.len();

    // The loop body: 1-3 phases, each on one barrier; unrolled 1-3 times.
    let body: Vec<usize> = (0..rng.range(1, 3)).map(|_| main_bars[rng.below(main_bars.len() as u32) as usize]).collect();
    let unroll = rng.range(1, 3);
    let schedule: Vec<usize> = (0..unroll).flat_map(|_| body.iter().copied()).collect();

    // Projection: per group, its part of each phase, with the parity of the
    // phase waited for (phase k of a barrier has parity k & 1).
    let mut ops: Vec<Vec<OpKind>> = vec![Vec::new(); ngroups];
    let mut phase_of = vec![0u32; nbars];
    for &b in &schedule {
        let k = phase_of[b];
        let parity = (k & 1) as u8;
        let role = &roles[b];
        for (g, list) in ops.iter_mut().enumerate() {
            let arrive = role.arrivers.iter().find(|a| a.0 == g).map(|a| OpKind::Arrive { bar: b as u32, count: a.1 });
            let wait = role.waiters.contains(&g).then_some(OpKind::Wait { bar: b as u32, parity });
            match role.empty {
                Some(e) => {
                    // Producers: wait until `empty` completed phase k - 1, then arrive.
                    if let Some(arrive) = arrive {
                        list.push(OpKind::Wait { bar: e as u32, parity: ((k + 1) & 1) as u8 });
                        list.push(arrive);
                    }
                    // Consumers: wait for `full`, then release the slot.
                    if let Some(wait) = wait {
                        list.push(wait);
                        list.push(OpKind::Arrive { bar: e as u32, count: 1 });
                    }
                }
                None => list.extend([arrive, wait].into_iter().flatten()),
            }
        }
        phase_of[b] += 1;
        if let Some(e) = role.empty {
            phase_of[e] += 1;
        }
    }

    // One bug about half the time.
    let mut bug = None;
    if rng.chance(1, 2) {
        let g = rng.below(ngroups as u32) as usize;
        match rng.below(6) {
            0 => {
                // Constant parity: every wait of one group on one barrier uses 0.
                let b = rng.below(nbars as u32);
                for op in &mut ops[g] {
                    if let OpKind::Wait { bar, parity } = op {
                        if *bar == b {
                            *parity = 0;
                        }
                    }
                }
                bug = Some(format!("group {g} waits on barrier {b} with constant parity 0"));
            }
            1 => {
                // A missing flip: from some wait on, the parity is inverted.
                let waits: Vec<usize> = ops[g].iter().enumerate().filter(|(_, o)| matches!(o, OpKind::Wait { .. })).map(|(i, _)| i).collect();
                if !waits.is_empty() {
                    let from = waits[rng.below(waits.len() as u32) as usize];
                    let OpKind::Wait { bar: b, .. } = ops[g][from] else { unreachable!() };
                    for op in &mut ops[g][from..] {
                        if let OpKind::Wait { bar, parity } = op {
                            if *bar == b {
                                *parity ^= 1;
                            }
                        }
                    }
                    bug = Some(format!("group {g} misses a parity flip on barrier {b} at op {from}"));
                }
            }
            2 => {
                // Wrong expected count.
                let b = rng.below(nbars as u32) as usize;
                let e = roles[b].expected;
                roles[b].expected = if e > 1 && rng.chance(1, 2) { e - 1 } else { e + 1 };
                bug = Some(format!("barrier {b} expects {} instead of {e}", roles[b].expected));
            }
            3 => {
                // Wrong arrival count in one operation.
                let arrives: Vec<usize> = ops[g].iter().enumerate().filter(|(_, o)| matches!(o, OpKind::Arrive { .. })).map(|(i, _)| i).collect();
                if !arrives.is_empty() {
                    let i = arrives[rng.below(arrives.len() as u32) as usize];
                    if let OpKind::Arrive { count, .. } = &mut ops[g][i] {
                        *count = if *count == 1 { 2 } else { 1 };
                    }
                    bug = Some(format!("group {g} arrives with a wrong count at op {i}"));
                }
            }
            4 => {
                // A dropped operation.
                if !ops[g].is_empty() {
                    let i = rng.below(ops[g].len() as u32) as usize;
                    ops[g].remove(i);
                    bug = Some(format!("group {g} drops op {i}"));
                }
            }
            _ => {
                // Two adjacent operations swapped.
                if ops[g].len() >= 2 {
                    let i = rng.below(ops[g].len() as u32 - 1) as usize;
                    ops[g].swap(i, i + 1);
                    bug = Some(format!("group {g} swaps ops {i} and {}", i + 1));
                }
            }
        }
    }

    let mut barriers: Vec<Barrier> = (0..nbars)
        .map(|b| Barrier {
            name: format!("b{b}"),
            cta: 0,
            kind: BarrierKind::Mbarrier,
            preset_count: (init == InitStyle::Preset).then_some(roles[b].expected),
        })
        .collect();
    if init != InitStyle::Preset {
        let inits: Vec<OpKind> = (0..nbars).map(|b| OpKind::Init { bar: b as u32, count: roles[b].expected }).collect();
        if init == InitStyle::Gated {
            let start = nbars as u32;
            barriers.push(Barrier { name: "start".into(), cta: 0, kind: BarrierKind::Mbarrier, preset_count: Some(sizes[0]) });
            for (g, list) in ops.iter_mut().enumerate() {
                let mut prefix = if g == 0 { inits.clone() } else { Vec::new() };
                if g == 0 {
                    prefix.push(OpKind::Arrive { bar: start, count: 1 });
                }
                prefix.push(OpKind::Wait { bar: start, parity: 0 });
                list.splice(0..0, prefix);
            }
        } else {
            ops[0].splice(0..0, inits);
        }
    }

    let mut site = 0u32;
    let mut groups = Vec::new();
    let mut first_thread = 0u32;
    for (g, list) in ops.into_iter().enumerate() {
        let threads: Vec<(u32, u32)> = (first_thread..first_thread + sizes[g]).map(|t| (0, t)).collect();
        first_thread += sizes[g];
        if list.is_empty() {
            continue;
        }
        let ops = list
            .into_iter()
            .map(|kind| {
                site += 10;
                Op { kind, site: TextRange::new(site as usize, site as usize + 5) }
            })
            .collect();
        groups.push(Group { ops, threads });
    }
    let model = Model {
        kernel: format!("random_{seed}"),
        ctas: 1,
        threads_per_cta: first_thread,
        barriers,
        groups,
        ..Model::default()
    };
    Generated { seed, model, init, bug }
}

/// Deadlock or not, by the reduced explorer; `None` when it gave up.
pub fn explore_deadlocks(model: &Model) -> Option<bool> {
    match explore(model, &ExploreOptions::default()).verdict {
        Verdict::Clean => Some(false),
        Verdict::Deadlock(_) => Some(true),
        Verdict::Incomplete(_) => None,
    }
}

/// The model as Rust code that rebuilds it (for reports of mismatches).
pub fn model_to_rust(model: &Model) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Model {{");
    let _ = writeln!(s, "    kernel: {:?}.into(),", model.kernel);
    let _ = writeln!(s, "    ctas: {},", model.ctas);
    let _ = writeln!(s, "    threads_per_cta: {},", model.threads_per_cta);
    let _ = writeln!(s, "    barriers: vec![");
    for b in &model.barriers {
        let _ = writeln!(
            s,
            "        Barrier {{ name: {:?}.into(), cta: {}, kind: BarrierKind::{:?}, preset_count: {:?} }},",
            b.name, b.cta, b.kind, b.preset_count
        );
    }
    let _ = writeln!(s, "    ],");
    let _ = writeln!(s, "    groups: vec![");
    for g in &model.groups {
        let _ = writeln!(s, "        Group {{");
        let _ = writeln!(s, "            ops: vec![");
        for op in &g.ops {
            let kind = match op.kind {
                OpKind::Init { bar, count } => format!("OpKind::Init {{ bar: {bar}, count: {count} }}"),
                OpKind::Arrive { bar, count } => format!("OpKind::Arrive {{ bar: {bar}, count: {count} }}"),
                OpKind::Wait { bar, parity } => format!("OpKind::Wait {{ bar: {bar}, parity: {parity} }}"),
            };
            let _ = writeln!(s, "                Op {{ kind: {kind}, site: TextRange::default() }},");
        }
        let _ = writeln!(s, "            ],");
        let _ = writeln!(s, "            threads: vec!{:?},", g.threads);
        let _ = writeln!(s, "        }},");
    }
    let _ = writeln!(s, "    ],");
    let _ = writeln!(s, "    ..Model::default()");
    let _ = writeln!(s, "}}");
    s
}

/// The oracle's verdict, when it has one that can be compared with
/// `explore`: `Some(true)` for a deadlock, `Some(false)` for a clean model,
/// `None` for a hazard or a model too big for it.
pub fn naive_deadlocks(model: &Model, max_states: usize) -> Option<bool> {
    match naive_verdict(model, max_states) {
        NaiveVerdict::Clean => Some(false),
        NaiveVerdict::Deadlock => Some(true),
        NaiveVerdict::Hazard | NaiveVerdict::TooBig => None,
    }
}
