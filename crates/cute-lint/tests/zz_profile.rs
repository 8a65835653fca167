use cute_lint::{lint_file, Database, SourceFile};
use salsa::Setter;
use std::time::Instant;

#[test]
#[ignore]
fn zz_profile() {
    let text = std::fs::read_to_string("/tmp/prof/bench.py").unwrap();
    let mut db = Database::default();
    let file = SourceFile::new(&db, "bench.py".into(), text.clone());
    let t = Instant::now();
    let d = lint_file(&db, file).len();
    eprintln!("open {:?} {d}", t.elapsed());
    let kind = std::env::var("EDIT").unwrap_or("comment".into());
    // find kernel lines
    let mut text = text;
    let n: usize = std::env::var("N").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let mut times = vec![];
    for k in 0..n {
        let lines: Vec<&str> = text.lines().collect();
        let targets: Vec<usize> = lines.iter().enumerate().filter(|(_, l)| l.contains("cute.arch.mbarrier_wait") || l.contains("consumer_wait")).map(|(i, _)| i).collect();
        let line = targets[(k * 7) % targets.len()];
        let mut ls: Vec<String> = text.lines().map(String::from).collect();
        let indent: String = ls[line].chars().take_while(|c| *c == ' ').collect();
        match kind.as_str() {
            "comment" => ls.insert(line, format!("{indent}# note {k}")),
            "data" => ls.insert(line, format!("{indent}x_{k} = 1")),
            _ => {}
        }
        let new = ls.join("\n") + "\n";
        text = new.clone();
        file.set_text(&mut db).to(new);
        let t = Instant::now();
        let _ = lint_file(&db, file).len();
        times.push(t.elapsed());
    }
    times.sort();
    eprintln!("{kind}: p50 {:?} p95 {:?} max {:?} counts {:?}", times[n / 2], times[n * 95 / 100], times[n - 1], cute_lint::check_counts());
}

#[test]
#[ignore]
fn zz_inst() {
    let path = std::env::var("FILE").unwrap_or("tests/fixtures/untoggled_phase/jacobi_cluster_clean.py".into());
    let text = std::fs::read_to_string(&path).unwrap();
    let module = cute_ir::lower_text(&text).unwrap();
    let kernel = module.kernels().next().unwrap();
    let launches = cute_ir::launch::Launches::of_module(&module);
    let launch = launches.of_kernel(&module, kernel);
    let kept = cute_ir::slice_kernel(&module, kernel, &text).kept_ids();
    let n: usize = std::env::var("N").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    let mut times = vec![];
    let mut size = 0;
    for _ in 0..n {
        let t = Instant::now();
        let inst = cute_check::instantiate(&module, kernel, &kept, &launch, &cute_check::Scenario::new(), &Default::default());
        times.push(t.elapsed());
        size = inst.model.memory.iter().map(|m| m.ops.len() + m.op_points.len()).sum::<usize>();
    }
    times.sort();
    eprintln!("instantiate: p50 {:?} min {:?} (memory entries {size})", times[n / 2], times[0]);
}
