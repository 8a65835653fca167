//! A file as a sequence of top-level chunks (whole lines holding one or more
//! top-level statements), found on a tree re-parsed incrementally from the
//! previous one, and each chunk lowered on its own.
//!
//! A chunk is lowered from `header + chunk`, the header holding the file's
//! import statements (names resolve through the imports of the whole file). The
//! result is what lowering the whole file gives for that chunk, with offsets
//! from the chunk's start and statement ids from 0 (ids are only compared, so
//! each chunk's range of ids may start anywhere); the caller checks what could
//! make them differ (imports, syntax errors) and falls back to the whole file.
//!
//! A file with a syntax error is laid out after the sections holding the error
//! are left out, as `cute_syntax::recover` does for the whole file. While a
//! line is typed inside one section (an edit within a line, past its
//! indentation) and that section is the only one that fails on its own, with
//! its neighbours too, the layout does not parse the whole text: the section is
//! left out (`recover::left_out`) and the rest laid out as an edit of the last
//! layout ([`one_broken_section`], through `patch`). That is the recovery the
//! whole text gives (`one_broken_section` says why); the random-edit test of
//! `tests/incremental.rs` compares both paths on this (a few hundred of its
//! edits take it).
//!
//! The whole-file parse is the other long step that calls no query:
//! tree-sitter's error recovery runs through the rest of a file whose bracket
//! was left open (tens of milliseconds) when the edit is not one the layout can
//! patch. It asks for a pending write from its progress callback and gives up,
//! leaving the tree cache as it was, so that typing is not held back by the
//! parse of a text already replaced.

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
    /// The top-level sections left out for a syntax error
    /// (`cute_syntax::recover`): the chunks are those of the rest.
    pub left_out: Vec<TextRange>,
    /// The kernels those sections define.
    pub broken_kernels: Vec<(String, TextRange)>,
}

/// What was last parsed of each file: its layout, and its last whole-file
/// tree to re-parse incrementally when the layout cannot be patched.
#[derive(Default)]
pub struct TreeCache {
    files: Mutex<HashMap<salsa::Id, Parsed>>,
    /// The import header each file's chunks were last lowered with.
    headers: Mutex<HashMap<salsa::Id, String>>,
    /// Trees of `header + chunks` texts parsed or lowered lately, newest
    /// last: the chunks an edit touches are re-parsed from them
    /// incrementally, and lowered from the same tree.
    recent: Mutex<std::collections::VecDeque<(String, Tree)>>,
    /// Whether a top-level section parses on its own, by its text, for the
    /// recovery from a syntax error (the sections around the one being
    /// typed are the same from one keystroke to the next).
    alone: Mutex<rustc_hash::FxHashMap<String, bool>>,
}

/// Sections remembered in [`TreeCache::alone`]; past this the memo starts
/// again (a few files' worth of top-level definitions).
const ALONE: usize = 4096;

/// Trees kept in [`TreeCache::recent`]: enough for every kernel of a large
/// file, so that the first edit of any of them re-parses incrementally.
const RECENT: usize = 128;

impl TreeCache {
    pub fn set_header(&self, file: salsa::Id, header: &str) {
        let mut headers = self.headers.lock().unwrap_or_else(PoisonError::into_inner);
        if headers.get(&file).is_none_or(|h| h != header) {
            headers.insert(file, header.to_string());
        }
    }

    fn header(&self, file: salsa::Id) -> String {
        self.headers.lock().unwrap_or_else(PoisonError::into_inner).get(&file).cloned().unwrap_or_default()
    }

    fn recent_tree(&self, text: &str) -> Option<Tree> {
        let recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        recent.iter().rev().find(|(t, _)| t == text).map(|(_, tree)| tree.clone())
    }

    /// Parses `new`, incrementally from the tree of `old` if it is recent.
    fn parse_recent(&self, old: &str, new: &str) -> Option<Tree> {
        let previous = self.recent_tree(old).map(|tree| (old.to_string(), tree));
        let tree = parse_whole(previous, new)?;
        self.remember(new, &tree);
        Some(tree)
    }

    fn parses_alone(&self, section: &str) -> bool {
        if let Some(&known) = self.alone.lock().unwrap_or_else(PoisonError::into_inner).get(section) {
            return known;
        }
        let parses = cute_syntax::recover::parses_alone(section);
        let mut alone = self.alone.lock().unwrap_or_else(PoisonError::into_inner);
        if alone.len() >= ALONE {
            alone.clear();
        }
        alone.insert(section.to_string(), parses);
        parses
    }

    fn remember(&self, text: &str, tree: &Tree) {
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        recent.retain(|(t, _)| t != text);
        if recent.len() == RECENT {
            recent.pop_front();
        }
        recent.push_back((text.to_string(), tree.clone()));
    }
}

#[derive(Default)]
struct Parsed {
    layout: Option<(String, Layout)>,
    tree: Option<(String, Tree)>,
    /// The recovered text of the last layout with a syntax error (its tree
    /// is among the recent ones).
    recovered: Option<String>,
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
    let (start, old_end, new_end) = cute_syntax::edited_range(old, new);
    InputEdit {
        start_byte: start,
        old_end_byte: old_end,
        new_end_byte: new_end,
        start_position: point(old, start),
        old_end_position: point(old, old_end),
        new_end_position: point(new, new_end),
    }
}

fn parser() -> Option<Parser> {
    let mut parser = Parser::new();
    parser.set_language(language()?).ok()?;
    Some(parser)
}

/// Parses `text` whole, from `previous` (a tree and its text) when given.
fn parse_whole(previous: Option<(String, Tree)>, text: &str) -> Option<Tree> {
    parse_whole_until(previous, text, &|| false)
}

/// [`parse_whole`], given up (`None`) as soon as `stop` says so: a file with
/// an open bracket takes tree-sitter's error recovery through the rest of
/// the file, tens of milliseconds that a newer edit should not wait for.
///
/// The parser reads each text as `cute_syntax::for_the_parser` gives it
/// (long runs of comments as spaces), and the edit is the one between those.
fn parse_whole_until(previous: Option<(String, Tree)>, text: &str, stop: &dyn Fn() -> bool) -> Option<Tree> {
    let mut parser = parser()?;
    let parsed_text = cute_syntax::for_the_parser(text);
    let old_tree = previous.map(|(old_text, mut old_tree)| {
        if old_text != text {
            old_tree.edit(&edit_between(&cute_syntax::for_the_parser(&old_text), &parsed_text));
        }
        old_tree
    });
    let bytes = parsed_text.as_bytes();
    let mut read = |offset: usize, _: Point| bytes.get(offset..).unwrap_or_default();
    let mut progress = |_: &cute_syntax::tree_sitter::ParseState| {
        if stop() {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    };
    let options = cute_syntax::tree_sitter::ParseOptions::new().progress_callback(&mut progress);
    parser.parse_with_options(&mut read, old_tree.as_ref(), Some(options))
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
                // A node that starts in the header (the chunk does not
                // lower on its own then: `Piece::ok` is false) counts from 0.
                n.start_byte().saturating_sub(base) as u32,
                n.end_byte().saturating_sub(base) as u32,
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

/// Top-level `nodes` as chunks of whole lines. The nodes are of a tree
/// parsed from `text`, whose first `skip` bytes (`skip_rows` lines) are not
/// the file's; the rest is found at `base` (line `base_line`) of the file.
fn chunk_nodes<'t>(
    nodes: impl Iterator<Item = Node<'t>>,
    text: &str,
    (skip, skip_rows): (usize, usize),
    (base, base_line): (usize, u32),
) -> Vec<(Span, Vec<Node<'t>>)> {
    let bytes = text.as_bytes();
    let line_end = |node: Node<'_>| -> usize {
        let (end, at) = (node.end_byte(), node.end_position());
        if at.column == 0 && end > node.start_byte() {
            return end;
        }
        bytes[end..].iter().position(|&b| b == b'\n').map_or(text.len(), |i| end + i + 1)
    };
    let mut chunks: Vec<(Span, Vec<Node<'_>>)> = Vec::new();
    for node in nodes {
        let start = (base + node.start_byte() - node.start_position().column - skip) as u32;
        let end = (base + line_end(node) - skip) as u32;
        let code = node.kind() != "comment";
        match chunks.last_mut() {
            // Shares a line with the chunk before.
            Some((span, nodes)) if start < span.end => {
                span.end = span.end.max(end);
                span.code |= code;
                nodes.push(node);
            }
            _ => {
                let line = base_line + (node.start_position().row - skip_rows) as u32;
                chunks.push((Span { start, end, line, code, errors: None }, vec![node]));
            }
        }
    }
    chunks
}

/// The layout of `text` from the layout of `old` after one edit, when the
/// edit stays inside whole top-level statements that still parse without
/// error on their own, each starting in column 0: only those lines are
/// parsed again. Such statements parse alike on their own and in the file
/// (each starts in column 0 after a complete one, and what follows them
/// starts in column 0 too), so this is the layout the whole file's tree
/// would give.
fn patch(cache: &TreeCache, file: salsa::Id, old_text: &str, old: &Layout, text: &str) -> Option<Layout> {
    if !old.parsed || old.first_error.is_some() || old.chunks.iter().any(|c| c.errors.is_some()) {
        return None;
    }
    let (start, old_end, new_end) = cute_syntax::edited_range(old_text, text);
    let delta = new_end as i64 - old_end as i64;
    let newlines = |t: &[u8]| t.iter().filter(|&&b| b == b'\n').count() as i64;
    let lines_delta = newlines(&text.as_bytes()[start..new_end]) - newlines(&old_text.as_bytes()[start..old_end]);
    // The edited lines, widened to the chunks they touch.
    let old_bytes = old_text.as_bytes();
    let mut from = old_bytes[..start].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut to = old_bytes[old_end..].iter().position(|&b| b == b'\n').map_or(old_text.len(), |i| old_end + i + 1);
    for c in &old.chunks {
        if (c.start as usize) < to.max(from + 1) && c.end as usize > from {
            from = from.min(c.start as usize);
            to = to.max(c.end as usize);
        }
    }
    // What follows must start in column 0 too: a statement indented at the
    // top level (the parser accepts one after a dedent) would belong to the
    // last statement of the region once that one parses as a block.
    if old.chunks.iter().any(|c| c.start as usize >= to && matches!(old_bytes.get(c.start as usize), Some(b' ' | b'\t'))) {
        return None;
    }
    let new_to = (to as i64 + delta) as usize;
    // Parsed after the file's imports, as the chunks will be lowered (from
    // the same tree when the region is one chunk).
    let header = cache.header(file);
    let region = format!("{header}{}", text.get(from..new_to)?);
    let tree = cache.parse_recent(&format!("{header}{}", old_text.get(from..to)?), &region)?;
    let root = tree.root_node();
    let mut cursor = root.walk();
    let nodes: Vec<Node<'_>> = root.children(&mut cursor).filter(|n| n.end_byte() > header.len()).collect();
    // An indented line would belong to the statement above it in the file
    // (the parser does not object to indentation at the start of a text).
    if root.has_error() || nodes.iter().any(|n| n.start_position().column != 0 || n.start_byte() < header.len()) {
        return None;
    }
    let header_rows = header.matches('\n').count();
    // The line `from` starts: counted from the nearest chunk above it.
    let (known_at, known_line) =
        old.chunks.iter().take_while(|c| c.start as usize <= from).last().map_or((0, 0), |c| (c.start as usize, c.line));
    let base_line = known_line + newlines(&text.as_bytes()[known_at..from]) as u32;
    let mut chunks: Vec<Span> = old.chunks.iter().filter(|c| c.end as usize <= from).cloned().collect();
    chunks.extend(
        chunk_nodes(nodes.into_iter(), &region, (header.len(), header_rows), (from, base_line)).into_iter().map(|(span, _)| span),
    );
    chunks.extend(old.chunks.iter().filter(|c| c.start as usize >= to).map(|c| Span {
        start: (c.start as i64 + delta) as u32,
        end: (c.end as i64 + delta) as u32,
        line: (c.line as i64 + lines_delta) as u32,
        ..c.clone()
    }));
    Some(Layout { parsed: true, chunks, first_error: None, left_out: Vec::new(), broken_kernels: Vec::new() })
}

/// The recovery's parses for an editor: the recovered text re-parsed from
/// the last one, or from the file's last tree when the file had no error,
/// and the sections' own parses remembered.
struct Reparse<'a> {
    cache: &'a TreeCache,
    /// The recovered text of the file's last layout with a syntax error.
    previous: Option<String>,
    /// The file's last whole tree and its text.
    base: Option<(String, Tree)>,
    /// Whether to give up: an edit is pending.
    stop: &'a dyn Fn() -> bool,
}

impl cute_syntax::recover::Parses for Reparse<'_> {
    fn parse(&mut self, recovered: &str) -> Option<Tree> {
        let from = match &self.previous {
            Some(old) => self.cache.recent_tree(old).map(|tree| (old.clone(), tree)),
            None => None,
        };
        let tree = parse_whole_until(from.or_else(|| self.base.clone()), recovered, self.stop)?;
        self.cache.remember(recovered, &tree);
        Some(tree)
    }

    fn parses_alone(&mut self, section: &str) -> bool {
        self.cache.parses_alone(section)
    }
}

/// Whether `new` is `old` with one edit inside one line, past its
/// indentation: no line is added, removed or re-indented.
fn edits_inside_a_line(old: &str, new: &str) -> bool {
    let (start, old_end, new_end) = cute_syntax::edited_range(old, new);
    let line_start = old.as_bytes()[..start].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let past_indentation = old.as_bytes()[line_start..start].iter().any(|b| !b.is_ascii_whitespace());
    past_indentation && !old.as_bytes()[start..old_end].contains(&b'\n') && !new.as_bytes()[start..new_end].contains(&b'\n')
}

/// The layout of `text`, just edited inside a line, when exactly one of its
/// sections does not parse on its own, as while a line is typed inside a
/// kernel: that section left out, and the rest laid out as an edit of the
/// last layout ([`patch`]), without parsing the whole text (tree-sitter's
/// recovery from a bracket left open reads through the rest of the file,
/// tens of milliseconds per keystroke). Returns the layout and the
/// recovered text.
///
/// It is the layout the whole text gives through [`cute_syntax::recover`],
/// which leaves out the sections that fail alone when the whole text has an
/// error. That the text has one is inferred: the failing section holds an
/// error no other section closes (a bracket or string closed in another
/// section leaves that one failing too), and an edit inside a line changes
/// no indentation, which is where the parser accepts in a file what it
/// rejects in a section. The two neighbours are parsed with it to rule out
/// that they complete it (an indented decorator closing a section, the
/// definition it decorates opening the next). The sections' own parses are
/// remembered, so a keystroke parses the section it is in and its
/// neighbours. `None` when no section or more than one fails, or when the
/// edit cannot be patched: the whole text is parsed then.
fn one_broken_section(
    cache: &TreeCache,
    file: salsa::Id,
    previous: &Parsed,
    text: &str,
    parses: &mut Reparse<'_>,
) -> Option<(Layout, String)> {
    use cute_syntax::recover::Parses;
    let sections = cute_syntax::recover::sections(text);
    let mut failing = sections.iter().enumerate().filter(|(_, s)| cute_syntax::recover::is_broken(text, **s, parses));
    let (i, &broken) = failing.next()?;
    if failing.next().is_some() {
        return None;
    }
    let with_previous = i.checked_sub(1).map(|p| &text[sections[p].start as usize..broken.end as usize]);
    let with_next = sections.get(i + 1).map(|n| &text[broken.start as usize..n.end as usize]);
    if with_previous.into_iter().chain(with_next).any(|joined| parses.parses_alone(joined)) {
        return None;
    }
    let recovery = cute_syntax::recover::left_out(text, vec![broken])?;
    // The last layout laid out its recovered text (if it had one) without
    // error: the sections it left out are comments there.
    let (old_text, old) = previous.layout.as_ref()?;
    let old_chunks_text = previous.recovered.as_deref().unwrap_or(old_text);
    let clean = Layout { first_error: None, left_out: Vec::new(), broken_kernels: Vec::new(), ..old.clone() };
    let patched = patch(cache, file, old_chunks_text, &clean, &recovery.text)?;
    let layout = Layout {
        first_error: recovery.errors.first().copied(),
        left_out: recovery.broken,
        broken_kernels: recovery.kernels,
        ..patched
    };
    Some((layout, recovery.text))
}

/// The top-level chunks of `text`; `None` when `stop` said to give up (a
/// newer text is coming), the cache then left as it was.
pub fn layout(cache: &TreeCache, file: salsa::Id, text: &str, stop: &dyn Fn() -> bool) -> Option<Layout> {
    let previous = cache.files.lock().unwrap_or_else(PoisonError::into_inner).remove(&file).unwrap_or_default();
    if let Some((old_text, old)) = &previous.layout {
        if let Some(layout) = if old_text == text { Some(old.clone()) } else { patch(cache, file, old_text, old, text) } {
            let parsed = Parsed { layout: Some((text.to_string(), layout.clone())), tree: previous.tree, recovered: previous.recovered };
            cache.files.lock().unwrap_or_else(PoisonError::into_inner).insert(file, parsed);
            return Some(layout);
        }
    }
    let base = previous.tree.clone();
    let given_up = |previous: Parsed| {
        cache.files.lock().unwrap_or_else(PoisonError::into_inner).insert(file, previous);
        None
    };
    // A syntax error is kept to the sections that hold it, as lowering the
    // whole file does; the rest is chunked from the recovered text (the
    // same bytes outside those sections), parsed from the last tree.
    let mut parses = Reparse { cache, previous: previous.recovered.clone(), base: base.clone(), stop };
    // Typing inside a line of one section: that section alone is broken,
    // and the rest is laid out as an edit of the last layout. The last whole
    // tree stays the base of the next whole parse: the text typed into is
    // closer to it than the recovered text, whose section is comments.
    if previous.layout.as_ref().is_some_and(|(old_text, _)| edits_inside_a_line(old_text, text)) {
        if let Some((layout, recovered)) = one_broken_section(cache, file, &previous, text, &mut parses) {
            if stop() {
                return given_up(previous);
            }
            let parsed = Parsed { layout: Some((text.to_string(), layout.clone())), tree: previous.tree, recovered: Some(recovered) };
            cache.files.lock().unwrap_or_else(PoisonError::into_inner).insert(file, parsed);
            return Some(layout);
        }
    }
    if stop() {
        return given_up(previous);
    }
    let Some(tree) = parse_whole_until(base, text, stop) else {
        return if stop() { given_up(previous) } else { Some(Layout::default()) };
    };
    let parsed = SyntaxTree { text: text.to_string(), tree };
    let recovery = cute_syntax::recover(&parsed, &mut parses);
    if stop() {
        return given_up(previous);
    }
    let SyntaxTree { tree: whole_tree, .. } = parsed;
    let (tree, recovered, left_out, broken_kernels, errors) = match recovery {
        Some((r, recovered_tree)) => (recovered_tree, Some(r.text), r.broken, r.kernels, Some(r.errors)),
        None => (whole_tree.clone(), None, Vec::new(), Vec::new(), None),
    };
    let text_of_chunks = recovered.as_deref().unwrap_or(text);
    let root = tree.root_node();
    let chunks = {
        let mut cursor = root.walk();
        let nodes: Vec<Node<'_>> = root.children(&mut cursor).collect();
        chunk_nodes(nodes.into_iter(), text_of_chunks, (0, 0), (0, 0))
    };
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
                if merged == MAX_MERGED
                    || i == chunks.len()
                    || own_signature(&text_of_chunks[span.start as usize..span.end as usize]).as_ref() == Some(&sig)
                {
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
    let first_error = match errors {
        Some(errors) => errors.first().copied(),
        None if root.has_error() => SyntaxTree { text: text.to_string(), tree: tree.clone() }.error_ranges().first().copied(),
        None => None,
    };
    let layout = Layout { parsed: true, chunks: out, first_error, left_out, broken_kernels };
    let parsed = Parsed { layout: Some((text.to_string(), layout.clone())), tree: Some((text.to_string(), whole_tree)), recovered };
    cache.files.lock().unwrap_or_else(PoisonError::into_inner).insert(file, parsed);
    Some(layout)
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
    /// For device code: the names it reads, which take in the functions it
    /// hands on (`partial(self.load, ...)`, as `Module::kernels` counts them).
    pub names_read: Vec<String>,
    /// Names it binds to a `functools.partial` of a function, with that
    /// function's name (see `cute_ir::slice::helpers_calling`).
    pub partials: Vec<(String, String)>,
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
    /// The closures of its functions (`Module::closures`), by local name.
    pub closures: Vec<FnFacts>,
    pub classes: Vec<String>,
    /// Every identifier the chunk's text spells, sorted, once each: a
    /// superset of the names its code can look a function or class up by.
    pub identifiers: Vec<String>,
}

/// The identifiers spelled in `text` (comments and strings included, which
/// only adds names), sorted and without repeats.
fn identifiers(text: &str) -> Vec<String> {
    // Bytes past ASCII belong to identifiers too: Python allows them there,
    // and counting one too many only adds a name.
    let word = |b: u8| b == b'_' || b.is_ascii_alphanumeric() || b >= 0x80;
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if word(bytes[i]) {
            let start = i;
            while i < bytes.len() && word(bytes[i]) {
                i += 1;
            }
            if !bytes[start].is_ascii_digit() {
                found.push(&text[start..i]);
            }
        } else {
            i += 1;
        }
    }
    found.sort_unstable();
    found.dedup();
    found.into_iter().map(str::to_string).collect()
}

fn fn_facts(module: &Module) -> Vec<FnFacts> {
    let kernels: Vec<&cute_ir::ast::FunctionDef> = module.kernels().collect();
    module.functions.iter().map(|f| facts_of(f, &f.name, kernels.iter().any(|k| std::ptr::eq(*k, f)))).collect()
}

/// [`fn_facts`] of the closures of `module`, named by their local names.
fn closure_facts(module: &Module) -> Vec<FnFacts> {
    module.closures.iter().map(|c| facts_of(&c.function, c.local_name(), false)).collect()
}

/// What the file-wide facts need of `f`, called `name` there.
fn facts_of(f: &cute_ir::ast::FunctionDef, name: &str, kernel: bool) -> FnFacts {
    use cute_ir::api::{Api, Effect};
    let mut facts = FnFacts {
        class: f.class_name.clone(),
        name: name.to_string(),
        decorator: f.decorator,
        kernel,
        syncs: false,
        callees: Vec::new(),
        compiles: false,
        bare_calls: Vec::new(),
        names_read: if f.decorator.is_some() { f.names_read().into_iter().collect() } else { Vec::new() },
        partials: cute_ir::slice::partial_bindings_of(f).into_iter().map(|(n, of)| (n.to_string(), of.to_string())).collect(),
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
}

/// Lowers `chunk` with the file's imports in `header`.
pub fn lower(cache: &TreeCache, chunk: &str, header: &str, header_imports: &ImportMap) -> Piece {
    let full = format!("{header}{chunk}");
    let parsed = match cache.recent_tree(&full) {
        Some(tree) => Ok(SyntaxTree { text: full, tree }),
        None => cute_syntax::parse(&full).inspect(|parsed| cache.remember(&parsed.text, &parsed.tree)),
    };
    let Ok(tree) = parsed else {
        return Piece {
            module: Module::default(),
            ids: 0,
            ok: false,
            errors: None,
            functions: Vec::new(),
            closures: Vec::new(),
            classes: Vec::new(),
            identifiers: Vec::new(),
        };
    };
    let base = header.len();
    let root = tree.root();
    let mut cursor = root.walk();
    let nodes: Vec<Node<'_>> = root.children(&mut cursor).filter(|n| n.end_byte() > base).collect();
    // A node that starts in the header (an error swallowing the chunk's
    // first line into it) makes the piece unusable; see `ok` below.
    let starts_in_chunk = nodes.first().is_none_or(|n| n.start_byte() >= base);
    let errors = (starts_in_chunk && nodes.iter().any(|n| n.has_error())).then(|| signature(nodes.iter().copied(), base));
    let mut module = if chunk.contains("import") {
        cute_ir::lower_module(&tree)
    } else {
        cute_ir::lower_module_importing(&tree, header_imports.clone())
    };
    // The header is import statements only: nothing of it is lowered.
    let ok = module.imports == *header_imports
        && starts_in_chunk
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
    let closures = closure_facts(&module);
    let classes = module.classes.iter().map(|c| c.name.clone()).collect();
    Piece { module, ids, ok, errors, functions, closures, classes, identifiers: identifiers(chunk) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLEAN: &str = "import cutlass.cute as cute\n\n@cute.kernel\ndef k():\n    x = 1\n    cute.arch.sync_threads()\n\n@cute.kernel\ndef j():\n    y = 2\n    cute.arch.sync_threads()\n";

    fn file() -> salsa::Id {
        salsa::Id::from_bits(1)
    }

    /// A kernel being typed with a bracket left open: the file's parse goes
    /// through tree-sitter's error recovery, the case a pending edit stops.
    fn typing() -> String {
        CLEAN.replace("    x = 1\n", "    x = (1 +\n")
    }

    #[test]
    fn a_parse_told_to_stop_gives_up_and_leaves_the_cache_as_it_was() {
        let cache = TreeCache::default();
        let clean = layout(&cache, file(), CLEAN, &|| false).expect("not stopped");
        assert!(layout(&cache, file(), &typing(), &|| true).is_none(), "a parse told to stop gives up");
        // The cache still holds the clean text's layout and tree, and the
        // broken text comes out as it does unstopped.
        {
            let files = cache.files.lock().unwrap();
            let kept = files.get(&file()).expect("the file's entry is back");
            assert_eq!(kept.layout.as_ref().map(|(text, layout)| (text.as_str(), layout)), Some((CLEAN, &clean)));
            assert!(kept.tree.is_some());
        }
        let fresh = layout(&TreeCache::default(), file(), &typing(), &|| false).expect("not stopped");
        assert!(fresh.first_error.is_some() && !fresh.left_out.is_empty(), "{fresh:?}");
        assert_eq!(layout(&cache, file(), &typing(), &|| false), Some(fresh));
    }

    #[test]
    fn stopping_is_asked_while_the_file_is_parsed() {
        let cache = TreeCache::default();
        let asked = std::cell::Cell::new(0);
        let never = || {
            asked.set(asked.get() + 1);
            false
        };
        assert!(layout(&cache, file(), &typing(), &never).is_some());
        assert!(asked.get() > 0, "the parse never asked whether to stop");
    }

    #[test]
    fn a_bracket_typed_inside_a_line_is_laid_out_without_parsing_the_whole_file() {
        let cache = TreeCache::default();
        layout(&cache, file(), CLEAN, &|| false).expect("not stopped");
        let typed = layout(&cache, file(), &typing(), &|| false).expect("not stopped");
        // What the whole text gives, parsed from scratch.
        assert_eq!(Some(typed.clone()), layout(&TreeCache::default(), file(), &typing(), &|| false));
        // Only the kernel typed into is left out, and the error is where the
        // bracket was typed, not where tree-sitter's recovery ended.
        let text = typing();
        let (k, j) = (text.find("@cute.kernel").unwrap(), text.rfind("@cute.kernel").unwrap());
        assert_eq!(typed.left_out, [cute_syntax::TextRange::new(k, j)]);
        let error = typed.first_error.expect("a syntax error");
        assert!(k <= error.start as usize && error.end as usize <= j, "{error:?}");
        // The whole text was not parsed: the file's last whole tree is still
        // the clean text's.
        let files = cache.files.lock().unwrap();
        let kept = files.get(&file()).expect("the file's entry");
        assert_eq!(kept.tree.as_ref().map(|(t, _)| t.as_str()), Some(CLEAN));
    }
}
