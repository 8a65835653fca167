//! Threads run on several cores build the model they build in sequence, to
//! the index, on every kernel of the fixtures and the corpus.

use std::path::{Path, PathBuf};

use cute_check::{instantiate, InstantiateOptions, Scenario};
use cute_ir::launch::Launches;

fn python_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            python_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "py") {
            out.push(path);
        }
    }
}

#[test]
fn several_cores_build_the_sequential_model() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    python_files(&root.join("tests/fixtures"), &mut files);
    python_files(&root.join("tests/corpus"), &mut files);
    files.sort();
    assert!(files.len() >= 20, "fixtures not found");
    let (mut kernels, mut spread) = (0, 0);
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let module = cute_ir::lower_text(&text).unwrap();
        let launches = Launches::of_module(&module);
        for kernel in module.kernels() {
            let launch = launches.of_kernel(&module, kernel);
            let kept = cute_ir::slice_kernel(&module, kernel, &text).kept_ids();
            let run = |workers| {
                let options = InstantiateOptions { workers, ..InstantiateOptions::default() };
                instantiate(&module, kernel, &kept, &launch, &Scenario::new(), &options)
            };
            let (one, three) = (run(1), run(3));
            assert_eq!(one.model, three.model, "{}: {}", path.display(), kernel.name);
            assert_eq!(one.open_conditions, three.open_conditions, "{}: {}", path.display(), kernel.name);
            kernels += 1;
            spread += usize::from(one.model.ctas * one.model.threads_per_cta >= 64);
        }
    }
    // Most fixture kernels are large enough to be spread.
    assert!(spread * 2 > kernels, "{spread} of {kernels} kernels ran on several cores");
}
