//! The salsa database: one input per open file, tracked queries over it.

use std::sync::Arc;

use cute_check::explore::{explore, Budget, ExploreOptions, Outcome};
use cute_check::Model;
use cute_syntax::LineIndex;

use crate::{analysis, Diagnostic};

/// A Python file as the editor or the file system has it.
#[salsa::input]
pub struct SourceFile {
    #[returns(ref)]
    pub path: String,
    #[returns(ref)]
    pub text: String,
}

#[salsa::db]
#[derive(Default, Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
}

#[salsa::db]
impl salsa::Database for Database {}

/// Line starts of the file, for converting byte ranges to positions.
#[salsa::tracked(returns(ref))]
pub fn line_index(db: &dyn salsa::Database, file: SourceFile) -> Arc<LineIndex> {
    Arc::new(LineIndex::new(file.text(db)))
}

/// Every diagnostic of the file, in source order.
///
/// The stages up to the model are cheap and re-run on every edit; the
/// exploration of each model is a query of its own, keyed by the model with
/// source positions taken out, so an edit that leaves a kernel's
/// synchronization alone (datapath, comments, lines above it) re-uses the
/// previous verdict instead of exploring again.
#[salsa::tracked(returns(ref))]
pub fn lint_file(db: &dyn salsa::Database, file: SourceFile) -> Arc<Vec<Diagnostic>> {
    lint(db, file, &analysis::AnalysisOptions::default())
}

/// [`lint_file`] with other options (the budgets of a project's or an
/// editor's configuration, see [`crate::config`]), memoized per options.
pub fn lint_file_with(
    db: &dyn salsa::Database,
    file: SourceFile,
    options: analysis::AnalysisOptions,
) -> Arc<Vec<Diagnostic>> {
    lint_request(db, LintRequest::new(db, file, options)).clone()
}

/// A file and the options to lint it with, as one query key.
#[salsa::interned]
struct LintRequest<'db> {
    file: SourceFile,
    #[returns(ref)]
    options: analysis::AnalysisOptions,
}

#[salsa::tracked(returns(ref))]
fn lint_request<'db>(db: &'db dyn salsa::Database, request: LintRequest<'db>) -> Arc<Vec<Diagnostic>> {
    lint(db, *request.file(db), request.options(db))
}

fn lint(db: &dyn salsa::Database, file: SourceFile, options: &analysis::AnalysisOptions) -> Arc<Vec<Diagnostic>> {
    let mut explorer = |model: &Model, explore_options: &ExploreOptions| {
        let (key, sites) = model.position_independent();
        let key = CheckedModel::new(db, key, explore_options.budget.max_states, explore_options.budget.max_time);
        let mut outcome = explore_model(db, key).as_ref().clone();
        // Hazards name sites by rank in the position-independent model.
        for (hazard, _) in &mut outcome.hazards {
            let rank = hazard.site().start as usize;
            if let Some(site) = sites.get(rank) {
                *hazard = hazard.at(*site);
            }
        }
        outcome
    };
    Arc::new(analysis::analyze_text_with(file.text(db), options, &mut explorer))
}

/// A model to explore, without source positions, with its budget.
#[salsa::interned]
pub struct CheckedModel<'db> {
    #[returns(ref)]
    pub model: Model,
    pub max_states: usize,
    pub max_time: std::time::Duration,
}

/// The exploration of one model, memoized across edits.
#[salsa::tracked(returns(ref))]
pub fn explore_model<'db>(db: &'db dyn salsa::Database, key: CheckedModel<'db>) -> Arc<Outcome> {
    let options = ExploreOptions {
        budget: Budget { max_states: *key.max_states(db), max_time: *key.max_time(db) },
        full_expansion: false,
    };
    Arc::new(explore(key.model(db), &options))
}
