//! Receive-side scaling: the Toeplitz hash of a flow's 4-tuple and the indirection table that
//! maps the hash to a queue.
//!
//! The hash is Microsoft's Toeplitz function over source address, destination address, source
//! port and destination port (IPv4, network byte order), with the well-known 40-byte default
//! key that most drivers ship. The indirection table has `nic.rss_table_size` entries, filled
//! round robin with the queues (`entry i → queue i mod queues`, as `ixgbe_setup_reta` and
//! `i40e_fill_rss_lut` do); a packet goes to `table[hash mod size]` (the hash's low bits for a
//! power-of-two table, as the hardware indexes it).
//!
//! Flows are synthetic: flow `f` is `10.a.b.c:p → 192.0.2.1:9`, with `a.b.c` and the source
//! port `p` (1024 … 65535) taken from a SplitMix64 scramble of `f`. Real clients' addresses
//! and ports are scattered; sequential ones would not be: the Toeplitz hash is linear in its
//! input bits, so flows that differ in a few low bits land on a few queues.

/// The default RSS key (Microsoft's verification key, shipped by ixgbe, i40e and others).
pub const DEFAULT_KEY: [u8; 40] = [
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
    0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
    0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
];

/// The Toeplitz hash of `input` under `key` (the key must be at least 4 bytes longer than the
/// input).
pub fn toeplitz(key: &[u8], input: &[u8]) -> u32 {
    debug_assert!(key.len() >= input.len() + 4);
    let mut result = 0u32;
    // The 32 key bits aligned with the current input bit, and the next key byte to shift in.
    let mut window = u32::from_be_bytes([key[0], key[1], key[2], key[3]]);
    for (i, &byte) in input.iter().enumerate() {
        let next = key[i + 4];
        for bit in 0..8 {
            if byte & (0x80 >> bit) != 0 {
                result ^= window;
            }
            window = (window << 1) | u32::from((next >> (7 - bit)) & 1);
        }
    }
    result
}

/// A flow's 4-tuple: addresses and ports in network byte order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tuple {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub sport: u16,
    pub dport: u16,
}

impl Tuple {
    /// The synthetic 4-tuple of flow `f`.
    pub fn of_flow(f: u32) -> Tuple {
        let x = splitmix64(u64::from(f));
        Tuple {
            src: [10, (x >> 16) as u8, (x >> 8) as u8, x as u8],
            dst: [192, 0, 2, 1],
            sport: 1024 + ((x >> 24) % 64_512) as u16,
            dport: 9,
        }
    }

    /// The Toeplitz input: source, destination, source port, destination port.
    pub fn bytes(&self) -> [u8; 12] {
        let mut b = [0u8; 12];
        b[..4].copy_from_slice(&self.src);
        b[4..8].copy_from_slice(&self.dst);
        b[8..10].copy_from_slice(&self.sport.to_be_bytes());
        b[10..].copy_from_slice(&self.dport.to_be_bytes());
        b
    }

    /// Its RSS hash with the default key.
    pub fn hash(&self) -> u32 {
        toeplitz(&DEFAULT_KEY, &self.bytes())
    }
}

/// SplitMix64's output function of `x` (a bijection that scatters every input bit).
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The queue of each flow: `table[hash mod size]`, the table filled round robin.
pub fn flow_queues(flows: usize, queues: usize, table_size: usize) -> Vec<u16> {
    (0..flows as u32)
        .map(|f| queue_of(Tuple::of_flow(f).hash(), queues, table_size))
        .collect()
}

/// The queue of each of the flows whose RSS hashes are `hashes` (a replayed capture's).
pub fn queues_of(hashes: &[u32], queues: usize, table_size: usize) -> Vec<u16> {
    hashes
        .iter()
        .map(|&h| queue_of(h, queues, table_size))
        .collect()
}

/// The queue of a packet with RSS hash `hash`: `table[hash mod size]`, entry `i` of the table
/// holding queue `i mod queues`.
#[inline]
pub fn queue_of(hash: u32, queues: usize, table_size: usize) -> u16 {
    ((hash as usize % table_size) % queues) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuple(src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16) -> Tuple {
        Tuple {
            src,
            dst,
            sport,
            dport,
        }
    }

    /// Microsoft's "Verifying the RSS Hash Calculation" vectors (IPv4, with and without ports).
    #[test]
    fn toeplitz_matches_the_published_vectors() {
        let table: &[(Tuple, u32, u32)] = &[
            (
                tuple([66, 9, 149, 187], 2794, [161, 142, 100, 80], 1766),
                0x323e_8fc2,
                0x51cc_c178,
            ),
            (
                tuple([199, 92, 111, 2], 14230, [65, 69, 140, 83], 4739),
                0xd718_262a,
                0xc626_b0ea,
            ),
            (
                tuple([24, 19, 198, 95], 12898, [12, 22, 207, 184], 38024),
                0xd2d0_a5de,
                0x5c2b_394a,
            ),
            (
                tuple([38, 27, 205, 30], 48228, [209, 142, 163, 6], 2217),
                0x8298_9176,
                0xafc7_327f,
            ),
            (
                tuple([153, 39, 163, 191], 44251, [202, 188, 127, 2], 1303),
                0x5d18_09c5,
                0x10e8_28a2,
            ),
        ];
        for (t, ip_only, with_ports) in table {
            assert_eq!(toeplitz(&DEFAULT_KEY, &t.bytes()[..8]), *ip_only, "{t:?}");
            assert_eq!(t.hash(), *with_ports, "{t:?}");
        }
    }

    #[test]
    fn the_table_spreads_flows_over_every_queue_round_robin() {
        let q = flow_queues(1024, 4, 128);
        let mut counts = [0usize; 4];
        for &x in &q {
            counts[x as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (200..312).contains(&c)),
            "{counts:?}"
        );
        // One queue: everything on it; the mapping is a pure function of the flow.
        assert!(flow_queues(100, 1, 128).iter().all(|&x| x == 0));
        assert_eq!(q, flow_queues(1024, 4, 128));
        // The table is filled round robin: with as many entries as queues, the queue is the
        // hash modulo the queue count.
        let h = Tuple::of_flow(7).hash() as usize;
        assert_eq!(flow_queues(8, 3, 3)[7] as usize, h % 3);
    }

    #[test]
    fn synthetic_flows_are_scattered_client_tuples() {
        let mut seen = std::collections::HashSet::new();
        for f in 0..4096 {
            let t = Tuple::of_flow(f);
            assert_eq!((t.src[0], t.dst, t.dport), (10, [192, 0, 2, 1], 9));
            assert!(t.sport >= 1024);
            seen.insert(t);
        }
        assert_eq!(
            seen.len(),
            4096,
            "no two of the first 4096 flows share a tuple"
        );
        assert_eq!(Tuple::of_flow(7), Tuple::of_flow(7));
    }

    #[test]
    fn splitmix64_matches_the_reference_generator_seeded_with_zero() {
        // Vigna's splitmix64.c seeded with 0 adds the golden gamma before each output: its
        // first three outputs are the mix of 0, 1 and 2 gammas.
        let gamma: u64 = 0x9E37_79B9_7F4A_7C15;
        assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(gamma), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(splitmix64(gamma.wrapping_mul(2)), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn a_flows_tuple_takes_its_address_and_port_from_its_scrambled_number() {
        // x = splitmix64(f): source 10.x[23:16].x[15:8].x[7:0], port 1024 + x[63:24] mod 64512
        // (flow 0: x = 0xE220_A839_7B1D_CDAF). Golden reports depend on these tuples.
        let t = |src: [u8; 4], sport| tuple(src, sport, [192, 0, 2, 1], 9);
        assert_eq!(Tuple::of_flow(0), t([10, 0x1D, 0xCD, 0xAF], 21_883));
        assert_eq!(Tuple::of_flow(1), t([10, 2, 92, 193], 8_329));
        assert_eq!(Tuple::of_flow(1000), t([10, 204, 193, 72], 42_829));
    }

    #[test]
    fn a_hash_picks_the_table_entry_hash_mod_size_which_holds_entry_mod_queues() {
        // (hash, queues, table size, queue)
        let table: &[(u32, usize, usize, u16)] = &[
            (6, 4, 128, 2),
            (7, 4, 128, 3),
            (130, 4, 128, 2),      // entry 2
            (127, 3, 128, 1),      // entry 127, 127 mod 3
            (u32::MAX, 5, 128, 2), // entry 127
        ];
        for &(hash, queues, size, queue) in table {
            assert_eq!(queue_of(hash, queues, size), queue, "hash {hash}");
        }
    }
}
