//! The participants of `make_participants()` (`PipelineProducer`,
//! `PipelineConsumer`) and their handles, and `PipelineOrder`.
//!
//! A participant holds its pipeline state for the thread, advanced in place by
//! its methods (`acquire_and_advance`, `advance`), as the package does over the
//! pipeline's own methods; a kernel may also read it where the package keeps it
//! (`producer._PipelineProducer__state`, to hand-roll an acquire on the ring's
//! own barriers as CUTLASS's FMHA does), which reads the thread's current state
//! of it. The handles a participant gives out commit or release the stage they
//! were taken on. A `PipelineOrder` holds the state of the thread's group
//! (`.state`); `arrive` advances the state it is passed in place, and one that
//! is the object's own is taken to be that object.

use cute_ir::ast::{Call, Expr};
use cute_ir::eval::Value;

use super::ThreadRun;

impl<'a> ThreadRun<'a> {
    /// A method of a pipeline participant or of a handle it gave out
    /// (`producer.acquire_and_advance()`, `handle.commit()`,
    /// `consumer.release(handle)`), as the package implements it over the
    /// pipeline's own methods.
    pub(super) fn participant_call(&mut self, call: &Call, obj: &Value, method: &str, args: &[Value]) -> Value {
        use crate::pipeline::{self as p, Action};
        let site = call.range;
        let pipe = p::attribute(obj, "pipeline").unwrap_or(Value::None);
        let producer = matches!(p::attribute(obj, "producer"), Some(Value::Bool(true)));
        let Value::Object(o) = obj else { return Value::None };
        if o.class == p::HANDLE {
            let state = p::attribute(obj, "state").unwrap_or(Value::None);
            return match (method, producer) {
                ("commit", true) => self.run_pipeline_action(p::stage_action(&pipe, "producer_commit", &state), site),
                ("release", false) => self.run_pipeline_action(p::stage_action(&pipe, "consumer_release", &state), site),
                _ => self.run_pipeline_action(Action::Unsupported(format!("`{method}` on a pipeline handle")), site),
            };
        }
        let id = match p::attribute(obj, "id") {
            Some(Value::Str(id)) => id,
            _ => return Value::unknown("a pipeline participant"),
        };
        let state = self.participants.entry(id.clone()).or_insert_with(|| p::initial_state(&pipe, producer)).clone();
        let advance = |run: &mut Self, count: i64| {
            let mut s = state.clone();
            for _ in 0..count.max(0) {
                s = p::advanced(&s).unwrap_or(s);
            }
            run.participants.insert(id.clone(), s);
        };
        let (acquire, commit) = if producer { ("producer_acquire", "producer_commit") } else { ("consumer_wait", "consumer_release") };
        match method {
            "acquire" | "wait" | "acquire_and_advance" | "wait_and_advance" => {
                self.run_pipeline_action(p::stage_action(&pipe, acquire, &state), site);
                if method.ends_with("_and_advance") {
                    advance(self, 1);
                }
                p::handle(&pipe, producer, &state)
            }
            "advance" => {
                match args.first().map(Value::as_int) {
                    None => advance(self, 1),
                    Some(Some(n)) => advance(self, n),
                    Some(None) => {
                        return self.run_pipeline_action(Action::Unsupported("`advance` by a count not known statically".to_string()), site)
                    }
                }
                Value::None
            }
            "commit" | "release" => {
                let at = match args.first() {
                    Some(h @ Value::Object(_)) => p::attribute(h, "state").unwrap_or(state),
                    _ => state,
                };
                self.run_pipeline_action(p::stage_action(&pipe, commit, &at), site)
            }
            // The tail advances the participant's state once per stage (see
            // `advance_after_tail`).
            "tail" if producer => {
                let v = self.run_pipeline_action(p::stage_action(&pipe, "producer_tail", &state), site);
                if let Some(stages) = super::pipelines::tail_advances(&pipe) {
                    advance(self, stages);
                }
                v
            }
            "current_handle" => p::handle(&pipe, producer, &state),
            "reset" => Value::None,
            "try_acquire" | "try_wait" => Value::unknown("the result of a try-wait"),
            _ => self.run_pipeline_action(Action::Unsupported(format!("`{method}` on a pipeline participant")), site),
        }
    }

    /// The state a pipeline participant holds, read through the attribute
    /// the package keeps it in (`producer._PipelineProducer__state`, as
    /// kernels that hand-roll an acquire read it): the thread's current
    /// state of that participant. `None` for any other attribute.
    pub(super) fn participant_state(&mut self, participant: &Value, attr: &str) -> Option<Value> {
        use crate::pipeline as p;
        let producer = matches!(p::attribute(participant, "producer"), Some(Value::Bool(true)));
        let private = if producer { "_PipelineProducer__state" } else { "_PipelineConsumer__state" };
        let Some(Value::Str(id)) = p::attribute(participant, "id").filter(|_| attr == private) else { return None };
        let pipe = p::attribute(participant, "pipeline").unwrap_or(Value::None);
        Some(self.participants.entry(id).or_insert_with(|| p::initial_state(&pipe, producer)).clone())
    }

    /// The state a `PipelineOrder` holds for this thread's group (its
    /// `.state`), which its `arrive()` advances in place.
    pub(super) fn order_state(&mut self, order: &Value) -> Value {
        let Some(Value::Str(id)) = crate::pipeline::attribute(order, "id") else { return Value::unknown("the state of a `PipelineOrder`") };
        self.participants.entry(id).or_insert_with(|| crate::pipeline::order_initial_state(order)).clone()
    }

    /// `order.wait(state=None)` / `order.arrive(state=None)` of a
    /// `PipelineOrder` (see `pipeline/order.rs`). `arrive` advances the state
    /// it is passed in place, as the package does; one that is the object's
    /// own as the thread holds it (`s = order.state`, then
    /// `s = order.arrive(s)`) is taken to be that object, so the object's
    /// advances too.
    pub(super) fn order_method(&mut self, call: &Call, order: &Value, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        use crate::pipeline::{self as p, Action};
        let method = match &call.func {
            Expr::Attr { attr, .. } => attr.as_str(),
            _ => "",
        };
        let own = self.order_state(order);
        let given = kwargs.iter().find(|(k, _)| k == "state").map(|(_, v)| v).or(args.first()).filter(|v| !matches!(v, Value::None)).cloned();
        let state = given.clone().unwrap_or_else(|| own.clone());
        match method {
            "wait" => {
                self.run_pipeline_action(p::order_wait(order, &state), call.range);
                Value::None
            }
            "arrive" => {
                self.run_pipeline_action(p::order_arrive(order, &state), call.range);
                let Some(next) = p::advanced(&state) else {
                    return self.run_pipeline_action(Action::Unsupported("`arrive` of a `PipelineOrder` on a state that cannot advance".to_string()), call.range);
                };
                if given.as_ref().is_none_or(|g| *g == own) {
                    if let Some(Value::Str(id)) = p::attribute(order, "id") {
                        self.participants.insert(id, next.clone());
                    }
                }
                // The state passed is advanced in place: a name that holds
                // it holds the advanced state after the call.
                let passed = call.kwargs.iter().find(|(k, _)| k == "state").map(|(_, e)| e).or(call.args.first());
                if let (Some(Expr::Name(name)), Some(_)) = (passed, &given) {
                    self.write_backs.push((name.clone(), next.clone()));
                }
                if given.is_some() {
                    next
                } else {
                    Value::None
                }
            }
            _ => self.run_pipeline_action(Action::Unsupported(format!("`{method}` of a `PipelineOrder`")), call.range),
        }
    }
}
