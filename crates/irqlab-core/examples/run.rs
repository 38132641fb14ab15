//! Runs one scenario from the command line without Python, for profiling the core:
//!
//! ```sh
//! cargo run --release -p irqlab-core --example run -- scheme=ideal traffic.rate_pps=9e5 \
//!     nic.ring_descriptors=64 platform.proto_ns=1000 run.duration_ms=11111
//! ```
//!
//! Arguments are `dotted.key=value` (a list of integers as `[0,1]`); prints the report as JSON
//! and the speed on stderr. The run is interruptible, as the Python binding's, asking a `stop`
//! function the compiler cannot see through (it never stops here).

use std::sync::atomic::{AtomicBool, Ordering};

use irqlab_core::{Scenario, Value, run_interruptible};
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let pairs: Vec<(String, Value)> = args
        .iter()
        .map(|a| {
            let (k, v) = a.split_once('=').expect("arguments are dotted.key=value");
            let list = v.strip_prefix('[').and_then(|l| l.strip_suffix(']'));
            let v = if let Some(l) = list {
                let ints = l.split(',').filter(|x| !x.is_empty());
                Value::List(
                    ints.map(|x| Value::Int(x.parse().expect("an integer")))
                        .collect(),
                )
            } else if let Ok(b) = v.parse::<bool>() {
                Value::Bool(b)
            } else if let Ok(i) = v.parse::<i128>() {
                Value::Int(i)
            } else if let Ok(x) = v.parse::<f64>() {
                Value::Float(x)
            } else {
                Value::Str(v.to_string())
            };
            (k.to_string(), v)
        })
        .collect();
    let s = match Scenario::from_pairs(pairs) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let t = std::time::Instant::now();
    let stop = std::hint::black_box(AtomicBool::new(false));
    let Ok(r) = run_interruptible(&s, &mut || stop.load(Ordering::Relaxed)) else {
        unreachable!("nothing sets the stop flag");
    };
    let dt = t.elapsed().as_secs_f64();
    println!("{}", serde_json::to_string_pretty(&r).unwrap());
    eprintln!(
        "wall {dt:.3}s, {:.2} M offered pkts/s",
        r.packets.offered as f64 / dt / 1e6
    );
}
