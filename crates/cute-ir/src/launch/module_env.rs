//! The values a file's module level gives, evaluated once, top to bottom, as
//! Python runs it before any host function: its constants (plain
//! assignments; other statements are not run), its classes with their
//! class-level attributes, and its shared-storage structs with their fields'
//! element types and counts. Calls in them run as host code.

use std::collections::BTreeMap;

use crate::ast::{Stmt, StmtKind};
use crate::eval::{assign, eval, Env, Object, Value};
use crate::module::Module;

use super::host::HostCalls;

/// Evaluates module-level constants in order.
pub fn module_env(module: &Module) -> Env {
    let mut env = Env::default();
    // Shared-storage structs by name, with their fields' element types: the
    // tensors a kernel takes from them (`storage.tiles.get_tensor(layout)`)
    // have that element type.
    let structs = || module.classes.iter().filter(|c| !c.memrange_fields.is_empty());
    // Each field as `struct_definition` takes it, its count evaluated by
    // `count` (`None` before the module's constants are).
    let fields = |c: &crate::module::ClassDef, count: &mut dyn FnMut(&crate::ast::Expr) -> Value| -> Vec<(String, Value)> {
        c.memrange_fields
            .iter()
            .map(|f| (f.name.clone(), Value::Tuple(vec![Value::Str(f.dtype.clone()), f.len.as_ref().map_or(Value::None, &mut *count)])))
            .collect()
    };
    for c in structs() {
        env.insert(c.name.clone(), crate::eval::struct_definition(&fields(c, &mut |_| Value::None)));
    }
    let mut handler = HostCalls::new(module);
    // Module statements and class definitions in the order they run.
    // Classes are bound by name with their class-level attributes:
    // enumerations of barrier ids and warp roles (`class NamedBarrier(IntEnum):
    // EPILOGUE = 4`, read as `NamedBarrier.EPILOGUE`) and constants read off
    // the class.
    let classes = module.classes.iter().filter(|c| c.memrange_fields.is_empty() && !c.attrs.is_empty() && c.outer.is_none());
    let mut steps: Vec<(u32, Result<&Stmt, &crate::module::ClassDef>)> =
        module.top_level.iter().map(|s| (s.range.start, Ok(s))).chain(classes.map(|c| (c.range.start, Err(c)))).collect();
    // The files linked in first, each after those it imports (`link`), as
    // Python runs an import before the module that makes it.
    steps.sort_by_key(|&(at, _)| (!module.is_linked(cute_syntax::TextRange { start: at, end: at }), at));
    for (_, step) in steps {
        match step {
            Ok(s) => {
                if let StmtKind::Assign { targets, value } = &s.kind {
                    let v = eval(value, &env, &mut handler);
                    for t in targets {
                        assign(t, v.clone(), &mut env);
                    }
                }
            }
            Err(c) => {
                let class = class_value(c, &env, &mut handler);
                env.insert(c.name.clone(), class);
            }
        }
    }
    // The fields' element counts, from the module's constants
    // (`MemRange[cutlass.Int64, 2 * STAGES]`).
    let with_counts: Vec<(String, Value)> =
        structs().map(|c| (c.name.clone(), crate::eval::struct_definition(&fields(c, &mut |len| eval(len, &env, &mut handler))))).collect();
    env.extend(with_counts);
    env
}

/// A class as a value: its class-level attributes, evaluated in order (a
/// later one may read an earlier one by name); `enum.auto()` is the
/// previous member's value plus one, from 1.
pub(super) fn class_value(c: &crate::module::ClassDef, env: &Env, handler: &mut HostCalls<'_>) -> Value {
    let mut local = env.clone();
    let mut attrs = BTreeMap::new();
    let mut last_int: Option<i64> = None;
    for (name, value) in &c.attrs {
        let auto = matches!(value, crate::ast::Expr::Call(call) if call.func.dotted().is_some_and(|d| d == "auto" || d.ends_with(".auto")));
        let v = if auto { Value::Int(last_int.map_or(1, |i| i + 1)) } else { eval(value, &local, handler) };
        last_int = v.as_int();
        local.insert(name.clone(), v.clone());
        attrs.insert(name.clone(), v);
    }
    Value::Object(std::sync::Arc::new(Object { class: c.name.clone(), attrs }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::resolve_launch;

    #[test]
    fn class_attributes_and_enum_members_are_module_values() {
        let src = "\
import enum
from enum import IntEnum, auto
BASE = 2
class NamedBarrier(IntEnum):
    EPILOGUE = BASE + 1
    TMEM = 6
class Role(enum.IntEnum):
    LOAD = enum.auto()
    MMA = auto()
    EPILOGUE = auto()
WARPS = Role.EPILOGUE + 1
";
        let env = module_env(&crate::lower_text(src).unwrap());
        let member = |class: &str, name: &str| match env.get(class) {
            Some(Value::Object(o)) => o.attrs.get(name).cloned(),
            other => panic!("{class}: {other:?}"),
        };
        assert_eq!(member("NamedBarrier", "EPILOGUE"), Some(Value::Int(3)));
        assert_eq!(member("NamedBarrier", "TMEM"), Some(Value::Int(6)));
        assert_eq!(member("Role", "LOAD"), Some(Value::Int(1)));
        assert_eq!(member("Role", "EPILOGUE"), Some(Value::Int(3)));
        assert_eq!(env.get("WARPS"), Some(&Value::Int(4)));
    }

    #[test]
    fn classes_defined_in_a_class_are_attributes_of_its_objects() {
        let src = "\
import cutlass.cute as cute
from enum import IntEnum
class Op:
    class Role(IntEnum):
        LOAD = 0
        MMA = 1
    def __init__(self):
        self.threads = 64
    @cute.kernel
    def kernel(self, x):
        pass
    @cute.jit
    def __call__(self, x):
        self.kernel(x).launch(grid=[1, 1, 1], block=[self.threads, 1, 1])
def main():
    cute.compile(Op(), None)
";
        let m = crate::lower_text(src).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        let Some(Value::Object(o)) = l.params.get("self") else { panic!("{:?}", l.params) };
        let Some(Value::Object(role)) = o.attrs.get("Role") else { panic!("{:?}", o.attrs) };
        assert_eq!(role.attrs.get("MMA"), Some(&Value::Int(1)));
        assert!(module_env(&m).get("Role").is_none(), "a nested class is not a module name");
    }
}
