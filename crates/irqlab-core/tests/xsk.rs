//! AF_XDP apps (`app.N.io = "xsk"`).

use crate::common::{Pairs, b, conserved, f, i, s};

fn base() -> Pairs {
    Pairs::default()
        .with("host.cores", i(2))
        .with("traffic.kind", s("cbr"))
        .with("platform.proto_dist", s("deterministic"))
        .with("platform.irq_dist", s("deterministic"))
        .rate_pps(100_000.0)
        .duration_ms(5.0)
        .with("run.warmup_ms", f(1.0))
        .with("app.0.core", i(1))
        .with("app.0.flows", crate::common::list(&[0]))
        .with("app.0.io", s("xsk"))
        .with("app.0.cost_dist", s("deterministic"))
}

#[test]
fn smoke() {
    for extra in [
        Pairs::default(),
        Pairs::default().with("app.0.need_wakeup", b(false)),
        Pairs::default().with("socket.busy_read_us", f(50.0)),
        Pairs::default()
            .with("socket.busy_read_us", f(50.0))
            .with("host.cores", i(3))
            .with("app.0.xsk_poll_core", i(2)),
    ] {
        let r = base().and(&extra).run();
        conserved(&r);
        eprintln!(
            "{:?}\n{:?}\n{:?} {:?}\n",
            r.xsk, r.busy_poll, r.packets, r.cpu
        );
    }
}
