"""What a damaged or hostile tree can make the probe read: every bound, in one place.

A tree is not trusted: each file is read up to a bounded prefix and every list expanded from
what is read — CPU lists, IRQs, directory listings, NAPIs and queues, RSS entries — stops at one
of these limits, which the note then names. The readers look them up here when they run
(``limits.X``), so that a test can lower one to reach it with a small tree.
"""

from __future__ import annotations

#: Bytes read of a file at most: a sysfs or procfs value is a page at most.
MAX_FILE_BYTES = 1 << 20
#: Bytes read of /proc/interrupts and /proc/cpuinfo at most, which grow with the CPUs (1024
#: CPUs and 2,000 IRQs make a /proc/interrupts of about 22 MB).
MAX_TABLE_BYTES = 32 << 20
#: Bytes of ethtool's output read at most (its -x of a 64k-entry RSS table is about 600 kB).
MAX_OUTPUT_BYTES = 4 << 20
#: Bytes of a kernel configuration decompressed from /proc/config.gz at most.
MAX_CONFIG_BYTES = 16 << 20
#: Entries of a directory listed at most.
MAX_DIR_ENTRIES = 65536
#: CPUs a CPU list may name at most (Linux's NR_CPUS is at most 8192).
MAX_CPUS = 8192
#: Numbered IRQs read from /proc/interrupts at most.
MAX_IRQS = 65536
#: NAPI instances read from netlink at most.
MAX_NAPIS = 4096
#: Queues read from netlink at most (Rx and Tx: two for each of MAX_NAPIS).
MAX_QUEUES = 8192
#: Vectors of the interface kept at most, of queues and others each (nic.queues' maximum).
MAX_VECTORS = 1024
#: Notes of files that could not be read, at most (the rest are counted).
MAX_PROBLEM_NOTES = 64
#: Entries of an RSS indirection table at most (nic.rss_table_size's maximum).
MAX_RSS_ENTRIES = 65536
#: Characters of a value read from a host that a comment or note shows.
SHOWN_CHARS = 64
