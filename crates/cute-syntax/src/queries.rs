//! The tree-sitter queries of `queries/*.scm`, compiled once per process.

use std::sync::OnceLock;
use tree_sitter::Query;

use crate::parse::python_language;

pub struct Queries {
    pub kernels: Query,
    pub imports: Query,
    pub calls: Query,
}

impl Queries {
    pub fn get() -> &'static Queries {
        static QUERIES: OnceLock<Queries> = OnceLock::new();
        QUERIES.get_or_init(|| {
            let language = python_language();
            let compile = |name: &str, source: &str| {
                Query::new(&language, source)
                    .unwrap_or_else(|e| panic!("queries/{name}.scm does not compile: {e}"))
            };
            Queries {
                kernels: compile("kernels", include_str!("../../../queries/kernels.scm")),
                imports: compile("imports", include_str!("../../../queries/imports.scm")),
                calls: compile("calls", include_str!("../../../queries/calls.scm")),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn all_queries_compile() {
        let q = super::Queries::get();
        assert!(q.kernels.capture_index_for_name("decorator").is_some());
        assert!(q.imports.capture_index_for_name("alias").is_some());
        assert!(q.calls.capture_index_for_name("callee").is_some());
    }
}
