//! Reading packet captures, one packet at a time: memory does not grow with the capture.
//!
//! pcap (either byte order, micro- or nanosecond timestamps) and pcapng (any timestamp
//! resolution, several sections and interfaces), plain or gzip-compressed (told by the
//! file's first bytes, not its name), through `pcap-parser`'s streaming readers and `flate2`.
//! Each packet becomes a [`Record`]: its timestamp in picoseconds, the length of the frame the
//! NIC receives, and its flow: the 5-tuple with the Toeplitz hash RSS computes over it.
//!
//! **Frame length.** irqlab's frames are Ethernet frames from the destination address to the
//! FCS (64 to 1518 bytes for standard frames; `docs/traffic.md`). A capture records the
//! packet's original length without the FCS (unless the capture says it kept it: the pcap
//! header's FCS bits, pcapng's `if_fcslen`), so the frame is the original length + 4. A
//! capture of another link type has its link header replaced by an untagged Ethernet header:
//! raw IP + 18, Linux cooked v1 − 16 + 18, v2 − 20 + 18. Frames shorter than the Ethernet
//! minimum (a capture taken on the sending host, before padding) are padded to 64 bytes, as
//! on the wire.
//!
//! **Flows.** The link header is walked by hand (Ethernet, 802.1Q, QinQ: 0x8100, 0x88a8,
//! 0x9100; Linux cooked v1 and v2), the IP layer by `etherparse` (IPv4 with options, IPv6
//! with extension headers, leniently: a capture cut by its snap length still has its
//! headers). The ports are the first four bytes of a TCP or UDP header, read whenever they
//! were captured. The flow is the 5-tuple; RSS hashes source and destination address and
//! port (IPv4 or IPv6) as a NIC configured for 4-tuple hashing does, and addresses only for
//! a fragment (any fragment: as NICs do, the first one included, so that a datagram's
//! fragments stay together) and for IP without ports. A packet that is not IP (ARP, LLDP, a
//! frame too short for its headers) gets a flow per source and destination MAC address and
//! EtherType, and RSS hash 0: NICs do not hash it and send it to the queue of indirection
//! entry 0.

use std::fmt;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{self, Read};
use std::path::Path;
use std::sync::{Arc, Mutex};

use etherparse::LaxIpSlice;
use pcap_parser::traits::{PcapNGPacketBlock, PcapReaderIterator};
use pcap_parser::{Block, LegacyPcapReader, PcapBlockOwned, PcapError, PcapNGReader};

use crate::nic::rss::{DEFAULT_KEY, toeplitz};
use crate::time::PS_PER_S;

/// Why a capture cannot be read: one line, without the file's name (the caller adds it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureError(pub String);

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(reason: impl Into<String>) -> Result<T, CaptureError> {
    Err(CaptureError(reason.into()))
}

/// The shortest Ethernet frame, FCS included.
pub const MIN_FRAME_BYTES: u32 = 64;
/// The longest frame irqlab models (a packet's size is 16 bits in the rings).
pub const MAX_FRAME_BYTES: u32 = 65_535;
/// Bytes of an untagged Ethernet header and its FCS.
const ETHERNET_BYTES: u32 = 18;
/// The largest snap length libpcap writes (`MAXIMUM_SNAPLEN`): a pcap record claiming more
/// captured bytes is corrupt.
const MAX_CAPLEN: u32 = 262_144;
/// Read buffer, and how far it may grow for one pcapng block.
const BUFFER_BYTES: usize = 1 << 20;
const MAX_BLOCK_BYTES: usize = 16 << 20;

/// A packet's flow: its 5-tuple, or for a packet that is not IP its MAC addresses and
/// EtherType.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowKey {
    /// 4 or 6 (IP version), 0: not IP.
    pub family: u8,
    /// The IP protocol (of the last IPv6 extension header's next header); 0 when not IP.
    pub proto: u8,
    /// Whether `sport` and `dport` were read (TCP or UDP, not a fragment).
    pub ports: bool,
    pub sport: u16,
    /// The destination port; the EtherType for a packet that is not IP.
    pub dport: u16,
    /// IPv4 addresses in the first 4 bytes, MAC addresses in the first 6.
    pub src: [u8; 16],
    pub dst: [u8; 16],
}

impl Hash for FlowKey {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let head = u64::from(self.family)
            | u64::from(self.proto) << 8
            | u64::from(self.ports) << 16
            | u64::from(self.sport) << 24
            | u64::from(self.dport) << 40;
        h.write_u64(head);
        for half in [&self.src, &self.dst] {
            h.write_u64(u64::from_le_bytes(half[..8].try_into().expect("8 bytes")));
            h.write_u64(u64::from_le_bytes(half[8..].try_into().expect("8 bytes")));
        }
    }
}

const TCP: u8 = 6;
const UDP: u8 = 17;

impl FlowKey {
    fn other(src: [u8; 6], dst: [u8; 6], ethertype: u16) -> FlowKey {
        let mut k = FlowKey {
            family: 0,
            proto: 0,
            ports: false,
            sport: 0,
            dport: ethertype,
            src: [0; 16],
            dst: [0; 16],
        };
        k.src[..6].copy_from_slice(&src);
        k.dst[..6].copy_from_slice(&dst);
        k
    }

    /// The RSS hash of the flow with the default key: Toeplitz over source and destination
    /// address, then source and destination port when the packet has them; 0 for a packet
    /// that is not IP.
    pub fn rss_hash(&self) -> u32 {
        let n = match self.family {
            4 => 4,
            6 => 16,
            _ => return 0,
        };
        let mut input = [0u8; 36];
        input[..n].copy_from_slice(&self.src[..n]);
        input[n..2 * n].copy_from_slice(&self.dst[..n]);
        let mut len = 2 * n;
        if self.ports {
            input[len..len + 2].copy_from_slice(&self.sport.to_be_bytes());
            input[len + 2..len + 4].copy_from_slice(&self.dport.to_be_bytes());
            len += 4;
        }
        toeplitz(&DEFAULT_KEY, &input[..len])
    }
}

/// As `trace-info` shows a flow: `udp 10.0.0.1:1234 > 10.0.0.2:80`,
/// `tcp [2001:db8::1]:443 > [2001:db8::2]:5000`, `ip proto 1 10.0.0.1 > 10.0.0.2`,
/// `ethertype 0x0806 02:00:00:00:00:01 > ff:ff:ff:ff:ff:ff`.
impl fmt::Display for FlowKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let addr = |a: &[u8; 16]| match self.family {
            4 => std::net::Ipv4Addr::from(<[u8; 4]>::try_from(&a[..4]).expect("4")).to_string(),
            _ => std::net::Ipv6Addr::from(*a).to_string(),
        };
        let with_port = |a: &[u8; 16], p: u16| match self.family {
            4 => format!("{}:{p}", addr(a)),
            _ => format!("[{}]:{p}", addr(a)),
        };
        match (self.family, self.ports) {
            (0, _) => {
                let mac = |m: &[u8; 16]| {
                    m[..6]
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect::<Vec<_>>()
                        .join(":")
                };
                write!(
                    f,
                    "ethertype 0x{:04x} {} > {}",
                    self.dport,
                    mac(&self.src),
                    mac(&self.dst)
                )
            }
            (_, true) => {
                let name = if self.proto == TCP { "tcp" } else { "udp" };
                write!(
                    f,
                    "{name} {} > {}",
                    with_port(&self.src, self.sport),
                    with_port(&self.dst, self.dport)
                )
            }
            (_, false) => write!(
                f,
                "ip proto {} {} > {}",
                self.proto,
                addr(&self.src),
                addr(&self.dst)
            ),
        }
    }
}

/// A link type irqlab replays, and the link header its packets start with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    Ethernet,
    /// Raw IPv4 or IPv6 (LINKTYPE_RAW, LINKTYPE_IPV4, LINKTYPE_IPV6).
    RawIp,
    /// Linux cooked capture v1 (16-byte header) and v2 (20 bytes).
    LinuxSll,
    LinuxSll2,
}

impl Link {
    fn of(linktype: u16) -> Option<Link> {
        match linktype {
            1 => Some(Link::Ethernet),
            101 | 228 | 229 => Some(Link::RawIp),
            113 => Some(Link::LinuxSll),
            276 => Some(Link::LinuxSll2),
            _ => None,
        }
    }

    /// Bytes of the capture's link header that an Ethernet header replaces.
    fn header_bytes(self) -> u32 {
        match self {
            Link::Ethernet => 14,
            Link::RawIp => 0,
            Link::LinuxSll => 16,
            Link::LinuxSll2 => 20,
        }
    }
}

/// What the error for an unsupported link type says.
fn unsupported_link(linktype: i32) -> CaptureError {
    CaptureError(format!(
        "link type {linktype} is not supported: irqlab replays Ethernet (1), raw IP (101, 228, 229) and Linux cooked (113, 276) captures"
    ))
}

/// One interface of a capture: how its packets are read.
#[derive(Clone, Copy, Debug)]
struct Iface {
    link: Link,
    /// FCS bytes the capture kept at the end of each frame.
    fcs_bytes: u32,
    /// Timestamp units per second, and the offset added to every timestamp, s.
    units_per_s: u64,
    offset_s: i64,
}

/// One packet of a capture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// Its timestamp, ps since the epoch (as the capture gives it).
    pub ts_ps: i128,
    /// The frame the NIC receives, bytes (see the module docs).
    pub frame_bytes: u32,
    pub key: FlowKey,
    /// The capture kept fewer bytes than the packet had (its snap length).
    pub cut: bool,
}

/// The file's container format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Pcap,
    PcapNg,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Pcap => "pcap",
            Format::PcapNg => "pcapng",
        }
    }
}

/// Reads fully: each `read` fills the buffer unless the input ends (the capture readers take
/// a short read at the start for a short file). An error after some bytes is returned by the
/// next call, so that the packets before it are read; its words are kept, since the readers
/// reduce every error to "read error".
struct Full<R> {
    inner: R,
    pending: Option<io::Error>,
    error: Arc<Mutex<Option<String>>>,
}

impl<R: Read> Read for Full<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        let mut n = 0;
        while n < buf.len() {
            match self.inner.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    if let Ok(mut slot) = self.error.lock() {
                        *slot = Some(e.to_string());
                    }
                    if n == 0 {
                        return Err(e);
                    }
                    self.pending = Some(e);
                    break;
                }
            }
        }
        Ok(n)
    }
}

/// Reads up to `n` bytes from the start of `r`.
fn head(r: &mut impl Read, n: usize) -> Result<Vec<u8>, CaptureError> {
    let mut out = Vec::with_capacity(n);
    match r.take(n as u64).read_to_end(&mut out) {
        Ok(_) => Ok(out),
        Err(e) => err(format!("cannot read: {}", io_words(&e))),
    }
}

fn io_words(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file".into(),
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        io::ErrorKind::IsADirectory => "is a directory, not a capture file".into(),
        _ => e.to_string(),
    }
}

/// What the capture readers read from: the file (decompressed), read fully.
type Body = Full<io::Chain<io::Cursor<Vec<u8>>, Box<dyn Read + Send>>>;

/// The format's reader, dispatched statically (the hot path inlines it: through a trait
/// object, every packet's block was returned through memory).
enum Inner {
    Pcap(LegacyPcapReader<Body>),
    Ng(PcapNGReader<Body>),
}

/// A capture opened for reading, one packet at a time.
pub struct Reader {
    inner: Inner,
    m: Meta,
}

/// What a reader knows besides its buffer.
struct Meta {
    io_error: Arc<Mutex<Option<String>>>,
    format: Format,
    compressed: bool,
    /// The link types of the interfaces seen so far, in order (repeats left out).
    link_types: Vec<i32>,
    /// The largest snap length of the file's interfaces (0: not given).
    snaplen: u32,
    ifaces: Vec<Iface>,
    /// pcap: nanosecond timestamps, big-endian.
    nano: bool,
    big: bool,
    /// Whole packets read.
    packets: u64,
    capacity: usize,
}

/// The magic numbers of a pcap file (both byte orders; micro- and nanosecond, and the
/// "modified" format), and of a pcapng section header.
const PCAP_MAGICS: [[u8; 4]; 6] = [
    [0xd4, 0xc3, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xc3, 0xd4],
    [0x4d, 0x3c, 0xb2, 0xa1],
    [0xa1, 0xb2, 0x3c, 0x4d],
    [0x34, 0xcd, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xcd, 0x34],
];
const PCAPNG_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];

impl Reader {
    /// Opens `path`: a pcap or pcapng file, plain or gzip-compressed.
    pub fn open(path: &Path) -> Result<Reader, CaptureError> {
        let file = File::open(path).map_err(|e| CaptureError(io_words(&e)))?;
        if file.metadata().is_ok_and(|m| m.is_dir()) {
            return err("is a directory, not a capture file");
        }
        let error = Arc::new(Mutex::new(None));
        let mut file = io::BufReader::with_capacity(1 << 16, file);
        let magic = head(&mut file, 6)?;
        let raw = io::Cursor::new(magic.clone()).chain(file);
        let (mut input, compressed): (Box<dyn Read + Send>, bool) =
            if magic.starts_with(&[0x1f, 0x8b]) {
                (Box::new(flate2::read::MultiGzDecoder::new(raw)), true)
            } else {
                (Box::new(raw), false)
            };
        let start = match head(&mut input, 4) {
            Ok(s) => s,
            Err(e) if compressed => {
                return err(format!(
                    "the gzip stream is damaged or cut short at its start ({})",
                    e.0.trim_start_matches("cannot read: ")
                ));
            }
            Err(e) => return Err(e),
        };
        let what = |kind: &str| {
            if compressed {
                format!("{kind} (after gzip decompression)")
            } else {
                kind.to_string()
            }
        };
        if start.is_empty() {
            return err(what("is empty: not a capture"));
        }
        let compression = [
            (&[0x28, 0xb5, 0x2f, 0xfd][..], "zstd", "zstd -d"),
            (&[0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00][..], "xz", "xz -d"),
            (&b"BZh"[..], "bzip2", "bzip2 -d"),
        ];
        for (m, name, tool) in compression {
            if !compressed && magic.starts_with(m) {
                return err(format!(
                    "is compressed with {name}, which irqlab does not read: decompress it first ({tool}), or compress it with gzip"
                ));
            }
        }
        let body = Full {
            inner: io::Cursor::new(start.clone()).chain(input),
            pending: None,
            error: Arc::clone(&error),
        };
        let m: [u8; 4] = start
            .get(..4)
            .and_then(|s| s.try_into().ok())
            .unwrap_or([0; 4]);
        let (inner, format) = if m == PCAPNG_MAGIC {
            match PcapNGReader::new(BUFFER_BYTES, body) {
                Ok(r) => (Inner::Ng(r), Format::PcapNg),
                Err(e) => {
                    return Err(open_error(&e, "pcapng section header", &error, compressed));
                }
            }
        } else if PCAP_MAGICS.contains(&m) {
            match LegacyPcapReader::new(BUFFER_BYTES, body) {
                Ok(r) => (Inner::Pcap(r), Format::Pcap),
                Err(e) => return Err(open_error(&e, "pcap file header", &error, compressed)),
            }
        } else {
            let shown: Vec<String> = start.iter().map(|b| format!("{b:02x}")).collect();
            return err(what(&format!(
                "not a pcap or pcapng capture (it starts with bytes {})",
                shown.join(" ")
            )));
        };
        Ok(Reader {
            inner,
            m: Meta {
                io_error: error,
                format,
                compressed,
                link_types: Vec::new(),
                snaplen: 0,
                ifaces: Vec::new(),
                nano: false,
                big: false,
                packets: 0,
                capacity: BUFFER_BYTES,
            },
        })
    }

    /// Whole packets read so far.
    pub fn packets(&self) -> u64 {
        self.m.packets
    }

    pub fn format(&self) -> Format {
        self.m.format
    }

    /// Whether the file is gzip-compressed.
    pub fn compressed(&self) -> bool {
        self.m.compressed
    }

    /// The link types of the interfaces seen so far, in order (repeats left out).
    pub fn link_types(&self) -> &[i32] {
        &self.m.link_types
    }

    /// The largest snap length of the file's interfaces seen so far (0: none given).
    pub fn snaplen(&self) -> u32 {
        self.m.snaplen
    }

    /// The next packet, or `None` at the end of the capture.
    pub fn next_record(&mut self) -> Result<Option<Record>, CaptureError> {
        let mut r = Record::default();
        Ok(self.read_into(&mut r)?.then_some(r))
    }

    /// Reads the next packet into `out` (a reused record: the hot path moves nothing); false
    /// at the end of the capture.
    pub fn read_into(&mut self, out: &mut Record) -> Result<bool, CaptureError> {
        match &mut self.inner {
            Inner::Pcap(r) => self.m.read_from(r, out),
            Inner::Ng(r) => self.m.read_from(r, out),
        }
    }
}

impl Meta {
    fn read_error(&self) -> CaptureError {
        let words = self
            .io_error
            .lock()
            .ok()
            .and_then(|e| e.clone())
            .unwrap_or_else(|| "read error".into());
        if self.compressed {
            CaptureError(format!(
                "the gzip stream is damaged or cut short after {} packets ({words})",
                self.packets
            ))
        } else {
            CaptureError(format!(
                "cannot read after {} packets: {words}",
                self.packets
            ))
        }
    }

    /// A pcap record header at the front of the buffer whose captured length no record may
    /// have is corrupt (rather than cut short, or too long to read).
    /// What the format calls one of its records, for messages.
    fn record_noun(&self) -> &'static str {
        if self.format == Format::Pcap {
            "packet record"
        } else {
            "block"
        }
    }

    fn check_caplen(&self, data: &[u8]) -> Result<(), CaptureError> {
        if self.format != Format::Pcap {
            return Ok(());
        }
        let Some(b) = data.get(8..12) else {
            return Ok(());
        };
        let b: [u8; 4] = b.try_into().expect("4 bytes");
        let caplen = if self.big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        };
        if caplen > MAX_CAPLEN {
            return err(format!(
                "corrupt: packet record {} claims {caplen} captured bytes (at most {MAX_CAPLEN})",
                self.packets + 1
            ));
        }
        Ok(())
    }

    /// [`Reader::read_into`] from the format's reader `inner`.
    #[inline]
    fn read_from<R: PcapReaderIterator>(
        &mut self,
        inner: &mut R,
        out: &mut Record,
    ) -> Result<bool, CaptureError> {
        enum Step {
            Block(usize, bool),
            Eof,
            Refill,
            Cut,
            Grow,
            ReadError,
            Corrupt,
        }
        loop {
            let step = match inner.next() {
                Ok((offset, block)) => {
                    let mut st = State {
                        ifaces: &mut self.ifaces,
                        link_types: &mut self.link_types,
                        snaplen: &mut self.snaplen,
                        nano: &mut self.nano,
                        big: &mut self.big,
                        packets: self.packets,
                    };
                    Step::Block(offset, st.take(&block, out)?)
                }
                Err(PcapError::Eof) => Step::Eof,
                Err(PcapError::Incomplete(_)) => Step::Refill,
                Err(PcapError::UnexpectedEof) => Step::Cut,
                Err(PcapError::BufferTooSmall) => Step::Grow,
                Err(PcapError::ReadError) => Step::ReadError,
                Err(_) => Step::Corrupt,
            };
            match step {
                Step::Block(offset, got) => {
                    inner.consume(offset);
                    if got {
                        self.packets += 1;
                        return Ok(true);
                    }
                }
                Step::Eof => return Ok(false),
                Step::Refill => {
                    if inner.refill().is_err() {
                        return Err(self.read_error());
                    }
                }
                Step::Cut => {
                    self.check_caplen(inner.data())?;
                    return err(format!(
                        "cut short in the middle of a {} after {} whole packets (the file ends inside it: was the capture stopped before it was written out?)",
                        self.record_noun(),
                        self.packets
                    ));
                }
                Step::Grow => {
                    self.check_caplen(inner.data())?;
                    if self.format == Format::Pcap || self.capacity >= MAX_BLOCK_BYTES {
                        return err(format!(
                            "corrupt: after {} packets a {} claims more than {} MiB",
                            self.packets,
                            self.record_noun(),
                            self.capacity >> 20
                        ));
                    }
                    self.capacity *= 4;
                    inner.grow(self.capacity);
                }
                Step::ReadError => return Err(self.read_error()),
                Step::Corrupt => {
                    return err(format!(
                        "corrupt: the {} after {} packets cannot be parsed",
                        self.record_noun(),
                        self.packets
                    ));
                }
            }
        }
    }
}

/// Why a capture's header cannot be read.
fn open_error(
    e: &PcapError<&'static [u8]>,
    what: &str,
    io_error: &Arc<Mutex<Option<String>>>,
    compressed: bool,
) -> CaptureError {
    let io = io_error.lock().ok().and_then(|e| e.clone());
    match (io, e) {
        (Some(words), _) if compressed => CaptureError(format!(
            "the gzip stream is damaged or cut short in the {what} ({words})"
        )),
        (Some(words), _) => CaptureError(format!("cannot read its {what}: {words}")),
        (None, PcapError::Incomplete(_) | PcapError::UnexpectedEof | PcapError::Eof) => {
            CaptureError(format!("cut short in its {what}"))
        }
        _ => CaptureError(format!("corrupt {what}")),
    }
}

/// What a block changes in the reader, and the packet it holds.
struct State<'a> {
    ifaces: &'a mut Vec<Iface>,
    link_types: &'a mut Vec<i32>,
    snaplen: &'a mut u32,
    nano: &'a mut bool,
    big: &'a mut bool,
    packets: u64,
}

impl State<'_> {
    fn link(&mut self, linktype: i32) -> Result<Link, CaptureError> {
        let lt = linktype & 0xffff;
        let link = Link::of(lt as u16).ok_or_else(|| unsupported_link(lt))?;
        if !self.link_types.contains(&lt) {
            self.link_types.push(lt);
        }
        Ok(link)
    }

    /// Takes in `block`; true if it held a packet, now in `out`.
    fn take(&mut self, block: &PcapBlockOwned<'_>, out: &mut Record) -> Result<bool, CaptureError> {
        match block {
            PcapBlockOwned::LegacyHeader(h) => {
                let network = h.network.0;
                let link = self.link(network)?;
                // the FCS bits of the link-type field: bit 26 set, length in 16-bit words in 28-31
                let fcs_bytes = if network & 0x0400_0000 != 0 {
                    ((network as u32 >> 28) & 0xf) * 2
                } else {
                    0
                };
                *self.nano = h.is_nanosecond_precision();
                *self.big = h.is_bigendian();
                *self.snaplen = h.snaplen;
                self.ifaces.clear();
                self.ifaces.push(Iface {
                    link,
                    fcs_bytes,
                    units_per_s: if *self.nano { 1_000_000_000 } else { 1_000_000 },
                    offset_s: 0,
                });
                Ok(false)
            }
            PcapBlockOwned::Legacy(b) => {
                let iface = self.ifaces[0];
                if b.caplen > MAX_CAPLEN {
                    return err(format!(
                        "corrupt: packet record {} claims {} captured bytes (at most {MAX_CAPLEN})",
                        self.packets + 1,
                        b.caplen
                    ));
                }
                if u64::from(b.ts_usec) >= iface.units_per_s {
                    return err(format!(
                        "corrupt: packet record {} has a timestamp fraction of {} (its unit is 1/{} s)",
                        self.packets + 1,
                        b.ts_usec,
                        iface.units_per_s
                    ));
                }
                let ts_ps = i128::from(b.ts_sec) * i128::from(PS_PER_S)
                    + i128::from(b.ts_usec) * i128::from(PS_PER_S / iface.units_per_s);
                self.record(iface, ts_ps, b.origlen, b.data, out)
            }
            PcapBlockOwned::NG(Block::SectionHeader(_)) => {
                self.ifaces.clear();
                Ok(false)
            }
            PcapBlockOwned::NG(Block::InterfaceDescription(idb)) => {
                let link = self.link(idb.linktype.0)?;
                let units_per_s = ts_units_per_s(idb.if_tsresol).ok_or_else(|| {
                    CaptureError(format!(
                        "corrupt: interface {} has an invalid timestamp resolution (if_tsresol = {})",
                        self.ifaces.len(),
                        idb.if_tsresol
                    ))
                })?;
                let fcs_bytes = idb
                    .options
                    .iter()
                    .find(|o| o.code.0 == 13)
                    .and_then(|o| o.value.first())
                    .map_or(0, |&b| u32::from(b));
                *self.snaplen = (*self.snaplen).max(idb.snaplen);
                self.ifaces.push(Iface {
                    link,
                    fcs_bytes,
                    units_per_s,
                    offset_s: idb.ts_offset(),
                });
                Ok(false)
            }
            PcapBlockOwned::NG(Block::EnhancedPacket(epb)) => {
                let Some(&iface) = self.ifaces.get(epb.if_id as usize) else {
                    return err(format!(
                        "corrupt: packet {} names interface {}, which its section does not describe",
                        self.packets + 1,
                        epb.if_id
                    ));
                };
                let ts = (u128::from(epb.ts_high) << 32) | u128::from(epb.ts_low);
                let units = u128::from(iface.units_per_s);
                let ps = (ts * u128::from(PS_PER_S) + units / 2) / units;
                let ts_ps = i128::from(iface.offset_s) * i128::from(PS_PER_S) + ps as i128;
                self.record(iface, ts_ps, epb.origlen, epb.packet_data(), out)
            }
            PcapBlockOwned::NG(Block::SimplePacket(_)) => err(format!(
                "packet {} is a pcapng simple packet block, which has no timestamp: it cannot be replayed",
                self.packets + 1
            )),
            PcapBlockOwned::NG(_) => Ok(false),
        }
    }

    fn record(
        &self,
        iface: Iface,
        ts_ps: i128,
        origlen: u32,
        data: &[u8],
        out: &mut Record,
    ) -> Result<bool, CaptureError> {
        // in 64 bits: an original length near 2^32 is a frame past 2^32, refused, not one
        // that wraps into a short frame
        let captured = data.len() as u64;
        let orig = u64::from(origlen).max(captured);
        let frame = (orig.saturating_sub(u64::from(iface.link.header_bytes() + iface.fcs_bytes))
            + u64::from(ETHERNET_BYTES))
        .max(u64::from(MIN_FRAME_BYTES));
        let Ok(frame @ ..=MAX_FRAME_BYTES) = u32::try_from(frame) else {
            return err(format!(
                "packet {} is a {frame}-byte frame, and irqlab's frames are at most {MAX_FRAME_BYTES} bytes (a capture taken with GRO or TSO holds merged segments: capture with them off, ethtool -K IFACE gro off tso off)",
                self.packets + 1
            ));
        };
        out.ts_ps = ts_ps;
        out.frame_bytes = frame;
        out.cut = captured < u64::from(origlen);
        out.key = flow_of(iface.link, data);
        Ok(true)
    }
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// Timestamp units per second of a pcapng interface's `if_tsresol`: 10^n, or 2^n when the
/// most significant bit is set (n the other bits); `None` if that does not fit 64 bits.
/// (pcap-parser 0.17's `ts_resolution` refuses every binary resolution: it checks the whole
/// byte, flag included, against 63.)
fn ts_units_per_s(if_tsresol: u8) -> Option<u64> {
    let n = u32::from(if_tsresol & 0x7f);
    if if_tsresol & 0x80 == 0 {
        10u64.checked_pow(n)
    } else {
        // None from a shift of 64 or more
        1u64.checked_shl(n)
    }
}

/// Where a link layer's header keeps what a flow key needs: its length, and the offsets of
/// its EtherType, its source MAC and its destination MAC (the Linux cooked headers have none).
struct LinkHeader {
    len: usize,
    ethertype: usize,
    src: usize,
    dst: Option<usize>,
}

/// The flow of a captured packet (see the module docs).
fn flow_of(link: Link, data: &[u8]) -> FlowKey {
    let h = match link {
        Link::Ethernet => LinkHeader {
            len: 14,
            ethertype: 12,
            src: 6,
            dst: Some(0),
        },
        Link::LinuxSll => LinkHeader {
            len: 16,
            ethertype: 14,
            src: 6,
            dst: None,
        },
        Link::LinuxSll2 => LinkHeader {
            len: 20,
            ethertype: 0,
            src: 12,
            dst: None,
        },
        Link::RawIp => return ip(data).unwrap_or_else(|| FlowKey::other([0; 6], [0; 6], 0)),
    };
    if data.len() < h.len {
        return FlowKey::other([0; 6], [0; 6], 0);
    }
    let mac = |at: usize| -> [u8; 6] { data[at..at + 6].try_into().expect("6 bytes") };
    let (src, dst) = (mac(h.src), h.dst.map_or([0; 6], mac));
    let (mut ethertype, mut at) = (be16(data, h.ethertype), h.len);
    // 802.1Q, 802.1ad and the older QinQ tag: 4 bytes each (TCI, then the next EtherType)
    while matches!(ethertype, 0x8100 | 0x88a8 | 0x9100) && data.len() >= at + 4 {
        ethertype = be16(data, at + 2);
        at += 4;
    }
    match ethertype {
        0x0800 | 0x86dd => ip(&data[at..]),
        _ => None,
    }
    .unwrap_or_else(|| FlowKey::other(src, dst, ethertype))
}

/// The 5-tuple of an IP packet, `None` if its header cannot be read.
fn ip(data: &[u8]) -> Option<FlowKey> {
    if let Some(k) = ipv4(data) {
        return Some(k);
    }
    let (slice, _) = LaxIpSlice::from_slice(data).ok()?;
    let mut k = FlowKey {
        family: 4,
        proto: 0,
        ports: false,
        sport: 0,
        dport: 0,
        src: [0; 16],
        dst: [0; 16],
    };
    let payload = match &slice {
        LaxIpSlice::Ipv4(s) => {
            let h = s.header();
            k.src[..4].copy_from_slice(&h.source());
            k.dst[..4].copy_from_slice(&h.destination());
            s.payload()
        }
        LaxIpSlice::Ipv6(s) => {
            let h = s.header();
            k.family = 6;
            k.src = h.source();
            k.dst = h.destination();
            s.payload()
        }
    };
    k.proto = payload.ip_number.0;
    let p = payload.payload;
    if matches!(k.proto, TCP | UDP) && !payload.fragmented && p.len() >= 4 {
        k.ports = true;
        k.sport = be16(p, 0);
        k.dport = be16(p, 2);
    }
    Some(k)
}

/// The 5-tuple of an IPv4 packet, read straight from its header (the common case, and the
/// hot path of a replay; the lenient rules of `etherparse`'s `LaxIpSlice`: a total length
/// beyond the captured bytes is the captured bytes). `None` if it is not one whose header
/// was captured whole (then `etherparse` reads it, or says it cannot).
#[inline]
fn ipv4(data: &[u8]) -> Option<FlowKey> {
    let first = *data.first()?;
    let ihl = usize::from(first & 0xf) * 4;
    if first >> 4 != 4 || ihl < 20 || data.len() < ihl {
        return None;
    }
    let total = usize::from(be16(data, 2));
    let end = if total < ihl || total > data.len() {
        data.len()
    } else {
        total
    };
    let proto = data[9];
    // more fragments, or an offset: a fragment
    let fragment = be16(data, 6) & 0x3fff != 0;
    let mut k = FlowKey {
        family: 4,
        proto,
        ..FlowKey::default()
    };
    k.src[..4].copy_from_slice(&data[12..16]);
    k.dst[..4].copy_from_slice(&data[16..20]);
    let l4 = &data[ihl..end];
    if matches!(proto, TCP | UDP) && !fragment && l4.len() >= 4 {
        k.ports = true;
        k.sport = be16(l4, 0);
        k.dport = be16(l4, 2);
    }
    Some(k)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An Ethernet frame: MACs, optional VLAN tags, EtherType, then `l3`.
    pub fn ether(vlans: &[u16], ethertype: u16, l3: &[u8]) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
        for (i, &v) in vlans.iter().enumerate() {
            let tpid: u16 = if i == 0 && vlans.len() > 1 {
                0x88a8
            } else {
                0x8100
            };
            f.extend_from_slice(&tpid.to_be_bytes());
            f.extend_from_slice(&v.to_be_bytes());
        }
        f.extend_from_slice(&ethertype.to_be_bytes());
        f.extend_from_slice(l3);
        f
    }

    /// An IPv4 header (no options) carrying `l4` of protocol `proto`; `frag`: the flags and
    /// fragment offset field.
    pub fn ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, frag: u16, l4: &[u8]) -> Vec<u8> {
        let total = (20 + l4.len()) as u16;
        let mut h = vec![0x45, 0];
        h.extend_from_slice(&total.to_be_bytes());
        h.extend_from_slice(&[0, 1]);
        h.extend_from_slice(&frag.to_be_bytes());
        h.extend_from_slice(&[64, proto, 0, 0]);
        h.extend_from_slice(&src);
        h.extend_from_slice(&dst);
        h.extend_from_slice(l4);
        h
    }

    pub fn ipv6(src: [u8; 16], dst: [u8; 16], next: u8, l4: &[u8]) -> Vec<u8> {
        let mut h = vec![0x60, 0, 0, 0];
        h.extend_from_slice(&(l4.len() as u16).to_be_bytes());
        h.extend_from_slice(&[next, 64]);
        h.extend_from_slice(&src);
        h.extend_from_slice(&dst);
        h.extend_from_slice(l4);
        h
    }

    /// A UDP header (and 4 bytes of payload).
    pub fn udp(sport: u16, dport: u16) -> Vec<u8> {
        let mut u = Vec::new();
        u.extend_from_slice(&sport.to_be_bytes());
        u.extend_from_slice(&dport.to_be_bytes());
        u.extend_from_slice(&[0, 12, 0, 0, b'd', b'a', b't', b'a']);
        u
    }

    /// A TCP header of 20 bytes.
    pub fn tcp(sport: u16, dport: u16) -> Vec<u8> {
        let mut t = Vec::new();
        t.extend_from_slice(&sport.to_be_bytes());
        t.extend_from_slice(&dport.to_be_bytes());
        t.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0]);
        t
    }

    /// A pcap file: `(timestamp ns, data, original length)` per packet.
    pub fn pcap(packets: &[(u64, Vec<u8>, u32)], nano: bool, big: bool, linktype: u32) -> Vec<u8> {
        let w32 = |v: &mut Vec<u8>, x: u32| {
            v.extend_from_slice(&if big {
                x.to_be_bytes()
            } else {
                x.to_le_bytes()
            })
        };
        let mut f = Vec::new();
        w32(&mut f, if nano { 0xa1b2_3c4d } else { 0xa1b2_c3d4 });
        let version: [u16; 2] = [2, 4];
        for v in version {
            f.extend_from_slice(&if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            });
        }
        w32(&mut f, 0);
        w32(&mut f, 0);
        w32(&mut f, 65_535);
        w32(&mut f, linktype);
        for (ts, data, orig) in packets {
            w32(&mut f, (ts / 1_000_000_000) as u32);
            let frac = ts % 1_000_000_000;
            w32(&mut f, if nano { frac } else { frac / 1000 } as u32);
            w32(&mut f, data.len() as u32);
            w32(&mut f, *orig);
            f.extend_from_slice(data);
        }
        f
    }

    fn block(f: &mut Vec<u8>, kind: u32, body: &[u8]) {
        let len = 12 + body.len().div_ceil(4) * 4;
        f.extend_from_slice(&kind.to_le_bytes());
        f.extend_from_slice(&(len as u32).to_le_bytes());
        f.extend_from_slice(body);
        f.resize(f.len() + (4 - body.len() % 4) % 4, 0);
        f.extend_from_slice(&(len as u32).to_le_bytes());
    }

    /// A little-endian pcapng file: interfaces `(linktype, if_tsresol)`, then packets
    /// `(interface, timestamp in its units, data, original length)`.
    pub fn pcapng(ifaces: &[(u16, u8)], packets: &[(u32, u64, Vec<u8>, u32)]) -> Vec<u8> {
        let mut f = Vec::new();
        let mut shb = vec![0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0];
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        block(&mut f, 0x0a0d_0d0a, &shb);
        for &(lt, res) in ifaces {
            let mut idb = Vec::new();
            idb.extend_from_slice(&lt.to_le_bytes());
            idb.extend_from_slice(&[0, 0]);
            idb.extend_from_slice(&0u32.to_le_bytes());
            // if_tsresol (9), then the end of options
            idb.extend_from_slice(&[9, 0, 1, 0, res, 0, 0, 0, 0, 0, 0, 0]);
            block(&mut f, 1, &idb);
        }
        for (iface, ts, data, orig) in packets {
            let mut epb = Vec::new();
            epb.extend_from_slice(&iface.to_le_bytes());
            epb.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
            epb.extend_from_slice(&(*ts as u32).to_le_bytes());
            epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
            epb.extend_from_slice(&orig.to_le_bytes());
            epb.extend_from_slice(data);
            epb.resize(epb.len().div_ceil(4) * 4, 0);
            block(&mut f, 6, &epb);
        }
        f
    }

    /// Writes `bytes` to a fresh temporary file whose name ends in `name` (the reader looks at
    /// the extension); the file is removed when the returned path is dropped.
    pub fn file(name: &str, bytes: &[u8]) -> tempfile::TempPath {
        let mut f = tempfile::Builder::new()
            .prefix("irqlab-capture-")
            .suffix(&format!("-{name}"))
            .tempfile()
            .unwrap();
        std::io::Write::write_all(&mut f, bytes).unwrap();
        f.into_temp_path()
    }

    pub fn gzip(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    /// The reader of a pcap of link type `lt` holding one packet, `data` cut from a frame of
    /// `orig` bytes, and the packet's record.
    fn only_record(lt: u32, data: &[u8], orig: u32) -> (Reader, Record) {
        let bytes = pcap(&[(0, data.to_vec(), orig)], false, false, lt);
        let mut r = Reader::open(&file("one.pcap", &bytes)).unwrap();
        let rec = r.next_record().unwrap().unwrap();
        (r, rec)
    }

    fn read_all(path: &Path) -> Result<Vec<Record>, CaptureError> {
        let mut r = Reader::open(path)?;
        let mut out = Vec::new();
        while let Some(rec) = r.next_record()? {
            out.push(rec);
        }
        Ok(out)
    }

    /// Three UDP packets of two flows, at 0, 2 µs and 1 s + 7 µs after 1000 s.
    pub fn three() -> Vec<(u64, Vec<u8>, u32)> {
        let f1 = ether(&[], 0x0800, &ipv4(A, B, UDP, 0, &udp(1, 2)));
        let f2 = ether(&[9], 0x0800, &ipv4(B, A, UDP, 0, &udp(2, 1)));
        let base = 1_000_000_000_000u64;
        vec![
            (base, f1.clone(), f1.len() as u32),
            (base + 2_000, f2.clone(), 1000),
            (base + 1_000_007_000, f1.clone(), f1.len() as u32),
        ]
    }

    #[test]
    fn pcap_and_pcapng_in_either_byte_order_and_resolution_read_alike() {
        let pk = three();
        let expect_ts: Vec<i128> = pk.iter().map(|p| i128::from(p.0) * 1000).collect();
        for (nano, big) in [(false, false), (true, false), (false, true), (true, true)] {
            let path = file(&format!("t-{nano}-{big}.pcap"), &pcap(&pk, nano, big, 1));
            let recs = read_all(&path).unwrap();
            let ts: Vec<i128> = recs.iter().map(|r| r.ts_ps).collect();
            assert_eq!(ts, expect_ts, "nano {nano} big {big}");
            // 42-byte frames pad to 64; a 1000-byte original gets its FCS
            let sizes: Vec<u32> = recs.iter().map(|r| r.frame_bytes).collect();
            assert_eq!(sizes, [64, 1004, 64]);
            assert!(recs[1].cut && !recs[0].cut);
            assert_eq!(recs[0].key, recs[2].key);
            assert_ne!(recs[0].key, recs[1].key);
        }
        // pcapng: two interfaces, microseconds and nanoseconds
        let ng = pcapng(
            &[(1, 6), (1, 9)],
            &[
                (0, 1_000_000_000, pk[0].1.clone(), pk[0].2),
                (1, 1_000_000_002_000, pk[1].1.clone(), pk[1].2),
                (0, 1_001_000_007, pk[2].1.clone(), pk[2].2),
            ],
        );
        let recs = read_all(&file("t.pcapng", &ng)).unwrap();
        let ts: Vec<i128> = recs.iter().map(|r| r.ts_ps).collect();
        assert_eq!(ts, expect_ts);
        // gzip, told by its bytes whatever the name
        let gz = read_all(&file("t.pcap", &gzip(&ng))).unwrap();
        assert_eq!(gz, recs);
        let mut r = Reader::open(&file("t2.pcapng.gz", &gzip(&ng))).unwrap();
        assert!(r.compressed() && r.format() == Format::PcapNg);
        while r.next_record().unwrap().is_some() {}
        assert_eq!(r.link_types(), [1]);
    }

    #[test]
    fn bad_files_are_one_line_errors() {
        let pk = three();
        let good = pcap(&pk, false, false, 1);
        let why = |name: &str, bytes: &[u8]| read_all(&file(name, bytes)).unwrap_err().0;
        let cut = why("cut.pcap", &good[..good.len() - 5]);
        assert!(
            cut.starts_with("cut short in the middle of a packet record after 2 whole packets"),
            "{cut}"
        );
        let ng = pcapng(&[(1, 6)], &[(0, 1, pk[0].1.clone(), 42)]);
        let cut = why("cut.pcapng", &ng[..ng.len() - 8]);
        assert!(
            cut.starts_with("cut short in the middle of a block after 0 whole packets"),
            "{cut}"
        );
        assert!(why("head.pcap", &good[..10]).starts_with("cut short in its pcap file header"));
        assert_eq!(why("empty.pcap", b""), "is empty: not a capture");
        let text = why("notes.txt", b"hello, world");
        assert_eq!(
            text,
            "not a pcap or pcapng capture (it starts with bytes 68 65 6c 6c)"
        );
        let gz_text = why("notes.gz", &gzip(b"hello"));
        assert!(gz_text.ends_with("(after gzip decompression)"), "{gz_text}");
        let many: Vec<_> = (0..20_000).map(|i| pk[i % 3].clone()).collect();
        let broken_gz = gzip(&pcap(&many, false, false, 1));
        let cut_gz = why("cut.pcap.gz", &broken_gz[..broken_gz.len() / 2]);
        assert!(
            cut_gz.starts_with("the gzip stream is damaged or cut short after "),
            "{cut_gz}"
        );
        for n in [12, 30] {
            let cut_gz = why("cut2.pcap.gz", &broken_gz[..n]);
            assert!(
                cut_gz.starts_with("the gzip stream is damaged or cut short"),
                "{cut_gz}"
            );
        }
        assert!(why("z.zst", &[0x28, 0xb5, 0x2f, 0xfd, 0, 0]).contains("zstd -d"));
        assert!(
            why("wifi.pcap", &pcap(&pk, false, false, 105))
                .starts_with("link type 105 is not supported")
        );
        // a record header whose captured length is garbage
        let mut bad = good.clone();
        bad[24 + 8..24 + 12].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
        assert_eq!(
            why("bad.pcap", &bad),
            "corrupt: packet record 1 claims 2147483647 captured bytes (at most 262144)"
        );
        // a little less: it fits the buffer, and the file ends before it
        bad[24 + 8..24 + 12].copy_from_slice(&300_000u32.to_le_bytes());
        let w = why("bad2.pcap", &bad);
        assert!(
            w.starts_with("corrupt: packet record 1 claims 300000"),
            "{w}"
        );
        // big-endian
        let mut bad = pcap(&pk, false, true, 1);
        let second = 24 + 16 + pk[0].1.len();
        bad[second + 8..second + 12].copy_from_slice(&0x0100_0000u32.to_be_bytes());
        let w = why("bad3.pcap", &bad);
        assert!(
            w.starts_with("corrupt: packet record 2 claims 16777216"),
            "{w}"
        );
        let mut bad = good.clone();
        bad[24 + 4..24 + 8].copy_from_slice(&2_000_000u32.to_le_bytes());
        assert!(why("frac.pcap", &bad).contains("timestamp fraction"));
        let jumbo = ether(&[], 0x0800, &ipv4(A, B, UDP, 0, &udp(1, 2)));
        let big = why("gso.pcap", &pcap(&[(0, jumbo, 70_000)], false, false, 1));
        assert!(big.contains("at most 65535 bytes"), "{big}");
        let dir = std::env::temp_dir();
        assert_eq!(
            read_all(&dir).unwrap_err().0,
            "is a directory, not a capture file"
        );
        assert_eq!(
            read_all(&dir.join("no-such-capture.pcap")).unwrap_err().0,
            "no such file"
        );
    }

    const A: [u8; 4] = [66, 9, 149, 187];
    const B: [u8; 4] = [161, 142, 100, 80];

    #[test]
    fn the_5_tuple_is_read_through_vlan_tags() {
        let l3 = ipv4(A, B, UDP, 0, &udp(2794, 1766));
        for vlans in [&[][..], &[5], &[100, 5]] {
            let k = flow_of(Link::Ethernet, &ether(vlans, 0x0800, &l3));
            assert_eq!((k.family, k.proto, k.ports), (4, UDP, true), "{vlans:?}");
            assert_eq!((k.sport, k.dport), (2794, 1766));
            assert_eq!(&k.src[..4], &A);
            assert_eq!(&k.dst[..4], &B);
            // Microsoft's published RSS vector for this tuple (with ports)
            assert_eq!(k.rss_hash(), 0x51cc_c178);
        }
        assert_eq!(
            flow_of(Link::RawIp, &l3),
            flow_of(Link::Ethernet, &ether(&[], 0x0800, &l3))
        );
        let k = flow_of(Link::Ethernet, &ether(&[], 0x0800, &l3));
        assert_eq!(k.to_string(), "udp 66.9.149.187:2794 > 161.142.100.80:1766");
    }

    #[test]
    fn ipv6_tcp_and_ports_cut_by_the_snap_length() {
        let mut s = [0u8; 16];
        s[0] = 0x20;
        s[1] = 0x01;
        s[15] = 1;
        let mut d = s;
        d[15] = 2;
        let l3 = ipv6(s, d, TCP, &tcp(443, 5000));
        let k = flow_of(Link::Ethernet, &ether(&[7], 0x86dd, &l3));
        assert_eq!((k.family, k.proto, k.sport, k.dport), (6, TCP, 443, 5000));
        assert_eq!(k.to_string(), "tcp [2001::1]:443 > [2001::2]:5000");
        // a header-only capture that kept 4 bytes of TCP still has the ports
        let frame = ether(&[], 0x86dd, &l3);
        let cut = flow_of(Link::Ethernet, &frame[..14 + 40 + 4]);
        assert_eq!(cut, flow_of(Link::Ethernet, &frame));
        // and one that kept 2 has addresses only
        let cut = flow_of(Link::Ethernet, &frame[..14 + 40 + 2]);
        assert!(!cut.ports);
        assert_eq!(cut.src, s);
    }

    #[test]
    fn fragments_hash_by_addresses_and_other_packets_not_at_all() {
        let first = ipv4(A, B, UDP, 0x2000, &udp(2794, 1766)); // MF, offset 0
        let later = ipv4(A, B, UDP, 0x0010, b"fragment"); // offset 16 bytes
        let kf = flow_of(Link::Ethernet, &ether(&[], 0x0800, &first));
        let kl = flow_of(Link::Ethernet, &ether(&[], 0x0800, &later));
        assert!(!kf.ports);
        assert_eq!(kf, kl, "a datagram's fragments are one flow");
        assert_eq!(kf.rss_hash(), 0x323e_8fc2, "the published 2-tuple vector");
        let arp = ether(&[], 0x0806, &[0; 28]);
        let k = flow_of(Link::Ethernet, &arp);
        assert_eq!((k.family, k.dport, k.rss_hash()), (0, 0x0806, 0));
        assert_eq!(
            k.to_string(),
            "ethertype 0x0806 02:00:00:00:00:01 > 02:00:00:00:00:02"
        );
        // too short for its headers: not IP, no panic
        for n in 0..20 {
            flow_of(Link::Ethernet, &ether(&[], 0x0800, &first)[..n]);
            flow_of(Link::LinuxSll, &first[..n]);
            flow_of(Link::LinuxSll2, &first[..n]);
            flow_of(Link::RawIp, &first[..n]);
        }
    }

    #[test]
    fn the_ipv4_fast_path_reads_as_etherparse_does() {
        let etherparse = |d: &[u8]| {
            let (slice, _) = LaxIpSlice::from_slice(d).ok()?;
            let LaxIpSlice::Ipv4(s) = slice else {
                return None;
            };
            let p = s.payload();
            let mut k = FlowKey {
                family: 4,
                proto: p.ip_number.0,
                ..FlowKey::default()
            };
            k.src[..4].copy_from_slice(&s.header().source());
            k.dst[..4].copy_from_slice(&s.header().destination());
            if matches!(k.proto, TCP | UDP) && !p.fragmented && p.payload.len() >= 4 {
                (k.ports, k.sport, k.dport) = (true, be16(p.payload, 0), be16(p.payload, 2));
            }
            Some(k)
        };
        let mut with_options = ipv4(A, B, TCP, 0, &tcp(80, 8080));
        with_options[0] = 0x46; // a 24-byte header: 4 bytes of options
        with_options.splice(20..20, [1, 1, 1, 0]);
        with_options[3] += 4;
        let packets = [
            ipv4(A, B, UDP, 0, &udp(1, 2)),
            ipv4(A, B, TCP, 0, &tcp(3, 4)),
            ipv4(A, B, UDP, 0x2000, &udp(1, 2)),
            ipv4(A, B, UDP, 0x0004, &udp(1, 2)),
            ipv4(A, B, 1, 0, &[8, 0, 0, 0, 0, 0, 0, 0]),
            with_options,
        ];
        for p in &packets {
            for n in 0..=p.len() {
                let d = &p[..n];
                assert_eq!(super::ipv4(d), etherparse(d), "{p:?} cut at {n}");
            }
        }
    }

    #[test]
    fn linux_cooked_captures_read_the_protocol_field() {
        let l3 = ipv4(A, B, TCP, 0, &tcp(1, 2));
        let mut sll = vec![0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00];
        sll.extend_from_slice(&l3);
        let k = flow_of(Link::LinuxSll, &sll);
        assert_eq!((k.proto, k.sport, k.dport), (TCP, 1, 2));
        let mut sll2 = vec![
            0x08, 0x00, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0,
        ];
        sll2.extend_from_slice(&l3);
        assert_eq!(flow_of(Link::LinuxSll2, &sll2), k);
    }

    #[test]
    fn linux_cooked_v1_and_v2_captures_replay_as_ethernet_frames() {
        // a cooked header (16 or 20 bytes) stands where the 14-byte Ethernet header was: the
        // frame is the packet after it, plus an Ethernet header and FCS (18 bytes)
        let l3 = ipv4(A, B, TCP, 0, &tcp(1, 2));
        let mut sll = vec![0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00];
        sll.extend_from_slice(&l3);
        let mut sll2 = vec![
            0x08, 0x00, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0,
        ];
        sll2.extend_from_slice(&l3);
        for (lt, data) in [(113, &sll), (276, &sll2)] {
            let orig = data.len() as u32 + 100;
            let (r, rec) = only_record(lt, data, orig);
            assert_eq!(
                rec.frame_bytes,
                l3.len() as u32 + 100 + 18,
                "link type {lt}"
            );
            assert_eq!((rec.key.proto, rec.key.sport, rec.key.dport), (TCP, 1, 2));
            assert_eq!(r.link_types(), [lt as i32]);
        }
    }

    #[test]
    fn ipv6_flows_hash_as_microsofts_published_rss_vectors() {
        // Microsoft's RSS verification suite: 3ffe:2501:200:1fff::7 port 2794 to
        // 3ffe:2501:200:3::1 port 1766, with and without the ports
        let mut s = [0u8; 16];
        s[..8].copy_from_slice(&[0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x1f, 0xff]);
        s[15] = 7;
        let mut d = [0u8; 16];
        d[..8].copy_from_slice(&[0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x00, 0x03]);
        d[15] = 1;
        let k = flow_of(
            Link::Ethernet,
            &ether(&[], 0x86dd, &ipv6(s, d, TCP, &tcp(2794, 1766))),
        );
        assert_eq!((k.family, k.ports), (6, true));
        assert_eq!(k.rss_hash(), 0x4020_7d3d);
        let addresses = FlowKey { ports: false, ..k };
        assert_eq!(addresses.rss_hash(), 0x2cc1_8cd5);
    }

    #[test]
    fn an_empty_capture_is_an_error_naming_its_format() {
        let scan = |name: &str, bytes: &[u8]| {
            crate::traffic::replay::Scan::of(&file(name, bytes))
                .unwrap_err()
                .0
        };
        assert_eq!(
            scan("empty.pcap", &pcap(&[], false, false, 1)),
            "holds no packets (an empty pcap capture)"
        );
        assert_eq!(
            scan("empty.pcapng", &pcapng(&[(1, 6)], &[])),
            "holds no packets (an empty pcapng capture)"
        );
    }

    #[test]
    fn a_read_interrupted_by_a_signal_is_retried() {
        struct Flaky(Vec<io::Result<Vec<u8>>>);
        impl Read for Flaky {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0.is_empty() {
                    return Ok(0);
                }
                let chunk = self.0.remove(0)?;
                buf[..chunk.len()].copy_from_slice(&chunk);
                Ok(chunk.len())
            }
        }
        let eintr = || Err(io::Error::from(io::ErrorKind::Interrupted));
        let mut full = Full {
            inner: Flaky(vec![
                Ok(vec![1, 2]),
                eintr(),
                Ok(vec![3]),
                eintr(),
                Ok(vec![4, 5]),
            ]),
            pending: None,
            error: Arc::new(Mutex::new(None)),
        };
        let mut buf = [0u8; 5];
        assert_eq!(full.read(&mut buf).unwrap(), 5);
        assert_eq!(buf, [1, 2, 3, 4, 5]);
        assert_eq!(*full.error.lock().unwrap(), None);
    }

    #[test]
    fn a_plain_capture_is_not_compressed() {
        let pk = three();
        let r = Reader::open(&file("plain.pcap", &pcap(&pk, false, false, 1))).unwrap();
        assert!(!r.compressed() && r.format() == Format::Pcap);
        let r = Reader::open(&file("plain.pcap", &gzip(&pcap(&pk, false, false, 1)))).unwrap();
        assert!(r.compressed());
    }

    #[test]
    fn a_pcapng_block_longer_than_16_mib_is_corrupt() {
        // the buffer grows from 1 MiB, four times at a time, to 16 MiB and no further
        let mut ng = pcapng(&[(1, 6)], &[(0, 1, three()[0].1.clone(), 42)]);
        ng.extend_from_slice(&6u32.to_le_bytes());
        ng.extend_from_slice(&(20u32 << 20).to_le_bytes());
        ng.extend_from_slice(&[0; 64]);
        assert_eq!(
            read_all(&file("huge.pcapng", &ng)).unwrap_err().0,
            "corrupt: after 1 packets a block claims more than 16 MiB"
        );
    }

    #[test]
    fn a_gzip_stream_cut_in_the_file_header_says_so() {
        // stored (uncompressed) deflate: 10 bytes of gzip header, 5 of block header, then the
        // capture's bytes as they are: cut after 10 of them, inside the pcap file header (24
        // bytes) or the pcapng section header (28)
        let stored = |bytes: &[u8]| {
            use std::io::Write;
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::none());
            e.write_all(bytes).unwrap();
            e.finish().unwrap()
        };
        let pk = three();
        let gz = stored(&pcap(&pk, false, false, 1));
        assert_eq!(
            read_all(&file("hdr.pcap.gz", &gz[..10 + 5 + 10]))
                .unwrap_err()
                .0,
            "the gzip stream is damaged or cut short in the pcap file header (incomplete deflate stream)"
        );
        let gz = stored(&pcapng(&[(1, 6)], &[(0, 1, pk[0].1.clone(), 42)]));
        assert_eq!(
            read_all(&file("hdr.pcapng.gz", &gz[..10 + 5 + 10]))
                .unwrap_err()
                .0,
            "the gzip stream is damaged or cut short in the pcapng section header (incomplete deflate stream)"
        );
    }

    #[test]
    fn fcs_bytes_a_pcap_link_type_declares_are_not_counted_twice() {
        // link type field: bit 26 set, the FCS length in 16-bit words in bits 28-31 (2: 4
        // bytes). A 1000-byte packet with its FCS is a 1000-byte frame; without the bits the
        // reader adds an FCS of its own.
        let f = ether(&[], 0x0800, &ipv4(A, B, UDP, 0, &udp(1, 2)));
        let pk = [(0, f.clone(), 1000)];
        let with_fcs = 1 | 0x0400_0000 | 2 << 28;
        let rec = |lt: u32| read_all(&file("fcs.pcap", &pcap(&pk, false, false, lt))).unwrap()[0];
        assert_eq!(rec(with_fcs).frame_bytes, 1000);
        assert_eq!(rec(1).frame_bytes, 1004);
        // the bits without bit 26 say nothing
        assert_eq!(rec(1 | 2 << 28).frame_bytes, 1004);
    }

    #[test]
    fn fcs_bytes_a_pcapng_interface_declares_are_not_counted_twice() {
        // an interface with if_tsresol (option 9) and if_fcslen (option 13) = 4
        let f = ether(&[], 0x0800, &ipv4(A, B, UDP, 0, &udp(1, 2)));
        let mut bytes = Vec::new();
        let mut shb = vec![0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0];
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        block(&mut bytes, 0x0a0d_0d0a, &shb);
        for fcs in [None, Some(4u8)] {
            let mut idb = vec![1, 0, 0, 0, 0, 0, 0, 0];
            idb.extend_from_slice(&[9, 0, 1, 0, 9, 0, 0, 0]);
            if let Some(n) = fcs {
                idb.extend_from_slice(&[13, 0, 1, 0, n, 0, 0, 0]);
            }
            idb.extend_from_slice(&[0, 0, 0, 0]);
            block(&mut bytes, 1, &idb);
        }
        for iface in [0u32, 1] {
            let mut epb = Vec::new();
            epb.extend_from_slice(&iface.to_le_bytes());
            epb.extend_from_slice(&[0; 8]);
            epb.extend_from_slice(&(f.len() as u32).to_le_bytes());
            epb.extend_from_slice(&1000u32.to_le_bytes());
            epb.extend_from_slice(&f);
            epb.resize(epb.len().div_ceil(4) * 4, 0);
            block(&mut bytes, 6, &epb);
        }
        let sizes: Vec<u32> = read_all(&file("fcs.pcapng", &bytes))
            .unwrap()
            .iter()
            .map(|r| r.frame_bytes)
            .collect();
        assert_eq!(sizes, [1004, 1000]);
    }

    #[test]
    fn frames_of_up_to_65535_bytes_are_read_and_longer_ones_refused() {
        // an Ethernet packet of n bytes (without FCS) is a frame of n + 4
        let f = ether(&[], 0x0800, &ipv4(A, B, UDP, 0, &udp(1, 2)));
        let read = |orig: u32| {
            read_all(&file(
                "long.pcap",
                &pcap(&[(0, f.clone(), orig)], false, false, 1),
            ))
        };
        assert_eq!(read(65_531).unwrap()[0].frame_bytes, 65_535);
        assert_eq!(
            read(65_532).unwrap_err().0,
            "packet 1 is a 65536-byte frame, and irqlab's frames are at most 65535 bytes (a capture taken with GRO or TSO holds merged segments: capture with them off, ethtool -K IFACE gro off tso off)"
        );
    }

    #[test]
    fn original_lengths_near_4_gib_are_refused_not_wrapped_into_short_frames() {
        // Each link type's frame is the original length less its link header (and the FCS
        // the capture kept) plus 18: the last original length whose frame still fits 32 bits,
        // and the first one past it, are both refused with their true frame length.
        let f = ether(&[], 0x0800, &ipv4(A, B, UDP, 0, &udp(1, 2)));
        let sll = [
            &[0, 0, 0, 1, 0, 6][..],
            &[2, 0, 0, 0, 0, 1, 0, 0, 8, 0],
            &f[14..],
        ]
        .concat();
        let sll2 = [
            &[8, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6][..],
            &[2, 0, 0, 0, 0, 1, 0, 0],
            &f[14..],
        ]
        .concat();
        let with_fcs = 1 | 0x0400_0000 | 2 << 28;
        const WRAP: u64 = 1 << 32;
        // original lengths and their frames
        type Lengths = &'static [(u32, u64)];
        let cases: [(u32, &[u8], Lengths); 5] = [
            (
                1,
                &f,
                &[
                    (0xffff_fffb, 0xffff_ffff),
                    (0xffff_fffc, WRAP),
                    (u32::MAX, WRAP + 3),
                ],
            ),
            (
                101,
                &f[14..],
                &[
                    (0xffff_ffed, 0xffff_ffff),
                    (0xffff_ffee, WRAP),
                    (u32::MAX, WRAP + 17),
                ],
            ),
            (
                113,
                &sll,
                &[
                    (0xffff_fffd, 0xffff_ffff),
                    (0xffff_fffe, WRAP),
                    (u32::MAX, WRAP + 1),
                ],
            ),
            // a 20-byte link header, or an FCS kept: never longer than the original
            (276, &sll2, &[(u32::MAX, 0xffff_fffd)]),
            (with_fcs, &f, &[(u32::MAX, 0xffff_ffff)]),
        ];
        let refusal = |frame: u64| {
            format!(
                "packet 1 is a {frame}-byte frame, and irqlab's frames are at most 65535 bytes (a capture taken with GRO or TSO holds merged segments: capture with them off, ethtool -K IFACE gro off tso off)"
            )
        };
        for (lt, data, lengths) in cases {
            for &(orig, frame) in lengths {
                let got = read_all(&file(
                    "huge.pcap",
                    &pcap(&[(0, data.to_vec(), orig)], false, false, lt),
                ));
                assert_eq!(
                    got.unwrap_err().0,
                    refusal(frame),
                    "link type {lt}, {orig:#x}"
                );
            }
        }
        // pcapng reads its original lengths the same way
        let ng = |orig: u32| {
            read_all(&file(
                "huge.pcapng",
                &pcapng(&[(1, 6)], &[(0, 0, f.clone(), orig)]),
            ))
        };
        assert_eq!(ng(0xffff_fffb).unwrap_err().0, refusal(0xffff_ffff));
        assert_eq!(ng(0xffff_fffc).unwrap_err().0, refusal(1 << 32));
        assert_eq!(ng(u32::MAX).unwrap_err().0, refusal((1 << 32) + 3));
    }

    #[test]
    fn an_ethernet_header_alone_is_a_flow_of_its_macs_and_ethertype() {
        let arp = ether(&[], 0x0806, &[]);
        assert_eq!(arp.len(), 14);
        assert_eq!(
            flow_of(Link::Ethernet, &arp),
            FlowKey::other([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 0x0806)
        );
        // an IPv4 EtherType with no IP header after it
        assert_eq!(
            flow_of(Link::Ethernet, &ether(&[], 0x0800, &[])),
            FlowKey::other([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 0x0800)
        );
        // 13 bytes: not even a header
        assert_eq!(
            flow_of(Link::Ethernet, &arp[..13]),
            FlowKey::other([0; 6], [0; 6], 0)
        );
    }

    #[test]
    fn a_vlan_tag_cut_off_by_the_snap_length_leaves_its_tpid_as_the_ethertype() {
        let tagged = ether(&[5], 0x0800, &ipv4(A, B, UDP, 0, &udp(1, 2)));
        for n in 14..18 {
            assert_eq!(
                flow_of(Link::Ethernet, &tagged[..n]),
                FlowKey::other([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 0x8100),
                "cut at {n}"
            );
        }
        assert_eq!(flow_of(Link::Ethernet, &tagged[..18]).dport, 0x0800);
    }

    #[test]
    fn an_ipv4_packet_whose_total_length_is_its_header_has_no_ports() {
        // the bytes after the header (Ethernet padding) are not a transport header
        let mut p = ipv4(A, B, UDP, 0, &udp(1, 2));
        p[2..4].copy_from_slice(&20u16.to_be_bytes());
        let k = super::ipv4(&p).unwrap();
        assert_eq!(
            (k.family, k.proto, k.ports, k.sport, k.dport),
            (4, UDP, false, 0, 0)
        );
        // one byte more than the header: still too short for ports
        p[2..4].copy_from_slice(&21u16.to_be_bytes());
        assert!(!super::ipv4(&p).unwrap().ports);
        p[2..4].copy_from_slice(&24u16.to_be_bytes());
        let k = super::ipv4(&p).unwrap();
        assert_eq!((k.ports, k.sport, k.dport), (true, 1, 2));
    }

    #[test]
    fn raw_ip_captures_of_link_types_101_228_and_229_replay_as_ethernet_frames() {
        // LINKTYPE_RAW (101), LINKTYPE_IPV4 (228), LINKTYPE_IPV6 (229): the packet starts
        // with its IP header, so the frame is the packet plus an Ethernet header and FCS
        let v4 = ipv4(A, B, UDP, 0, &udp(1, 2));
        let mut s = [0u8; 16];
        s[..2].copy_from_slice(&[0x20, 0x01]);
        s[15] = 1;
        let mut d = s;
        d[15] = 2;
        let v6 = ipv6(s, d, TCP, &tcp(443, 5000));
        for (lt, data) in [(101, &v4), (101, &v6), (228, &v4), (229, &v6)] {
            let orig = data.len() as u32 + 500;
            let (r, rec) = only_record(lt, data, orig);
            assert_eq!(rec.frame_bytes, orig + 18, "link type {lt}");
            assert_eq!(rec.key, flow_of(Link::RawIp, data), "link type {lt}");
            assert!(rec.key.ports, "link type {lt}");
            assert_eq!(r.link_types(), [lt as i32]);
        }
    }

    /// A reader that gives its bytes, then fails every read with the error it makes.
    struct ThenFails(Vec<u8>, fn() -> io::Error);

    impl Read for ThenFails {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Err((self.1)());
            }
            let n = buf.len().min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0.drain(..n);
            Ok(n)
        }
    }

    #[test]
    fn a_full_read_stops_asking_its_input_once_the_buffer_is_full() {
        // a pipe whose writer has written 5 bytes so far: a further read would wait (here:
        // fails with WouldBlock), and must not be made once the 5 bytes asked for are in
        let mut full = Full {
            inner: ThenFails(vec![1, 2, 3, 4, 5], || {
                io::Error::from(io::ErrorKind::WouldBlock)
            }),
            pending: None,
            error: Arc::new(Mutex::new(None)),
        };
        let mut buf = [0u8; 5];
        assert_eq!(full.read(&mut buf).unwrap(), 5);
        assert_eq!(buf, [1, 2, 3, 4, 5]);
        assert!(full.pending.is_none());
        assert_eq!(*full.error.lock().unwrap(), None);
        // the next read is the one that meets the empty pipe
        assert_eq!(
            full.read(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
    }

    #[test]
    fn files_that_cannot_be_opened_or_read_say_why_in_plain_words() {
        // the errors the OS gives for a file the user may not read (EACCES) and for reading
        // a directory (EISDIR)
        let denied = io::Error::from_raw_os_error(13);
        assert_eq!(denied.kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(io_words(&denied), "permission denied");
        let dir = io::Error::from_raw_os_error(21);
        assert_eq!(dir.kind(), io::ErrorKind::IsADirectory);
        assert_eq!(io_words(&dir), "is a directory, not a capture file");
        // other errors keep the OS's words
        let eio = io::Error::from_raw_os_error(5);
        assert_eq!(io_words(&eio), eio.to_string());
        // a file without read permission (root reads it all the same: then only the above)
        #[cfg(unix)]
        {
            let path = file("secret.pcap", &pcap(&three(), false, false, 1));
            let none = std::os::unix::fs::PermissionsExt::from_mode(0o000);
            std::fs::set_permissions(&path, none).unwrap();
            if File::open(&path).is_err() {
                assert_eq!(read_all(&path).unwrap_err().0, "permission denied");
            }
        }
    }

    #[test]
    fn the_snap_length_is_the_pcap_headers_or_the_largest_of_the_pcapng_interfaces() {
        let mut r = Reader::open(&file("snap.pcap", &pcap(&three(), false, false, 1))).unwrap();
        assert_eq!(r.snaplen(), 0, "not read yet");
        r.next_record().unwrap().unwrap();
        assert_eq!(r.snaplen(), 65_535);
        // pcapng: interfaces with snap lengths 128, 256 and 0 (none)
        let f = ether(&[], 0x0800, &ipv4(A, B, UDP, 0, &udp(1, 2)));
        let mut ng = Vec::new();
        let mut shb = vec![0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0];
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        block(&mut ng, 0x0a0d_0d0a, &shb);
        for snap in [128u32, 256, 0] {
            let mut idb = vec![1, 0, 0, 0];
            idb.extend_from_slice(&snap.to_le_bytes());
            block(&mut ng, 1, &idb);
        }
        let mut epb = vec![0; 12];
        epb.extend_from_slice(&(f.len() as u32).to_le_bytes());
        epb.extend_from_slice(&(f.len() as u32).to_le_bytes());
        epb.extend_from_slice(&f);
        block(&mut ng, 6, &epb);
        let mut r = Reader::open(&file("snap.pcapng", &ng)).unwrap();
        r.next_record().unwrap().unwrap();
        assert_eq!(r.snaplen(), 256);
    }

    #[test]
    fn a_pcap_record_may_claim_262144_captured_bytes_and_no_more() {
        // 262144 is libpcap's largest snap length: a record claiming it is read (here: its
        // frame is then too long for irqlab), one claiming a byte more is corrupt
        let record = |caplen: u32| {
            let mut data = ether(&[], 0x0800, &ipv4(A, B, UDP, 0, &udp(1, 2)));
            data.resize(caplen as usize, 0);
            pcap(&[(0, data, caplen)], false, false, 1)
        };
        let why = |name: &str, bytes: &[u8]| read_all(&file(name, bytes)).unwrap_err().0;
        assert_eq!(
            why("max.pcap", &record(262_144)),
            "packet 1 is a 262148-byte frame, and irqlab's frames are at most 65535 bytes (a capture taken with GRO or TSO holds merged segments: capture with them off, ethtool -K IFACE gro off tso off)"
        );
        assert_eq!(
            why("over.pcap", &record(262_145)),
            "corrupt: packet record 1 claims 262145 captured bytes (at most 262144)"
        );
        // the file ends inside the record: cut short if the record may be that long
        let max = record(262_144);
        let cut = why("max-cut.pcap", &max[..max.len() - 10]);
        assert!(
            cut.starts_with("cut short in the middle of a packet record after 0 whole packets"),
            "{cut}"
        );
        let over = record(262_145);
        assert_eq!(
            why("over-cut.pcap", &over[..over.len() - 10]),
            "corrupt: packet record 1 claims 262145 captured bytes (at most 262144)"
        );
    }

    #[test]
    fn a_read_error_in_a_plain_captures_header_is_reported_as_a_read_error() {
        // the file gives the first 10 bytes of its header, then an I/O error
        let eio = io::Error::from_raw_os_error(5).to_string();
        let pk = three();
        let full = |bytes: &[u8], error: &Arc<Mutex<Option<String>>>| Full {
            inner: ThenFails(bytes[..10].to_vec(), || io::Error::from_raw_os_error(5)),
            pending: None,
            error: Arc::clone(error),
        };
        let error = Arc::new(Mutex::new(None));
        let Err(e) = LegacyPcapReader::new(BUFFER_BYTES, full(&pcap(&pk, false, false, 1), &error))
        else {
            panic!("a pcap file header of 10 bytes was read");
        };
        assert_eq!(
            open_error(&e, "pcap file header", &error, false).0,
            format!("cannot read its pcap file header: {eio}")
        );
        assert_eq!(
            open_error(&e, "pcap file header", &error, true).0,
            format!("the gzip stream is damaged or cut short in the pcap file header ({eio})")
        );
        let error = Arc::new(Mutex::new(None));
        let ng = pcapng(&[(1, 6)], &[(0, 1, pk[0].1.clone(), 42)]);
        let Err(e) = PcapNGReader::new(BUFFER_BYTES, full(&ng, &error)) else {
            panic!("a pcapng section header of 10 bytes was read");
        };
        assert_eq!(
            open_error(&e, "pcapng section header", &error, false).0,
            format!("cannot read its pcapng section header: {eio}")
        );
    }

    #[test]
    fn a_pcap_fcs_length_counts_16_bit_words() {
        // bits 28-31 of the link-type field (bit 26 set): the FCS length in 16-bit words;
        // a 1000-byte packet whose last 2n bytes are FCS is a frame of 1000 - 2n + 4 bytes
        let f = ether(&[], 0x0800, &ipv4(A, B, UDP, 0, &udp(1, 2)));
        let pk = [(0, f, 1000)];
        let size = |words: u32| {
            let lt = 1 | 0x0400_0000 | words << 28;
            read_all(&file("fcs.pcap", &pcap(&pk, false, false, lt))).unwrap()[0].frame_bytes
        };
        assert_eq!(
            [0, 1, 2, 4].map(size),
            [1004, 1002, 1000, 996],
            "0, 2, 4 and 8 bytes of FCS"
        );
    }

    /// A pcapng file of one interface of link type Ethernet with the given options (code,
    /// value) and one packet per timestamp.
    fn pcapng_with_options(options: &[(u16, Vec<u8>)], stamps: &[u64]) -> Vec<u8> {
        let f = ether(&[], 0x0800, &ipv4(A, B, UDP, 0, &udp(1, 2)));
        let mut ng = Vec::new();
        let mut shb = vec![0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0];
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        block(&mut ng, 0x0a0d_0d0a, &shb);
        let mut idb = vec![1, 0, 0, 0, 0, 0, 0, 0];
        for (code, value) in options {
            idb.extend_from_slice(&code.to_le_bytes());
            idb.extend_from_slice(&(value.len() as u16).to_le_bytes());
            idb.extend_from_slice(value);
            idb.resize(idb.len().div_ceil(4) * 4, 0);
        }
        idb.extend_from_slice(&[0, 0, 0, 0]);
        block(&mut ng, 1, &idb);
        for ts in stamps {
            let mut epb = vec![0; 4];
            epb.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
            epb.extend_from_slice(&(*ts as u32).to_le_bytes());
            epb.extend_from_slice(&(f.len() as u32).to_le_bytes());
            epb.extend_from_slice(&(f.len() as u32).to_le_bytes());
            epb.extend_from_slice(&f);
            block(&mut ng, 6, &epb);
        }
        ng
    }

    #[test]
    fn pcapng_timestamps_finer_than_a_picosecond_round_to_the_nearest_one() {
        let stamps = |res: u8, ts: &[u64]| -> Vec<i128> {
            read_all(&file(
                "res.pcapng",
                &pcapng_with_options(&[(9, vec![res])], ts),
            ))
            .unwrap()
            .iter()
            .map(|r| r.ts_ps)
            .collect()
        };
        // units of 0.1 ps (if_tsresol 13): half a picosecond rounds up
        assert_eq!(
            stamps(13, &[4, 5, 15, 10_000_000_000_000 + 16]),
            [0, 1, 2, 1_000_000_000_002]
        );
        // units of 1 fs (15): 1.499 ps is 1 ps, 1.5 ps 2 ps
        assert_eq!(stamps(15, &[1_499, 1_500]), [1, 2]);
    }

    #[test]
    fn a_pcapng_interfaces_timestamp_offset_is_added_in_seconds() {
        // if_tsoffset (option 14): seconds added to every timestamp of the interface
        let offset = 1_700_000_000i64;
        let ng = pcapng_with_options(&[(9, vec![6]), (14, offset.to_le_bytes().to_vec())], &[5]);
        let recs = read_all(&file("offset.pcapng", &ng)).unwrap();
        assert_eq!(recs[0].ts_ps, 1_700_000_000_000_005_000_000);
    }

    #[test]
    fn a_linux_cooked_header_alone_is_a_flow_of_its_source_and_protocol() {
        // an ARP packet cut after its cooked header: 16 bytes (v1), 20 (v2)
        let sll = [0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x06];
        let sll2 = [
            0x08, 0x06, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0,
        ];
        let arp = FlowKey::other([2, 0, 0, 0, 0, 1], [0; 6], 0x0806);
        assert_eq!(flow_of(Link::LinuxSll, &sll), arp);
        assert_eq!(flow_of(Link::LinuxSll2, &sll2), arp);
        // a byte less: not even a header
        let none = FlowKey::other([0; 6], [0; 6], 0);
        assert_eq!(flow_of(Link::LinuxSll, &sll[..15]), none);
        assert_eq!(flow_of(Link::LinuxSll2, &sll2[..19]), none);
    }

    #[test]
    fn only_a_version_4_header_of_at_least_20_bytes_is_read_as_ipv4() {
        // an IPv6 packet with DSCP EF (traffic class 0xb8): its first byte, 0x6b, has the
        // low nibble of a 44-byte IPv4 header, and it is IPv6 all the same
        let mut s = [0u8; 16];
        s[..2].copy_from_slice(&[0x20, 0x01]);
        s[15] = 1;
        let mut d = s;
        d[15] = 2;
        let mut v6 = ipv6(s, d, TCP, &tcp(443, 5000));
        v6[0] = 0x6b;
        v6[1] = 0x80;
        let k = flow_of(Link::Ethernet, &ether(&[], 0x86dd, &v6));
        assert_eq!(
            (k.family, k.proto, k.ports, k.sport, k.dport),
            (6, TCP, true, 443, 5000)
        );
        assert_eq!((k.src, k.dst), (s, d));
        // an IPv4 header claiming 16 bytes (IHL 4) is not an IP header
        let mut short = ipv4(A, B, UDP, 0, &udp(1, 2));
        short[0] = 0x44;
        assert_eq!(super::ipv4(&short), None);
        assert_eq!(
            flow_of(Link::Ethernet, &ether(&[], 0x0800, &short)),
            FlowKey::other([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 0x0800)
        );
    }

    #[test]
    fn pcapng_timestamps_in_binary_units_are_read() {
        // if_tsresol 0x94: units of 2^-20 s; 2^20 units are one second
        let recs = read_all(&file(
            "binary.pcapng",
            &pcapng_with_options(&[(9, vec![0x94])], &[0, 1, 1 << 20]),
        ))
        .unwrap();
        let ps: Vec<i128> = recs.iter().map(|r| r.ts_ps).collect();
        // 1e12 / 2^20 = 953674.3 ps, rounded to the nearest picosecond
        assert_eq!(ps, [0, 953_674, 1_000_000_000_000]);
        assert_eq!(ts_units_per_s(6), Some(1_000_000));
        assert_eq!(ts_units_per_s(19), Some(10_000_000_000_000_000_000));
        assert_eq!(ts_units_per_s(20), None);
        assert_eq!(ts_units_per_s(0x80 | 63), Some(1 << 63));
        assert_eq!(ts_units_per_s(0x80 | 64), None);
    }
}
