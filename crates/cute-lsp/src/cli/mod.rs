//! Command-line front end.

pub mod check;
pub mod promela;
pub mod slice;

use std::process::ExitCode;

use cute_lint::rules;

pub fn explain(rule: &str) -> ExitCode {
    match rules::find(rule) {
        Some(r) => {
            print!("{}", r.doc);
            ExitCode::SUCCESS
        }
        None => {
            eprintln!("cute-lsp: no rule named `{rule}`; `cute-lsp rules` lists them");
            ExitCode::from(2)
        }
    }
}

pub fn rules() -> ExitCode {
    for r in rules::ALL {
        println!("{}  {:<22} {:<8} {}", r.code, r.name, r.default_severity.as_str(), r.summary);
    }
    ExitCode::SUCCESS
}
