mod common;
use common::*;
#[test]
fn scratch() {
    let mut n = 0;
    for seed in 0..400 {
        let g = random_protocol(seed);
        if g.bug.is_none() && naive_deadlocks(&g.model, 400_000) == Some(true) {
            n += 1;
            if n <= 3 { eprintln!("seed {seed} {:?}\n{}", g.init, model_to_rust(&g.model)); }
        }
    }
    eprintln!("unbugged deadlocks: {n}");
}
