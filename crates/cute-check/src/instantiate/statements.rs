//! Statements and control flow of one thread: the kernel's kept statements (or
//! a helper's) run in order, with that thread's indices.
//!
//! Conditions on thread indices, loop counters and constants are decided
//! exactly. A condition on a runtime value is open: it is decided by the
//! scenario, alike in every thread (`same_condition.rs` makes conditions
//! written alike one), and the caller runs the kernel again for the other ways
//! of deciding it. A branch on a value read from a synchronization variable is
//! decided the same way and guards the read that decides it:
//! `if atomic_add(ctr, 1, ...) == n - 1:` (the last CTA to arrive) is an update
//! followed, on the branch taken, by a read of the counter that waits for it to
//! grow to `n`. A spin loop on a synchronization variable
//! (`while ld_acquire(flag) == 0: pass`) is one blocking read, and a loop that
//! spins on an mbarrier try-wait is the wait. `with elect_one():` runs its body
//! in lane 0 of the warp. Loops with a known trip count run it; the others are
//! explored (`loops.rs`). A `return`, or a `break`/`continue` in a loop, that
//! the slice keeps makes the threads that take it skip what follows.

use cute_ir::api::Api;
use cute_ir::ast::{Expr, Stmt, StmtId, StmtKind, Target};
use cute_ir::eval::{self, assign, eval, Env, Value};

use super::{functions::Body, mbarrier::spins_on_try_wait, warp::FULL_MASK, Decision, OpenCondition, ThreadRun};
use crate::model::*;

pub(super) enum Flow {
    Normal,
    Break,
    Continue,
    Return(Value),
}

impl<'a> ThreadRun<'a> {
    /// Run a block of the kernel's or of a helper's `body`, skipping the
    /// statements outside its slice.
    pub(super) fn exec_block(&mut self, stmts: &'a [Stmt], env: &mut Env, body: Body<'a>) -> Flow {
        for s in stmts {
            self.apply_write_backs(env);
            if self.overflow {
                return Flow::Return(Value::None);
            }
            let kept = match body {
                Body::Kernel => self.kept.contains(s.id),
                Body::Helper(kept) => kept.contains(s.id),
                Body::Whole => true,
            };
            if !kept {
                continue;
            }
            // Loads and stores only memory ordering needs: a lane that
            // records none (its warp's lane 0 acts for it) skips them; the
            // last lane runs them for the elements it would touch, and so
            // do the others where lanes could race (`lanes::race_points`).
            if matches!(body, Body::Kernel)
                && self.converged()
                && self.lane() != 0
                && !self.is_last_lane()
                && self.kept.memory_only(s.id)
                && !self.race_points.contains_key(&(s.range, self.stretch()))
            {
                continue;
            }
            match self.exec(s, env, body) {
                Flow::Normal => {}
                other => return other,
            }
        }
        self.apply_write_backs(env);
        Flow::Normal
    }

    pub(super) fn exec(&mut self, s: &'a Stmt, env: &mut Env, body: Body<'a>) -> Flow {
        self.steps += 1;
        if self.inline_depth == 0 {
            self.kernel_stmt = s.id;
        }
        if self.steps > self.options.max_steps_per_thread {
            self.overflow = true;
            return Flow::Return(Value::None);
        }
        if self.steps % 1024 == 0 && std::time::Instant::now() > self.shared.deadline {
            self.shared.out_of_time = true;
        }
        if self.shared.out_of_time {
            return Flow::Return(Value::None);
        }
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                self.last_update = None;
                let mut v = eval(value, env, self);
                if self.inline_depth == 0 {
                    self.take_unknown_count_as_explored(targets, value, &mut v, env);
                    self.bind_atomic_result(targets, value, &v);
                }
                self.record_reads(value, env, s.range);
                for t in targets {
                    self.bind_in_stood_in_lanes(t, value, env);
                }
                let v = self.identified(targets, v);
                for t in targets {
                    self.record_store(t, env, s.range, false);
                    self.bind_stored_object(t, env);
                    assign(t, v.clone(), env);
                }
            }
            StmtKind::AugAssign { target, op, value } => {
                let cur = match target {
                    Target::Name(n) => match env.get(n).or_else(|| self.globals.get(n)) {
                        Some(v) => v.clone(),
                        None => Value::unknown(format!("`{n}`")),
                    },
                    Target::Attr { base, attr } => eval(&Expr::Attr { base: Box::new(base.clone()), attr: attr.clone() }, env, self),
                    _ => Value::unknown("an augmented store"),
                };
                let r = eval(value, env, self);
                self.record_reads(value, env, s.range);
                self.record_store(target, env, s.range, true);
                self.aug_assign_in_stood_in_lanes(target, *op, (&cur, &r), value, env);
                let v = eval::binary(*op, &cur, &r);
                self.bind_stored_object(target, env);
                assign(target, v, env);
            }
            StmtKind::Expr(e) => {
                // `state.advance()` changes the state it is called on.
                if let Expr::Call(c) = e {
                    if let Expr::Attr { base, attr } = &c.func {
                        if let (Expr::Name(v), "advance") = (base.as_ref(), attr.as_str()) {
                            if let Some(next) = env.get(v).and_then(crate::pipeline::advanced) {
                                self.advance_in_stood_in_lanes(v, env);
                                env.insert(v.clone(), next);
                                return Flow::Normal;
                            }
                            if matches!(env.get(v), Some(Value::Object(o)) if o.class == crate::pipeline::STATE) {
                                // A state that cannot advance: its later
                                // waits would name the wrong phases.
                                self.unresolved(c.range, format!("`{v}.advance()` on a pipeline state not known statically"));
                                return Flow::Normal;
                            }
                        }
                    }
                }
                eval(e, env, self);
                self.record_reads(e, env, s.range);
                if let Expr::Call(c) = e {
                    self.advance_after_tail(c, env);
                }
            }
            StmtKind::If { cond, then, orelse } => {
                // `if load(flag, ...) >= N:` decides on a synchronization
                // variable: the branch taken is guarded by the value read.
                if let Some((call, guard)) = self.spin_guard(cond, env, true, None) {
                    let taken = self.open_memory_condition(s, cond);
                    let test = guard.clone();
                    let guard = if taken { guard } else { Guard { exit_when: guard.exit_when.negated(), ..guard } };
                    self.last_update = None;
                    self.observe_with(call, guard, env);
                    if let Some(made) = self.last_update.take() {
                        self.deal_ticket(s, &made, &test, taken);
                    }
                    return if taken { self.exec_block(then, env, body) } else { self.exec_block(orelse, env, body) };
                }
                // The same through a name bound to what an atomic returned
                // (`ticket = atomic_add(counter, 1)`, `if ticket == 0:`).
                if let Some((made, guard)) = self.atomic_result_guard(cond, env) {
                    let taken = self.open_memory_condition(s, cond);
                    self.deal_ticket(s, &made, &guard, taken);
                    let guard = if taken { guard } else { Guard { exit_when: guard.exit_when.negated(), ..guard } };
                    self.observe_update_result(&made, guard);
                    return if taken { self.exec_block(then, env, body) } else { self.exec_block(orelse, env, body) };
                }
                let c = eval(cond, env, self);
                self.note_lane_varying_condition(cond, &c, env);
                self.record_reads(cond, env, s.range);
                if c.as_bool().is_none() && (self.memory_control(s.id, body) || self.chooses_nothing_known(cond, then, orelse, env)) {
                    return self.exec_both_ways(s, &c, then, orelse, env, body).0;
                }
                if c.as_bool().is_none()
                    && self.per_way.is_some_and(|per_way| !per_way.contains(&s.id))
                    && !super::both_ways::leaves_block(then)
                    && !super::both_ways::leaves_block(orelse)
                {
                    return self.exec_both_ways_unless_synchronizing(s, &c, then, orelse, env, body);
                }
                let taken = match c.as_bool() {
                    Some(b) => b,
                    None => {
                        if self.per_way.is_some_and(|per_way| per_way.contains(&s.id)) {
                            self.shared.decided_per_way.insert(s.id);
                        }
                        let deciding = match super::launch_condition::launch_condition(cond, |e| eval(e, env, self)) {
                            Some((id, negated)) => (id, super::same_condition::site(s), negated),
                            None => self.deciding(s),
                        };
                        self.open_condition(s, deciding, &c)
                    }
                };
                // A condition unknown in every lane of the warp is decided
                // by the scenario, alike in all of them: it splits no warp.
                let splits_warp = self.is_lane_varying(cond) && !(c.as_bool().is_none() && self.unknown_in_every_lane(cond, env));
                self.divergence += splits_warp as u32;
                let flow = if taken { self.exec_block(then, env, body) } else { self.exec_block(orelse, env, body) };
                self.divergence -= splits_warp as u32;
                return flow;
            }
            StmtKind::For { target, iter, body: block } => {
                let it = eval(iter, env, self);
                self.note_lane_varying_value(iter, &it, env);
                if it.is_unknown() {
                    self.keep_lanes_running_as_many_trips(iter, env);
                }
                // Every lane runs the same iterations unless the lanes were
                // set apart just now.
                self.bind_same_in_stood_in_lanes(target);
                let trips_known = it.iteration().is_some();
                let (values, stop_known) = match it.iteration() {
                    Some(v) => (v, false),
                    None => self.explored_iterations(iter, &it, env),
                };
                let stop_name = if trips_known { None } else { self.stop_name_in_loop(iter, values.len(), env) };
                let unknown_stop = stop_name.map(|(name, count)| {
                    self.bind_same_in_stood_in_lanes(&Target::Name(name.to_string()));
                    (name, env.insert(name.to_string(), count))
                });
                let mut flow = Flow::Normal;
                self.loops_of_unknown_length += u32::from(!trips_known);
                for v in values {
                    assign(target, v, env);
                    match self.exec_block(block, env, body) {
                        Flow::Break => break,
                        Flow::Return(v) => {
                            flow = Flow::Return(v);
                            break;
                        }
                        _ => {}
                    }
                    if self.overflow {
                        break;
                    }
                }
                self.loops_of_unknown_length -= u32::from(!trips_known);
                if let Some((name, Some(before))) = unknown_stop {
                    self.bind_same_in_stood_in_lanes(&Target::Name(name.to_string()));
                    env.insert(name.to_string(), before);
                }
                if stop_known {
                    self.known_stops.pop();
                }
                if let Flow::Return(_) = flow {
                    return flow;
                }
            }
            StmtKind::While { cond, body: block } => {
                // `while not mbarrier_try_wait(bar, phase): pass` is the
                // wait on that phase: the thread goes on once it completes.
                if block.iter().all(|b| matches!(b.kind, StmtKind::Pass)) && spins_on_try_wait(cond) {
                    self.try_wait_blocks = true;
                    eval(cond, env, self);
                    self.try_wait_blocks = false;
                    return Flow::Normal;
                }
                // A spin loop on a synchronization variable is one blocking
                // read: the thread goes on once the value satisfies the exit
                // condition.
                if block.iter().all(|b| matches!(b.kind, StmtKind::Pass)) {
                    if let Some((call, guard)) = self.spin_guard(cond, env, false, None) {
                        self.observe_with(call, guard, env);
                        return Flow::Normal;
                    }
                }
                // `while v != n: v = ld_acquire(ctr)`: the same, through a
                // variable (unless it already holds the exit value).
                if let [Stmt { kind: StmtKind::Assign { targets, value }, .. }] = block.as_slice() {
                    if let ([Target::Name(var)], true) = (targets.as_slice(), self.is_observing_call(value)) {
                        if let Some((call, guard)) = self.spin_guard(cond, env, false, Some((var, value))) {
                            if eval(cond, env, self).as_bool() != Some(false) {
                                let v = self.observe_with(call, guard, env);
                                if self.following_stood_in_lanes() {
                                    // A value read from memory: not followed.
                                    self.stood_in.as_mut().expect("followed").bind_values(&Target::Name(var.clone()), None);
                                }
                                env.insert(var.clone(), v);
                            }
                            return Flow::Normal;
                        }
                    }
                }
                // A count taken as the explored one runs the loop no
                // longer than a count not known would, whatever its body
                // does with it.
                let counted_down = self.take_counted_down_as_explored(cond, env);
                let mut iterations = 0;
                loop {
                    let c = eval(cond, env, self);
                    self.note_lane_varying_condition(cond, &c, env);
                    let explored = c.as_bool().is_none();
                    let go = match c.as_bool() {
                        Some(b) => b && !(counted_down && iterations >= self.options.unknown_trip_count),
                        None => {
                            self.shared.bounded = true;
                            self.shared.notes.insert(format!(
                                "a `while` condition depends on a runtime value: the loop is explored for {} iterations",
                                self.options.unknown_trip_count
                            ));
                            iterations < self.options.unknown_trip_count
                        }
                    };
                    if !go || iterations > 100_000 || self.overflow {
                        break;
                    }
                    iterations += 1;
                    self.loops_of_unknown_length += u32::from(explored);
                    let flow = self.exec_block(block, env, body);
                    self.loops_of_unknown_length -= u32::from(explored);
                    match flow {
                        Flow::Break => break,
                        Flow::Return(v) => return Flow::Return(v),
                        _ => {}
                    }
                }
            }
            StmtKind::With { items, body: block } => {
                let mut elect = false;
                for (e, t) in items {
                    let is_elect = matches!(e, Expr::Call(c) if Api::of_call(c) == Some(Api::ElectOne));
                    if is_elect {
                        elect = true;
                    } else {
                        self.note_lane_varying(e);
                        let v = eval(e, env, self);
                        if let Some(t) = t {
                            self.bind_same_in_stood_in_lanes(t);
                            assign(t, v, env);
                        }
                    }
                }
                if elect && !self.converged() {
                    self.partial_collective(s.range, "`elect_one` elects over the full warp (`elect.sync`, member mask 0xffffffff)", FULL_MASK);
                }
                if elect {
                    // elect.sync picks one lane of each warp: lane 0 when the
                    // whole warp is converged.
                    let mut flow = Flow::Normal;
                    self.divergence += 1;
                    if self.lane() == 0 {
                        self.elect_depth += 1;
                        flow = self.exec_block(block, env, body);
                        self.elect_depth -= 1;
                    }
                    self.divergence -= 1;
                    return flow;
                }
                return self.exec_block(block, env, body);
            }
            StmtKind::Return(e) => {
                let v = e.as_ref().map(|e| eval(e, env, self)).unwrap_or(Value::None);
                self.return_in_stood_in_lanes(e.as_ref(), &v, env);
                return Flow::Return(v);
            }
            StmtKind::Break => return Flow::Break,
            StmtKind::Continue => return Flow::Continue,
            StmtKind::Pass | StmtKind::Unsupported(_) => {}
        }
        Flow::Normal
    }

    /// Rebinds the names that [`Self::write_backs`] holds.
    pub(super) fn apply_write_backs(&mut self, env: &mut Env) {
        for (name, value) in self.write_backs.drain(..) {
            env.insert(name, value);
        }
    }

    /// Binds here the module-level object whose attribute `target` stores
    /// into (`config.x = v`), so that the store is seen by the rest of this
    /// frame, as it was when frames began as copies of the module's names.
    pub(super) fn bind_stored_object(&self, target: &Target, env: &mut Env) {
        match target {
            Target::Attr { base: Expr::Name(b), .. } if !env.contains_key(b) => {
                if let Some(v) = self.globals.get(b) {
                    env.insert(b.clone(), v.clone());
                }
            }
            Target::Tuple(items) => items.iter().for_each(|t| self.bind_stored_object(t, env)),
            _ => {}
        }
    }

    /// A branch on a value read from a synchronization variable: decided
    /// by the scenario, as a condition on memory (both ways happen,
    /// depending only on timing).
    fn open_memory_condition(&mut self, s: &Stmt, cond: &Expr) -> bool {
        self.note_lane_varying(cond);
        let taken = self.open_condition(s, self.deciding(s), &Value::unknown("a value loaded from memory"));
        if let Some(c) = self.shared.open.get_mut(&s.id) {
            c.on_memory = true;
        }
        taken
    }

    /// Remembers the kernel's names bound to what an atomic update of a
    /// counter returned, forgetting those bound to anything else.
    fn bind_atomic_result(&mut self, targets: &[Target], value: &Expr, v: &Value) {
        for t in targets {
            if let Target::Name(n) = t {
                self.atomic_results.remove(n);
            }
        }
        let from_atomic = matches!(v, Value::Unknown(w, _) if &**w == super::calls::ATOMIC_RESULT);
        if let ([Target::Name(n)], Some(made), true) = (targets, self.last_update.take(), from_atomic) {
            if matches!(value, Expr::Call(c) if c.range.start <= made.site.start && made.site.end <= c.range.end) {
                self.atomic_results.insert(n.clone(), made);
            }
        }
    }

    /// `if arrived == n - 1:` where `arrived` is bound to what an atomic
    /// update returned: the update, and the condition on its result.
    fn atomic_result_guard(&mut self, cond: &'a Expr, env: &Env) -> Option<(super::memory::AtomicUpdate, Guard)> {
        if self.inline_depth != 0 {
            return None;
        }
        let Expr::Compare { lhs, rhs, .. } = cond else { return None };
        let name = [lhs, rhs].into_iter().find_map(|e| match e.as_ref() {
            Expr::Name(n) if self.atomic_results.contains_key(n) => Some((n.as_str(), e.as_ref())),
            _ => None,
        })?;
        let made = self.atomic_results.get(name.0)?.clone();
        let (_, guard) = self.spin_guard(cond, env, true, Some(name))?;
        Some((made, guard))
    }

    /// After the branch `s` on what the update `made` returned, which tests
    /// it as `test` says, was decided for this thread (`taken`): where it
    /// tests the ticket each CTA draws, its ways are the sets of CTAs it
    /// can hold in (`tickets.rs`), and in a way that decides it so, the
    /// thread's addition waits for a count that agrees.
    fn deal_ticket(&mut self, s: &Stmt, made: &super::memory::AtomicUpdate, test: &Guard, taken: bool) {
        let (Update::Add(1), Some(_), Some(k)) = (&made.update, made.offset, test.target) else { return };
        // The condition the scenario decides may be an earlier one this
        // one negates (`same_condition.rs`).
        let (stmt, _, negated) = self.deciding(s);
        let decided = if negated { test.exit_when.negated() } else { test.exit_when };
        let masks = super::tickets::ticket_masks(decided, k, self.modelled_ctas, self.launch_ctas);
        if let Some(c) = self.shared.open.get_mut(&stmt) {
            if c.cta_masks.is_empty() {
                c.cta_masks = masks.clone();
            }
        }
        let per_cta = matches!(self.scenario.get(&stmt), Some(Decision::InCtas(_)));
        if let (true, false, Some(index)) = (per_cta, masks.is_empty(), made.index) {
            let holds = if taken { test.exit_when } else { test.exit_when.negated() };
            if let Some(MemOp { kind: MemKind::Update { drawn, .. }, .. }) = self.memory.get_mut(index) {
                *drawn = Some((holds, k));
            }
        }
    }

    /// The condition that decides `s`'s (`same_condition.rs`): in the
    /// kernel's frame, the first of the kernel's written like it; in a
    /// helper's, the kernel's it is written like once the helper's names are
    /// read as the kernel's.
    fn deciding(&self, s: &Stmt) -> super::same_condition::Deciding {
        match &self.frame_origins {
            None => self.same_conditions.deciding(s),
            Some(origins) => self.same_conditions.deciding_in_helper(s, origins),
        }
    }

    /// Whether the branch of `s`, whose condition is `deciding`, is taken,
    /// as the scenario decides it.
    pub(super) fn open_condition(&mut self, s: &Stmt, deciding: super::same_condition::Deciding, value: &Value) -> bool {
        let why = match value {
            Value::Unknown(w, _) => w.to_string(),
            _ => "a runtime value".to_string(),
        };
        let (stmt, site, negated) = deciding;
        if !self.met.contains(&stmt) {
            self.met.push(stmt);
        }
        // The statement named: the one deciding the condition, or for a
        // test of a launch value, the one met here.
        let (statement, in_helper) = if super::launch_condition::is_launch_condition(stmt) { (s.id, self.inline_depth > 0) } else { (stmt, false) };
        let condition = OpenCondition { stmt, site, why, on_memory: false, cta_masks: Vec::new(), negated_at_site: negated, statement, in_helper };
        condition.record_in(&mut self.shared.open);
        self.scenario.get(&stmt).is_some_and(|d| d.holds_in(self.cta)) != negated
    }
}

/// Whether a branch only binds names to values computed without reading
/// memory or calling anything that could synchronize (`layout =
/// layout.outer`, `new_layout = cute.make_composed_layout(...)` under `if
/// isinstance(layout, cute.ComposedLayout):`).
fn binds_values_only(block: &[Stmt]) -> bool {
    block.iter().all(|s| match &s.kind {
        StmtKind::Pass => true,
        StmtKind::Assign { targets, value } => {
            targets.iter().all(|t| matches!(t, Target::Name(_) | Target::Tuple(_))) && calls_only_the_dsl(value) && !reads_an_element(value)
        }
        _ => false,
    })
}

/// Whether `cond` is `cutlass.const_expr(...)`: decided when the kernel is
/// compiled, alike in every thread.
fn is_const_expr(cond: &Expr) -> bool {
    matches!(cond, Expr::Call(c) if Api::of_call(c) == Some(Api::ConstExpr))
}

/// A value no decision rests on: one not known, or a float.
fn nothing_known(v: &Value) -> bool {
    matches!(v, Value::Unknown(..) | Value::Float)
}

/// Two views of one buffer, one an attribute of the other: `t.layout` and
/// `t.layout.outer` of a tensor in tensor memory are named after it. Which
/// view a branch picks changes no buffer the threads access. (Two fields of
/// one struct, `storage.sA` and `storage.sB`, are two buffers.)
fn same_buffer(a: &Value, b: &Value) -> bool {
    let derived = |a: &str, b: &str| {
        let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
        long.strip_prefix(short).is_some_and(|rest| rest.starts_with('.'))
    };
    match (a, b) {
        (Value::Smem(a), Value::Smem(b)) => derived(&a.alloc, &b.alloc) && a.cta == b.cta && a.offset == b.offset,
        (Value::Gmem(a), Value::Gmem(b)) => derived(&a.param, &b.param),
        _ => false,
    }
}

/// Whether `e` subscripts anything (a load from a buffer, for one).
fn reads_an_element(e: &Expr) -> bool {
    let mut found = matches!(e, Expr::Subscript { .. });
    e.for_each_child(&mut |child| found |= reads_an_element(child));
    found
}

/// Whether every call in `e` is a function of the DSL the API table does not
/// list as synchronizing (its layout algebra, `isinstance`, `min`).
fn calls_only_the_dsl(e: &Expr) -> bool {
    let mut calls = Vec::new();
    e.calls(&mut calls);
    calls.iter().all(|c| {
        const BUILTINS: &[&str] = &["isinstance", "hasattr", "getattr", "len", "min", "max", "abs", "int", "float", "bool", "tuple", "list"];
        let library = match &c.func {
            Expr::Name(n) if BUILTINS.contains(&n.as_str()) => true,
            _ => c.qualname.as_deref().is_some_and(|q| q.starts_with("cutlass.")),
        };
        library && matches!(Api::of_call(c), None | Some(Api::IntCast | Api::ConstExpr | Api::Range))
    })
}

impl<'a> ThreadRun<'a> {
    /// Whether `if cond:` (on a runtime value alike in every lane) only
    /// chooses between values nothing knows: its branches only bind values
    /// (see [`binds_values_only`]), and every name they bind ends either way
    /// with the same value, a value not known statically, or bound by one
    /// branch alone. Such a condition is run both ways (see
    /// [`Self::exec_both_ways`]) instead of being decided per run, and
    /// nothing is lost: the threads synchronize alike either way, and
    /// deciding it would know no more after it. A condition that chooses a
    /// known value (`stages = 3` or `2`) is still decided per run.
    fn chooses_nothing_known(&mut self, cond: &Expr, then: &'a [Stmt], orelse: &'a [Stmt], env: &Env) -> bool {
        if !binds_values_only(then) || !binds_values_only(orelse) || self.is_lane_varying(cond) {
            return false;
        }
        let mut either = [env.clone(), env.clone()];
        for (block, scratch) in [then, orelse].into_iter().zip(either.iter_mut()) {
            for s in block {
                if let StmtKind::Assign { targets, value } = &s.kind {
                    let v = eval(value, scratch, self);
                    targets.iter().for_each(|t| assign(t, v.clone(), scratch));
                }
            }
        }
        let [taken, other] = either;
        taken.iter().all(|(name, v)| match other.get(name) {
            Some(o) => o == v || nothing_known(o) && nothing_known(v) || same_buffer(o, v),
            None => true,
        })
    }

    /// Whether statement `id` of `body` is a header only memory accesses
    /// depend on (`cute_ir::Kept::memory_controls`).
    fn memory_control(&self, id: StmtId, body: Body<'a>) -> bool {
        match body {
            Body::Kernel => self.kept.memory_control(id),
            Body::Helper(kept) => kept.memory_control(id),
            Body::Whole => false,
        }
    }

    /// Runs both branches of `s`, an `if` on a runtime value (its condition
    /// gave `value`) that only memory accesses depend on, one after the other,
    /// instead of deciding it one way per run: no synchronization lies
    /// under it, so the threads synchronize alike either way, and the
    /// memory analysis sees every access either branch makes, between the
    /// same synchronization operations. (Deciding it per run would cost a
    /// run of every thread per way, for the same synchronization.) A name
    /// the branches leave with different values is not known after it; one
    /// only a branch binds holds what that branch gave it.
    ///
    /// The lanes this one stands in for run both branches too, so they
    /// stay stood in for: a name not known after it is not known in them
    /// either.
    ///
    /// Also returns whether the branches left a name with two values, one
    /// of them known (`stages = 3` or `2`): then deciding the condition
    /// would have known more after it.
    pub(super) fn exec_both_ways(&mut self, s: &'a Stmt, value: &Value, then: &'a [Stmt], orelse: &'a [Stmt], env: &mut Env, body: Body<'a>) -> (Flow, bool) {
        let StmtKind::If { cond, .. } = &s.kind else { unreachable!("called on an `if`") };
        let why = match value {
            Value::Unknown(w, _) => w.to_string(),
            _ => "a runtime value".to_string(),
        };
        self.shared.memory_conditions.entry(s.id).or_insert(crate::model::MemoryCondition { span: s.range, why });
        let splits_warp = self.is_lane_varying(cond) && !self.unknown_in_every_lane(cond, env);
        // A test the whole launch decides alike (a `cutlass.const_expr`, an
        // argument of the launch): no thread takes the other branch than
        // another, so the accesses of the two are never compared.
        let uniform = is_const_expr(cond) || super::launch_condition::launch_condition(cond, |e| eval(e, env, self)).is_some();
        self.divergence += splits_warp as u32;
        let mut other = env.clone();
        let in_branch = |run: &mut Self, then_branch: bool, block: &'a [Stmt], env: &mut Env| {
            if uniform {
                run.uniform_branches.push((s.id, then_branch));
            }
            let flow = run.exec_block(block, env, body);
            if uniform {
                run.uniform_branches.pop();
            }
            flow
        };
        let taken = in_branch(self, true, then, env);
        let not_taken = in_branch(self, false, orelse, &mut other);
        self.divergence -= splits_warp as u32;
        // A name only one branch binds keeps the value it gave: the slice
        // runs both branches only where nothing reads it in the other
        // (see `cute_ir::slice::Kept::memory_controls`).
        let only_other: Vec<(String, Value)> =
            other.iter().filter(|(name, _)| !env.contains_key(*name)).map(|(n, v)| (n.clone(), v.clone())).collect();
        env.extend(only_other);
        let differ: Vec<String> = env
            .iter()
            .filter(|(name, v)| other.get(*name).is_some_and(|o| o != *v))
            .map(|(name, _)| name.clone())
            .collect();
        let chose_known = differ.iter().any(|name| {
            let (a, b) = (&env[name], &other[name]);
            !(nothing_known(a) && nothing_known(b) || same_buffer(a, b))
        });
        for name in differ {
            self.bind_same_in_stood_in_lanes(&Target::Name(name.clone()));
            env.insert(name, Value::unknown("a value assigned under a condition on runtime values"));
        }
        let flow = match (taken, not_taken) {
            (Flow::Normal, flow) | (flow, _) => flow,
        };
        (flow, chose_known)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cute_ir::eval::SmemRef;

    fn smem(name: &str) -> Value {
        Value::Smem(SmemRef::new(name.to_string()))
    }

    #[test]
    fn a_view_named_after_a_buffer_is_that_buffer_and_a_sibling_field_is_not() {
        assert!(same_buffer(&smem("<tensor memory>.layout"), &smem("<tensor memory>.layout.outer")));
        assert!(same_buffer(&smem("<tensor memory>.layout.outer"), &smem("<tensor memory>.layout")));
        assert!(!same_buffer(&smem("storage.sA"), &smem("storage.sB")));
        assert!(!same_buffer(&smem("storage.sA"), &smem("storage.sAB")));
        assert!(!same_buffer(&smem("storage.sA"), &Value::unknown("`x`")));
    }
}
