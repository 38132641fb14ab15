//! The CPU server through its public API.

use irqlab_core::cpu::{Category, Cpu, Level};
use irqlab_core::time::{SimDuration, SimTime};

#[test]
fn leaving_idle_costs_extra_only_after_strictly_longer_than_the_threshold() {
    // wake-up cost 7 after more than 20 of idle time: exactly 20 is not more
    for (idle, extra) in [(20, 0), (21, 7)] {
        let mut cpu: Cpu<u8> = Cpu::new().with_wakeup(SimDuration(7), SimDuration(20));
        cpu.advance(SimTime(idle));
        cpu.start(Level::SoftIrq, SimDuration(5), Category::Softirq, 1);
        assert_eq!(cpu.next_completion_ps(), idle + 5 + extra, "idle {idle}");
    }
    // a core that pays nothing to wake never does
    let mut cpu: Cpu<u8> = Cpu::new();
    cpu.advance(SimTime(1000));
    cpu.start(Level::Thread, SimDuration(5), Category::App, 1);
    assert_eq!(cpu.next_completion_ps(), 1005);
}

#[test]
fn a_job_started_while_another_runs_pays_no_wake_up() {
    let mut cpu: Cpu<u8> = Cpu::new().with_wakeup(SimDuration(7), SimDuration(20));
    cpu.advance(SimTime(10));
    cpu.start(Level::Thread, SimDuration(100), Category::App, 1);
    cpu.advance(SimTime(50));
    cpu.start(Level::HardIrq, SimDuration(5), Category::Irq, 2);
    assert_eq!(cpu.next_completion_ps(), 55);
    assert!(cpu.is_busy(Level::HardIrq) && cpu.is_busy(Level::Thread));
    assert!(!cpu.is_busy(Level::SoftIrq));
}
