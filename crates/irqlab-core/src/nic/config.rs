//! The NIC's settings (`nic.*`): its rings, the interrupt logic of each vector (`ethtool -C`),
//! RSS, and the Tx side the driver cleans (`driver.tx_work_limit`); and the settings among
//! them that have no effect.

use crate::error::Error;
use crate::schema::{Params, Value, keys, registry};
use crate::time::SimDuration;
use crate::warnings::{Warnings, no_effect};

keys! {
    /// The NIC's keys (and the driver's Tx limit).
    pub KEYS = "nic." [
        DEVICE,
        RING_DESCRIPTORS,
        /// The keys that shape when packet interrupts fire.
        pub IRQ_KEYS = [
            ITR_US,
            RX_USECS,
            RX_FRAMES,
            CAUSE_MODE,
        ],
        QUEUES,
        RSS_TABLE_SIZE,
        TX_RING_DESCRIPTORS,
        TX_IRQ,
        LINK_GBPS,
        /// The driver's limit on Tx descriptors cleaned per poll.
        TX_WORK_LIMIT = "driver.tx_work_limit",
    ];
}
/// What only forwarded packets use (their costs, `platform.tx_*`, describe the machine and are
/// not reported, as no `platform.*` key is).
const TX_KEYS: &[&str] = &[TX_WORK_LIMIT, TX_IRQ];

registry! {
    key: CAUSE_MODE;
    /// How re-enabling the vector treats a cause raised by packets the poll already processed.
    #[derive(Default)]
    pub enum CauseMode {
        /// The cause bit stays latched until an IRQ is delivered (Intel EICR): re-enabling a
        /// vector with a latched cause interrupts at once, even if the poll already took those
        /// packets.
        #[default]
        Latched = "latched",
        /// Re-enabling after the poll found the ring empty re-arms the vector: only packets
        /// that arrive afterwards raise an IRQ (completion-queue arming; Salah's disable-enable
        /// model).
        Armed = "armed",
    }
}

registry! {
    key: DEVICE;
    /// The receiving device.
    #[derive(Default)]
    pub enum Device {
        /// A NIC: DMA into its Rx rings, interrupts, moderation.
        #[default]
        Hw = "hw",
        /// One end of a veth pair (`drivers/net/veth.c`): no hard interrupt and no
        /// moderation; the peer's transmit (`veth_xmit`) puts the packet in the Rx ring and
        /// schedules the NAPI on the sender's core.
        Veth = "veth",
    }
}

/// A veth device's Rx ring: `VETH_RING_SIZE` entries of its `ptr_ring`, a constant of
/// `drivers/net/veth.c` (`ethtool -g` reports it; `ethtool -G` cannot change it).
pub const VETH_RING_SIZE: u64 = 256;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct NicConfig {
    /// The receiving device.
    pub device: Device,
    /// Slots of each Rx ring.
    pub ring_descriptors: usize,
    pub itr: SimDuration,
    pub rx_usecs: SimDuration,
    pub rx_frames: u64,
    pub cause_mode: CauseMode,
    /// Queue vectors.
    pub queues: usize,
    /// Slots of each vector's Tx ring (0: Rx-only vectors).
    pub tx_ring_descriptors: usize,
    /// Tx completions raise the vector's interrupt cause.
    pub tx_irq: bool,
    pub link_gbps: f64,
    pub rss_table_size: usize,
}

/// The driver's settings beyond moderation.
#[derive(Clone, Debug, PartialEq)]
pub struct DriverConfig {
    /// Tx descriptors cleaned per poll at most.
    pub tx_work_limit: u64,
}

/// The NIC of `p`. A veth device's ring is `VETH_RING_SIZE` entries: another size given is an
/// error, and the size is set in `p` so that the result says which was used.
pub fn configure(p: &mut Params) -> Result<NicConfig, Error> {
    let device = Device::of(p)?;
    if device == Device::Veth {
        let given = p.u64(RING_DESCRIPTORS);
        if p.given(RING_DESCRIPTORS) && given != VETH_RING_SIZE {
            return Err(p.inconsistent(
                RING_DESCRIPTORS,
                format!(
                    "a veth device's Rx ring is VETH_RING_SIZE = {VETH_RING_SIZE} entries (drivers/net/veth.c), which ethtool cannot change; leave it out or give {VETH_RING_SIZE}"
                ),
            ));
        }
        p.set(RING_DESCRIPTORS, Value::Int(VETH_RING_SIZE as i128));
        if p.u64(QUEUES) != 1 {
            return Err(p.inconsistent(
                QUEUES,
                "a veth device is modelled with one Rx queue (one NAPI); give 1",
            ));
        }
    }
    Ok(NicConfig {
        device,
        ring_descriptors: p.u64(RING_DESCRIPTORS) as usize,
        itr: SimDuration::from_us(p.f64(ITR_US)),
        rx_usecs: SimDuration::from_us(p.f64(RX_USECS)),
        rx_frames: p.u64(RX_FRAMES),
        cause_mode: CauseMode::of(p)?,
        queues: p.u64(QUEUES) as usize,
        tx_ring_descriptors: p.u64(TX_RING_DESCRIPTORS) as usize,
        tx_irq: p.bool(TX_IRQ),
        link_gbps: p.f64(LINK_GBPS),
        rss_table_size: p.u64(RSS_TABLE_SIZE) as usize,
    })
}

/// The driver's Tx cleaning of `p`.
pub fn configure_driver(p: &Params) -> Result<DriverConfig, Error> {
    Ok(DriverConfig {
        tx_work_limit: p.u64(TX_WORK_LIMIT),
    })
}

/// Forwarding transmits on each vector's Tx ring: it needs one.
pub fn check_forwarding(nic: &NicConfig, forward: bool) -> Result<(), Error> {
    if forward && nic.tx_ring_descriptors == 0 {
        return Err(Error::Inconsistent {
            key: TX_RING_DESCRIPTORS.into(),
            value: "0".into(),
            reason: "host.forward = true needs a Tx ring on each vector".into(),
        });
    }
    Ok(())
}

/// The Tx side without forwarding; the link speed when neither forwarding nor a moderation
/// policy reads it (`link_readers`: the policies that can, `reads_link`: the one chosen does).
pub fn tx_warnings(w: &mut Warnings, forward: bool, reads_link: bool, link_readers: &str) {
    w.rule(TX_KEYS, !forward, || {
        no_effect("only forwarding transmits (host.forward = true)")
    });
    w.rule(&[LINK_GBPS], !forward && !reads_link, || {
        no_effect(&format!(
            "only forwarding (host.forward = true) and the {link_readers} policies use it"
        ))
    });
}

/// RSS with one queue vector.
pub fn rss_warnings(w: &mut Warnings) {
    let one_queue = w.p.u64(QUEUES) == 1;
    w.rule(&[RSS_TABLE_SIZE], one_queue, || {
        no_effect("there is one queue vector (nic.queues = 1)")
    });
}

/// A veth device has no interrupt and no interrupt logic: the keys that shape when packet
/// interrupts fire, and Tx completions' interrupts, have no effect.
pub fn veth_warnings(w: &mut Warnings, device: Device, moderation_keys: &[&'static str]) {
    let veth = device == Device::Veth;
    let why = || {
        no_effect(
            "a veth device has no interrupt and no moderation (veth_xmit schedules the NAPI on the sender's core)",
        )
    };
    w.rule(IRQ_KEYS, veth, why);
    w.rule(&[TX_IRQ], veth, why);
    w.rule(moderation_keys, veth, why);
}
