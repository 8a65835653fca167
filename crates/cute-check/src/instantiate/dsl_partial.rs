//! `functools.partial` of a callable of the CuTe DSL, as flash-attention
//! writes its cooperative groups: `ThreadCooperativeGroup =
//! partial(pipeline.CooperativeGroup, pipeline.Agent.Thread)`, then
//! `ThreadCooperativeGroup(128)`.
//!
//! The partial is a [`Value::Partial`] whose function names the callable by
//! its qualified name and the place of the `partial(...)` call, which the
//! thread keeps ([`ThreadRun::dsl_partials`]). Calling it is the call of
//! the callable written out: the `partial(...)` call's arguments first, then
//! the call's own (keywords of the call overriding those bound), as in
//! Python; the API table and the models see that call, the text of its
//! arguments included (a cooperative group's agent is read from it).

use cute_ir::api::Api;
use cute_ir::ast::Call;
use cute_ir::eval::{self, Env, Partial, Value};

use super::ThreadRun;

/// The tag of a partial's function that names a callable of the DSL.
const DSL_CALLABLE: &str = "a callable of the CuTe DSL";

impl ThreadRun<'_> {
    /// `partial(f, ...)` where `f` is a callable the API table knows (as the
    /// file's imports name it).
    pub(super) fn dsl_partial(&mut self, call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Option<Value> {
        let func = call.args.first()?;
        let qualname = self.module.imports.qualify(&func.dotted()?)?;
        Api::lookup(&qualname)?;
        self.dsl_partials.insert(call.range.start, call.clone());
        let tag = Value::Tuple(vec![Value::Str(DSL_CALLABLE.into()), Value::Str(qualname.into()), Value::Int(i64::from(call.range.start))]);
        Some(Value::Partial(std::sync::Arc::new(Partial { func: tag, args: args.get(1..)?.to_vec(), kwargs: kwargs.to_vec() })))
    }

    /// The qualified name of the callable a partial of [`Self::dsl_partial`]
    /// binds, and the `partial(...)` call that made it.
    pub(super) fn dsl_partial_call(&self, partial: &Partial) -> Option<(String, Call)> {
        let Value::Tuple(tag) = &partial.func else { return None };
        let [Value::Str(kind), Value::Str(qualname), Value::Int(at)] = tag.as_slice() else { return None };
        if &**kind != DSL_CALLABLE {
            return None;
        }
        let made = self.dsl_partials.get(&u32::try_from(*at).ok()?)?;
        Some((qualname.to_string(), made.clone()))
    }

    /// `call` of a partial of a DSL callable: the callable's call, written
    /// out.
    pub(super) fn call_dsl_partial(
        &mut self,
        call: &Call,
        (qualname, made): &(String, Call),
        partial: &Partial,
        args: Vec<Value>,
        kwargs: Vec<(String, Value)>,
        env: &Env,
    ) -> Value {
        let mut written = call.clone();
        written.func = made.args[0].clone();
        written.args = made.args[1..].iter().cloned().chain(call.args.iter().cloned()).collect();
        written.kwargs = made.kwargs.iter().filter(|(k, _)| !call.kwargs.iter().any(|(given, _)| given == k)).cloned().chain(call.kwargs.iter().cloned()).collect();
        written.qualname = Some(qualname.clone());
        written.api = Api::lookup(qualname);
        written.params = Api::params_of(&written);
        let (args, kwargs) = partial.with(args, kwargs);
        let func = Value::unknown(format!("`{}`", made.args[0].dotted().unwrap_or_default()));
        eval::CallHandler::call(self, &written, &func, args, kwargs, env)
    }
}

