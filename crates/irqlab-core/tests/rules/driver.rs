//! The driver's poll function on a host: the Rx and Tx counters its moderation policy reads.

use std::sync::{Arc, Mutex};

use irqlab_core::moderation::external::{External, Factory};
use irqlab_core::moderation::{Sample, Write};

use irqlab_core::time::SimTime;

use crate::common::{conserved, exact, f, i, s};

/// A `python` moderation policy that writes nothing and keeps every sample it is given.
struct Recorder(Arc<Mutex<Vec<Sample>>>);

impl External for Recorder {
    fn initial(&mut self) -> Option<Write> {
        None
    }
    fn on_complete(&mut self, s: &Sample) -> Option<Write> {
        self.0.lock().unwrap().push(*s);
        None
    }
}

/// The samples the moderation policy of a forwarding router saw: `napi`, one 200-byte
/// packet per 100 µs (each its own IRQ and poll), forwarded on the vector's Tx ring.
fn forwarded_samples() -> Vec<Sample> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&seen);
    let sc = exact("napi")
        .rate_pps(1e4)
        .with("traffic.size_bytes", i(200))
        .with("host.forward", irqlab_core::Value::Bool(true))
        .with("driver.moderation", s("python"))
        .duration_ms(2.0)
        .build()
        .with_policy(Factory::new(move || Box::new(Recorder(Arc::clone(&keep)))));
    let r = irqlab_core::run(&sc);
    assert!(r.packets.delivered > 10, "{:?}", r.packets);
    seen.lock().unwrap().clone()
}

#[test]
fn the_policy_sees_each_cleaned_rx_packet_and_its_bytes_without_the_fcs() {
    // each packet: a poll cleans it (Rx), then its Tx write-back raises the cause and a second
    // poll cleans its descriptor (Tx); completion 2k and 2k + 1 have seen k + 1 Rx packets
    let samples = forwarded_samples();
    assert!(samples.len() > 20, "{} samples", samples.len());
    for (j, smp) in samples.iter().enumerate() {
        let n = j as u64 / 2 + 1;
        assert_eq!(
            (smp.packets, smp.bytes),
            (n, n * 196),
            "sample {j}: {smp:?}"
        );
    }
}

#[test]
fn the_policy_sees_each_cleaned_tx_descriptor_and_its_bytes_without_the_fcs() {
    // the Rx poll of packet k has cleaned the k - 1 earlier descriptors; the poll of its Tx
    // write-back cleans its own: completion j has seen (j + 1) / 2 Tx packets of 196 bytes
    let samples = forwarded_samples();
    assert!(samples.len() > 20, "{} samples", samples.len());
    for (j, smp) in samples.iter().enumerate() {
        let n = (j as u64).div_ceil(2);
        assert_eq!(
            (smp.tx_packets, smp.tx_bytes),
            (n, n * 196),
            "sample {j}: {smp:?}"
        );
    }
}

/// The classes of the packets each poll delivered, poll by poll, and each packet's flow.
#[derive(Default)]
struct Polls {
    class: std::collections::HashMap<u64, u16>,
    flows: Vec<u32>,
    current: Vec<u16>,
    polls: Vec<Vec<u16>>,
}

impl irqlab_core::Tracer for Polls {
    fn arrival(&mut self, _: u64, _: SimTime, _: bool) {}
    fn packet(&mut self, _: u64, _: u32, flow: u32, _: u16) {
        self.flows.push(flow);
    }
    fn class(&mut self, id: u64, class: u16) {
        self.class.insert(id, class);
    }
    fn delivered(&mut self, id: u64, _: SimTime, _: SimTime) {
        self.current.push(self.class[&id]);
    }
    fn poll(&mut self, _: usize, _: usize, _: SimTime, packets: u64, _: u64) {
        assert_eq!(packets, self.current.len() as u64);
        self.polls.push(std::mem::take(&mut self.current));
    }
}

#[test]
fn without_a_qos_strategy_each_class_ring_gives_a_poll_at_most_its_half_of_the_weight() {
    // two classes, so two Rx rings and no ring discipline: the stock loop cleans ring 0, then
    // ring 1, each up to weight / 2 = 32 packets. In overload (1 µs per packet, 2 Mpps) both
    // rings stay full, so every poll takes 32 packets of class 0, then 32 of class 1.
    let sc = exact("napi")
        .with("traffic.classes.0.share", f(0.5))
        .with("traffic.classes.1.share", f(0.5))
        .rate_pps(2e6)
        .proto_ns(1000.0)
        .with("kernel.napi_weight", i(64))
        .with("nic.ring_descriptors", i(128))
        .duration_ms(1.0)
        .build();
    let (r, t) = irqlab_core::run_with(&sc, Polls::default());
    conserved(&r);
    assert!(r.packets.dropped_nic > 0, "overload: {:?}", r.packets);
    let full: Vec<u16> = [vec![0; 32], vec![1; 32]].concat();
    // after the rings first fill, every poll is full (the first ones may find less)
    let later = &t.polls[t.polls.len() / 2..];
    assert!(later.len() > 5, "{} polls", t.polls.len());
    for p in later {
        assert_eq!(p, &full);
    }
    for p in &t.polls {
        let zeros = p.iter().take_while(|&&c| c == 0).count();
        assert!(zeros <= 32 && p[zeros..].iter().all(|&c| c == 1), "{p:?}");
        assert!(p.len() - zeros <= 32, "{p:?}");
    }
}

#[test]
fn flows_are_drawn_by_their_zipf_popularity() {
    // 4 flows with s = 1: weights 1, 1/2, 1/3, 1/4, i.e. shares 12/25, 6/25, 4/25, 3/25
    let sc = exact("napi")
        .with("traffic.kind", s("poisson"))
        .with("traffic.flows", i(4))
        .with("traffic.flow_zipf_s", f(1.0))
        .rate_pps(1e6)
        .proto_ns(100.0)
        .duration_ms(20.0)
        .build();
    let (_, t) = irqlab_core::run_with(&sc, Polls::default());
    let n = t.flows.len() as f64;
    assert!(n > 15_000.0, "{n} packets");
    for (flow, want) in [12.0, 6.0, 4.0, 3.0].iter().enumerate() {
        let got = t.flows.iter().filter(|&&x| x == flow as u32).count() as f64 / n;
        assert!(
            (got - want / 25.0).abs() < 0.02,
            "flow {flow}: share {got}, want {}",
            want / 25.0
        );
    }
}
