//! A file as a sequence of top-level chunks (whole lines holding one or more
//! top-level statements), found on a tree re-parsed incrementally from the
//! previous one, and each chunk lowered on its own.
//!
//! A chunk is lowered from `header + chunk`, the header holding the file's
//! import statements (names resolve through the imports of the whole file).
//! The result is what lowering the whole file gives for that chunk, with
//! offsets from the chunk's start and statement ids from 0 (ids are only
//! compared, so each chunk's range of ids may start anywhere); the caller
//! checks what could make them differ (imports, syntax errors) and falls back
//! to the whole file.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use cute_ir::ast::Expr;
use cute_ir::Module;
use cute_syntax::tree_sitter::{InputEdit, Language, Node, Parser, Point, Tree};
use cute_syntax::{DecoratorKind, ImportMap, SyntaxTree, TextRange};

use super::positions;

/// One node of a syntax tree, for comparing two parses of a chunk: kind,
/// field, offsets from the chunk's start, error or missing.
pub type Sig = (u16, u16, u32, u32, bool);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: u32,
    pub end: u32,
    /// 0-based line of `start`.
    pub line: u32,
    /// Holds something other than comments.
    pub code: bool,
    /// The chunk's nodes in the whole file's tree, when they hold a syntax error.
    pub errors: Option<Vec<Sig>>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// False when the parser could not run (the whole-file path reports it).
    pub parsed: bool,
    pub chunks: Vec<Span>,
    /// The first syntax error of the file, as lowering the whole file sees it.
    pub first_error: Option<TextRange>,
}

/// The last tree of each file, to re-parse the next text incrementally.
#[derive(Default)]
pub struct TreeCache {
    trees: Mutex<HashMap<salsa::Id, (String, Tree)>>,
}

fn language() -> Option<&'static Language> {
    static LANGUAGE: OnceLock<Option<Language>> = OnceLock::new();
    LANGUAGE.get_or_init(|| cute_syntax::parse("").ok().map(|t| (*t.tree.language()).clone())).as_ref()
}

fn point(text: &str, offset: usize) -> Point {
    let before = &text.as_bytes()[..offset];
    let row = before.iter().filter(|&&b| b == b'\n').count();
    let column = offset - before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    Point::new(row, column)
}

/// The edit that turns `old` into `new`: their common prefix and suffix kept.
fn edit_between(old: &str, new: &str) -> InputEdit {
    let (o, n) = (old.as_bytes(), new.as_bytes());
    let prefix = o.iter().zip(n).take_while(|(a, b)| a == b).count();
    let max_suffix = o.len().min(n.len()) - prefix;
    let suffix = o.iter().rev().zip(n.iter().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
    let (start, old_end, new_end) = (prefix, o.len() - suffix, n.len() - suffix);
    InputEdit {
        start_byte: start,
        old_end_byte: old_end,
        new_end_byte: new_end,
        start_position: point(old, start),
        old_end_position: point(old, old_end),
        new_end_position: point(new, new_end),
    }
}

impl TreeCache {
    /// Parses `text`, from the previous tree of `file` when there is one.
    fn parse(&self, file: salsa::Id, text: &str) -> Option<Tree> {
        let mut parser = Parser::new();
        parser.set_language(language()?).ok()?;
        let previous = self.trees.lock().unwrap_or_else(PoisonError::into_inner).remove(&file);
        let tree = match previous {
            Some((old_text, mut old_tree)) => {
                if old_text != text {
                    old_tree.edit(&edit_between(&old_text, text));
                }
                parser.parse(text, Some(&old_tree))?
            }
            None => parser.parse(text, None)?,
        };
        let mut trees = self.trees.lock().unwrap_or_else(PoisonError::into_inner);
        trees.insert(file, (text.to_string(), tree.clone()));
        Some(tree)
    }
}

/// The nodes under `nodes`, depth first, with offsets from `base`.
fn signature<'t>(nodes: impl Iterator<Item = Node<'t>>, base: usize) -> Vec<Sig> {
    let mut out = Vec::new();
    for node in nodes {
        let mut cursor = node.walk();
        'walk: loop {
            let n = cursor.node();
            out.push((
                n.kind_id(),
                cursor.field_id().map_or(0, |f| f.get()),
                (n.start_byte() - base) as u32,
                (n.end_byte() - base) as u32,
                n.is_error() || n.is_missing(),
            ));
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
    }
    out
}

/// Chunks taken into a chunk with a syntax error, at most.
const MAX_MERGED: usize = 4;

/// The signature of `chunk` parsed on its own.
fn own_signature(chunk: &str) -> Option<Vec<Sig>> {
    let tree = cute_syntax::parse(chunk).ok()?;
    let root = tree.root();
    let mut cursor = root.walk();
    let nodes: Vec<Node<'_>> = root.children(&mut cursor).collect();
    Some(signature(nodes.into_iter(), 0))
}

/// The top-level chunks of `text`.
pub fn layout(cache: &TreeCache, file: salsa::Id, text: &str) -> Layout {
    let Some(tree) = cache.parse(file, text) else { return Layout::default() };
    let root = tree.root_node();
    let bytes = text.as_bytes();
    let line_end = |node: Node<'_>| -> usize {
        let (end, at) = (node.end_byte(), node.end_position());
        if at.column == 0 && end > node.start_byte() {
            return end;
        }
        bytes[end..].iter().position(|&b| b == b'\n').map_or(text.len(), |i| end + i + 1)
    };
    let mut chunks: Vec<(Span, Vec<Node<'_>>)> = Vec::new();
    let mut cursor = root.walk();
    for node in root.children(&mut cursor) {
        let start = node.start_byte() - node.start_position().column;
        let end = line_end(node);
        let code = node.kind() != "comment";
        match chunks.last_mut() {
            // Shares a line with the chunk before.
            Some((span, nodes)) if (start as u32) < span.end => {
                span.end = span.end.max(end as u32);
                span.code |= code;
                nodes.push(node);
            }
            _ => {
                let span =
                    Span { start: start as u32, end: end as u32, line: node.start_position().row as u32, code, errors: None };
                chunks.push((span, vec![node]));
            }
        }
    }
    // A syntax error may be recovered from differently when the chunk is
    // parsed on its own (the parser looks ahead past it): take the chunks
    // that follow into it until both parses agree.
    let mut out = Vec::with_capacity(chunks.len());
    let mut i = 0;
    while i < chunks.len() {
        let (mut span, mut nodes) = chunks[i].clone();
        i += 1;
        if nodes.iter().any(|n| n.has_error()) {
            let mut merged = 0;
            loop {
                let sig = signature(nodes.iter().copied(), span.start as usize);
                if merged == MAX_MERGED || i == chunks.len() || own_signature(&text[span.start as usize..span.end as usize]).as_ref() == Some(&sig) {
                    span.errors = Some(sig);
                    break;
                }
                let (next, next_nodes) = &chunks[i];
                span.end = next.end;
                span.code |= next.code;
                nodes.extend(next_nodes);
                i += 1;
                merged += 1;
            }
        }
        out.push(span);
    }
    let chunks = out;
    let first_error =
        if root.has_error() { SyntaxTree { text: text.to_string(), tree: tree.clone() }.error_ranges().first().copied() } else { None };
    Layout { parsed: true, chunks, first_error }
}

/// The import statements of a chunk, as text (imports anywhere in a file
/// resolve names everywhere in it).
pub fn imports(chunk: &str) -> Vec<String> {
    if !chunk.contains("import") {
        return Vec::new();
    }
    let Ok(tree) = cute_syntax::parse(chunk) else { return Vec::new() };
    let mut out = Vec::new();
    let mut stack = vec![tree.root()];
    while let Some(node) = stack.pop() {
        if matches!(node.kind(), "import_statement" | "import_from_statement") {
            out.push(tree.text_of(node).to_string());
            continue;
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    out
}

/// What the file-wide facts need of one function, read once per chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FnFacts {
    pub class: Option<String>,
    pub name: String,
    pub decorator: Option<DecoratorKind>,
    /// Checked as a kernel ([`Module::kernels`]).
    pub kernel: bool,
    /// Calls a synchronization primitive itself.
    pub syncs: bool,
    /// Same-file functions it may call, by name.
    pub callees: Vec<String>,
    /// Calls `cute.compile(...)` somewhere.
    pub compiles: bool,
    /// Names called bare (`Name(...)`), which may be constructors.
    pub bare_calls: Vec<String>,
}

/// One chunk, lowered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    /// Offsets from the chunk's start, statement ids from 0.
    pub module: Module,
    /// Statement ids the chunk uses.
    pub ids: u32,
    /// Lowered as the whole file would lower it, as far as can be checked here.
    pub ok: bool,
    /// The chunk's nodes, when they hold a syntax error.
    pub errors: Option<Vec<Sig>>,
    pub functions: Vec<FnFacts>,
    pub classes: Vec<String>,
}

fn fn_facts(module: &Module) -> Vec<FnFacts> {
    use cute_ir::api::{Api, Effect};
    module
        .functions
        .iter()
        .map(|f| {
            let mut facts = FnFacts {
                class: f.class_name.clone(),
                name: f.name.clone(),
                decorator: f.decorator,
                kernel: module.kernels().any(|k| std::ptr::eq(k, f)),
                syncs: false,
                callees: Vec::new(),
                compiles: false,
                bare_calls: Vec::new(),
            };
            cute_ir::ast::for_each_expr(&f.body, &mut |e| {
                let mut calls = Vec::new();
                e.calls(&mut calls);
                for c in calls {
                    facts.syncs |= matches!(Api::of_call(c).map(Api::effect), Some(Effect::Sync));
                    if let Some(n) = cute_ir::slice::callee_name(c) {
                        facts.callees.push(n.to_string());
                    }
                    facts.compiles |= c.qualname.as_deref().is_some_and(|q| q.ends_with("compile"))
                        || c.func.dotted().is_some_and(|d| d.ends_with("compile"));
                    if let Expr::Name(n) = &c.func {
                        facts.bare_calls.push(n.clone());
                    }
                }
            });
            facts.callees.sort();
            facts.callees.dedup();
            facts.bare_calls.sort();
            facts.bare_calls.dedup();
            facts
        })
        .collect()
}

/// Lowers `chunk` with the file's imports in `header`.
pub fn lower(chunk: &str, header: &str, header_imports: &ImportMap) -> Piece {
    let full = format!("{header}{chunk}");
    let Ok(tree) = cute_syntax::parse(&full) else {
        return Piece {
            module: Module::default(),
            ids: 0,
            ok: false,
            errors: None,
            functions: Vec::new(),
            classes: Vec::new(),
        };
    };
    let base = header.len();
    let root = tree.root();
    let mut cursor = root.walk();
    let nodes: Vec<Node<'_>> = root.children(&mut cursor).filter(|n| n.end_byte() > base).collect();
    let errors = nodes.iter().any(|n| n.has_error()).then(|| signature(nodes.iter().copied(), base));
    let mut module = cute_ir::lower_module(&tree);
    // The header is import statements only: nothing of it is lowered.
    let ok = module.imports == *header_imports
        && nodes.first().is_none_or(|n| n.start_byte() >= base)
        && module.syntax_errors.iter().all(|e| e.start as usize >= base);
    positions::module(&mut module, &mut positions::Shift { offset: -(base as i64), id: 0 });
    let mut ids = 0;
    positions::module(
        &mut module,
        &mut positions::Visit(|_, id: Option<u32>| {
            if let Some(id) = id {
                ids = ids.max(id + 1);
            }
        }),
    );
    let functions = fn_facts(&module);
    let classes = module.classes.iter().map(|c| c.name.clone()).collect();
    Piece { module, ids, ok, errors, functions, classes }
}
