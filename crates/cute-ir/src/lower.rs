//! tree-sitter nodes -> the owned AST of `ast.rs`.
//!
//! Callee names are resolved through the file's imports here. A function
//! defined inside a function, and a lambda, is lowered as a function of the
//! module named as Python qualifies it (`Kernel.kernel.<locals>._cg`), and the
//! definition binds the local name to that function, so calls through the name
//! inline it as any helper of the file. One that reads a name its enclosing
//! function binds is a closure, whose values depend on that call: it stays
//! unmodelled (what it computes is unknown, not read from a global of the same
//! name) and is kept in `Module::closures` to tell whether it synchronizes. A
//! shared-storage struct defined in a function is lowered to a binding of its
//! name, evaluated where the class statement runs (`nested_struct`).
//!
//! A file with a syntax error is lowered without the sections that hold the
//! error ([`lower_recovering`], through `cute_syntax::recover`).

use cute_syntax::{kernels::decorator_kind_of, node_text, tree_sitter::Node, ImportMap, SyntaxTree, TextRange};

use crate::ast::*;
use crate::module::{ClassDef, Module};

pub fn lower_module(tree: &SyntaxTree) -> Module {
    lower_module_importing(tree, ImportMap::from_tree(tree))
}

/// [`lower_module`] with the imports given: they must be what
/// `ImportMap::from_tree` finds in `tree` (an editor lowering a file's
/// import lines followed by a chunk with no `import` in it knows them
/// already, and a query over the whole tree is most of a lowering's cost).
pub fn lower_module_importing(tree: &SyntaxTree, imports: ImportMap) -> Module {
    let mut lower =
        Lowerer { text: &tree.text, imports: &imports, next_id: 0, enclosing: Vec::new(), hoisted: Vec::new(), closures: Vec::new(), expr_depth: 0, callee: false, read_builtins: false };
    let mut module = Module::default();
    let root = tree.root();
    let mut cursor = root.walk();
    for child in root.named_children(&mut cursor) {
        lower.module_item(child, &mut module);
    }
    let read_builtins = lower.read_builtins;
    module.closures = lower.closures;
    module.imports = imports;
    if read_builtins {
        crate::objects::unbind_builtins(&mut module);
    }
    module.syntax_errors = tree.error_ranges();
    module.sync_helpers = crate::slice::sync_helpers(&module);
    crate::module::Closure::mark_synchronizing(&mut module.closures, &module.sync_helpers);
    module
}

/// [`lower_module`] of a file whose sections with a syntax error are left
/// out ([`cute_syntax::recover`]): the module of the rest, with the file's
/// errors and the kernels left out.
pub fn lower_recovering(tree: &SyntaxTree) -> Module {
    match cute_syntax::recover(tree, &mut cute_syntax::recover::Fresh) {
        Some((recovery, recovered)) => {
            let mut module = lower_module(&SyntaxTree { text: recovery.text, tree: recovered });
            module.syntax_errors = recovery.errors;
            module.broken_kernels = recovery.kernels;
            module.left_out = recovery.broken;
            module
        }
        None => lower_module(tree),
    }
}

/// The statements that bind a closure (`(qualified name, name it reads)`)
/// become unmodelled nested definitions again.
fn unbind_closures(body: &mut [Stmt], closures: &[(String, String)]) {
    for s in body {
        match &mut s.kind {
            StmtKind::Assign { value: Expr::Name(n), .. } if closures.iter().any(|(c, _)| c == n) => {
                let (_, read) = closures.iter().find(|(c, _)| c == n).expect("found");
                s.kind = StmtKind::Unsupported(format!("nested definition reading `{read}` of the function around it"));
            }
            StmtKind::If { then, orelse, .. } => {
                unbind_closures(then, closures);
                unbind_closures(orelse, closures);
            }
            StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => unbind_closures(body, closures),
            _ => {}
        }
    }
}

struct Lowerer<'a> {
    text: &'a str,
    imports: &'a ImportMap,
    next_id: StmtId,
    /// The qualified names of the functions being lowered, outermost first.
    enclosing: Vec<String>,
    /// Functions defined inside functions, and lambdas, lowered as functions
    /// of the module under their qualified name (see [`Lowerer::nested`]).
    hoisted: Vec<FunctionDef>,
    /// The nested functions that are closures (see
    /// [`Lowerer::keep_closures_unknown`]).
    closures: Vec<crate::module::Closure>,
    /// Expressions being lowered, outermost first (see [`Lowerer::expr`]).
    expr_depth: u32,
    /// The expression about to be lowered is a call's callee: a name of
    /// [`crate::objects`] there stays a name (`max(a, b)`, `operator.add(a, b)`).
    callee: bool,
    /// A builtin of [`crate::objects::BUILTINS`] was read as a value: whether
    /// the file binds it is asked once it is read whole.
    read_builtins: bool,
}

/// Levels of nested expressions lowered, at most (see [`Lowerer::expr`]).
pub const MAX_EXPR_DEPTH: u32 = 200;

/// The child of `node` in field `name`. Field ids are looked up once per
/// name: tree-sitter's own lookup by name compares it with every field name
/// of the grammar, on every call, and lowering asks for fields at every node.
fn field<'t>(node: Node<'t>, name: &str) -> Option<Node<'t>> {
    static IDS: std::sync::OnceLock<rustc_hash::FxHashMap<String, std::num::NonZeroU16>> = std::sync::OnceLock::new();
    let ids = IDS.get_or_init(|| {
        let language = node.language();
        (1..=language.field_count() as u16)
            .filter_map(|id| Some((language.field_name_for_id(id)?.to_string(), std::num::NonZeroU16::new(id)?)))
            .collect()
    });
    match ids.get(name) {
        Some(&id) => node.child_by_field_id(id.get()),
        None => node.child_by_field_name(name),
    }
}

impl<'a> Lowerer<'a> {
    fn text(&self, node: Node<'_>) -> &'a str {
        node_text(self.text, node)
    }

    fn module_item(&mut self, node: Node<'_>, module: &mut Module) {
        match node.kind() {
            "function_definition" | "decorated_definition" | "class_definition" => {
                self.definition(node, None, module)
            }
            "import_statement" | "import_from_statement" | "future_import_statement" | "comment" => {}
            _ => {
                let mut out = Vec::new();
                self.statement(node, &mut out);
                module.top_level.extend(out);
            }
        }
    }

    fn definition(&mut self, node: Node<'_>, class: Option<&str>, module: &mut Module) {
        match node.kind() {
            "decorated_definition" => {
                let decorator = self.decorator(node);
                if let Some(def) = field(node, "definition") {
                    match def.kind() {
                        "function_definition" => {
                            let f = self.function(def, class, decorator);
                            module.functions.push(f);
                            module.functions.append(&mut self.hoisted);
                        }
                        _ => self.definition(def, class, module),
                    }
                }
            }
            "function_definition" => {
                let f = self.function(node, class, None);
                module.functions.push(f);
                module.functions.append(&mut self.hoisted);
            }
            "class_definition" => {
                let name = field(node, "name").map(|n| self.text(n).to_string()).unwrap_or_default();
                // `class B(A, metaclass=M):`: the bases named by a name or
                // a dotted name (`cutlass.pipeline.PipelineAsync`).
                let bases: Vec<String> = field(node, "superclasses")
                    .map(|list| {
                        let mut cursor = list.walk();
                        list.named_children(&mut cursor)
                            .filter(|b| matches!(b.kind(), "identifier" | "attribute"))
                            .map(|b| self.text(b).to_string())
                            .filter(|b| !b.contains(char::is_whitespace))
                            .collect()
                    })
                    .unwrap_or_default();
                // Each as the file's imports qualify it (`PipelineAsyncOg`
                // -> `cutlass.pipeline.PipelineAsync`): the link renames
                // `bases` to the package's definitions, but a class of the
                // DSL is known by its qualified name.
                let qualified_bases = bases.iter().map(|b| self.qualify(b).unwrap_or_else(|| b.clone())).collect();
                let mut class_def =
                    ClassDef {
                    name: name.clone(),
                    outer: class.map(str::to_string),
                    bases,
                    qualified_bases,
                    attrs: Vec::new(),
                    memrange_fields: Vec::new(),
                    range: TextRange::of(&node),
                };
                if let Some(body) = field(node, "body") {
                    let mut cursor = body.walk();
                    for child in body.named_children(&mut cursor) {
                        match child.kind() {
                            "function_definition" | "decorated_definition" | "class_definition" => {
                                self.definition(child, Some(&name), module)
                            }
                            _ => {
                                if let Some(field) = self.memrange_field(child) {
                                    class_def.memrange_fields.push(field);
                                }
                                let mut out = Vec::new();
                                self.statement(child, &mut out);
                                for s in out {
                                    if let StmtKind::Assign { targets, value } = s.kind {
                                        for t in targets {
                                            if let Target::Name(n) = t {
                                                class_def.attrs.push((n, value.clone()));
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                module.classes.push(class_def);
            }
            _ => {}
        }
    }

    fn function(
        &mut self,
        node: Node<'_>,
        class: Option<&str>,
        decorator: Option<cute_syntax::DecoratorKind>,
    ) -> FunctionDef {
        let name_node = field(node, "name");
        let name = name_node.map(|n| self.text(n).to_string()).unwrap_or_default();
        let qualified = class.map_or_else(|| name.clone(), |c| format!("{c}.{name}"));
        self.function_named(node, name, qualified, class, decorator)
    }

    /// A function whose nested definitions are named after `qualified`.
    fn function_named(
        &mut self,
        node: Node<'_>,
        name: String,
        qualified: String,
        class: Option<&str>,
        decorator: Option<cute_syntax::DecoratorKind>,
    ) -> FunctionDef {
        let name_node = field(node, "name");
        self.enclosing.push(qualified);
        let hoisted_before = self.hoisted.len();
        let params = self.params(node);
        let body = field(node, "body").map(|b| self.block(b)).unwrap_or_default();
        self.enclosing.pop();
        let mut f = FunctionDef {
            name,
            class_name: class.map(str::to_string),
            decorator,
            params,
            body,
            range: TextRange::of(&node),
            name_range: name_node.map(|n| TextRange::of(&n)).unwrap_or_default(),
        };
        self.keep_closures_unknown(&mut f, hoisted_before);
        f
    }

    /// A function defined inside the function being lowered (`def
    /// _cg(n): return CooperativeGroup(Agent.Thread, n)`, `decorator`
    /// applied): lowered as a function of the module named as Python
    /// qualifies it (`Kernel.kernel.<locals>._cg`), and the statement binds
    /// its name to that function, so calls through the name inline it as
    /// any helper of the file.
    fn nested(&mut self, node: Node<'_>, decorator: Option<cute_syntax::DecoratorKind>) -> StmtKind {
        let local = field(node, "name").map(|n| self.text(n).to_string()).unwrap_or_default();
        let qualified = self.qualified_local(&local);
        let f = self.function_named(node, qualified.clone(), qualified.clone(), None, decorator);
        self.hoisted.push(f);
        StmtKind::Assign { targets: vec![Target::Name(local)], value: Expr::Name(qualified) }
    }

    /// `lambda a, b: expr` inside a function: a nested function returning
    /// `expr`, named `<lambda>` as Python names it.
    fn lambda(&mut self, node: Node<'_>) -> Expr {
        let qualified = self.qualified_local("<lambda>");
        self.enclosing.push(qualified.clone());
        let hoisted_before = self.hoisted.len();
        let params = self.params(node);
        let id = self.next_id;
        self.next_id += 1;
        let body = field(node, "body").map(|b| self.expr(b));
        self.enclosing.pop();
        let range = TextRange::of(&node);
        let mut f = FunctionDef {
            name: qualified.clone(),
            class_name: None,
            decorator: None,
            params,
            body: vec![Stmt { id, range, kind: StmtKind::Return(body) }],
            range,
            name_range: range,
        };
        self.keep_closures_unknown(&mut f, hoisted_before);
        self.hoisted.push(f);
        Expr::Name(qualified)
    }

    /// `outer.<locals>.name`, numbered when `outer` defines `name` more
    /// than once.
    fn qualified_local(&self, local: &str) -> String {
        let outer = self.enclosing.last().map_or("<module>", String::as_str);
        let base = format!("{outer}.<locals>.{local}");
        let taken = |n: &str| self.hoisted.iter().any(|f| f.name == n);
        if !taken(&base) {
            return base;
        }
        (2..).map(|i| format!("{base}#{i}")).find(|n| !taken(n)).expect("an unused number")
    }

    /// The functions nested in `outer` (hoisted from `hoisted_before` on)
    /// that read a name `outer` binds are closures: their value depends on
    /// the call of `outer` they were made in, which a function of the
    /// module does not have. Such a definition stays unmodelled (as it was
    /// before nested functions were), so what it computes is unknown rather
    /// than computed from a global of the same name.
    fn keep_closures_unknown(&mut self, outer: &mut FunctionDef, hoisted_before: usize) {
        if self.hoisted.len() == hoisted_before {
            return;
        }
        let outer_bound = outer.local_names();
        let mut closures = Vec::new();
        for f in &self.hoisted[hoisted_before..] {
            let own = f.local_names();
            let mut reads = Vec::new();
            crate::ast::for_each_expr(&f.body, &mut |e| e.collect_uses(&mut reads));
            // Stores into what it did not create read it too (`acc[i] = v`,
            // `n += 1`).
            for stmt in crate::module::nested_statements(&f.body) {
                match &stmt.kind {
                    StmtKind::Assign { targets, .. } => targets.iter().for_each(|t| t.collect_uses(&mut reads)),
                    StmtKind::AugAssign { target: Target::Name(n), .. } => reads.push(n.clone()),
                    StmtKind::AugAssign { target, .. } => target.collect_uses(&mut reads),
                    _ => {}
                }
            }
            let mut defaults = Vec::new();
            f.params.iter().filter_map(|p| p.default.as_ref()).for_each(|d| d.collect_uses(&mut defaults));
            let captured = reads.iter().find(|n| !own.contains(*n) && outer_bound.contains(*n) && !n.contains('.'));
            if let Some(name) = captured.or_else(|| defaults.iter().find(|n| outer_bound.contains(*n))) {
                closures.push((f.name.clone(), name.clone()));
            }
        }
        if closures.is_empty() {
            return;
        }
        let (closed, open): (Vec<FunctionDef>, Vec<FunctionDef>) =
            std::mem::take(&mut self.hoisted).into_iter().partition(|f| closures.iter().any(|(n, _)| *n == f.name));
        self.hoisted = open;
        for function in closed {
            let captured = closures.iter().find(|(n, _)| *n == function.name).map(|(_, c)| c.clone()).unwrap_or_default();
            self.closures.push(crate::module::Closure { function, captured, synchronizes: false });
        }
        unbind_closures(&mut outer.body, &closures);
    }

    /// The parameters of a function or lambda node.
    fn params(&mut self, node: Node<'_>) -> Vec<Param> {
        let mut params = Vec::new();
        if let Some(ps) = field(node, "parameters") {
            let mut cursor = ps.walk();
            for p in ps.named_children(&mut cursor) {
                if let Some(param) = self.param(p) {
                    params.push(param);
                }
            }
        }
        params
    }

    /// What the first decorator the analysis knows of a
    /// `decorated_definition` makes of it.
    fn decorator(&self, node: Node<'_>) -> Option<cute_syntax::DecoratorKind> {
        let mut cursor = node.walk();
        let decorators = node.named_children(&mut cursor).filter(|c| c.kind() == "decorator").collect::<Vec<_>>();
        decorators.into_iter().find_map(|d| decorator_kind_of(self.imports, self.text(d)))
    }

    fn param(&mut self, p: Node<'_>) -> Option<Param> {
        let (name_node, ty, default) = match p.kind() {
            "identifier" => (Some(p), None, None),
            "typed_parameter" => {
                let mut cursor = p.walk();
                let name = p.named_children(&mut cursor).find(|c| c.kind() == "identifier");
                (name, field(p, "type"), None)
            }
            "default_parameter" => (field(p, "name"), None, field(p, "value")),
            "typed_default_parameter" => (field(p, "name"), field(p, "type"), field(p, "value")),
            _ => return None,
        };
        let name = self.text(name_node?).to_string();
        let constexpr = ty.is_some_and(|t| self.text(t).contains("Constexpr"));
        let tensor = ty.is_some_and(|t| {
            let t = self.text(t);
            t.ends_with("Tensor") || t.ends_with("Pointer")
        });
        let default = default.map(|d| self.expr(d));
        Some(Param { name, constexpr, tensor, default })
    }

    fn block(&mut self, node: Node<'_>) -> Vec<Stmt> {
        let mut out = Vec::new();
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.statement(child, &mut out);
        }
        out
    }

    fn stmt(&mut self, node: Node<'_>, kind: StmtKind) -> Stmt {
        let id = self.next_id;
        self.next_id += 1;
        Stmt { id, range: TextRange::of(&node), kind }
    }

    fn statement(&mut self, node: Node<'_>, out: &mut Vec<Stmt>) {
        let kind = match node.kind() {
            "comment" => return,
            "expression_statement" => {
                let Some(inner) = node.named_child(0) else { return };
                match inner.kind() {
                    "assignment" => self.assignment(inner),
                    "augmented_assignment" => {
                        let target = self.target(field(inner, "left"));
                        let op = field(inner, "operator")
                            .and_then(|o| bin_op(self.text(o).trim_end_matches('=')))
                            .unwrap_or(BinOp::Add);
                        let value = self.opt_expr(field(inner, "right"));
                        StmtKind::AugAssign { target, op, value }
                    }
                    _ => StmtKind::Expr(self.expr(inner)),
                }
            }
            "if_statement" => {
                // Lower `if/elif/else` to nested ifs; ids follow source order.
                let id = self.next_id;
                self.next_id += 1;
                let cond = self.opt_expr(field(node, "condition"));
                let then = field(node, "consequence").map(|b| self.block(b)).unwrap_or_default();
                let mut alternatives = Vec::new();
                let mut cursor = node.walk();
                for alt in node.children_by_field_name("alternative", &mut cursor) {
                    alternatives.push(alt);
                }
                let orelse = self.alternatives(&alternatives);
                out.push(Stmt { id, range: TextRange::of(&node), kind: StmtKind::If { cond, then, orelse } });
                return;
            }
            "for_statement" => {
                let id = self.next_id;
                self.next_id += 1;
                let target = self.target(field(node, "left"));
                let iter = self.opt_expr(field(node, "right"));
                let body = field(node, "body").map(|b| self.block(b)).unwrap_or_default();
                out.push(Stmt { id, range: TextRange::of(&node), kind: StmtKind::For { target, iter, body } });
                return;
            }
            "while_statement" => {
                let id = self.next_id;
                self.next_id += 1;
                let cond = self.opt_expr(field(node, "condition"));
                let body = field(node, "body").map(|b| self.block(b)).unwrap_or_default();
                out.push(Stmt { id, range: TextRange::of(&node), kind: StmtKind::While { cond, body } });
                return;
            }
            "with_statement" => {
                let id = self.next_id;
                self.next_id += 1;
                let mut items = Vec::new();
                let mut cursor = node.walk();
                for clause in node.named_children(&mut cursor) {
                    if clause.kind() != "with_clause" {
                        continue;
                    }
                    let mut c2 = clause.walk();
                    for item in clause.named_children(&mut c2) {
                        let Some(value) = field(item, "value") else { continue };
                        // `with x as y` appears as an as_pattern in the value.
                        if value.kind() == "as_pattern" {
                            let expr = value.named_child(0).map(|e| self.expr(e)).unwrap_or(Expr::None);
                            let alias = field(value, "alias").and_then(|a| a.named_child(0).or(Some(a)));
                            items.push((expr, alias.map(|a| self.target(Some(a)))));
                        } else {
                            items.push((self.expr(value), None));
                        }
                    }
                }
                let body = field(node, "body").map(|b| self.block(b)).unwrap_or_default();
                out.push(Stmt { id, range: TextRange::of(&node), kind: StmtKind::With { items, body } });
                return;
            }
            "return_statement" => StmtKind::Return(node.named_child(0).map(|e| self.expr(e))),
            "pass_statement" => StmtKind::Pass,
            "break_statement" => StmtKind::Break,
            "continue_statement" => StmtKind::Continue,
            "import_statement" | "import_from_statement" => StmtKind::Pass,
            "function_definition" if !self.enclosing.is_empty() => self.nested(node, None),
            "decorated_definition" if !self.enclosing.is_empty() => {
                let decorator = self.decorator(node);
                match field(node, "definition") {
                    Some(def) if def.kind() == "function_definition" => self.nested(def, decorator),
                    Some(def) if def.kind() == "class_definition" => {
                        self.nested_struct(def).unwrap_or_else(|| StmtKind::Unsupported("nested definition".to_string()))
                    }
                    _ => StmtKind::Unsupported("nested definition".to_string()),
                }
            }
            "function_definition" | "decorated_definition" | "class_definition" => {
                StmtKind::Unsupported("nested definition".to_string())
            }
            other => StmtKind::Unsupported(other.replace('_', " ")),
        };
        let s = self.stmt(node, kind);
        out.push(s);
    }

    fn alternatives(&mut self, alts: &[Node<'_>]) -> Vec<Stmt> {
        let Some((first, rest)) = alts.split_first() else { return Vec::new() };
        match first.kind() {
            "else_clause" => field(*first, "body").map(|b| self.block(b)).unwrap_or_default(),
            "elif_clause" => {
                let id = self.next_id;
                self.next_id += 1;
                let cond = self.opt_expr(field(*first, "condition"));
                let then = field(*first, "consequence").map(|b| self.block(b)).unwrap_or_default();
                let orelse = self.alternatives(rest);
                vec![Stmt { id, range: TextRange::of(first), kind: StmtKind::If { cond, then, orelse } }]
            }
            _ => Vec::new(),
        }
    }

    /// `name: MemRange[dtype, n]` (or `Align[MemRange[...], k]`) in a class
    /// body: the field and its element type.
    /// A shared-storage struct defined in a function (`class SharedStorage:`
    /// with `MemRange` fields, in the host method that launches the kernel,
    /// as most examples write it): the class's name bound to the struct,
    /// whose fields' element counts are evaluated where the class statement
    /// runs (`MemRange[cutlass.Int64, self.ab_stage * 2]` reads `self`); see
    /// `eval::struct_definition`.
    fn nested_struct(&mut self, def: Node<'_>) -> Option<StmtKind> {
        let name = self.text(field(def, "name")?).to_string();
        let body = field(def, "body")?;
        let mut cursor = body.walk();
        let fields: Vec<crate::module::MemRangeField> =
            body.named_children(&mut cursor).collect::<Vec<_>>().into_iter().filter_map(|child| self.memrange_field(child)).collect();
        if fields.is_empty() {
            return None;
        }
        let range = TextRange::of(&def);
        let kwargs = fields.into_iter().map(|f| (f.name, Expr::Tuple(vec![Expr::Str(f.dtype), f.len.unwrap_or(Expr::None)]))).collect();
        let call = Call {
            func: Expr::Name(name.clone()),
            qualname: Some(crate::layout::STRUCT_DEFINITION.to_string()),
            api: None,
            params: &[],
            args: Vec::new(),
            kwargs,
            range,
        };
        Some(StmtKind::Assign { targets: vec![Target::Name(name)], value: Expr::Call(Box::new(call)) })
    }

    fn memrange_field(&mut self, node: Node<'_>) -> Option<crate::module::MemRangeField> {
        let inner = if node.kind() == "expression_statement" { node.named_child(0)? } else { node };
        if inner.kind() != "assignment" || field(inner, "right").is_some() {
            return None;
        }
        let left = field(inner, "left")?;
        if left.kind() != "identifier" {
            return None;
        }
        let ty = field(inner, "type")?;
        let ty = if ty.kind() == "type" { ty.named_child(0)? } else { ty };
        let annotation = self.expr(ty);
        let (dtype, len) = crate::layout::memrange_parts(&annotation)?;
        Some(crate::module::MemRangeField { name: self.text(left).to_string(), dtype, len: len.cloned() })
    }

    fn assignment(&mut self, node: Node<'_>) -> StmtKind {
        // `a = b = v` nests: assignment(left=a, right=assignment(left=b, right=v))
        let mut targets = vec![self.target(field(node, "left"))];
        let mut right = field(node, "right");
        while let Some(r) = right {
            if r.kind() == "assignment" {
                targets.push(self.target(field(r, "left")));
                right = field(r, "right");
            } else {
                break;
            }
        }
        match right {
            Some(r) => StmtKind::Assign { targets, value: self.expr(r) },
            // A bare annotation `x: int` defines nothing at run time.
            None => StmtKind::Pass,
        }
    }

    fn target(&mut self, node: Option<Node<'_>>) -> Target {
        let Some(node) = node else { return Target::Name("_".to_string()) };
        match node.kind() {
            "identifier" => Target::Name(self.text(node).to_string()),
            "attribute" => Target::Attr {
                base: self.opt_expr(field(node, "object")),
                attr: field(node, "attribute").map(|a| self.text(a).to_string()).unwrap_or_default(),
            },
            // `a[i, j]` has one index field per component: lowered as the
            // expression is, so both see the same tuple.
            "subscript" => match self.expr(node) {
                Expr::Subscript { base, index } => Target::Subscript { base: *base, index: *index },
                other => Target::Subscript { base: other, index: Expr::Unknown(String::new()) },
            },
            "pattern_list" | "tuple_pattern" | "list_pattern" | "expression_list" | "tuple" | "list" => {
                let mut cursor = node.walk();
                let items: Vec<_> = node.named_children(&mut cursor).collect();
                Target::Tuple(items.into_iter().map(|c| self.target(Some(c))).collect())
            }
            "list_splat_pattern" => Target::Star(Box::new(self.target(node.named_child(0)))),
            "parenthesized_expression" => self.target(node.named_child(0)),
            _ => Target::Name(self.text(node).to_string()),
        }
    }

    fn opt_expr(&mut self, node: Option<Node<'_>>) -> Expr {
        node.map(|n| self.expr(n)).unwrap_or(Expr::None)
    }

    /// Lowers an expression, as an unknown value past [`MAX_EXPR_DEPTH`]
    /// levels of nesting (a generated `1 + 1 + ... + 1` of 20,000 terms,
    /// 3,000 parentheses): every pass after lowering recurses over the
    /// expressions it is given, and a tree that deep would overflow a
    /// thread's stack. A value that deep is not known statically, and where
    /// synchronization depends on it the kernel is reported as not checked.
    fn expr(&mut self, node: Node<'_>) -> Expr {
        if self.expr_depth >= MAX_EXPR_DEPTH {
            return Expr::Unknown(format!("an expression nested more than {MAX_EXPR_DEPTH} levels deep"));
        }
        self.expr_depth += 1;
        let lowered = self.expr_within_depth(node);
        self.expr_depth -= 1;
        lowered
    }

    fn expr_within_depth(&mut self, node: Node<'_>) -> Expr {
        let b = |e: Expr| Box::new(e);
        let callee = std::mem::take(&mut self.callee);
        match node.kind() {
            // Python's `max` read as a value (see `objects::unbind_builtins`
            // for a file that binds the name).
            "identifier" if !callee && crate::objects::BUILTINS.contains(&self.text(node)) && self.imports.get(self.text(node)).is_none() => {
                let name = self.text(node);
                self.read_builtins = true;
                crate::objects::object_expr(Expr::Name(name.to_string()), &format!("builtins.{name}"), TextRange::of(&node))
            }
            "identifier" => Expr::Name(self.text(node).to_string()),
            "integer" => parse_int(self.text(node)).map(Expr::Int).unwrap_or(Expr::Float),
            "float" => Expr::Float,
            "true" => Expr::Bool(true),
            "false" => Expr::Bool(false),
            "none" => Expr::None,
            "string" => Expr::Str(string_value(self.text(node))),
            // `"a" "b"`: the parts joined, as Python does.
            "concatenated_string" => {
                let mut cursor = node.walk();
                let parts: Vec<String> = node.named_children(&mut cursor).map(|p| string_value(self.text(p))).collect();
                Expr::Str(parts.concat())
            }
            "parenthesized_expression" => node.named_child(0).map(|c| self.expr(c)).unwrap_or(Expr::None),
            "attribute" => {
                let attr = Expr::Attr {
                    base: b(self.opt_expr(field(node, "object"))),
                    attr: field(node, "attribute").map(|a| self.text(a).to_string()).unwrap_or_default(),
                };
                // `operator.add`, `cute.ReductionOp.MAX` as values.
                let may_be_object = !callee && matches!(&attr, Expr::Attr { attr, .. } if crate::objects::may_name_object(attr));
                match attr.dotted().filter(|_| may_be_object).and_then(|d| self.qualify(&d)).and_then(|q| crate::objects::object_named(&q)) {
                    Some(object) => crate::objects::object_expr(attr, object, TextRange::of(&node)),
                    _ => attr,
                }
            }
            // `{k: v, ...}`; with `**` or a comprehension, not read.
            "dictionary" => {
                let mut cursor = node.walk();
                let items: Vec<_> = node.named_children(&mut cursor).filter(|c| c.kind() != "comment").collect();
                if items.iter().all(|i| i.kind() == "pair") {
                    let pairs = items.into_iter().map(|p| (self.opt_expr(field(p, "key")), self.opt_expr(field(p, "value")))).collect();
                    crate::objects::dict_expr(pairs, TextRange::of(&node))
                } else {
                    Expr::Unknown(self.text(node).to_string())
                }
            }
            "call" => {
                self.callee = true;
                let func = self.opt_expr(field(node, "function"));
                self.callee = false;
                let qualname = func.dotted().and_then(|d| self.qualify(&d));
                let mut args = Vec::new();
                let mut kwargs = Vec::new();
                if let Some(arglist) = field(node, "arguments") {
                    let mut cursor = arglist.walk();
                    for a in arglist.named_children(&mut cursor) {
                        match a.kind() {
                            "keyword_argument" => {
                                let name = field(a, "name").map(|n| self.text(n).to_string()).unwrap_or_default();
                                let value = self.opt_expr(field(a, "value"));
                                kwargs.push((name, value));
                            }
                            "comment" => {}
                            _ => args.push(self.expr(a)),
                        }
                    }
                }
                // `getattr(operator, "max", None)`: a module's attribute,
                // or the default where it has none (`objects.rs`).
                if let (Expr::Name(f), None, [Expr::Attr { .. } | Expr::Name(_), Expr::Str(attr), default]) = (&func, &qualname, args.as_slice()) {
                    if f == "getattr" && kwargs.is_empty() {
                        let qualified = args[0].dotted().and_then(|d| self.qualify(&format!("{d}.{attr}")));
                        if let Some(mut value) = qualified.and_then(|q| crate::objects::getattr_of_module(&q, default)) {
                            if let Expr::Call(c) = &mut value {
                                if crate::objects::is_lowered_value(c) {
                                    c.range = TextRange::of(&node);
                                }
                            }
                            return value;
                        }
                    }
                }
                let mut call = Call { func, qualname, api: None, params: &[], args, kwargs, range: TextRange::of(&node) };
                call.api = crate::api::Api::resolve(&call);
                if call.api.is_some() {
                    call.params = crate::api::Api::params_of(&call);
                }
                Expr::Call(Box::new(call))
            }
            "binary_operator" => {
                let op = field(node, "operator").and_then(|o| bin_op(self.text(o)));
                match op {
                    Some(op) => Expr::Binary {
                        op,
                        lhs: b(self.opt_expr(field(node, "left"))),
                        rhs: b(self.opt_expr(field(node, "right"))),
                    },
                    None => Expr::Unknown(self.text(node).to_string()),
                }
            }
            "unary_operator" => {
                let op = match field(node, "operator").map(|o| self.text(o)) {
                    Some("-") => UnOp::Neg,
                    Some("~") => UnOp::Invert,
                    _ => UnOp::Plus,
                };
                Expr::Unary { op, operand: b(self.opt_expr(field(node, "argument"))) }
            }
            "list_splat" => match node.named_child(0) {
                Some(inner) => Expr::Unary { op: UnOp::Splat, operand: b(self.expr(inner)) },
                None => Expr::Unknown(self.text(node).to_string()),
            },
            "not_operator" => Expr::Unary { op: UnOp::Not, operand: b(self.opt_expr(field(node, "argument"))) },
            "boolean_operator" => Expr::BoolOp {
                and: field(node, "operator").is_some_and(|o| self.text(o) == "and"),
                lhs: b(self.opt_expr(field(node, "left"))),
                rhs: b(self.opt_expr(field(node, "right"))),
            },
            "comparison_operator" => self.comparison(node),
            "conditional_expression" => {
                let mut cursor = node.walk();
                let parts: Vec<_> = node.named_children(&mut cursor).collect();
                if parts.len() == 3 {
                    Expr::IfExp {
                        then: b(self.expr(parts[0])),
                        cond: b(self.expr(parts[1])),
                        orelse: b(self.expr(parts[2])),
                    }
                } else {
                    Expr::Unknown(self.text(node).to_string())
                }
            }
            "subscript" => {
                let mut cursor = node.walk();
                let indices: Vec<_> = node.children_by_field_name("subscript", &mut cursor).collect();
                let index = if indices.len() == 1 {
                    self.expr(indices[0])
                } else {
                    Expr::Tuple(indices.into_iter().map(|i| self.expr(i)).collect())
                };
                Expr::Subscript { base: b(self.opt_expr(field(node, "value"))), index: b(index) }
            }
            "tuple" | "list" | "expression_list" => {
                let mut cursor = node.walk();
                let items: Vec<_> = node.named_children(&mut cursor).filter(|c| c.kind() != "comment").collect();
                Expr::Tuple(items.into_iter().map(|c| self.expr(c)).collect())
            }
            "lambda" if !self.enclosing.is_empty() => self.lambda(node),
            _ => Expr::Unknown(self.text(node).to_string()),
        }
    }

    fn comparison(&mut self, node: Node<'_>) -> Expr {
        // `a < b <= c` becomes `a < b and b <= c`.
        let mut operands = Vec::new();
        let mut ops = Vec::new();
        let mut cursor = node.walk();
        let mut pending_not = false;
        for child in node.children(&mut cursor) {
            if child.is_named() {
                operands.push(self.expr(child));
                continue;
            }
            let op = match self.text(child) {
                "==" => CmpOp::Eq,
                "!=" => CmpOp::Ne,
                "<" => CmpOp::Lt,
                "<=" => CmpOp::Le,
                ">" => CmpOp::Gt,
                ">=" => CmpOp::Ge,
                "in" if pending_not => CmpOp::NotIn,
                "in" => CmpOp::In,
                "is" => CmpOp::Is,
                "not" => {
                    pending_not = true;
                    continue;
                }
                "is not" => CmpOp::IsNot,
                "not in" => CmpOp::NotIn,
                _ => continue,
            };
            pending_not = false;
            ops.push(op);
        }
        if operands.len() != ops.len() + 1 || ops.is_empty() {
            return Expr::Unknown(self.text(node).to_string());
        }
        let mut result: Option<Expr> = None;
        for (i, op) in ops.iter().enumerate() {
            let cmp = Expr::Compare { op: *op, lhs: Box::new(operands[i].clone()), rhs: Box::new(operands[i + 1].clone()) };
            result = Some(match result {
                None => cmp,
                Some(prev) => Expr::BoolOp { and: true, lhs: Box::new(prev), rhs: Box::new(cmp) },
            });
        }
        result.unwrap()
    }

    fn qualify(&self, dotted: &str) -> Option<String> {
        if let Some(q) = self.imports.qualify(dotted) {
            return Some(q);
        }
        // `from cutlass.cute.arch import *` then `mbarrier_wait(...)`.
        let head = dotted.split('.').next().unwrap_or(dotted);
        for w in self.imports.wildcards() {
            if crate::api::Api::lookup(&format!("{w}.{dotted}")).is_some() {
                return Some(format!("{w}.{dotted}"));
            }
            let _ = head;
        }
        None
    }
}

fn bin_op(text: &str) -> Option<BinOp> {
    Some(match text {
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "//" => BinOp::FloorDiv,
        "/" => BinOp::Div,
        "%" => BinOp::Mod,
        "^" => BinOp::BitXor,
        "&" => BinOp::BitAnd,
        "|" => BinOp::BitOr,
        "<<" => BinOp::Shl,
        ">>" => BinOp::Shr,
        "**" => BinOp::Pow,
        _ => return None,
    })
}

fn parse_int(text: &str) -> Option<i64> {
    let t = text.replace('_', "");
    let t = t.to_ascii_lowercase();
    if let Some(h) = t.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else if let Some(o) = t.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()
    } else if let Some(bn) = t.strip_prefix("0b") {
        i64::from_str_radix(bn, 2).ok()
    } else {
        t.parse().ok()
    }
}

fn string_value(text: &str) -> String {
    let t = text.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let raw = text[..text.len() - t.len()].to_ascii_lowercase().contains('r');
    let quote_len = if t.starts_with("\"\"\"") || t.starts_with("'''") { 3 } else { 1 };
    let body = if t.len() >= 2 * quote_len { &t[quote_len..t.len() - quote_len] } else { t };
    if raw {
        body.to_string()
    } else {
        unescape(body)
    }
}

/// The common escapes of a Python string literal (inline assembly spells
/// its line breaks `\n\t`); others are kept as written.
fn unescape(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(q @ ('\\' | '"' | '\'')) => out.push(q),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::ast::{Expr, StmtKind};

    /// A function defined in a function, or a lambda, is a function of the
    /// module under the name Python qualifies it by; its definition binds
    /// the local name to it. One that reads a name of the function around
    /// it is a closure, left unmodelled.
    #[test]
    fn functions_defined_in_functions_are_functions_of_the_module() {
        let src = "class K:\n    def kernel(self):\n        def g(n):\n            return n\n        if n:\n            def g(n):\n                return n + 1\n        f = lambda a: a\n        c = 2\n        h = lambda a: a + c\n";
        let m = crate::lower_text(src).unwrap();
        let names: Vec<&str> = m.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["kernel", "K.kernel.<locals>.g", "K.kernel.<locals>.g#2", "K.kernel.<locals>.<lambda>"]);
        let kernel = &m.functions[0];
        assert!(matches!(&kernel.body[0].kind, StmtKind::Assign { value: Expr::Name(n), .. } if n == "K.kernel.<locals>.g"));
        let closure = &kernel.body.last().unwrap().kind;
        assert!(matches!(closure, StmtKind::Unsupported(why) if why.contains("reading `c`")), "{closure:?}");
    }
}
