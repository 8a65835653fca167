//! A small, owned Python AST for the parts of a file the analysis reads:
//! statements with structured control flow and expressions with resolved
//! callee names. Lowered from tree-sitter once per file; everything after
//! this works on these types, not on syntax nodes.

use cute_syntax::{DecoratorKind, TextRange};

pub type StmtId = u32;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Expr {
    Int(i64),
    Float,
    Bool(bool),
    Str(String),
    None,
    Name(String),
    Attr { base: Box<Expr>, attr: String },
    Call(Box<Call>),
    Binary { op: BinOp, lhs: Box<Expr>, rhs: Box<Expr> },
    Unary { op: UnOp, operand: Box<Expr> },
    Compare { op: CmpOp, lhs: Box<Expr>, rhs: Box<Expr> },
    BoolOp { and: bool, lhs: Box<Expr>, rhs: Box<Expr> },
    IfExp { cond: Box<Expr>, then: Box<Expr>, orelse: Box<Expr> },
    Subscript { base: Box<Expr>, index: Box<Expr> },
    Tuple(Vec<Expr>),
    /// Syntax the analysis does not read (lambdas, comprehensions, ...).
    Unknown(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Call {
    pub func: Expr,
    /// The callee's fully qualified path when the file's imports resolve it
    /// (`cutlass.cute.arch.mbarrier_wait`), else `None`.
    pub qualname: Option<String>,
    /// The CuTe DSL function this call is, resolved once when lowering.
    pub api: Option<crate::api::Api>,
    /// Its parameter names in order (empty for calls the API table does not
    /// know), so positional and keyword arguments bind alike.
    pub params: &'static [&'static str],
    pub args: Vec<Expr>,
    pub kwargs: Vec<(String, Expr)>,
    pub range: TextRange,
}

impl Call {
    /// [`Expr::written_like`] for calls.
    pub fn written_like(&self, other: &Call) -> bool {
        self.func.written_like(&other.func)
            && all_written_like(&self.args, &other.args)
            && self.kwargs.len() == other.kwargs.len()
            && self.kwargs.iter().zip(&other.kwargs).all(|((k1, v1), (k2, v2))| k1 == k2 && v1.written_like(v2))
    }
}

fn all_written_like(a: &[Expr], b: &[Expr]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.written_like(y))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    FloorDiv,
    Div,
    Mod,
    BitXor,
    BitAnd,
    BitOr,
    Shl,
    Shr,
    Pow,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
    Invert,
    Plus,
    /// `*x` inside a tuple or list display (`(a, *rest)`): its items are
    /// spliced into the display.
    Splat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    NotIn,
    Is,
    IsNot,
}

impl CmpOp {
    /// `b op' a` for `a op b`; `None` for a membership or identity test.
    pub fn mirrored(self) -> Option<CmpOp> {
        Some(match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            CmpOp::Eq | CmpOp::Ne => self,
            _ => return None,
        })
    }

    /// The comparison that holds where this one fails.
    pub fn negated(self) -> Option<CmpOp> {
        Some(match self {
            CmpOp::Eq => CmpOp::Ne,
            CmpOp::Ne => CmpOp::Eq,
            CmpOp::Lt => CmpOp::Ge,
            CmpOp::Le => CmpOp::Gt,
            CmpOp::Gt => CmpOp::Le,
            CmpOp::Ge => CmpOp::Lt,
            CmpOp::In => CmpOp::NotIn,
            CmpOp::NotIn => CmpOp::In,
            CmpOp::Is => CmpOp::IsNot,
            CmpOp::IsNot => CmpOp::Is,
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    Name(String),
    Attr { base: Expr, attr: String },
    Subscript { base: Expr, index: Expr },
    Tuple(Vec<Target>),
    Star(Box<Target>),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stmt {
    pub id: StmtId,
    pub range: TextRange,
    pub kind: StmtKind,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StmtKind {
    Assign { targets: Vec<Target>, value: Expr },
    AugAssign { target: Target, op: BinOp, value: Expr },
    Expr(Expr),
    If { cond: Expr, then: Vec<Stmt>, orelse: Vec<Stmt> },
    For { target: Target, iter: Expr, body: Vec<Stmt> },
    While { cond: Expr, body: Vec<Stmt> },
    With { items: Vec<(Expr, Option<Target>)>, body: Vec<Stmt> },
    Return(Option<Expr>),
    Break,
    Continue,
    Pass,
    /// A statement kind the analysis does not model (try, raise, nested def, ...).
    Unsupported(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    pub name: String,
    /// Annotated `cutlass.Constexpr` (compile-time value).
    pub constexpr: bool,
    /// Annotated as a tensor or pointer (`cute.Tensor`, `cute.Pointer`):
    /// memory in the global address space when it is a kernel parameter.
    pub tensor: bool,
    pub default: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FunctionDef {
    pub name: String,
    pub class_name: Option<String>,
    pub decorator: Option<DecoratorKind>,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
    pub range: TextRange,
    pub name_range: TextRange,
}

impl FunctionDef {
    /// The names it binds, Python's locals: its parameters and what its
    /// statements assign (loop and `with` targets included).
    pub fn local_names(&self) -> std::collections::BTreeSet<String> {
        let mut out: std::collections::BTreeSet<String> = self.params.iter().map(|p| p.name.clone()).collect();
        for_each_binding(&self.body, &mut |t, _| out.extend(t.bound_names()));
        out
    }

    /// The names its body reads, `self.` taken off (`self.load` reads
    /// `load`), its own name aside: the functions of the file among them
    /// are ones it calls or hands on.
    pub fn names_read(&self) -> std::collections::BTreeSet<String> {
        let mut uses = Vec::new();
        for_each_expr(&self.body, &mut |e| e.collect_uses(&mut uses));
        uses.into_iter()
            .map(|name| name.strip_prefix("self.").map_or(name.clone(), str::to_string))
            .filter(|name| *name != self.name)
            .collect()
    }
}

/// Whether `name` is the qualified name of a function defined inside
/// another, or of a lambda (`Kernel.kernel.<locals>._cg`), as the module
/// holds them (see `lower.rs`).
pub fn is_nested_name(name: &str) -> bool {
    name.contains(".<locals>.")
}

/// Whether a function with this decorator is inlined where device code
/// calls it: every function but a kernel (kernels are launched; a
/// `@cute.jit` function called from a kernel is a device function).
pub fn inlined_when_called(decorator: Option<DecoratorKind>) -> bool {
    decorator != Some(DecoratorKind::Kernel)
}

impl FunctionDef {
    pub fn display_name(&self) -> String {
        match &self.class_name {
            Some(c) => format!("{c}.{}", self.name),
            None => self.name.clone(),
        }
    }

    pub fn is_method(&self) -> bool {
        self.class_name.is_some() && self.params.first().is_some_and(|p| p.name == "self")
    }
}

impl Call {
    /// The called function's own name: `mbarrier_wait` in
    /// `cute.arch.mbarrier_wait(...)`, `advance` in `state.advance()`; empty
    /// when the callee is not a name or an attribute. Read off the
    /// expression, without building [`Expr::dotted`]: interpreters ask on
    /// every call they evaluate.
    pub fn name(&self) -> &str {
        self.func.last_segment().unwrap_or("")
    }

    /// [`Call::name`] when the callee is a dotted name (`a.b.c(...)`), the
    /// last segment of [`Expr::dotted`] without building it.
    pub fn dotted_name(&self) -> Option<&str> {
        self.func.dotted_last()
    }
}

impl Expr {
    /// Whether `self` and `other` are written alike, wherever they are:
    /// `==` but for the source positions calls carry.
    pub fn written_like(&self, other: &Expr) -> bool {
        use Expr::*;
        let both = |a: &[Expr], b: &[Expr]| all_written_like(a, b);
        match (self, other) {
            (Attr { base: b1, attr: a1 }, Attr { base: b2, attr: a2 }) => a1 == a2 && b1.written_like(b2),
            (Call(c1), Call(c2)) => c1.written_like(c2),
            (Binary { op: o1, lhs: l1, rhs: r1 }, Binary { op: o2, lhs: l2, rhs: r2 }) => {
                o1 == o2 && l1.written_like(l2) && r1.written_like(r2)
            }
            (Compare { op: o1, lhs: l1, rhs: r1 }, Compare { op: o2, lhs: l2, rhs: r2 }) => {
                o1 == o2 && l1.written_like(l2) && r1.written_like(r2)
            }
            (BoolOp { and: o1, lhs: l1, rhs: r1 }, BoolOp { and: o2, lhs: l2, rhs: r2 }) => {
                o1 == o2 && l1.written_like(l2) && r1.written_like(r2)
            }
            (Unary { op: o1, operand: e1 }, Unary { op: o2, operand: e2 }) => o1 == o2 && e1.written_like(e2),
            (IfExp { cond: c1, then: t1, orelse: e1 }, IfExp { cond: c2, then: t2, orelse: e2 }) => {
                c1.written_like(c2) && t1.written_like(t2) && e1.written_like(e2)
            }
            (Subscript { base: b1, index: i1 }, Subscript { base: b2, index: i2 }) => b1.written_like(b2) && i1.written_like(i2),
            (Tuple(a), Tuple(b)) => both(a, b),
            // Syntax not read is never known to be alike.
            (Unknown(_), _) | (_, Unknown(_)) => false,
            (a, b) => a == b,
        }
    }

    /// The last name of a name or attribute chain (`c` in `a.b.c`, also in
    /// `f().c`).
    pub fn last_segment(&self) -> Option<&str> {
        match self {
            Expr::Name(name) => Some(name),
            Expr::Attr { attr, .. } => Some(attr),
            _ => None,
        }
    }

    /// The last name of a dotted name (`c` in `a.b.c`, not in `f().c`).
    pub fn dotted_last(&self) -> Option<&str> {
        self.last_segment().filter(|_| self.is_dotted())
    }

    /// `a.b.c` for a chain of names and attributes.
    /// Whether this, as a subscript's index, keeps a mode of the tensor
    /// (`None` in its place, at any depth): the subscript is then a view
    /// (`t[None, None, k]`), not an element.
    pub fn keeps_a_mode(&self) -> bool {
        match self {
            Expr::None => true,
            Expr::Tuple(items) => items.iter().any(Expr::keeps_a_mode),
            _ => false,
        }
    }

    pub fn dotted(&self) -> Option<String> {
        let mut out = String::new();
        self.write_dotted(&mut out).then_some(out)
    }

    /// Whether the expression is a name or a chain of attributes of one
    /// ([`Expr::dotted`] without building the string).
    pub fn is_dotted(&self) -> bool {
        match self {
            Expr::Name(_) => true,
            Expr::Attr { base, .. } => base.is_dotted(),
            _ => false,
        }
    }

    fn write_dotted(&self, out: &mut String) -> bool {
        match self {
            Expr::Name(n) => {
                out.push_str(n);
                true
            }
            Expr::Attr { base, attr } => {
                if !base.write_dotted(out) {
                    return false;
                }
                out.push('.');
                out.push_str(attr);
                true
            }
            _ => false,
        }
    }

    /// Every name read by the expression (for def/use slicing).
    pub fn collect_uses(&self, out: &mut Vec<String>) {
        match self {
            Expr::Name(n) => out.push(n.clone()),
            Expr::Attr { base, .. } => {
                if let Some(d) = self.dotted() {
                    // `self.num_stages` is tracked as its own variable so that
                    // an assignment to it in __init__ style code links up.
                    if d.starts_with("self.") {
                        out.push(d);
                    }
                }
                base.collect_uses(out)
            }
            Expr::Call(c) => {
                c.func.collect_uses(out);
                c.args.iter().for_each(|a| a.collect_uses(out));
                c.kwargs.iter().for_each(|(_, a)| a.collect_uses(out));
            }
            Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
                lhs.collect_uses(out);
                rhs.collect_uses(out);
            }
            Expr::Unary { operand, .. } => operand.collect_uses(out),
            Expr::IfExp { cond, then, orelse } => {
                cond.collect_uses(out);
                then.collect_uses(out);
                orelse.collect_uses(out);
            }
            Expr::Subscript { base, index } => {
                base.collect_uses(out);
                index.collect_uses(out);
            }
            Expr::Tuple(items) => items.iter().for_each(|a| a.collect_uses(out)),
            Expr::Int(_) | Expr::Float | Expr::Bool(_) | Expr::Str(_) | Expr::None | Expr::Unknown(_) => {}
        }
    }

    /// Whether the expression reads the attribute `name` of anything
    /// (`storage.name`, `storage.name.data_ptr()`).
    pub fn reads_attribute(&self, name: &str) -> bool {
        match self {
            Expr::Attr { base, attr } => attr == name || base.reads_attribute(name),
            Expr::Call(c) => {
                c.func.reads_attribute(name) || c.args.iter().any(|a| a.reads_attribute(name)) || c.kwargs.iter().any(|(_, a)| a.reads_attribute(name))
            }
            Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
                lhs.reads_attribute(name) || rhs.reads_attribute(name)
            }
            Expr::Unary { operand, .. } => operand.reads_attribute(name),
            Expr::IfExp { cond, then, orelse } => cond.reads_attribute(name) || then.reads_attribute(name) || orelse.reads_attribute(name),
            Expr::Subscript { base, index } => base.reads_attribute(name) || index.reads_attribute(name),
            Expr::Tuple(items) => items.iter().any(|a| a.reads_attribute(name)),
            Expr::Name(_) | Expr::Int(_) | Expr::Float | Expr::Bool(_) | Expr::Str(_) | Expr::None | Expr::Unknown(_) => false,
        }
    }

    /// Calls `f` on each expression directly inside this one, in source
    /// order (a call's callee, then its arguments).
    pub fn for_each_child(&self, f: &mut dyn FnMut(&Expr)) {
        match self {
            Expr::Attr { base, .. } => f(base),
            Expr::Call(c) => {
                f(&c.func);
                c.args.iter().for_each(&mut *f);
                c.kwargs.iter().for_each(|(_, a)| f(a));
            }
            Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
                f(lhs);
                f(rhs);
            }
            Expr::Unary { operand, .. } => f(operand),
            Expr::IfExp { cond, then, orelse } => {
                f(cond);
                f(then);
                f(orelse);
            }
            Expr::Subscript { base, index } => {
                f(base);
                f(index);
            }
            Expr::Tuple(items) => items.iter().for_each(f),
            Expr::Name(_) | Expr::Int(_) | Expr::Float | Expr::Bool(_) | Expr::Str(_) | Expr::None | Expr::Unknown(_) => {}
        }
    }

    /// [`Expr::for_each_child`], for rewriting them.
    pub fn for_each_child_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        match self {
            Expr::Attr { base, .. } => f(base),
            Expr::Call(c) => {
                f(&mut c.func);
                c.args.iter_mut().for_each(&mut *f);
                c.kwargs.iter_mut().for_each(|(_, a)| f(a));
            }
            Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
                f(lhs);
                f(rhs);
            }
            Expr::Unary { operand, .. } => f(operand),
            Expr::IfExp { cond, then, orelse } => {
                f(cond);
                f(then);
                f(orelse);
            }
            Expr::Subscript { base, index } => {
                f(base);
                f(index);
            }
            Expr::Tuple(items) => items.iter_mut().for_each(f),
            Expr::Name(_) | Expr::Int(_) | Expr::Float | Expr::Bool(_) | Expr::Str(_) | Expr::None | Expr::Unknown(_) => {}
        }
    }

    /// Every call in the expression, outermost first.
    pub fn calls<'a>(&'a self, out: &mut Vec<&'a Call>) {
        match self {
            Expr::Call(c) => {
                out.push(c);
                c.func.calls(out);
                c.args.iter().for_each(|a| a.calls(out));
                c.kwargs.iter().for_each(|(_, a)| a.calls(out));
            }
            Expr::Attr { base, .. } => base.calls(out),
            Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
                lhs.calls(out);
                rhs.calls(out);
            }
            Expr::Unary { operand, .. } => operand.calls(out),
            Expr::IfExp { cond, then, orelse } => {
                cond.calls(out);
                then.calls(out);
                orelse.calls(out);
            }
            Expr::Subscript { base, index } => {
                base.calls(out);
                index.calls(out);
            }
            Expr::Tuple(items) => items.iter().for_each(|a| a.calls(out)),
            _ => {}
        }
    }
}

impl Target {
    /// The names the target binds: a store into an element or attribute
    /// (`buf[i] = v`, `self.x = v`) binds none.
    pub fn bound_names(&self) -> Vec<String> {
        fn walk(t: &Target, out: &mut Vec<String>) {
            match t {
                Target::Name(n) => out.push(n.clone()),
                Target::Tuple(items) => items.iter().for_each(|t| walk(t, out)),
                Target::Star(t) => walk(t, out),
                Target::Attr { .. } | Target::Subscript { .. } => {}
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out
    }

    /// Names (and `self.x` attributes) the target defines.
    pub fn collect_defs(&self, out: &mut Vec<String>) {
        match self {
            Target::Name(n) => out.push(n.clone()),
            Target::Attr { base, attr } => {
                if let Some(b) = base.dotted() {
                    out.push(format!("{b}.{attr}"));
                }
            }
            // `buf[i] = v` writes into `buf`: a definition of it for slicing.
            Target::Subscript { base, .. } => {
                if let Some(b) = base.dotted() {
                    out.push(b);
                }
            }
            Target::Tuple(items) => items.iter().for_each(|t| t.collect_defs(out)),
            Target::Star(t) => t.collect_defs(out),
        }
    }

    /// Names read by the target itself (`buf[i] = v` reads `i`).
    pub fn collect_uses(&self, out: &mut Vec<String>) {
        match self {
            Target::Name(_) => {}
            Target::Attr { base, .. } => base.collect_uses(out),
            Target::Subscript { base, index } => {
                base.collect_uses(out);
                index.collect_uses(out);
            }
            Target::Tuple(items) => items.iter().for_each(|t| t.collect_uses(out)),
            Target::Star(t) => t.collect_uses(out),
        }
    }
}

/// Whether any call in the statements (at any depth) satisfies `pred`.
/// Whether running `stmts` can leave them before their end: a `return`,
/// a `break` or `continue` of the loop around them, or a statement not
/// lowered (which may be any of these).
pub fn leaves_block(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Return(_) | StmtKind::Break | StmtKind::Continue | StmtKind::Unsupported(_) => true,
        StmtKind::If { then, orelse, .. } => leaves_block(then) || leaves_block(orelse),
        // A `break` inside a loop of its own stays in it; a `return` does not.
        StmtKind::For { body, .. } | StmtKind::While { body, .. } => returns(body),
        StmtKind::With { body, .. } => leaves_block(body),
        _ => false,
    })
}

/// Whether `stmts` (at any depth) can return.
pub fn returns(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Return(_) | StmtKind::Unsupported(_) => true,
        StmtKind::If { then, orelse, .. } => returns(then) || returns(orelse),
        StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => returns(body),
        _ => false,
    })
}

pub fn any_call(stmts: &[Stmt], mut pred: impl FnMut(&Call) -> bool) -> bool {
    let mut found = false;
    for_each_expr(stmts, &mut |e| {
        if !found {
            let mut calls = Vec::new();
            e.calls(&mut calls);
            found = calls.into_iter().any(&mut pred);
        }
    });
    found
}

/// Calls `f` on every target the statements bind, with the value an
/// assignment gives it (`None` for augmented assignments and `for` and
/// `with` targets), descending into the bodies of `if`, `for`, `while` and
/// `with`.
pub fn for_each_binding<'s>(stmts: &'s [Stmt], f: &mut dyn FnMut(&'s Target, Option<&'s Expr>)) {
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { targets, value } => targets.iter().for_each(|t| f(t, Some(value))),
            StmtKind::AugAssign { target, .. } => f(target, None),
            StmtKind::For { target, body, .. } => {
                f(target, None);
                for_each_binding(body, f);
            }
            StmtKind::With { items, body } => {
                items.iter().filter_map(|(_, t)| t.as_ref()).for_each(|t| f(t, None));
                for_each_binding(body, f);
            }
            StmtKind::If { then, orelse, .. } => {
                for_each_binding(then, f);
                for_each_binding(orelse, f);
            }
            StmtKind::While { body, .. } => for_each_binding(body, f),
            _ => {}
        }
    }
}

/// What [`walk_mut`] does at each place of a block: statements are visited
/// before the blocks they hold, expressions as the statement holds them
/// (targets' bases and indices included), never their children.
pub trait VisitMut {
    fn stmt(&mut self, _stmt: &mut Stmt) {}
    fn expr(&mut self, _expr: &mut Expr) {}
}

/// Visits every statement of a block, at any depth, and every expression
/// they hold, with `v`.
pub fn walk_mut(stmts: &mut [Stmt], v: &mut dyn VisitMut) {
    fn target(t: &mut Target, v: &mut dyn VisitMut) {
        match t {
            Target::Name(_) => {}
            Target::Attr { base, .. } => v.expr(base),
            Target::Subscript { base, index } => {
                v.expr(base);
                v.expr(index);
            }
            Target::Tuple(items) => items.iter_mut().for_each(|t| target(t, v)),
            Target::Star(t) => target(t, v),
        }
    }
    for s in stmts {
        v.stmt(s);
        match &mut s.kind {
            StmtKind::Assign { targets, value } => {
                targets.iter_mut().for_each(|t| target(t, v));
                v.expr(value);
            }
            StmtKind::AugAssign { target: t, value, .. } => {
                target(t, v);
                v.expr(value);
            }
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => v.expr(e),
            StmtKind::If { cond, then, orelse } => {
                v.expr(cond);
                walk_mut(then, v);
                walk_mut(orelse, v);
            }
            StmtKind::For { target: t, iter, body } => {
                target(t, v);
                v.expr(iter);
                walk_mut(body, v);
            }
            StmtKind::While { cond, body } => {
                v.expr(cond);
                walk_mut(body, v);
            }
            StmtKind::With { items, body } => {
                for (e, t) in items {
                    v.expr(e);
                    if let Some(t) = t {
                        target(t, v);
                    }
                }
                walk_mut(body, v);
            }
            StmtKind::Return(None) | StmtKind::Break | StmtKind::Continue | StmtKind::Pass | StmtKind::Unsupported(_) => {}
        }
    }
}

/// Calls `f` on every expression of the statements, in source order,
/// descending into the bodies of `if`, `for`, `while` and `with`.
pub fn for_each_expr(stmts: &[Stmt], f: &mut dyn FnMut(&Expr)) {
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { value, .. } | StmtKind::AugAssign { value, .. } | StmtKind::Expr(value) => f(value),
            StmtKind::Return(Some(e)) => f(e),
            StmtKind::If { cond, then, orelse } => {
                f(cond);
                for_each_expr(then, f);
                for_each_expr(orelse, f);
            }
            StmtKind::For { iter, body, .. } => {
                f(iter);
                for_each_expr(body, f);
            }
            StmtKind::While { cond, body } => {
                f(cond);
                for_each_expr(body, f);
            }
            StmtKind::With { items, body } => {
                items.iter().for_each(|(e, _)| f(e));
                for_each_expr(body, f);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(text: &str) -> Expr {
        let module = crate::lower_text(&format!("x = {text}\n")).unwrap();
        match &module.top_level[0].kind {
            StmtKind::Assign { value, .. } => value.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn expressions_written_alike_in_two_places_are_written_like_each_other() {
        let (here, there) = (expr("cute.size(t, mode=[1]) - 1"), expr("  cute.size(t, mode=[1])  -  1"));
        assert_ne!(here, there, "calls carry their positions");
        assert!(here.written_like(&there));
        for other in ["cute.size(t, mode=[0]) - 1", "cute.size(u, mode=[1]) - 1", "cute.size(t, mode=[1]) + 1", "cute.size(t) - 1"] {
            assert!(!here.written_like(&expr(other)), "{other}");
        }
        assert!(!expr("[i for i in t]").written_like(&expr("[i for i in t]")), "syntax not read is never alike");
    }
}
