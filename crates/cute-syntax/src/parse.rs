use tree_sitter::{Node, Parser, Tree};

/// A parsed Python file: the tree together with the text it was parsed from.
pub struct SyntaxTree {
    pub text: String,
    pub tree: Tree,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

pub(crate) fn python_language() -> tree_sitter::Language {
    tree_sitter_python::LANGUAGE.into()
}

/// Parse Python source. tree-sitter recovers from syntax errors, so this only
/// fails when the grammar cannot be loaded (an ABI mismatch between
/// tree-sitter and tree-sitter-python shows up here, not at compile time) or
/// the parser gives up.
pub fn parse(text: &str) -> Result<SyntaxTree, ParseError> {
    let tree = parse_unchanged(&crate::for_the_parser(text))?.tree;
    Ok(SyntaxTree { text: text.to_string(), tree })
}

/// [`parse`] of the text as it is, long runs of comments included: the
/// tree-sitter parse the others are compared with.
pub(crate) fn parse_unchanged(text: &str) -> Result<SyntaxTree, ParseError> {
    let mut parser = Parser::new();
    parser
        .set_language(&python_language())
        .map_err(|e| ParseError(format!("tree-sitter-python cannot be loaded: {e}")))?;
    let tree = parser
        .parse(text, None)
        .ok_or_else(|| ParseError("the parser gave up on this file".to_string()))?;
    Ok(SyntaxTree { text: text.to_string(), tree })
}

impl SyntaxTree {
    pub fn root(&self) -> Node<'_> {
        self.tree.root_node()
    }

    pub fn text_of(&self, node: Node<'_>) -> &str {
        node_text(&self.text, node)
    }

    /// Byte ranges of syntax errors, for a diagnostic that says the file
    /// could only be analysed in part.
    pub fn error_ranges(&self) -> Vec<crate::TextRange> {
        error_ranges(&self.tree)
    }
}

/// Byte ranges of the outermost error and missing nodes of a tree, in order.
pub(crate) fn error_ranges(tree: &Tree) -> Vec<crate::TextRange> {
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            out.push(crate::TextRange::of(&node));
            continue;
        }
        if node.has_error() {
            stack.extend(node.children(&mut cursor));
        }
    }
    out.sort();
    out
}

pub fn node_text<'a>(text: &'a str, node: Node<'_>) -> &'a str {
    text.get(node.start_byte()..node.end_byte()).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar_loads_and_parses() {
        let tree = parse("def f():\n    return 1\n").unwrap();
        assert_eq!(tree.root().kind(), "module");
        assert!(!tree.root().has_error());
    }

    #[test]
    fn syntax_errors_are_located() {
        let tree = parse("def f(:\n    pass\n").unwrap();
        assert!(!tree.error_ranges().is_empty());
    }
}
