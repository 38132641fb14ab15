//! The sockets' and the applications' settings: the socket defaults (`socket.*`) and each app
//! (`[[app]]`, `app.N.*`: its core, its cost per packet, the flows it reads, its receive
//! buffer, how it waits). Busy polling from sockets and epoll is `busypoll`'s. None of these
//! settings is reported as having no effect (no `warnings` here).

use crate::dist::{Cost, Dist};
use crate::error::Error;
use crate::schema::{Params, field_key, keys, registry};

keys! {
    /// The sockets' keys.
    pub KEYS = "socket." [
        RCVBUF_BYTES,
        /// The truesize charged per packet (0: as the driver builds it, [`truesize_of_frame`]).
        TRUESIZE_BYTES,
    ];
}

/// The apps, numbered entries (`app.N.field`), and their fields.
pub const APP: &str = "app";
pub const APP_CORE: &str = "core";
pub const APP_COST_NS: &str = "cost_ns";
pub const APP_COST_DIST: &str = "cost_dist";
pub const APP_COST_NS_PER_BYTE: &str = "cost_ns_per_byte";
pub const APP_FLOWS: &str = "flows";
pub const APP_RCVBUF_BYTES: &str = "rcvbuf_bytes";
pub const APP_IO: &str = "io";

registry! {
    /// How an app waits for packets (`app.N.io`); busy polling (`busypoll`) runs in
    /// any.
    pub enum Io {
        /// A blocking `recv` loop.
        Recv = "recv",
        /// An `epoll_wait` loop.
        Epoll = "epoll",
        /// An AF_XDP socket's Rx ring, read in user space (`crate::xsk`).
        Xsk = "xsk",
    }
}

/// Socket defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct SocketConfig {
    pub rcvbuf_bytes: u64,
    /// Truesize charged per packet; 0: [`truesize_of_frame`].
    pub truesize_bytes: u64,
    /// The largest frame exceeds the standard MTU: the driver uses 3 KiB buffers.
    pub jumbo: bool,
}

impl SocketConfig {
    /// The truesize a frame of `size_bytes` is charged in a socket.
    #[inline]
    pub fn truesize(&self, size_bytes: u32) -> u64 {
        if self.truesize_bytes > 0 {
            self.truesize_bytes
        } else {
            truesize_of_frame(size_bytes, self.jumbo)
        }
    }
}

/// The largest frame of the standard 1500-byte MTU (with its Ethernet header and FCS).
pub const STANDARD_MAX_FRAME: u32 = 1518;
/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))` on x86-64.
pub const SK_BUFF_BYTES: u64 = 256;

/// The skb truesize of a received frame as ixgbe builds it (`build_skb`, 4 KiB pages): at the
/// standard MTU every frame sits in a 2 KiB half page, `2048 + 256` = 2304 bytes whatever its
/// length; with a larger MTU (`jumbo`) the driver uses 3 KiB buffers in 4 KiB halves of 8 KiB
/// pages: `4096 + 256` for the first 3 KiB of a frame, and 4096 for each further buffer.
pub fn truesize_of_frame(size_bytes: u32, jumbo: bool) -> u64 {
    if !jumbo {
        return 2048 + SK_BUFF_BYTES;
    }
    u64::from(size_bytes).div_ceil(3072).max(1) * 4096 + SK_BUFF_BYTES
}

/// An application: a thread on a core reading its socket with blocking `recv`.
#[derive(Clone, Debug, PartialEq)]
pub struct AppConfig {
    pub core: usize,
    /// Per packet: fixed part and per-byte part (ps per frame byte).
    pub cost: Cost,
    pub cost_ps_per_byte: f64,
    /// Its socket's receive buffer, bytes.
    pub rcvbuf_bytes: u64,
    /// `recv` or `epoll_wait` loop, or an XSK's ring (its settings: `crate::xsk`).
    pub io: Io,
}

/// The socket defaults of `p`, for frames of at most `largest` bytes.
pub fn configure(p: &Params, largest: u32) -> Result<SocketConfig, Error> {
    Ok(SocketConfig {
        rcvbuf_bytes: p.u64(RCVBUF_BYTES),
        truesize_bytes: p.u64(TRUESIZE_BYTES),
        jumbo: largest > STANDARD_MAX_FRAME,
    })
}

/// The apps of `p`, each with a socket that holds at least one frame of `largest` bytes.
pub fn configure_apps(
    p: &Params,
    socket: &SocketConfig,
    largest: u32,
) -> Result<Vec<AppConfig>, Error> {
    let mut apps = Vec::with_capacity(p.entries(APP));
    for i in 0..p.entries(APP) {
        let key = |f: &str| field_key(APP, i, f);
        let rcvbuf_bytes = match p.u64(&key(APP_RCVBUF_BYTES)) {
            0 => socket.rcvbuf_bytes,
            b => b,
        };
        let io = Io::read(p, &key(APP_IO))?;
        // a packet must fit an empty socket (an XSK has none: `crate::xsk`)
        let need = socket.truesize(largest);
        if io != Io::Xsk && rcvbuf_bytes < need {
            let k = if p.u64(&key(APP_RCVBUF_BYTES)) == 0 {
                RCVBUF_BYTES.to_string()
            } else {
                key(APP_RCVBUF_BYTES)
            };
            return Err(p.inconsistent(
                &k,
                format!(
                    "smaller than one packet: a {largest}-byte frame is charged {need} bytes of truesize"
                ),
            ));
        }
        apps.push(AppConfig {
            core: p.u64(&key(APP_CORE)) as usize,
            cost: Cost {
                dist: Dist::read(p, &key(APP_COST_DIST))?,
                ..Cost::of_ns(p.f64(&key(APP_COST_NS)))
            },
            cost_ps_per_byte: p.f64(&key(APP_COST_NS_PER_BYTE)) * 1000.0,
            rcvbuf_bytes,
            io,
        });
    }
    Ok(apps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::test_support::*;
    use crate::scenario::*;
    use crate::schema::Value;
    use crate::time::SimDuration;

    #[test]
    fn a_socket_charges_the_configured_truesize_or_the_frame_s_own() {
        let configured = SocketConfig {
            rcvbuf_bytes: 212_992,
            truesize_bytes: 1000,
            jumbo: false,
        };
        assert_eq!(configured.truesize(64), 1000);
        assert_eq!(configured.truesize(9000), 1000);
        let standard = SocketConfig {
            truesize_bytes: 0,
            ..configured.clone()
        };
        assert_eq!(standard.truesize(64), 2304);
        let jumbo = SocketConfig {
            truesize_bytes: 0,
            jumbo: true,
            ..configured
        };
        // 3 buffers of 3 KiB in 4 KiB halves, and the sk_buff
        assert_eq!(jumbo.truesize(9000), 3 * 4096 + 256);
    }

    #[test]
    fn frames_above_1518_bytes_are_jumbo_and_1518_is_not() {
        let sc = build(&[("traffic.size_bytes", Value::Int(1518))]).unwrap();
        assert!(!sc.socket.jumbo);
        assert_eq!(sc.socket.truesize(1518), 2304);
        let sc = build(&[("traffic.size_bytes", Value::Int(1519))]).unwrap();
        assert!(sc.socket.jumbo);
        assert_eq!(sc.socket.truesize(1519), 4096 + 256);
    }

    #[test]
    fn an_app_s_cost_is_drawn_from_its_distribution_and_charged_per_byte_in_ps() {
        let app = |more: &[(&str, Value)]| {
            let mut pairs = vec![("app.0.core", Value::Int(0))];
            pairs.extend_from_slice(more);
            build(&pairs).unwrap().apps[0].clone()
        };
        // the default: 1 us, exponential
        let a = app(&[]);
        assert_eq!(a.cost.mean, SimDuration(1_000_000));
        assert_eq!(a.cost.dist, Dist::Exponential);
        assert_eq!(a.cost_ps_per_byte, 0.0);
        let a = app(&[
            ("app.0.cost_dist", s("deterministic")),
            ("app.0.cost_ns", Value::Int(2000)),
            ("app.0.cost_ns_per_byte", Value::Float(2.5)),
        ]);
        assert_eq!(a.cost.mean, SimDuration(2_000_000));
        assert_eq!(a.cost.dist, Dist::Deterministic);
        assert_eq!(a.cost_ps_per_byte, 2500.0);
        let a = app(&[("app.0.cost_dist", s("exponential"))]);
        assert_eq!(a.cost.dist, Dist::Exponential);
    }
}
