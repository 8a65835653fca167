//! A lane that stands in for the lanes after it in its warp (see [`StandIn`]):
//! while it runs, every value it meets that can differ between lanes (a
//! condition, a loop's range, the arguments of a call that acts, an assignment)
//! is followed in those lanes (`uniform.rs`), and the lanes where it comes out
//! otherwise are set apart to run on their own.
//!
//! The assumption is the one `StandIn` states: a lane that made no operation of
//! its own and met nothing through which the lanes it stands in for could
//! differ would run as they do. Whatever cannot be followed (a helper whose
//! arguments do not line up with its parameters, a value that cannot be
//! evaluated in the other lanes) sets them all apart, so the model is the one
//! every lane would build: `tests/parallel.rs` compares the two on every
//! fixture and corpus kernel, and on any code base named by
//! `CUTE_LSP_COMPARE_DIRS`. A call through a `functools.partial` also sets them
//! apart, since its arguments no longer line up with the parameters.

use cute_ir::api::Api;
use cute_ir::ast::{BinOp, Call, Expr, Target};
use cute_ir::eval::{self, eval, Env, Value};

use super::{inline::argument_expressions, uniform, ThreadRun};

impl<'a> ThreadRun<'a> {
    /// Whether this thread stands in for other lanes of its warp, as far as
    /// it has run (see [`StandIn`]). A lane that has recorded something of
    /// its own (an operation, a memory access) stands in for none: the
    /// lanes after it are run on their own, and following them further
    /// would only cost time (most of a kernel's run, where every lane
    /// touches memory at addresses of its own).
    pub(super) fn stands_in(&self) -> bool {
        self.stood_in.is_some()
            && !self.lane_sensitive
            && !self.overflow
            && self.ops.is_empty()
            && self.memory.is_empty()
            && self.lane_regions.is_empty()
            && self.op_points.is_empty()
    }

    /// For `e`, an expression of the code being run that can differ
    /// between lanes and gave `value` here: keeps standing in for the lanes
    /// where it gives the same (see `uniform`), the same decision for a
    /// condition or the same value otherwise (`as_value`), and leaves the
    /// others to run on their own. Stands in for none when `e` cannot be evaluated in them.
    /// Whether it still stands in for some.
    pub(super) fn keep_lanes_alike(&mut self, e: &Expr, value: &Value, as_value: bool, env: &Env) -> bool {
        let values = self.in_stood_in_lanes(e, env);
        self.keep_lanes_giving(values, value, as_value)
    }

    /// [`Self::keep_lanes_alike`] for an expression that gave `values` in
    /// the lanes stood in for (`None`: it could not be evaluated there).
    pub(super) fn keep_lanes_giving(&mut self, values: Option<std::rc::Rc<uniform::InLanes>>, value: &Value, as_value: bool) -> bool {
        let Some(values) = values else {
            self.lane_sensitive = true;
            return false;
        };
        let alike = |v: &Value| if as_value { v == value } else { v.as_bool() == value.as_bool() };
        self.keep_lanes_where(|i, _| alike(values.get(i)))
    }

    /// [`Self::keep_lanes_giving`] for an argument a call reads as an
    /// offset from the calling thread's lane (a pipeline's `tidx=`, see
    /// [`crate::pipeline::reads_as_lane_offset`]): a lane where it is as far
    /// from that lane's own index, modulo a warp, as `value` is from this
    /// one's is alike, whatever the value (`tidx - 64` in every lane of the
    /// third warp).
    pub(super) fn keep_lanes_at_same_lane_offset(&mut self, values: Option<std::rc::Rc<uniform::InLanes>>, value: &Value) {
        let offset = |v: &Value, tid: u32| v.as_int().map(|t| (t - i64::from(tid)).rem_euclid(32));
        let (Some(values), Some(running)) = (values, offset(value, self.tid)) else {
            self.lane_sensitive = true;
            return;
        };
        self.keep_lanes_where(|i, tid| offset(values.get(i), tid) == Some(running));
    }

    /// Keeps standing in for the lanes where `alike`, given a lane's
    /// position and thread index, is true. Whether it still stands in for
    /// some.
    pub(super) fn keep_lanes_where(&mut self, alike: impl Fn(usize, u32) -> bool) -> bool {
        let lanes = self.stood_in.as_mut().expect("evaluated in them");
        lanes.keep(alike);
        if lanes.is_empty() {
            self.lane_sensitive = true;
        }
        !self.lane_sensitive
    }

    /// The value of expression `e` of the code being run (the kernel's or a
    /// helper's) in each lane this lane stands in for, `None` where it is
    /// not known (see `uniform`).
    pub(super) fn in_stood_in_lanes(&mut self, e: &Expr, env: &Env) -> Option<std::rc::Rc<uniform::InLanes>> {
        if !self.following_stood_in_lanes() {
            return None;
        }
        let lane = self.lane_evaluator();
        let scope = self.helper_scopes.last().cloned();
        let lane_dependent = scope.as_deref().unwrap_or(self.lane_dependent);
        self.stood_in.as_mut()?.evaluate(e, env, lane_dependent, lane)
    }

    /// Whether the names of the code being run are followed in the lanes
    /// this lane stands in for: while it stands in for some, in the kernel
    /// and in the helpers followed into (see [`Self::inline_call`]).
    pub(super) fn following_stood_in_lanes(&self) -> bool {
        self.stands_in() && self.stood_in.as_ref().is_some_and(|l| l.helpers() == self.inline_depth as usize)
    }

    /// Follows a binding of `target` to `value` in the lanes this lane
    /// stands in for.
    pub(super) fn bind_in_stood_in_lanes(&mut self, target: &Target, value: &'a Expr, env: &Env) {
        if !self.following_stood_in_lanes() || matches!(target, Target::Attr { .. } | Target::Subscript { .. }) {
            return;
        }
        let varies = self.varies_here(value);
        let lane = self.lane_evaluator();
        let scope = self.helper_scopes.last().cloned();
        let lane_dependent = scope.as_deref().unwrap_or(self.lane_dependent);
        let lanes = self.stood_in.as_mut().expect("followed");
        if !varies {
            return lanes.bind_same(target);
        }
        if let Expr::Call(call) = value {
            // `x = helper(...)`: what the helper returned in the lanes.
            if let Some(returned) = lanes.returned_by(call) {
                return lanes.bind_values(target, returned);
            }
            if self.pipeline_result == Some(&**call as *const Call as usize) {
                return lanes.bind_same(target);
            }
        }
        lanes.bind(target, value, env, lane_dependent, lane)
    }

    /// Follows `return e` (`e` gave `running` here) of a helper in the
    /// lanes this lane stands in for.
    pub(super) fn return_in_stood_in_lanes(&mut self, e: Option<&Expr>, running: &Value, env: &Env) {
        if self.inline_depth == 0 || !self.following_stood_in_lanes() {
            return;
        }
        let values = match e {
            Some(e) if self.varies_here(e) => self.in_stood_in_lanes(e, env),
            _ => Some(std::rc::Rc::new(uniform::InLanes::All(running.clone()))),
        };
        self.stood_in.as_mut().expect("followed").set_returned(values);
    }

    /// Follows a binding of `target` to a value that is this lane's in
    /// every lane it stands in for (a loop's target when the lanes run the
    /// same iterations, a `with` target not lane-dependent).
    pub(super) fn bind_same_in_stood_in_lanes(&mut self, target: &Target) {
        if self.following_stood_in_lanes() {
            self.stood_in.as_mut().expect("followed").bind_same(target);
        }
    }

    /// Follows `target op= value` in the lanes this lane stands in for;
    /// here `target` held `running.0` and `value` evaluated to `running.1`.
    pub(super) fn aug_assign_in_stood_in_lanes(&mut self, target: &Target, op: BinOp, running: (&Value, &Value), value: &'a Expr, env: &Env) {
        if !self.following_stood_in_lanes() {
            return;
        }
        let Target::Name(n) = target else { return };
        let lane = self.lane_evaluator();
        let scope = self.helper_scopes.last().cloned();
        let lane_dependent = scope.as_deref().unwrap_or(self.lane_dependent);
        let before = self.stood_in.as_ref().expect("followed").values_of(n, running.0, lane_dependent, lane);
        let operand = match self.varies_here(value) {
            true => self.in_stood_in_lanes(value, env),
            false => Some(std::rc::Rc::new(uniform::InLanes::All(running.1.clone()))),
        };
        let lanes = self.stood_in.as_mut().expect("followed");
        let count = lanes.positions();
        let after = before.zip(operand).map(|(b, r)| std::rc::Rc::new(b.zip_with(&r, count, |b, r| eval::binary(op, b, r))));
        lanes.bind_values(target, after);
    }

    /// Follows `state.advance()` of name `n` in the lanes this
    /// lane stands in for.
    pub(super) fn advance_in_stood_in_lanes(&mut self, n: &str, env: &Env) {
        if !self.following_stood_in_lanes() {
            return;
        }
        let lane = self.lane_evaluator();
        let scope = self.helper_scopes.last().cloned();
        let lane_dependent = scope.as_deref().unwrap_or(self.lane_dependent);
        let lanes = self.stood_in.as_mut().expect("followed");
        let advanced = env.get(n).and_then(|running| lanes.values_of(n, running, lane_dependent, lane)).and_then(|vs| match &*vs {
            uniform::InLanes::All(v) => crate::pipeline::advanced(v).map(uniform::InLanes::All),
            // A lane no longer stood in for holds no state: it stays as it is.
            uniform::InLanes::Each(vs) => vs.iter().map(|v| crate::pipeline::advanced(v).or_else(|| matches!(v, Value::None).then_some(Value::None))).collect::<Option<Vec<_>>>().map(uniform::InLanes::Each),
        });
        lanes.bind_values(&Target::Name(n.to_string()), advanced.map(std::rc::Rc::new));
    }

    /// What each of a call's arguments, then its keyword arguments, holds
    /// in the lanes this lane stands in for; `None` where arguments do not
    /// line up with their values (a spliced `*args`).
    pub(super) fn arguments_in_stood_in_lanes(
        &mut self,
        call: &Call,
        args: &[Value],
        kwargs: &[(String, Value)],
        env: &Env,
    ) -> Option<Vec<uniform::ArgInLanes>> {
        let exprs = argument_expressions(call, args.len(), kwargs.len())?;
        Some(
            exprs
                .into_iter()
                .map(|e| match self.varies_here(e) {
                    false => uniform::ArgInLanes::Same,
                    true => match self.in_stood_in_lanes(e, env) {
                        Some(values) => uniform::ArgInLanes::Values(values),
                        None => uniform::ArgInLanes::Unknown,
                    },
                })
                .collect(),
        )
    }

    /// Marks this lane as one another lane may not run like when the value
    /// of `e` (a condition, a loop's range, an argument) can differ between
    /// lanes.
    pub(super) fn note_lane_varying(&mut self, e: &Expr) {
        if !self.stands_in() {
            return;
        }
        self.lane_sensitive = self.varies_here(e);
    }

    /// [`Self::note_lane_varying`] for the condition of an `if` or a loop
    /// that evaluated to `value`. A comparison with an operand that is the
    /// same unknown in every lane (`tidx < n`, `n` known only at run time)
    /// is unknown in every lane, whatever the other operand: all lanes then
    /// take the branch the scenario decides, or the same bounded
    /// exploration, and the condition cannot set them apart.
    pub(super) fn note_lane_varying_condition(&mut self, cond: &Expr, value: &Value, env: &Env) {
        if !self.stands_in() || !self.varies_here(cond) {
            return;
        }
        if value.as_bool().is_none() && self.unknown_in_every_lane(cond, env) {
            return;
        }
        self.keep_lanes_alike(cond, value, false, env);
    }

    /// [`Self::note_lane_varying`] for an expression (a loop's range) that
    /// evaluated to `value`: the lanes where it has that value too are not
    /// set apart.
    pub(super) fn note_lane_varying_value(&mut self, e: &Expr, value: &Value, env: &Env) {
        if self.stands_in() && self.varies_here(e) {
            self.keep_lanes_alike(e, value, true, env);
        }
    }

    /// [`Self::note_lane_varying`] for the arguments of a call.
    pub(super) fn note_lane_varying_arguments(&mut self, call: &Call) {
        for a in call.args.iter().chain(call.kwargs.iter().map(|(_, a)| a)) {
            self.note_lane_varying(a);
        }
    }

    /// [`Self::note_lane_varying_arguments`] for a call whose arguments
    /// evaluated to `args` and `kwargs`: an argument that has the same value
    /// in a lane this lane stands in for (`tidx // 128`) does not set that
    /// lane apart.
    pub(super) fn note_lane_varying_argument_values(&mut self, call: &Call, args: &[Value], kwargs: &[(String, Value)], env: &Env) {
        if !self.stands_in() {
            return;
        }
        if !self.keep_lanes_given_alike_arguments(call, args, kwargs, env) {
            return self.note_lane_varying_arguments(call);
        }
    }

    /// [`Self::note_lane_varying_argument_values`] for a call of the
    /// pipeline API or a method of its objects, whose receiver, when it is
    /// a method, is `base` and evaluated to `value`: the object is compared
    /// as a value too (a pipeline made in each lane with that lane's
    /// `tidx=` is the same pipeline in all of them, see
    /// `bind_in_stood_in_lanes`).
    pub(super) fn note_lane_varying_method_call(&mut self, call: &Call, receiver: Option<(&Expr, &Value)>, args: &[Value], kwargs: &[(String, Value)], env: &Env) {
        match receiver {
            // Made by the pipeline call just run
            // (`create(...).make_participants()`).
            Some((Expr::Call(made), _)) if self.pipeline_result == Some(&**made as *const Call as usize) => {}
            Some((base, value)) => self.note_lane_varying_value(base, value, env),
            None => self.note_lane_varying(&call.func),
        }
        self.note_lane_varying_argument_values(call, args, kwargs, env);
        // A pipeline call gives what its receiver and arguments make of the
        // calling thread's CTA, whatever its lane.
        self.pipeline_result = Some(call as *const Call as usize);
    }

    /// For a call that acts on its arguments: the lanes where an argument
    /// that varies across lanes in the code has another value than
    /// `args` and `kwargs` give it here are left to run on their own (see
    /// [`Self::keep_lanes_alike`]), and all of them where it cannot be
    /// evaluated there. False where arguments do not line up with their
    /// values (a spliced `*args`).
    pub(super) fn keep_lanes_given_alike_arguments(&mut self, call: &Call, args: &[Value], kwargs: &[(String, Value)], env: &Env) -> bool {
        let Some(exprs) = argument_expressions(call, args.len(), kwargs.len()) else {
            return false;
        };
        let names = args.iter().map(|_| None).chain(kwargs.iter().map(|(k, _)| Some(k.as_str())));
        let values = args.iter().chain(kwargs.iter().map(|(_, v)| v));
        let pipeline = Api::of_call(call) == Some(Api::Pipeline);
        for ((e, v), name) in exprs.into_iter().zip(values).zip(names) {
            if self.stands_in() && self.varies_here(e) {
                let in_lanes = self.in_stood_in_lanes(e, env);
                if pipeline && name.is_some_and(crate::pipeline::reads_as_lane_offset) {
                    self.keep_lanes_at_same_lane_offset(in_lanes, v);
                } else {
                    self.keep_lanes_giving(in_lanes, v, true);
                }
            }
        }
        true
    }

    /// For a loop over `iter`, a range whose trip count is not known: the
    /// lanes this lane stands in for run as many iterations only if they
    /// start and step where it does (see
    /// [`Self::trips_off_the_unknown_count`]); the others are set apart.
    pub(super) fn keep_lanes_running_as_many_trips(&mut self, iter: &Expr, env: &Env) {
        let Expr::Call(call) = iter else { return };
        if call.args.len() < 2 || !self.stands_in() {
            return;
        }
        for bound in [&call.args[0]].into_iter().chain(call.args.get(2)) {
            if self.stands_in() && self.varies_here(bound) {
                let value = eval(bound, env, &mut self.lane_evaluator());
                self.keep_lanes_alike(bound, &value, true, env);
            }
        }
    }

    /// Whether the condition `e` is unknown in every lane whatever the lane:
    /// a comparison with an operand that is the same unknown in every lane,
    /// or `and`/`or`/`not` of such comparisons.
    pub(super) fn unknown_in_every_lane(&mut self, e: &Expr, env: &Env) -> bool {
        match e {
            Expr::Compare { lhs, rhs, .. } => {
                [lhs, rhs].into_iter().any(|o| !self.varies_here(o) && self.unknown_without_effects(o, env))
            }
            Expr::BoolOp { lhs, rhs, .. } => self.unknown_in_every_lane(lhs, env) && self.unknown_in_every_lane(rhs, env),
            Expr::Unary { op: cute_ir::ast::UnOp::Not, operand } => self.unknown_in_every_lane(operand, env),
            _ => false,
        }
    }

    /// Whether `e` evaluates to an unknown value here, evaluated again
    /// without effects: a call other than the thread-index reads and casts
    /// (a helper that synchronizes) is not run a second time, and the value
    /// is then taken as not known to be unknown.
    pub(super) fn unknown_without_effects(&self, e: &Expr, env: &Env) -> bool {
        let mut evaluator = self.lane_evaluator();
        let value = eval(e, env, &mut evaluator);
        !evaluator.failed && value.is_unknown()
    }
}
