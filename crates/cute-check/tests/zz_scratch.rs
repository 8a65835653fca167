mod common;
use common::*;
use cute_check::promela::*;
#[test]
fn scratch() {
    std::fs::create_dir_all("/tmp/pml").unwrap();
    for (t, i, b) in [(2,3,false),(2,3,true),(3,3,false),(3,3,true),(4,3,false),(4,3,true)] {
        let m = seed_exchange(t, i, b);
        std::fs::write(format!("/tmp/pml/seed_{t}x{i}_{}.pml", if b {"bug"} else {"ok"}), to_promela(&m, &PromelaOptions::default())).unwrap();
    }
    for seed in 0..5 {
        let g = random_protocol(seed);
        std::fs::write(format!("/tmp/pml/rand_{seed}.pml"), to_promela(&g.model, &PromelaOptions::default())).unwrap();
        eprintln!("{seed}: {:?} {:?}", naive_deadlocks(&g.model, 1000000), g.model.thread_count());
    }
}
