//! AF_XDP: an app that reads an XDP socket's Rx ring (`app.N.io = "xsk"`) instead of a socket
//! buffer. Its settings (`app.N.xsk_ring`, `app.N.need_wakeup`, `app.N.xsk_poll_core`; the
//! redirect's cost is the platform's, `platform.xdp_ns`), the checks that bind it to one
//! queue, the settings it makes useless, and its Rx ring ([`XskRing`]). The transitions live
//! in `host::xsk`.
//!
//! The rules, from Linux 6.18 (`net/xdp/xsk.c`, `net/xdp/xsk_buff_pool.c`,
//! `include/net/busy_poll.h`, `net/core/dev.c`), the ice driver's zero-copy Rx
//! (`ice_clean_rx_irq_zc`, `drivers/net/ethernet/intel/ice/ice_xsk.c`; ixgbe, i40e, igb and
//! iavf set the flag the same way) and `Documentation/networking/af_xdp.rst`:
//!
//! - **One queue.** An XSK is bound to one queue of one device (`xsk_bind`'s
//!   `sxdp_queue_id`), one buffer pool per queue (`xp_assign_dev`: `-EBUSY` for a second), and
//!   the redirect of a packet that came on another queue fails (`xsk_rcv_check`: `-EINVAL`).
//!   So all of an XSK app's flows must be steered (RSS) to one queue, which no other XSK app
//!   reads. `xsk_bind` marks the socket with that queue's NAPI at once
//!   (`__sk_mark_napi_id_once`): the app can busy-poll before its first packet.
//! - **Receive.** In the driver's NAPI poll the XDP program redirects each of the app's
//!   packets into its XSK (`__xsk_map_redirect` → `xsk_rcv_zc` → `__xsk_rcv_zc`): no skb, no
//!   protocol processing and no socket buffer accounting; the packet costs the poll
//!   `platform.xdp_ns` instead of `platform.proto_ns`. A full Rx ring refuses it
//!   (`xskq_prod_reserve_desc` fails, `rx_queue_full`): the packet is dropped and counted with
//!   the app's socket drops. The descriptors a poll reserves become visible to user space
//!   when the driver's Rx clean ends (`xdp_do_flush` → `xsk_flush` → `xskq_prod_submit`); the
//!   app releases a slot as it takes its descriptor.
//! - **need_wakeup.** Bound with `XDP_USE_NEED_WAKEUP` (`app.N.need_wakeup`), the zero-copy
//!   driver sets the fill ring's flag only when it has run out of fill buffers
//!   (`ice_clean_rx_irq_zc`: `failure || next_to_clean == next_to_use` →
//!   `xsk_set_rx_need_wakeup`) and clears it otherwise, and user space calls `recvfrom` only
//!   when the flag is set (af_xdp.rst: "only use the syscall if the flag is set"). The model
//!   keeps the fill ring stocked (the app gives each frame back as it reads its descriptor),
//!   so the flag stays clear: an app that does not busy-poll makes no `recvfrom`, and its
//!   packets come through the IRQ and the softirq. Bound without it, the kernel keeps no flag
//!   for user space to read (`xp_assign_dev`: drivers without the feature "will always have to
//!   call sendto() or poll()"), so the app kicks whenever it finds its ring empty: a
//!   `recvfrom` that, with neither busy polling nor a wakeup flag, does nothing
//!   (`__xsk_recvmsg` returns 0).
//! - **Busy polling.** An app that busy-polls calls `recvfrom` whenever it finds its ring
//!   empty (xdpsock's `opt_busy_poll || xsk_ring_prod__needs_wakeup(fq)`). With
//!   `SO_BUSY_POLL` (`socket.busy_read_us` > 0: `sk_can_busy_loop`) that `recvfrom` busy-polls
//!   once, nonblocking (`__xsk_recvmsg` → `sk_busy_loop(sk, 1)` → `napi_busy_loop` without a
//!   `loop_end`): it takes the NAPI if no one owns it (else, preferring, it sets PREFER), polls
//!   it once with `SO_BUSY_POLL_BUDGET` (`socket.busy_poll_budget`, 0 = 8), then
//!   `busy_poll_stop` polls it once more with the same budget, arming the NAPI timer instead of
//!   re-enabling the IRQ with `SO_PREFER_BUSY_POLL` and deferral (`socket.prefer_busy_poll`,
//!   as for a `recv` socket: `crate::busypoll`). How long `SO_BUSY_POLL` is does not matter: a
//!   nonblocking loop makes one iteration. (`xsk_no_wakeup`, prefer with busy polling, only
//!   skips a wakeup the model never needs.)
//! - **The thread never sleeps** (`__xsk_recvmsg` refuses a blocking read: `MSG_DONTWAIT`). It
//!   peeks its ring in user space; finding it empty costs one iteration,
//!   `platform.busy_iter_ns`, and so does each `recvfrom`'s entry (the model has no syscall cost
//!   of its own), charged to `cpu.busy_poll` when the `recvfrom` busy-polls. Empty checks
//!   without busy polling (kicks included) are one CPU job charged to `cpu.app`, cut at the
//!   end of the iteration under way when a flush makes a descriptor visible or a thread wakes
//!   on its core (so that it gives way at the end of its slice).
//! - **A polling thread** (`app.N.xsk_poll_core`, as `xsk_rr -t` in the threaded busy polling
//!   patch set): a second thread of the app, on that core, calls `recvfrom` in a loop (each a
//!   nonblocking busy poll, so it needs `SO_BUSY_POLL`), and the app's own thread only peeks
//!   its ring.
//!
//! Not modelled: the fill and completion rings (always stocked), the XSK's Tx ring (a
//! request's response goes out on its vector's Tx ring, as a `recv` app's does), copy mode,
//! a shared UMEM, multi-buffer packets, and the XDP program's cost on the queue's other
//! packets, which it passes to the stack (`XDP_PASS`): they cost `platform.proto_ns` alone.

use std::collections::VecDeque;

use crate::busypoll::BusyConfig;
use crate::error::Error;
use crate::nic::Packet;
use crate::nic::config::Device;
use crate::schema::{Params, Value, field_key};
use crate::scheme::Scheme;
use crate::socket::config::{APP, APP_IO, APP_RCVBUF_BYTES, Io};
use crate::topology::{HostConfig, Topology};
use crate::warnings::{Warnings, no_effect};

/// An app's XSK fields (`app.N.*`).
pub const APP_XSK_RING: &str = "xsk_ring";
pub const APP_NEED_WAKEUP: &str = "need_wakeup";
pub const APP_XSK_POLL_CORE: &str = "xsk_poll_core";
/// The XSK fields, in the key table's order.
pub const APP_FIELDS: [&str; 3] = [APP_XSK_RING, APP_NEED_WAKEUP, APP_XSK_POLL_CORE];

/// `XSK_RING_CONS__DEFAULT_NUM_DESCS` (libxdp's `xsk.h`): the Rx ring's size unless set.
pub const XSK_RING_DEFAULT: i128 = 2048;
/// The largest Rx ring allowed (descriptors).
pub const XSK_RING_MAX: i128 = 1 << 20;
/// `app.N.xsk_poll_core` for no polling thread.
pub const NO_POLL_CORE: i128 = -1;

/// One XSK app's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct XskConfig {
    /// Its Rx ring's descriptors (a power of two).
    pub ring: usize,
    /// Bound with `XDP_USE_NEED_WAKEUP`.
    pub need_wakeup: bool,
    /// The core of its polling thread, if it has one.
    pub poll_core: Option<usize>,
    /// The queue (vector) it is bound to.
    pub queue: u16,
}

/// What an XSK app's own thread does when it finds its Rx ring empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnEmpty {
    /// `recvfrom`, which busy-polls once (`sk_busy_loop(sk, 1)`).
    BusyPoll,
    /// `recvfrom`, which does nothing: the kick of an app bound without need_wakeup.
    Kick,
    /// Nothing: it checks again (need_wakeup with its flag clear, or a polling thread polls).
    Check,
}

impl XskConfig {
    /// What the app's own thread does on an empty ring, with SO_BUSY_POLL on or off.
    pub fn on_empty(&self, busy_poll: bool) -> OnEmpty {
        if self.poll_core.is_some() {
            OnEmpty::Check
        } else if busy_poll {
            OnEmpty::BusyPoll
        } else if !self.need_wakeup {
            OnEmpty::Kick
        } else {
            OnEmpty::Check
        }
    }
}

/// The XSK settings of a scenario's apps, by app (None: not an XSK app).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct XskApps {
    pub apps: Vec<Option<XskConfig>>,
}

impl XskApps {
    /// Whether any app reads an XSK.
    pub fn any(&self) -> bool {
        self.apps.iter().any(Option::is_some)
    }

    /// App `a`'s settings, if it reads an XSK.
    #[inline]
    pub fn of(&self, a: usize) -> Option<&XskConfig> {
        self.apps.get(a).and_then(Option::as_ref)
    }
}

/// Whether a socket busy-polls (`sk_can_busy_loop`: `SO_BUSY_POLL` set).
pub fn busy_polls(busy: &BusyConfig) -> bool {
    busy.busy_read_us > 0.0
}

fn key(a: usize, field: &str) -> String {
    field_key(APP, a, field)
}

/// The XSK settings of `p`'s apps (`ios`: each app's `io`), checked against the host and the
/// flows each app reads.
pub fn configure(
    p: &Params,
    ios: &[Io],
    busy: &BusyConfig,
    topology: &Topology,
    host: &HostConfig,
    device: Device,
    scheme: Scheme,
) -> Result<XskApps, Error> {
    let mut apps = vec![None; ios.len()];
    let mut bound: Vec<Option<usize>> = vec![None; topology.queue_flows.len()];
    for (a, _) in ios.iter().enumerate().filter(|(_, io)| **io == Io::Xsk) {
        let io = key(a, APP_IO);
        if device != Device::Hw {
            return Err(p.inconsistent(
                &io,
                "an XSK is modelled on a NIC queue in zero-copy mode; set nic.device = \"hw\"",
            ));
        }
        if scheme.uses_poll_loop() {
            return Err(p.inconsistent(
                &io,
                format!(
                    "the XDP program runs in the driver's NAPI poll; scheme \"{}\" runs Salah's polling loop instead (use napi, irq, coalesce-count, coalesce-time or ideal)",
                    scheme.name()
                ),
            ));
        }
        let ring_key = key(a, APP_XSK_RING);
        let ring = p.u64(&ring_key);
        if !ring.is_power_of_two() {
            return Err(Error::OutOfRange {
                key: ring_key,
                value: p.get(&key(a, APP_XSK_RING)).to_string(),
                allowed: format!(
                    "must be a power of two, 1 … {XSK_RING_MAX} (xsk_init_queue refuses 0 and other sizes)"
                ),
            });
        }
        let poll_core = poll_core(p, a, host.cores, busy)?;
        let queue = queue_of(p, a, topology, &mut bound)?;
        apps[a] = Some(XskConfig {
            ring: ring as usize,
            need_wakeup: p.bool(&key(a, APP_NEED_WAKEUP)),
            poll_core,
            queue,
        });
    }
    Ok(XskApps { apps })
}

/// App `a`'s polling thread's core: none (-1), or a core of the host, with SO_BUSY_POLL on
/// (its `recvfrom` polls nothing without it).
fn poll_core(
    p: &Params,
    a: usize,
    cores: usize,
    busy: &BusyConfig,
) -> Result<Option<usize>, Error> {
    let k = key(a, APP_XSK_POLL_CORE);
    let core = match p.get(&k) {
        Value::Int(c) if *c == NO_POLL_CORE => return Ok(None),
        Value::Int(c) => *c as usize,
        v => unreachable!("internal: {k} = {v} is not an integer"),
    };
    if core >= cores {
        return Err(p.inconsistent(
            &k,
            format!("host.cores = {cores} has cores 0 … {}", cores - 1),
        ));
    }
    if !busy_polls(busy) {
        return Err(p.inconsistent(
            &k,
            "the polling thread busy-polls with recvfrom, which polls nothing without SO_BUSY_POLL: set socket.busy_read_us > 0",
        ));
    }
    Ok(Some(core))
}

/// The one queue app `a`'s flows reach, which no other XSK app (in `bound`, by queue) reads.
fn queue_of(
    p: &Params,
    a: usize,
    topology: &Topology,
    bound: &mut [Option<usize>],
) -> Result<u16, Error> {
    let io = key(a, APP_IO);
    let mut queues = topology
        .flow_app
        .iter()
        .zip(topology.flow_queue.iter())
        .filter(|(app, _)| usize::from(**app) == a)
        .map(|(_, &q)| q)
        .collect::<Vec<u16>>();
    queues.sort_unstable();
    queues.dedup();
    let &[q] = &queues[..] else {
        let shown = queues
            .iter()
            .map(u16::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        return Err(p.inconsistent(
            &io,
            format!(
                "an XSK is bound to one queue (xsk_bind) and takes only that queue's packets (xsk_rcv_check), but app {a}'s flows reach queues {shown}: give it the flows of one queue (app.{a}.flows)"
            ),
        ));
    };
    if let Some(other) = bound[q as usize] {
        return Err(p.inconsistent(
            &io,
            format!(
                "queue {q} has app {other}'s XSK already: one XSK buffer pool per queue (xp_assign_dev)"
            ),
        ));
    }
    bound[q as usize] = Some(a);
    Ok(q)
}

/// The XSK settings that have no effect: an XSK field of an app that reads a socket, a socket
/// buffer of an XSK app, and need_wakeup of an app that calls `recvfrom` on every empty ring
/// anyway (it busy-polls) or never (its polling thread does).
pub fn warnings(w: &mut Warnings, xsk: &XskApps, busy: &BusyConfig) {
    for (a, cfg) in xsk.apps.iter().enumerate() {
        let Some(cfg) = cfg else {
            for field in APP_FIELDS {
                w.entry_field(
                    &key(a, field),
                    no_effect(&format!(
                        "app {a} reads a socket, not an AF_XDP socket (app.{a}.io = \"xsk\")"
                    )),
                );
            }
            continue;
        };
        w.entry_field(
            &key(a, APP_RCVBUF_BYTES),
            no_effect(&format!(
                "an XSK has no socket buffer accounting: its Rx ring (app.{a}.xsk_ring) bounds it"
            )),
        );
        let why = if cfg.poll_core.is_some() {
            Some("its polling thread calls recvfrom, the app's own thread never does")
        } else if busy_polls(busy) {
            Some("an app that busy-polls calls recvfrom whenever its ring is empty")
        } else {
            None
        };
        if let Some(why) = why {
            w.entry_field(&key(a, APP_NEED_WAKEUP), no_effect(why));
        }
    }
}

/// An XSK's Rx ring as the kernel produces into it and the app consumes from it: a packet
/// is reserved when the redirect writes its descriptor (refused when the ring is full) and
/// becomes visible at the poll's flush; the app takes visible descriptors in order, freeing
/// their slots.
#[derive(Debug)]
pub struct XskRing {
    /// The reserved descriptors, oldest first; the first `visible` have been submitted.
    queue: VecDeque<Packet>,
    visible: usize,
    size: usize,
}

impl XskRing {
    pub fn new(size: usize) -> XskRing {
        XskRing {
            queue: VecDeque::with_capacity(size),
            visible: 0,
            size,
        }
    }

    /// `xskq_prod_reserve_desc`: writes `p`'s descriptor, or refuses it (false) when every
    /// slot holds a descriptor the app has not taken.
    #[inline]
    pub fn reserve(&mut self, p: Packet) -> bool {
        if self.queue.len() >= self.size {
            return false;
        }
        self.queue.push_back(p);
        true
    }

    /// `xskq_prod_submit`: the reserved descriptors become visible; returns how many did.
    #[inline]
    pub fn submit(&mut self) -> usize {
        let n = self.queue.len() - self.visible;
        self.visible = self.queue.len();
        n
    }

    /// The app peeks one descriptor and releases its slot; None if none is visible.
    #[inline]
    pub fn take(&mut self) -> Option<Packet> {
        if self.visible == 0 {
            return None;
        }
        self.visible -= 1;
        self.queue.pop_front()
    }

    /// Descriptors in the ring, visible or not.
    #[inline]
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Descriptors the app can see.
    #[inline]
    pub fn visible(&self) -> usize {
        self.visible
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::test_support::*;

    fn pkt(id: u64) -> Packet {
        Packet::numbered(id)
    }

    #[test]
    fn a_descriptor_is_seen_only_after_the_flush_and_a_full_ring_refuses() {
        let mut r = XskRing::new(2);
        assert!(r.is_empty());
        assert!(r.reserve(pkt(1)));
        assert!(!r.is_empty());
        assert_eq!((r.len(), r.visible()), (1, 0));
        assert_eq!(r.take().map(|p| p.id), None, "not submitted yet");
        assert_eq!(r.submit(), 1);
        assert!(r.reserve(pkt(2)));
        assert!(!r.reserve(pkt(3)), "two slots, both taken: rx_queue_full");
        assert_eq!((r.len(), r.visible()), (2, 1));
        assert_eq!(r.take().map(|p| p.id), Some(1));
        assert_eq!(r.take().map(|p| p.id), None, "2 is reserved, not submitted");
        assert!(r.reserve(pkt(4)), "taking 1 freed its slot");
        assert_eq!(r.submit(), 2);
        assert_eq!((r.len(), r.visible()), (2, 2));
        let order: Vec<u64> = std::iter::from_fn(|| r.take().map(|p| p.id)).collect();
        assert_eq!(order, [2, 4]);
        assert!(r.is_empty());
        // a flush counts only the descriptors it made visible
        let mut r = XskRing::new(4);
        r.reserve(pkt(5));
        assert_eq!(r.submit(), 1);
        r.reserve(pkt(6));
        assert_eq!(r.submit(), 1, "5 was visible already");
        assert_eq!(r.submit(), 0, "nothing new");
    }

    #[test]
    fn on_an_empty_ring_the_app_busy_polls_kicks_or_checks_again() {
        let cfg = XskConfig {
            ring: 2048,
            need_wakeup: true,
            poll_core: None,
            queue: 0,
        };
        assert_eq!(cfg.on_empty(true), OnEmpty::BusyPoll);
        assert_eq!(cfg.on_empty(false), OnEmpty::Check);
        let legacy = XskConfig {
            need_wakeup: false,
            ..cfg
        };
        assert_eq!(legacy.on_empty(false), OnEmpty::Kick);
        assert_eq!(legacy.on_empty(true), OnEmpty::BusyPoll);
        let threaded = XskConfig {
            poll_core: Some(1),
            ..cfg
        };
        assert_eq!(threaded.on_empty(true), OnEmpty::Check);
    }

    #[test]
    fn an_xsk_app_is_bound_to_the_one_queue_of_its_flows() {
        let sc = build(&[
            ("nic.queues", Value::Int(2)),
            ("host.cores", Value::Int(2)),
            ("traffic.flows", Value::Int(8)),
            ("app.0.core", Value::Int(1)),
            ("app.0.io", s("xsk")),
        ])
        .unwrap();
        let cfg = sc.xsk.of(0).expect("an XSK app");
        assert_eq!(cfg.queue, 1, "the flows RSS steers to core 1 are queue 1's");
        assert_eq!(cfg.ring, 2048);
        assert!(cfg.need_wakeup);
        assert_eq!(cfg.poll_core, None);
        assert!(
            build(&[("app.0.core", Value::Int(0))])
                .unwrap()
                .xsk
                .of(0)
                .is_none()
        );
    }
}
