//! Trace replay: a capture's packets as the NIC's arrivals (`traffic.kind = "pcap"`).
//!
//! **Build, validate, then run.** When the scenario is built, [`Scan::of`] reads the capture
//! once, streaming: it finds every error a reader can find (not a capture, truncated, corrupt,
//! empty, an unsupported link type, a frame irqlab cannot model) before time zero, and learns
//! what the run needs before it starts: the packet count and duration (the run's default
//! length), the frame sizes (the socket's buffer size, the hybrid scheme's switching point),
//! and the flows, numbered in order of first appearance, with each flow's RSS hash (the
//! topology steers them as it steers synthetic flows). The run then reads the file again,
//! one packet at a time ([`Replay`]): memory grows with the number of distinct flows (an entry
//! of about 40 bytes each), never with the number of packets.
//!
//! **Time.** The first packet arrives at time zero, every other one at its offset from the
//! first, divided by `traffic.speedup` and rounded to the picosecond. A timestamp earlier than
//! the previous packet's (captures merged from several queues or interfaces) is replayed at
//! the previous packet's time and counted (`reordered`). One pass of the capture lasts its span
//! (first to last packet) plus its mean gap, so that a capture of n packets at rate r replays
//! at rate r: pass k starts k such periods after time zero (`traffic.loop` passes, 0: until
//! the run ends).

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use super::Arrival;
use super::capture::{CaptureError, FlowKey, Format, Reader, Record};
use crate::time::SimTime;

/// Distinct flows a capture may hold (one table entry each).
pub const MAX_FLOWS: usize = 1 << 24;
/// How many of the largest gaps a scan keeps.
const GAPS_KEPT: usize = 5;
/// A time past any run's end (runs end before 2^63 ps).
const NEVER_PS: u64 = 1 << 62;

/// FxHash's mixing step: fast, deterministic, and good enough for a table of flow keys.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowHasher(u64);

impl Hasher for FlowHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A capture's flows, numbered from 0 in order of first appearance.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Flows {
    ids: HashMap<FlowKey, u32, BuildHasherDefault<FlowHasher>>,
    /// Each flow's RSS hash.
    pub hash: Vec<u32>,
    /// Each flow's packets in the capture.
    pub packets: Vec<u64>,
}

impl Flows {
    #[inline]
    pub fn id(&self, key: &FlowKey) -> Option<u32> {
        self.ids.get(key).copied()
    }

    pub fn len(&self) -> usize {
        self.hash.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hash.is_empty()
    }

    fn add(&mut self, key: FlowKey) -> Result<u32, CaptureError> {
        if let Some(&id) = self.ids.get(&key) {
            self.packets[id as usize] += 1;
            return Ok(id);
        }
        if self.hash.len() == MAX_FLOWS {
            return Err(CaptureError(format!(
                "holds more than {MAX_FLOWS} distinct flows, more than irqlab keeps"
            )));
        }
        let id = self.hash.len() as u32;
        self.ids.insert(key, id);
        self.hash.push(key.rss_hash());
        self.packets.push(1);
        Ok(id)
    }

    /// The `n` flows with the most packets (ties: the first seen first): id, key, packets.
    pub fn top(&self, n: usize) -> Vec<(u32, FlowKey, u64)> {
        let mut all: Vec<(u32, FlowKey, u64)> = self
            .ids
            .iter()
            .map(|(k, &id)| (id, *k, self.packets[id as usize]))
            .collect();
        all.sort_unstable_by_key(|&(id, _, p)| (std::cmp::Reverse(p), id));
        all.truncate(n);
        all
    }
}

/// What one pass over a capture learns (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Scan {
    pub format: Format,
    pub compressed: bool,
    /// The link types of its interfaces, in order of appearance.
    pub link_types: Vec<i32>,
    /// The largest snap length its headers give (0: none given).
    pub snaplen: u32,
    pub packets: u64,
    /// The first packet's timestamp, ps since the epoch.
    pub first_ps: i128,
    /// From the first packet to the last, as replayed (ps).
    pub span_ps: u64,
    /// All frames' bytes (frames as the NIC receives them, FCS included).
    pub frame_bytes: u64,
    /// Frames per size: `(bytes, count)`, by size.
    pub sizes: Vec<(u32, u64)>,
    pub flows: Flows,
    /// Packets whose timestamp is earlier than the previous packet's.
    pub reordered: u64,
    /// Packets the capture kept only part of (its snap length).
    pub cut: u64,
    pub ipv4: u64,
    pub ipv6: u64,
    /// Packets that are not IP.
    pub other: u64,
    pub tcp: u64,
    pub udp: u64,
    /// The largest gaps between consecutive packets, largest first: `(gap ps, index of the
    /// packet after the gap, from 0)`.
    pub gaps: Vec<(u64, u64)>,
}

impl Scan {
    /// Reads the capture at `path` once.
    pub fn of(path: &Path) -> Result<Scan, CaptureError> {
        let mut r = Reader::open(path)?;
        let mut by_size: Vec<u64> = Vec::new();
        let mut s = Scan {
            format: r.format(),
            compressed: r.compressed(),
            link_types: Vec::new(),
            snaplen: 0,
            packets: 0,
            first_ps: 0,
            span_ps: 0,
            frame_bytes: 0,
            sizes: Vec::new(),
            flows: Flows::default(),
            reordered: 0,
            cut: 0,
            ipv4: 0,
            ipv6: 0,
            other: 0,
            tcp: 0,
            udp: 0,
            gaps: Vec::new(),
        };
        // the latest timestamp so far, and its offset
        let mut latest = i128::MIN;
        let mut prev = 0u64;
        let mut rec = Record::default();
        while r.read_into(&mut rec)? {
            if s.packets == 0 {
                s.first_ps = rec.ts_ps;
            }
            // timestamps, not offsets, are compared: an offset is clamped at 0, and a packet
            // before the first would pass for one at its time
            if rec.ts_ps < latest {
                s.reordered += 1;
            } else {
                latest = rec.ts_ps;
                let rel = offset(latest, s.first_ps);
                if s.packets > 0 {
                    s.note_gap(rel - prev, s.packets);
                }
                prev = rel;
            }
            s.packets += 1;
            s.frame_bytes += u64::from(rec.frame_bytes);
            let i = rec.frame_bytes as usize;
            if by_size.len() <= i {
                by_size.resize(i + 1, 0);
            }
            by_size[i] += 1;
            s.cut += u64::from(rec.cut);
            match rec.key.family {
                4 => s.ipv4 += 1,
                6 => s.ipv6 += 1,
                _ => s.other += 1,
            }
            match (rec.key.family, rec.key.proto) {
                (0, _) => {}
                (_, 6) => s.tcp += 1,
                (_, 17) => s.udp += 1,
                _ => {}
            }
            s.flows.add(rec.key)?;
        }
        if s.packets == 0 {
            return Err(CaptureError(format!(
                "holds no packets (an empty {} capture)",
                s.format.name()
            )));
        }
        s.span_ps = prev;
        s.link_types = r.link_types().to_vec();
        s.snaplen = r.snaplen();
        s.sizes = by_size
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(b, n)| (b as u32, *n))
            .collect();
        Ok(s)
    }

    fn note_gap(&mut self, gap: u64, index: u64) {
        if self.gaps.len() < GAPS_KEPT || gap > self.gaps[GAPS_KEPT - 1].0 {
            let at = self.gaps.partition_point(|&(g, _)| g >= gap);
            self.gaps.insert(at, (gap, index));
            self.gaps.truncate(GAPS_KEPT);
        }
    }

    /// One pass of the replay at speed 1: the span plus the mean gap (0 for a capture of one
    /// packet, or of packets all at one instant).
    pub fn period_ps(&self) -> u64 {
        if self.packets < 2 {
            return 0;
        }
        let gaps = self.packets - 1;
        self.span_ps + (self.span_ps + gaps / 2) / gaps
    }
}

/// The file's identity as the memo of [`Scan::cached`] knows it: where it is and what it is
/// (device, inode, size, modification time to the nanosecond).
#[derive(Clone, Debug, PartialEq, Eq)]
struct FileId {
    path: PathBuf,
    dev_ino: (u64, u64),
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileId {
    fn of(path: &Path) -> Option<FileId> {
        let meta = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        let dev_ino = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let dev_ino = (0, 0);
        Some(FileId {
            path: std::fs::canonicalize(path).ok()?,
            dev_ino,
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

/// The last few scans, by file identity.
static SCANS: std::sync::Mutex<Vec<(FileId, Arc<Scan>)>> = std::sync::Mutex::new(Vec::new());
/// How many scans the memo keeps.
const SCANS_KEPT: usize = 4;

impl Scan {
    /// [`Scan::of`], remembered: a scenario is typically built several times in one process
    /// (checked, then run; a sweep's points), and each build would read the whole capture
    /// again. A scan is a function of the file's contents; the memo keys it by the file's
    /// identity (path, device and inode, size, modification time to the nanosecond), keeps
    /// the last [`SCANS_KEPT`], and never keeps a failure.
    pub fn cached(path: &Path) -> Result<Arc<Scan>, CaptureError> {
        let Some(id) = FileId::of(path) else {
            return Scan::of(path).map(Arc::new);
        };
        if let Ok(memo) = SCANS.lock() {
            if let Some((_, s)) = memo.iter().find(|(k, _)| *k == id) {
                return Ok(Arc::clone(s));
            }
        }
        let scan = Arc::new(Scan::of(path)?);
        // the file may have changed while it was read: remember only what is still true
        if FileId::of(path).as_ref() == Some(&id) {
            if let Ok(mut memo) = SCANS.lock() {
                memo.retain(|(k, _)| k.path != id.path);
                if memo.len() == SCANS_KEPT {
                    memo.remove(0);
                }
                memo.push((id, Arc::clone(&scan)));
            }
        }
        Ok(scan)
    }
}

/// The offset of `ts` from the first packet's timestamp, ps (0 if earlier).
fn offset(ts: i128, first: i128) -> u64 {
    (ts - first).clamp(0, i128::from(NEVER_PS)) as u64
}

/// A replay as the scenario configures it.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayConfig {
    pub path: PathBuf,
    pub scan: Arc<Scan>,
    pub speedup: f64,
    /// Passes over the capture; 0: until the run ends.
    pub loops: u64,
}

impl ReplayConfig {
    /// When the packet at offset `rel` (ps) of pass `pass` arrives.
    #[inline]
    pub fn time_ps(&self, rel: u64, pass: u64) -> u64 {
        let at = u128::from(rel) + u128::from(pass) * u128::from(self.scan.period_ps());
        if self.speedup == 1.0 {
            return at.min(u128::from(NEVER_PS)) as u64;
        }
        let t = at as f64 / self.speedup;
        if t >= NEVER_PS as f64 {
            NEVER_PS
        } else {
            (t + 0.5) as u64
        }
    }

    /// How long the whole replay lasts: its passes of [`Scan::period_ps`], sped up (`None`:
    /// it repeats until the run ends).
    pub fn length_ps(&self) -> Option<u64> {
        (self.loops > 0).then(|| self.time_ps(0, self.loops))
    }

    /// Mean packets per second of the replay (`None` for a capture without duration).
    pub fn rate_pps(&self) -> Option<f64> {
        let period = self.scan.period_ps();
        (period > 0).then(|| {
            self.scan.packets as f64 * self.speedup * crate::time::PS_PER_S as f64 / period as f64
        })
    }
}

/// How a replay went, for the report.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReplayReport {
    /// Packets replayed before the run's end (the warm-up included).
    pub packets: u64,
    /// Passes over the capture begun.
    pub passes: u64,
    /// Packets replayed at the previous packet's time (their timestamps went back).
    pub reordered: u64,
    /// Why the replay stopped before the run's end, if it did: the file changed or became
    /// unreadable after the scenario was built. The packets before it were replayed.
    pub error: Option<String>,
}

/// The arrival process of a replay (see the module docs).
pub struct Replay {
    cfg: ReplayConfig,
    end_ps: u64,
    reader: Option<Reader>,
    pass: u64,
    /// The latest timestamp read in this pass (`i128::MIN` before its first packet), and its
    /// offset, ps: the time a packet whose timestamp goes back is replayed at.
    latest_ps: i128,
    prev: u64,
    /// The packet read last (reused: reading moves nothing).
    rec: Record,
    done: bool,
    status: ReplayReport,
}

impl fmt::Debug for Replay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replay")
            .field("path", &self.cfg.path)
            .field("pass", &self.pass)
            .field("status", &self.status)
            .finish()
    }
}

impl Replay {
    /// The replay of `cfg` in a run that ends at `end`.
    pub fn new(cfg: &ReplayConfig, end: SimTime) -> Replay {
        Replay {
            cfg: cfg.clone(),
            end_ps: end.ps(),
            reader: None,
            pass: 0,
            latest_ps: i128::MIN,
            prev: 0,
            rec: Record::default(),
            done: false,
            status: ReplayReport::default(),
        }
    }

    pub fn report(&self) -> ReplayReport {
        self.status.clone()
    }

    fn stop(&mut self, why: String) {
        self.done = true;
        self.status.error = Some(format!(
            "the replay stopped after {} packets: {why}",
            self.status.packets
        ));
    }

    /// The next arrival, `None` once the replay has ended (or reached the run's end).
    pub fn next_arrival(&mut self) -> Option<Arrival> {
        loop {
            if self.done {
                return None;
            }
            let reader = match &mut self.reader {
                Some(r) => r,
                None => match Reader::open(&self.cfg.path) {
                    Ok(r) => {
                        self.status.passes += 1;
                        self.latest_ps = i128::MIN;
                        self.prev = 0;
                        self.reader.insert(r)
                    }
                    Err(e) => {
                        self.stop(format!("traffic.pcap cannot be opened again: {e}"));
                        return None;
                    }
                },
            };
            match reader.read_into(&mut self.rec) {
                Ok(true) => {
                    let rec = &self.rec;
                    let scan = &self.cfg.scan;
                    let Some(flow) = scan.flows.id(&rec.key) else {
                        self.stop("traffic.pcap changed since the scenario was built".into());
                        return None;
                    };
                    // as the scan counts them (timestamps, not clamped offsets)
                    if rec.ts_ps < self.latest_ps {
                        self.status.reordered += 1;
                    } else {
                        self.latest_ps = rec.ts_ps;
                        self.prev = offset(rec.ts_ps, scan.first_ps);
                    }
                    let t = self.cfg.time_ps(self.prev, self.pass);
                    if t >= self.end_ps {
                        self.done = true;
                    } else {
                        self.status.packets += 1;
                    }
                    return Some(Arrival {
                        time: SimTime(t),
                        size_bytes: rec.frame_bytes,
                        flow,
                    });
                }
                Ok(false) => {
                    if reader.packets() != self.cfg.scan.packets {
                        self.stop("traffic.pcap changed since the scenario was built".into());
                        return None;
                    }
                    self.reader = None;
                    self.pass += 1;
                    if self.cfg.loops != 0 && self.pass >= self.cfg.loops {
                        self.done = true;
                    }
                }
                Err(e) => {
                    self.stop(format!("traffic.pcap: {e}"));
                    return None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::capture::tests::{ether, file, ipv4, pcap, three, udp};

    fn config(path: &Path, speedup: f64, loops: u64) -> ReplayConfig {
        ReplayConfig {
            path: path.into(),
            scan: Arc::new(Scan::of(path).unwrap()),
            speedup,
            loops,
        }
    }

    fn arrivals(cfg: &ReplayConfig, end_ps: u64) -> (Vec<(u64, u32, u32)>, ReplayReport) {
        let mut r = Replay::new(cfg, SimTime(end_ps));
        let mut out = Vec::new();
        while let Some(a) = r.next_arrival() {
            out.push((a.time.ps(), a.size_bytes, a.flow));
        }
        (out, r.report())
    }

    #[test]
    fn a_scan_counts_packets_sizes_flows_and_gaps() {
        let s = Scan::of(&file("scan.pcap", &pcap(&three(), false, false, 1))).unwrap();
        assert_eq!(
            (s.packets, s.flows.len(), s.ipv4, s.udp, s.cut),
            (3, 2, 3, 3, 1)
        );
        assert_eq!(s.span_ps, 1_000_007_000_000);
        // one pass: the span and a mean gap
        assert_eq!(s.period_ps(), 1_000_007_000_000 + 500_003_500_000);
        assert_eq!(s.sizes, [(64, 2), (1004, 1)]);
        assert_eq!(s.frame_bytes, 64 + 1004 + 64);
        assert_eq!(s.gaps, [(1_000_005_000_000, 2), (2_000_000, 1)]);
        assert_eq!(s.flows.packets, [2, 1]);
        let top = s.flows.top(5);
        assert_eq!(top[0].0, 0);
        assert_eq!(top[0].2, 2);
    }

    #[test]
    fn replay_times_are_offsets_sped_up_pass_after_pass() {
        let path = file("replay.pcap", &pcap(&three(), true, false, 1));
        let cfg = config(&path, 1.0, 1);
        let (got, rep) = arrivals(&cfg, u64::MAX / 4);
        assert_eq!(
            got,
            [(0, 64, 0), (2_000_000, 1004, 1), (1_000_007_000_000, 64, 0)]
        );
        assert_eq!((rep.packets, rep.passes, rep.error), (3, 1, None));
        // twice as fast, twice over: the second pass starts one period (span + mean gap) on
        let cfg = config(&path, 2.0, 2);
        let period = cfg.scan.period_ps();
        let (got, rep) = arrivals(&cfg, u64::MAX / 4);
        let times: Vec<u64> = got.iter().map(|a| a.0).collect();
        let expect: Vec<u64> = [0, 2_000_000, 1_000_007_000_000]
            .iter()
            .flat_map(|&t| [t, t + period])
            .collect::<Vec<_>>();
        let mut expect: Vec<u64> = expect.iter().map(|t| t.div_ceil(2)).collect();
        expect.sort_unstable();
        assert_eq!(times, expect);
        assert_eq!(cfg.length_ps(), Some(period));
        assert_eq!(rep.passes, 2);
        // the run's end stops the reading: the packet at or past it is the last one asked for
        let (got, rep) = arrivals(&config(&path, 1.0, 0), 3_000_000_000_000);
        assert_eq!(got.len(), 3 * 2 + 1);
        assert_eq!(rep.packets, 6);
    }

    #[test]
    fn timestamps_that_go_back_replay_at_the_previous_time() {
        let mut pk = three();
        pk.swap(1, 2); // 0, 1 s, then 2 µs
        let path = file("reordered.pcap", &pcap(&pk, false, false, 1));
        let cfg = config(&path, 1.0, 1);
        assert_eq!(cfg.scan.reordered, 1);
        let (got, rep) = arrivals(&cfg, u64::MAX / 4);
        let times: Vec<u64> = got.iter().map(|a| a.0).collect();
        assert_eq!(times, [0, 1_000_007_000_000, 1_000_007_000_000]);
        assert_eq!(rep.reordered, 1);
    }

    #[test]
    fn timestamps_before_the_first_packets_replay_at_the_previous_time_and_are_counted() {
        // 1 s, then 2 µs before it, then at the first packet's time, then 2 µs after it: the
        // second goes back (counted, replayed at 0 as the first), the third is at the previous
        // packet's time (not counted), the fourth moves on
        let pk = at_ns(&[1_000_000_000, 999_998_000, 1_000_000_000, 1_000_002_000]);
        let path = file("before-first.pcap", &pcap(&pk, false, false, 1));
        let cfg = config(&path, 1.0, 2);
        assert_eq!(cfg.scan.reordered, 1);
        assert_eq!(cfg.scan.span_ps, 2_000_000);
        // two passes: each starts afresh, and counts its own packet going back
        let p = cfg.scan.period_ps();
        assert_eq!(p, 2_666_667);
        let (got, rep) = arrivals(&cfg, u64::MAX / 4);
        let times: Vec<u64> = got.iter().map(|a| a.0).collect();
        assert_eq!(times, [0, 0, 0, 2_000_000, p, p, p, p + 2_000_000]);
        assert_eq!(rep.reordered, 2);
        // one nanosecond (a unit of a nanosecond capture) before the first
        let pk = at_ns(&[5, 4, 6]);
        let path = file("one-unit-before.pcap", &pcap(&pk, true, false, 1));
        let cfg = config(&path, 1.0, 1);
        assert_eq!(cfg.scan.reordered, 1);
        let (got, rep) = arrivals(&cfg, u64::MAX / 4);
        assert_eq!(got.iter().map(|a| a.0).collect::<Vec<_>>(), [0, 0, 1_000]);
        assert_eq!(rep.reordered, 1);
    }

    #[test]
    fn a_capture_that_changes_after_the_build_stops_the_replay_with_a_note() {
        let pk = three();
        let path = file("changing.pcap", &pcap(&pk, false, false, 1));
        let cfg = config(&path, 1.0, 1);
        // cut short
        let bytes = pcap(&pk, false, false, 1);
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        let (got, rep) = arrivals(&cfg, u64::MAX / 4);
        assert_eq!(got.len(), 2);
        let why = rep.error.unwrap();
        assert!(
            why.starts_with("the replay stopped after 2 packets: traffic.pcap: cut short"),
            "{why}"
        );
        // another flow
        let other = ether(
            &[],
            0x0800,
            &ipv4([1, 2, 3, 4], [5, 6, 7, 8], 17, 0, &udp(7, 7)),
        );
        let mut changed = pk.clone();
        changed[1] = (pk[1].0, other.clone(), other.len() as u32);
        std::fs::write(&path, pcap(&changed, false, false, 1)).unwrap();
        let (got, rep) = arrivals(&cfg, u64::MAX / 4);
        assert_eq!(got.len(), 1);
        assert!(
            rep.error
                .unwrap()
                .ends_with("changed since the scenario was built")
        );
        // gone
        std::fs::remove_file(&path).unwrap();
        let (got, rep) = arrivals(&cfg, u64::MAX / 4);
        assert!(got.is_empty());
        assert!(
            rep.error
                .unwrap()
                .contains("cannot be opened again: no such file")
        );
    }

    #[test]
    fn the_flow_hasher_hashes_bytes_as_little_endian_words_zero_padded() {
        let hash = |f: &dyn Fn(&mut FlowHasher)| {
            let mut h = FlowHasher::default();
            f(&mut h);
            h.finish()
        };
        let bytes: Vec<u8> = (1..=11).collect();
        let words = hash(&|h| {
            h.write_u64(u64::from_le_bytes([1, 2, 3, 4, 5, 6, 7, 8]));
            h.write_u64(u64::from_le_bytes([9, 10, 11, 0, 0, 0, 0, 0]));
        });
        assert_eq!(hash(&|h| h.write(&bytes)), words);
        assert_ne!(words, FlowHasher::default().finish());
        // one word: rotate the state by 5, xor the word, multiply by FxHash's constant
        assert_eq!(
            hash(&|h| h.write(&[1])),
            0x51_7c_c1_b7_27_22_0a_95u64.wrapping_mul(1)
        );
    }

    #[test]
    fn a_flow_keys_hash_covers_every_header_field() {
        use std::hash::Hash;
        let hash = |k: &FlowKey| {
            let mut h = FlowHasher::default();
            k.hash(&mut h);
            h.finish()
        };
        let base = FlowKey {
            family: 4,
            proto: 17,
            ports: true,
            sport: 1000,
            dport: 2000,
            ..FlowKey::default()
        };
        let changed = [
            FlowKey { family: 6, ..base },
            FlowKey { proto: 6, ..base },
            FlowKey {
                ports: false,
                ..base
            },
            FlowKey {
                sport: 1001,
                ..base
            },
            FlowKey {
                dport: 2001,
                ..base
            },
        ];
        for k in &changed {
            assert_ne!(hash(k), hash(&base), "{k:?}");
        }
    }

    #[test]
    fn a_scan_counts_ipv6_and_non_ip_packets() {
        let mut s6 = [0u8; 16];
        s6[0] = 0x20;
        s6[15] = 1;
        let v6 = ether(
            &[],
            0x86dd,
            &crate::traffic::capture::tests::ipv6(s6, s6, 17, &udp(5, 6)),
        );
        let arp = ether(&[], 0x0806, &[0; 28]);
        let mut pk = three();
        pk.push((pk[2].0 + 1_000, v6.clone(), v6.len() as u32));
        pk.push((pk[2].0 + 2_000, arp.clone(), arp.len() as u32));
        pk.push((pk[2].0 + 3_000, v6.clone(), v6.len() as u32));
        let s = Scan::of(&file("families.pcap", &pcap(&pk, false, false, 1))).unwrap();
        assert_eq!(
            (s.packets, s.ipv4, s.ipv6, s.other, s.udp, s.tcp),
            (6, 3, 2, 1, 5, 0)
        );
        assert_eq!(s.flows.len(), 4);
        assert!(!s.compressed);
    }

    #[test]
    fn a_scan_keeps_the_five_largest_gaps_largest_first() {
        let f = ether(
            &[],
            0x0800,
            &ipv4([1, 2, 3, 4], [5, 6, 7, 8], 17, 0, &udp(7, 7)),
        );
        // gaps (us) before packets 1..=8: 5, 1, 7, 3, 9, 2, 8, 6
        let gaps_us = [5u64, 1, 7, 3, 9, 2, 8, 6];
        let mut t = 0;
        let mut pk = vec![(t, f.clone(), f.len() as u32)];
        for g in gaps_us {
            t += g * 1000;
            pk.push((t, f.clone(), f.len() as u32));
        }
        let s = Scan::of(&file("gaps.pcap", &pcap(&pk, true, false, 1))).unwrap();
        assert_eq!(
            s.gaps,
            [
                (9_000_000, 5),
                (8_000_000, 7),
                (7_000_000, 3),
                (6_000_000, 8),
                (5_000_000, 1)
            ]
        );
    }

    #[test]
    fn packets_in_order_or_at_one_instant_are_not_reordered() {
        let mut pk = three();
        pk.insert(2, pk[1].clone()); // a second packet at 2 us
        let path = file("in-order.pcap", &pcap(&pk, false, false, 1));
        let cfg = config(&path, 1.0, 1);
        assert_eq!(cfg.scan.reordered, 0);
        let (got, rep) = arrivals(&cfg, u64::MAX / 4);
        let times: Vec<u64> = got.iter().map(|a| a.0).collect();
        assert_eq!(times, [0, 2_000_000, 2_000_000, 1_000_007_000_000]);
        assert_eq!(rep.reordered, 0);
    }

    /// A UDP frame of one flow, `n` copies at `ns` nanoseconds after 1000 s each.
    fn at_ns(ns: &[u64]) -> Vec<(u64, Vec<u8>, u32)> {
        let f = ether(
            &[],
            0x0800,
            &ipv4([10, 0, 0, 1], [10, 0, 0, 2], 17, 0, &udp(7, 7)),
        );
        ns.iter()
            .map(|&t| (1_000_000_000_000 + t, f.clone(), f.len() as u32))
            .collect()
    }

    #[test]
    fn a_scan_counts_tcp_and_udp_packets_and_a_capture_has_flows() {
        let tcp_frame = |sport| {
            ether(
                &[],
                0x0800,
                &ipv4(
                    [1, 1, 1, 1],
                    [2, 2, 2, 2],
                    6,
                    0,
                    &crate::traffic::capture::tests::tcp(sport, 80),
                ),
            )
        };
        let arp = ether(&[], 0x0806, &[0; 28]);
        let mut pk = at_ns(&[0]);
        for (i, f) in [tcp_frame(1000), arp, tcp_frame(1001)]
            .into_iter()
            .enumerate()
        {
            pk.push((pk[0].0 + 1000 * (i as u64 + 1), f.clone(), f.len() as u32));
        }
        let s = Scan::of(&file("tcp.pcap", &pcap(&pk, true, false, 1))).unwrap();
        assert_eq!((s.packets, s.ipv4, s.other, s.tcp, s.udp), (4, 3, 1, 2, 1));
        assert_eq!((s.flows.len(), s.flows.is_empty()), (4, false));
        assert!(Flows::default().is_empty());
    }

    #[test]
    fn one_pass_lasts_the_span_plus_the_mean_gap_rounded_to_the_picosecond() {
        let scan =
            |ns: &[u64]| Scan::of(&file("period.pcap", &pcap(&at_ns(ns), true, false, 1))).unwrap();
        // two packets 3 us apart: a span of 3 us and one gap of 3 us
        assert_eq!(scan(&[0, 3_000]).period_ps(), 6_000_000);
        // one packet: no duration
        assert_eq!(scan(&[0]).period_ps(), 0);
        // seven packets over 1 ns: six gaps of 166.67 ps on average, rounded up to 167
        let s = scan(&[0, 0, 0, 1, 1, 1, 1]);
        assert_eq!((s.span_ps, s.period_ps()), (1_000, 1_167));
        // four packets over 1 ns: three gaps of 333.33 ps, rounded down to 333
        assert_eq!(scan(&[0, 0, 1, 1]).period_ps(), 1_333);
    }

    #[test]
    fn the_replay_rate_is_the_packets_per_pass_times_the_speedup() {
        // two packets per pass of 6 us: 333 333.3 packets/s, twice that at speedup 2
        let path = file("rate.pcap", &pcap(&at_ns(&[0, 3_000]), true, false, 1));
        let rate = |speedup| config(&path, speedup, 1).rate_pps().unwrap();
        assert!(
            (rate(1.0) - 2.0 / 6e-6).abs() < 1e-9 * (2.0 / 6e-6),
            "{}",
            rate(1.0)
        );
        assert!(
            (rate(2.0) - 4.0 / 6e-6).abs() < 1e-9 * (4.0 / 6e-6),
            "{}",
            rate(2.0)
        );
        assert!(
            (rate(0.5) - 1.0 / 6e-6).abs() < 1e-9 * (1.0 / 6e-6),
            "{}",
            rate(0.5)
        );
        // one packet: no duration, so no rate
        let one = file("one.pcap", &pcap(&at_ns(&[0]), true, false, 1));
        assert_eq!(config(&one, 1.0, 1).rate_pps(), None);
    }

    #[test]
    fn the_scan_memo_returns_the_same_scan_while_the_file_is_unchanged_and_keeps_several_files() {
        let a = file("memo-a.pcap", &pcap(&three(), false, false, 1));
        let b = file("memo-b.pcap", &pcap(&at_ns(&[0, 5]), true, false, 1));
        // The memo is shared by the whole process: other tests' captures may push an entry
        // out between two calls (it keeps 4), so each property needs one attempt that holds.
        let attempts = 20;
        let same_twice = (0..attempts).any(|_| {
            let first = Scan::cached(&a).unwrap();
            Arc::ptr_eq(&first, &Scan::cached(&a).unwrap())
        });
        assert!(same_twice, "an unchanged file is scanned once");
        let kept_with_another = (0..attempts).any(|_| {
            let first = Scan::cached(&a).unwrap();
            assert_eq!(Scan::cached(&b).unwrap().packets, 2);
            Arc::ptr_eq(&first, &Scan::cached(&a).unwrap())
        });
        assert!(kept_with_another, "a scan of another file keeps this one's");
        assert_eq!(*Scan::cached(&a).unwrap(), Scan::of(&a).unwrap());
        // the file changes (here its size): it is scanned again
        let mut pk = three();
        pk.push((pk[2].0 + 1_000, pk[0].1.clone(), pk[0].2));
        std::fs::write(&a, pcap(&pk, false, false, 1)).unwrap();
        assert_eq!(Scan::cached(&a).unwrap().packets, 4);
    }

    #[test]
    fn the_flow_hasher_xors_each_word_into_the_rotated_state() {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let hash = |words: &[u64]| {
            let mut h = FlowHasher::default();
            for &w in words {
                h.write_u64(w);
            }
            h.finish()
        };
        let state = K.rotate_left(5); // after the word 1, rotated
        assert_eq!(hash(&[1, 0x0f0f]), (state ^ 0x0f0f).wrapping_mul(K));
        // a second word whose bits are all set in the rotated state still changes the hash
        let bit = 1u64 << state.trailing_zeros();
        assert_ne!(hash(&[1, bit]), hash(&[1, 0]));
        assert_ne!(hash(&[1, state]), hash(&[1, 0]));
    }

    #[test]
    fn a_replays_debug_form_shows_its_file_pass_and_status() {
        let path = file("debug.pcap", &pcap(&three(), false, false, 1));
        let mut r = Replay::new(&config(&path, 1.0, 1), SimTime(u64::MAX / 4));
        r.next_arrival().unwrap();
        let shown = format!("{r:?}");
        assert!(shown.starts_with("Replay {"), "{shown}");
        assert!(
            shown.contains(&format!("path: {:?}", path.to_path_buf())),
            "{shown}"
        );
        assert!(shown.contains("pass: 0"), "{shown}");
        assert!(
            shown.contains("status: ReplayReport { packets: 1, passes: 1"),
            "{shown}"
        );
    }
}
