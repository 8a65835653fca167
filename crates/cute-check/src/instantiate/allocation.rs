//! Shared memory as values: an allocation (`smem.allocate_tensor`,
//! `allocate_array`, `allocate` of a shared-storage struct, `cutlass.Array` in
//! shared memory) is a fresh buffer per call site, with its tile when the
//! element type and layout are known; views of a shared pointer
//! (`data_ptr`, `iterator`, `get_tensor` of a struct field, `subview`) are the
//! same pointer, at an offset for `subview`.

use cute_ir::api;
use cute_ir::ast::{Call, Expr};
use cute_ir::eval::{SmemRef, Value};

use super::ThreadRun;

impl<'a> ThreadRun<'a> {
    /// `smem.allocate_tensor(...)`, `allocate_array(...)`, `allocate(...)`
    /// (an `alloc*` method): a fresh allocation of shared memory per call
    /// site, with its tile when the element type and layout are known, and
    /// a shared-storage struct's fields when it allocates one.
    pub(super) fn allocate_shared(&mut self, call: &Call, attr: &str, args: &[Value], kwargs: &[(String, Value)]) -> Value {
        let site = call.range;
        let mut smem = SmemRef::new(format!("smem@{}", site.start));
        let arg = |name: &str, pos: usize| kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v).or(args.get(pos));
        match attr {
            "allocate_tensor" => {
                if let (Some(t), Some(l)) = (arg("element_type", 0), arg("layout", 1)) {
                    smem.tile = cute_ir::layout::Tile::new(t, l).map(std::sync::Arc::new);
                }
            }
            "allocate_array" => {
                let dtype = arg("element_type", 0).and_then(cute_ir::layout::dtype_of);
                let n = arg("num_elems", 1).map_or(Some(1), Value::as_int);
                if let (Some((dtype, width)), Some(n)) = (dtype, n) {
                    smem.tile = Some(std::sync::Arc::new(cute_ir::layout::Tile { dtype, width, modes: vec![n] }));
                }
            }
            "allocate" => {
                if let Some(v @ Value::Object(o)) = arg("size_or_type", 0) {
                    if o.class == cute_ir::layout::STRUCT {
                        self.structs.insert(smem.alloc.to_string(), v.clone());
                    }
                }
            }
            _ => {}
        }
        Value::Smem(smem)
    }

    /// A method of a pointer or number (`ptr.toint()`, `Int32(v).ir_value()`:
    /// the operands of inline assembly keep the pointer or number they
    /// convert), or a view of a shared pointer, which is the same pointer;
    /// `None` for anything else.
    pub(super) fn pointer_method(&self, base_v: Value, attr: &str, args: &[Value], kwargs: &[(String, Value)]) -> Option<Value> {
        if matches!(base_v, Value::Gmem(_) | Value::Int(_)) && matches!(attr, "toint" | "ir_value" | "to_llvm_ptr" | "llvm_ptr" | "raw_ptr") {
            return Some(base_v);
        }
        let Value::Smem(s) = &base_v else { return None };
        Some(match attr {
            // A struct field as a tensor of the given layout, of
            // the field's element type.
            "get_tensor" => {
                let dtype = s.alloc.rsplit_once('.').and_then(|(parent, field)| match self.structs.get(parent) {
                    Some(Value::Object(o)) => o.attrs.get(field).cloned(),
                    _ => None,
                });
                let layout = kwargs.iter().find(|(k, _)| k == "layout").map(|(_, v)| v).or(args.first());
                let tile = match (dtype, layout) {
                    (Some(t), Some(l)) => cute_ir::layout::Tile::new(&t, l).map(std::sync::Arc::new),
                    _ => None,
                };
                Value::Smem(SmemRef { tile, ..s.clone() })
            }
            "data_ptr" | "iterator" | "to_llvm_ptr" | "align" | "toint" | "ir_value" | "raw_ptr" => base_v.clone(),
            "subview" => match args.first().and_then(Value::as_int) {
                Some(i) => Value::Smem(SmemRef { offset: s.offset + i, ..s.clone() }),
                None => Value::Smem(SmemRef { alloc: format!("{}[?]", s.alloc).into(), ..s.clone() }),
            },
            _ => Value::unknown(format!("`.{attr}(...)` on shared memory")),
        })
    }

    /// `cutlass.Array(dtype, n, space=cutlass.AddressSpace.smem)`: an
    /// array of `n` elements in shared memory (the experimental
    /// primitives' barriers and buffers), a fresh allocation per call site.
    pub(super) fn shared_array(call: &Call, args: &[Value]) -> Option<Value> {
        if call.qualname.as_deref() != Some("cutlass.Array") {
            return None;
        }
        let in_smem = api::arg(call, "space").and_then(Expr::dotted_last).is_some_and(|s| s == "smem");
        if !in_smem {
            return None;
        }
        let mut smem = SmemRef::new(format!("smem@{}", call.range.start));
        let dtype = args.first().and_then(cute_ir::layout::dtype_of);
        if let (Some((dtype, width)), Some(n)) = (dtype, args.get(1).and_then(Value::as_int)) {
            smem.tile = Some(std::sync::Arc::new(cute_ir::layout::Tile { dtype, width, modes: vec![n] }));
        }
        Some(Value::Smem(smem))
    }
}
