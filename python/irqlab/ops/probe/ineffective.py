"""Settings that do nothing on a host: the rules, each with its source in the kernel or the
driver, and the table of what each driver's ``ethtool -C`` takes.

The commonest operator question is "why did my setting do nothing?". The answers, as rules:

1. **The driver's coalescing** (:data:`DRIVER_COALESCING`, :func:`driver_findings`): an
   option outside the driver's ``supported_coalesce_params`` is refused by the ethtool core
   (``ethnl_set_coalesce_validate``, net/ethtool/coalesce.c); a value past the driver's limit
   is refused by its ``set_coalesce``; a value between the hardware's steps acts as the step
   the driver writes; a model key with no counterpart on the driver (an ITR on a driver whose
   ``rx-usecs`` is a timer), or a moderation policy the driver does not have, cannot be set.
2. **Adaptive moderation overriding a static value** (:func:`adaptive_findings`): with
   ``adaptive-rx`` on, the driver's adaptive code rewrites the static ``rx-usecs``; the model
   warns of the same (crates/irqlab-core/src/moderation/config.rs, ``itr_warnings``).
3. **Jiffy granularity** (:func:`jiffy_finding`): ``net_rx_action`` counts its time limit in
   whole jiffies (``usecs_to_jiffies`` in net/core/dev.c rounds up), so at HZ = 250 anything up
   to 4000 µs is one tick; the model counts them the same way and warns of a value between
   ticks (crates/irqlab-core/src/kernel/config.rs, ``jiffy_warnings``), but refuses less than
   two jiffies, which it writes as 0.
4. **Deferral without a flush timeout** (:func:`deferral_finding`): ``napi_complete_done``
   (net/core/dev.c) keeps the IRQ masked only when ``gro_flush_timeout`` arms the timer; the
   model warns of the same (``kernel::warnings``).
5. **Busy polling with no application that can poll** (:func:`busy_poll_findings`): the
   sysctls busy-poll only in a blocking receive or a poll/epoll wait of an application; the
   model warns when no app of the scenario waits that way (``busypoll::io_warnings``).

``irqlab probe`` lists what these rules find on the host it read (:func:`probe_findings`, in
the scenario file's notes and the summary); ``irqlab tune`` skips a candidate that some rule
marks as doing nothing on the scenario's host (:func:`candidate_findings`); ``irqlab run``
warns through the model's rules (2 to 5), which have no driver to know of.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from irqlab.ops.probe.parsers import integer, kernel_version
from irqlab.ops.probe.settings import DRIVERS, GENERIC

if TYPE_CHECKING:
    from irqlab.ops.probe.findings import Probe
    from irqlab.ops.probe.host import Host


@dataclass(frozen=True)
class Finding:
    """A setting that does nothing on the host, or not what its value says."""

    #: the scenario key, or the host's name of a setting that has none written
    key: str
    value: Any
    #: why, and what the host does instead
    reason: str
    #: the kernel or driver file and function that decide it
    source: str
    #: the value it acts as; None: it has no effect (or is refused)
    acts_as: Any = None
    #: False: it depends on what the host's device offers, which was not read (a virtio
    #: device's feature bits): ``tune`` races such a candidate and says so
    certain: bool = True

    def __str__(self) -> str:
        return f"{self.brief()} ({self.source})"

    def brief(self) -> str:
        """The setting and why, without the source."""
        return f"{self.key} = {_shown(self.value)}: {self.reason}"


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# --- 1. the driver's coalescing -------------------------------------------------------------


@dataclass(frozen=True)
class Limit:
    """What a driver does with one ``ethtool -C`` value."""

    #: above it the driver refuses the command
    max: int | None = None
    #: from 1 to ``min`` - 1 the driver refuses it (0 keeps its own meaning)
    min: int = 0
    #: the hardware's unit: another value acts as a multiple of it
    step: int = 1
    #: how a value between steps is rounded: "down" or "up"
    rounds: str = "down"
    #: values that mean something else to the driver, and what
    special: Mapping[int, str] = field(default_factory=dict)
    #: why the limits, naming the function and constant
    why: str = ""
    #: why the steps
    step_why: str = ""


@dataclass(frozen=True)
class DriverCoalescing:
    """What a driver's ``ethtool -C`` takes (its ``supported_coalesce_params``) and does."""

    #: the ``ethtool -C`` options it takes
    options: frozenset[str]
    #: what it does with a value, per option
    limits: Mapping[str, Limit]
    #: the ``driver.moderation`` values its adaptive mode is
    adaptive: frozenset[str]
    #: what rewrites the static value while adaptive moderation runs
    rewrites: str
    #: the file and function that do
    adaptive_source: str
    #: the driver's files and functions that say so
    source: str
    #: pairs of options it refuses together
    exclusive: tuple[tuple[str, str], ...] = ()
    #: what the options need of the device, when it may lack it
    needs: str = ""


#: The coalescing of each driver, from its source (the ethtool_ops' supported_coalesce_params
#: and set_coalesce). A driver not listed gets no driver rule.
DRIVER_COALESCING: dict[str, DriverCoalescing] = {
    "ixgbe": DriverCoalescing(
        options=frozenset({"rx-usecs", "tx-usecs", "tx-frames-irq"}),
        limits={
            "rx-usecs": Limit(
                max=1022,
                step=2,
                rounds="down",
                special={1: "ixgbe's dynamic ITR (ixgbe_set_itr), not a 1 µs interval"},
                why="ixgbe_set_coalesce refuses more than IXGBE_MAX_EITR >> 2 = 1022 µs",
                step_why="ixgbe_write_eitr masks the interval (rx-usecs << 2) with "
                "IXGBE_MAX_EITR = 0xFF8: the EITR counts 2 µs steps",
            )
        },
        adaptive=frozenset({"ixgbe", "ixgbe-legacy"}),
        rewrites="the dynamic ITR rewrites the EITR at the end of each poll",
        adaptive_source="drivers/net/ethernet/intel/ixgbe/ixgbe_main.c: ixgbe_set_itr",
        source="drivers/net/ethernet/intel/ixgbe/ixgbe_ethtool.c: "
        "ixgbe_ethtool_ops.supported_coalesce_params (ETHTOOL_COALESCE_USECS | "
        "ETHTOOL_COALESCE_TX_MAX_FRAMES_IRQ), ixgbe_set_coalesce; ixgbe_main.c: ixgbe_write_eitr",
    ),
    "i40e": DriverCoalescing(
        options=frozenset(
            {
                "rx-usecs",
                "tx-usecs",
                "rx-frames-irq",
                "tx-frames-irq",
                "adaptive-rx",
                "adaptive-tx",
                "rx-usecs-high",
                "tx-usecs-high",
            }
        ),
        limits={
            "rx-usecs": Limit(
                max=8160,
                step=2,
                rounds="up",
                why="__i40e_set_coalesce refuses more than I40E_MAX_ITR = 8160 µs",
                step_why="i40e_set_itr_per_queue keeps ITR_REG_ALIGN(rx-usecs), rounded up "
                "to the ITR's 2 µs steps",
            )
        },
        adaptive=frozenset({"i40e"}),
        rewrites="the adaptive ITR rewrites the ITR at the end of each poll",
        adaptive_source="drivers/net/ethernet/intel/i40e/i40e_txrx.c: i40e_update_enable_itr, "
        "i40e_update_itr",
        source="drivers/net/ethernet/intel/i40e/i40e_ethtool.c: "
        "i40e_ethtool_ops.supported_coalesce_params (ETHTOOL_COALESCE_USECS | "
        "ETHTOOL_COALESCE_MAX_FRAMES_IRQ | ETHTOOL_COALESCE_USE_ADAPTIVE | "
        "ETHTOOL_COALESCE_RX_USECS_HIGH | ETHTOOL_COALESCE_TX_USECS_HIGH), "
        "__i40e_set_coalesce; i40e_txrx.h: I40E_MAX_ITR, ITR_REG_ALIGN",
    ),
    "ice": DriverCoalescing(
        options=frozenset({"rx-usecs", "tx-usecs", "adaptive-rx", "adaptive-tx", "rx-usecs-high"}),
        limits={
            "rx-usecs": Limit(
                max=8160,
                step=2,
                rounds="down",
                why="ice_set_rc_coalesce refuses more than ICE_ITR_MAX = 8160 µs",
                step_why="__ice_write_itr writes ITR_REG_ALIGN(itr) = itr & 0x1FFE, rounded "
                "down to the ITR's 2 µs steps (ethtool -c still shows the value set)",
            )
        },
        adaptive=frozenset({"dim"}),
        rewrites="net_dim writes the ITR it picks",
        adaptive_source="drivers/net/ethernet/intel/ice/ice_main.c: ice_rx_dim_work",
        source="drivers/net/ethernet/intel/ice/ice_ethtool.c: "
        "ice_ethtool_ops.supported_coalesce_params (ETHTOOL_COALESCE_USECS | "
        "ETHTOOL_COALESCE_USE_ADAPTIVE | ETHTOOL_COALESCE_RX_USECS_HIGH), __ice_set_coalesce, "
        "ice_set_rc_coalesce; "
        "ice_txrx.h: ICE_ITR_MAX, ITR_REG_ALIGN; ice_lib.c: __ice_write_itr",
    ),
    "mlx5_core": DriverCoalescing(
        options=frozenset(
            {
                "rx-usecs",
                "rx-frames",
                "tx-usecs",
                "tx-frames",
                "adaptive-rx",
                "adaptive-tx",
                "cqe-mode-rx",
                "cqe-mode-tx",
            }
        ),
        limits={
            "rx-usecs": Limit(
                max=4095,
                why="mlx5e_ethtool_set_coalesce refuses more than MLX5E_MAX_COAL_TIME = "
                "MLX5_MAX_CQ_PERIOD = 4095 µs (-ERANGE): the CQ's cq_period is 12 bits",
            ),
            "rx-frames": Limit(
                max=65535,
                why="mlx5e_ethtool_set_coalesce refuses more than MLX5E_MAX_COAL_FRAMES = "
                "MLX5_MAX_CQ_COUNT = 65535 (-ERANGE): the CQ's cq_max_count is 16 bits",
            ),
        },
        adaptive=frozenset({"dim"}),
        rewrites="net_dim programs the CQ moderation it picks",
        adaptive_source="drivers/net/ethernet/mellanox/mlx5/core/en_dim.c: mlx5e_rx_dim_work",
        source="drivers/net/ethernet/mellanox/mlx5/core/en_ethtool.c: "
        "mlx5e_ethtool_ops.supported_coalesce_params (ETHTOOL_COALESCE_USECS | "
        "ETHTOOL_COALESCE_MAX_FRAMES | ETHTOOL_COALESCE_USE_ADAPTIVE | "
        "ETHTOOL_COALESCE_USE_CQE), mlx5e_ethtool_set_coalesce",
    ),
    "virtio_net": DriverCoalescing(
        options=frozenset({"rx-usecs", "rx-frames", "tx-usecs", "tx-frames", "adaptive-rx"}),
        limits={},
        adaptive=frozenset({"dim"}),
        rewrites="net_dim sends the device the coalescing it picks",
        adaptive_source="drivers/net/virtio_net.c: virtnet_rx_dim_work",
        source="drivers/net/virtio_net.c: virtnet_ethtool_ops.supported_coalesce_params "
        "(ETHTOOL_COALESCE_MAX_FRAMES | ETHTOOL_COALESCE_USECS | "
        "ETHTOOL_COALESCE_USE_ADAPTIVE_RX), virtnet_set_coalesce, "
        "virtnet_coal_params_supported",
        needs="without VIRTIO_NET_F_NOTF_COAL (feature bit 53, negotiated since Linux 6.2) "
        "virtnet_coal_params_supported accepts only rx-usecs 0 and rx-frames 1; adaptive-rx "
        "needs VIRTIO_NET_F_VQ_NOTF_COAL (bit 52)",
    ),
    "vmxnet3": DriverCoalescing(
        options=frozenset({"rx-usecs", "rx-frames", "tx-frames", "adaptive-rx"}),
        limits={
            "rx-usecs": Limit(
                max=10000,
                min=10,
                why="vmxnet3_set_coalesce turns rx-usecs into a rate-based coalescing rate of "
                "1000000 / rx-usecs interrupts/s, refused outside VMXNET3_COAL_RBC_MIN_RATE "
                "= 100 … VMXNET3_COAL_RBC_MAX_RATE = 100000",
            ),
            "rx-frames": Limit(
                max=128,
                why="vmxnet3_set_coalesce refuses more than VMXNET3_COAL_STATIC_MAX_DEPTH = 128",
            ),
        },
        adaptive=frozenset({"dim"}),
        rewrites="the device's own adaptive coalescing decides",
        adaptive_source="drivers/net/vmxnet3/vmxnet3_ethtool.c: vmxnet3_set_coalesce "
        "(VMXNET3_COALESCE_ADAPT)",
        source="drivers/net/vmxnet3/vmxnet3_ethtool.c: "
        "vmxnet3_ethtool_ops.supported_coalesce_params (ETHTOOL_COALESCE_RX_USECS | "
        "ETHTOOL_COALESCE_MAX_FRAMES | ETHTOOL_COALESCE_USE_ADAPTIVE_RX), "
        "vmxnet3_set_coalesce; vmxnet3_defs.h: VMXNET3_COAL_*",
        exclusive=(("rx-usecs", "rx-frames"), ("rx-usecs", "adaptive-rx")),
        needs="a vmxnet3 device of version 3 or later (VMXNET3_VERSION_GE_3)",
    ),
}

#: The ethtool core's check of the options a driver takes.
ETHTOOL_CORE = "net/ethtool/coalesce.c: ethnl_set_coalesce_validate"

#: Moderation policies of the model that no mainline driver runs.
RESEARCH_POLICIES = {"linear": "a research patch (Salah et al.)", "python": "a Python policy"}


def option_of(driver: str, key: str) -> str | None:
    """The ``ethtool -C`` option a coalescing key sets on ``driver`` ("" if the key has no
    counterpart there; None if the key is not a coalescing setting)."""
    itr = DRIVERS.get(driver, GENERIC).itr
    options = {
        "nic.itr_us": "rx-usecs" if itr else "",
        "nic.rx_usecs": "" if itr else "rx-usecs",
        "nic.rx_frames": "rx-frames",
        "driver.dim_mode": "cqe-mode-rx",
        "driver.tx_work_limit": "tx-frames-irq",
    }
    return options.get(key)


def _policy_findings(driver: str, policy: str, c: DriverCoalescing) -> list[Finding]:
    key, itr = "driver.moderation", DRIVERS.get(driver, GENERIC).itr
    if policy == "off":
        return []
    if policy == "static":
        if itr:
            return []
        why = (
            f"{driver} has no ITR: its rx-usecs is a coalescing timer from the first packet "
            "(nic.rx_usecs), so a static ITR cannot be set"
        )
        return [Finding(key, policy, why, c.source)]
    if policy in c.adaptive:
        return []
    if policy in RESEARCH_POLICIES:
        why = f"{RESEARCH_POLICIES[policy]}, which no mainline driver runs"
    else:
        has = " or ".join(f'"{a}"' for a in sorted(c.adaptive))
        why = f"{driver} has no such adaptive moderation: its own is {has}"
    return [Finding(key, policy, why, c.source)]


def _value_findings(
    driver: str, key: str, option: str, value: Any, c: DriverCoalescing
) -> list[Finding]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return []
    limit = c.limits.get(option)
    if limit is None:
        return []
    n = float(value)
    if limit.max is not None and n > limit.max:
        why = f"{driver} refuses ethtool -C {option} {_shown(value)} (at most {limit.max})"
        return [Finding(key, value, f"{why}: {limit.why}", c.source)]
    if 0 < n < limit.min:
        why = f"{driver} refuses ethtool -C {option} {_shown(value)} (0, or {limit.min} at least)"
        return [Finding(key, value, f"{why}: {limit.why}", c.source)]
    if n.is_integer() and int(n) in limit.special:
        return [Finding(key, value, f"on {driver}, {limit.special[int(n)]}", c.source)]
    if limit.step > 1 and n > 0:
        steps = n / limit.step
        whole = (int(steps) if limit.rounds == "down" else -int(-steps // 1)) * limit.step
        if whole != n:
            unit = " µs" if option.endswith("usecs") else ""
            why = f"acts as {whole}{unit} on {driver}: {limit.step_why}"
            return [Finding(key, value, why, c.source, acts_as=whole)]
    return []


def _virtio_findings(
    option: str,
    key: str,
    value: Any,
    c: DriverCoalescing,
    features: str | None,
    release: tuple[int, int] | None,
) -> list[Finding]:
    """virtio_net takes coalescing only from a device that offers it."""
    allowed = {"rx-usecs": 0, "rx-frames": 1}
    if option == "adaptive-rx":
        bit, name = 52, "VIRTIO_NET_F_VQ_NOTF_COAL"
    elif option in allowed and value != allowed[option]:
        bit, name = 53, "VIRTIO_NET_F_NOTF_COAL"
    else:
        return []
    offered: bool | None = None
    if features is not None and len(features) > bit:
        offered = features[bit] == "1"
    elif release is not None and release < (6, 2):
        offered = False  # the driver predates the feature and never negotiates it
    if offered:
        return []
    what = "adaptive-rx on" if option == "adaptive-rx" else f"{option} {_shown(value)}"
    if offered is None:
        why = f"virtio_net refuses ethtool -C {what} unless the device offers {name} ({c.needs})"
        return [Finding(key, value, why, c.source, certain=False)]
    why = f"virtio_net refuses ethtool -C {what}: the device does not offer {name} ({c.needs})"
    return [Finding(key, value, why, c.source)]


def driver_findings(
    driver: str | None,
    settings: Mapping[str, Any],
    *,
    context: Mapping[str, Any] | None = None,
    features: str | None = None,
    release: tuple[int, int] | None = None,
) -> list[Finding]:
    """Rule 1: the coalescing settings of ``settings`` (flat keys) that ``driver`` refuses,
    cannot set or rounds; ``context``: the rest of the scenario (its ``driver.moderation``
    when ``settings`` has none). ``features``: a virtio device's feature bits as its sysfs
    ``features`` file shows them (None: not read); ``release``: the kernel's (major, minor)."""
    c = DRIVER_COALESCING.get(driver or "")
    if driver is None or c is None:
        return []
    out: list[Finding] = []
    given: dict[str, str] = {}
    policy = settings.get("driver.moderation", (context or {}).get("driver.moderation"))
    if "driver.moderation" in settings and isinstance(policy, str):
        out += _policy_findings(driver, policy, c)
        if driver == "virtio_net" and policy in c.adaptive:
            out += _virtio_findings(
                "adaptive-rx", "driver.moderation", policy, c, features, release
            )
    if isinstance(policy, str) and policy in c.adaptive and "adaptive-rx" in c.options:
        given["adaptive-rx"] = "driver.moderation"
    for key, value in settings.items():
        option = option_of(driver, key)
        if option is None:
            continue
        if option == "":
            other = "nic.rx_usecs" if key == "nic.itr_us" else "nic.itr_us"
            what = "a coalescing timer from the first packet" if key == "nic.itr_us" else "its ITR"
            why = f"{driver}'s rx-usecs is {what} ({other}), so {key} has no counterpart there"
            out.append(Finding(key, value, why, c.source))
            continue
        if option not in c.options:
            why = (
                f"{driver} does not take ethtool -C {option}: its supported_coalesce_params "
                f"lacks it, and the ethtool core refuses the command ({ETHTOOL_CORE})"
            )
            out.append(Finding(key, value, why, c.source))
            continue
        given[option] = key
        if driver == "virtio_net":
            out += _virtio_findings(option, key, value, c, features, release)
        out += _value_findings(driver, key, option, value, c)
    for a, b in c.exclusive:
        if a in given and b in given and given[a] in settings:
            key = given[a]
            why = (
                f"{driver} refuses {a} together with {b} ({given[b]}): one coalescing mode "
                "at a time"
            )
            out.append(Finding(key, settings[key], why, c.source))
    return out


# --- 2. adaptive moderation overriding a static value -------------------------------------


def adaptive_findings(driver: str | None, settings: Mapping[str, Any]) -> list[Finding]:
    """Rule 2: a static ITR or coalescing value under the driver's adaptive moderation, which
    rewrites it."""
    policy = settings.get("driver.moderation")
    c = DRIVER_COALESCING.get(driver or "")
    if not isinstance(policy, str) or policy in ("off", "static") or policy in RESEARCH_POLICIES:
        return []
    if c is not None:
        rewrites, source = c.rewrites, c.adaptive_source
    else:
        rewrites = "the driver's adaptive moderation rewrites it"
        source = "the driver's set_coalesce and its adaptive moderation"
    keys = ("nic.itr_us",) if policy != "dim" else ("nic.rx_usecs", "nic.rx_frames")
    out = []
    for key in keys:
        if key in settings:
            why = (
                f'adaptive moderation (driver.moderation = "{policy}") is on: {rewrites}; '
                "the static value is only where it starts"
            )
            out.append(Finding(key, settings[key], why, source))
    return out


# --- 3. jiffy granularity --------------------------------------------------------------------

JIFFY_SOURCE = (
    "net/core/dev.c: net_rx_action, time_limit = jiffies + usecs_to_jiffies(netdev_budget_usecs); "
    "include/linux/jiffies.h: usecs_to_jiffies rounds up"
)


def jiffy_finding(usecs: int | None, hz: int | None) -> Finding | None:
    """Rule 3: ``net.core.netdev_budget_usecs`` between ticks acts as the whole jiffies it
    rounds up to; under 2 jiffies irqlab writes 0 (its 2 jiffies), as it refuses less."""
    if not usecs or not hz or usecs <= 0:
        return None
    jiffies = -(-usecs * hz // 1_000_000)
    whole = jiffies * 1_000_000 / hz
    if whole - usecs < 1:
        return None
    key = "kernel.netdev_budget_usecs"
    ticks = "1 jiffy" if jiffies == 1 else f"{jiffies} jiffies"
    reached = f"{(jiffies - 1) * 1_000_000 / hz:g} to {whole:g} µs"
    why = (
        f"acts as {whole:g} µs, {ticks} at HZ={hz}: the kernel counts net_rx_action's time "
        f"limit in whole jiffies, rounding up, so a pass stops at a tick {reached} after it "
        "starts"
    )
    if jiffies < 2:
        why += (
            "; irqlab models 2 jiffies at least, so the scenario has 0 (its default of "
            "2 jiffies) instead"
        )
    else:
        why += "; irqlab counts jiffies the same way"
    return Finding(key, usecs, why, JIFFY_SOURCE, acts_as=int(whole))


# --- 4. deferral without a flush timeout --------------------------------------------------

DEFER_SOURCE = (
    "net/core/dev.c: napi_complete_done, which keeps the IRQ masked only if "
    "gro_flush_timeout arms the NAPI timer"
)


def deferral_finding(settings: Mapping[str, Any]) -> Finding | None:
    """Rule 4: ``napi_defer_hard_irqs`` > 0 with ``gro_flush_timeout`` = 0 defers nothing."""
    defer = settings.get("kernel.napi_defer_hard_irqs")
    timeout = settings.get("kernel.gro_flush_timeout_ns")
    if not defer or timeout not in (0, 0.0):
        return None
    why = (
        "gro_flush_timeout is 0: napi_complete_done counts the deferral down but re-enables "
        "the IRQ as without it, since no timer polls in its place"
    )
    return Finding("kernel.napi_defer_hard_irqs", defer, why, DEFER_SOURCE)


# --- 5. busy polling with no application that can poll --------------------------------------

BUSY_SOURCES = {
    "socket.busy_read_us": (
        "net.core.busy_read",
        "a blocking receive (it is each new socket's SO_BUSY_POLL)",
        "net/core/sock.c: sock_init_data (sk_ll_usec = sysctl_net_busy_read); "
        "include/net/busy_poll.h: sk_can_busy_loop, sk_busy_loop",
    ),
    "kernel.busy_poll_us": (
        "net.core.busy_poll",
        "poll(), select() or epoll_wait()",
        "fs/select.c: do_poll, do_select (net_busy_loop_on); fs/eventpoll.c: ep_busy_loop",
    ),
}


def busy_poll_findings(values: Mapping[str, Any], apps: bool) -> list[Finding]:
    """Rule 5: a busy-polling sysctl with no application that polls (``apps``: the scenario or
    the host has one known to wait that way)."""
    if apps:
        return []
    out = []
    for key, (name, who, source) in BUSY_SOURCES.items():
        value = values.get(key)
        if value:
            why = (
                f"{name} busy-polls only where an application waits in {who}, and none is "
                "known (a probe writes no [[app]]): it takes effect with one"
            )
            out.append(Finding(key, value, why, source))
    return out


# --- where the rules apply ---------------------------------------------------------------------


def probe_findings(host: Host, p: Probe) -> list[Finding]:
    """What the rules find on the host ``p`` was read from (before the scenario as a whole is
    checked, so that the values the model ignores are still there)."""
    values = {k: s.value for k, s in p.settings.items()}
    apps = {k: s.value for k, s in p.with_apps.items()}
    out = driver_findings(p.driver, values, release=kernel_version(p.kernel))
    out += adaptive_findings(p.driver, values)
    raw = integer((host.read("/proc/sys/net/core/netdev_budget_usecs") or "").strip() or None)
    jiffy = jiffy_finding(raw, values.get("kernel.hz"))
    if jiffy is not None:
        out.append(jiffy)
    defer = deferral_finding(values)
    if defer is not None:
        out.append(defer)
    out += busy_poll_findings(apps, apps=False)
    return out


def candidate_findings(
    driver: str | None, candidate: Mapping[str, Any], base: Mapping[str, Any]
) -> list[Finding]:
    """What the driver rule finds in a ``tune`` candidate's own settings on ``driver``, with
    the scenario ``base`` around them (rules 2 to 5 are the model's, which ``tune`` applies
    through its warnings)."""
    if driver is None:
        return []
    return driver_findings(driver, candidate, context=base)


def known_drivers() -> list[str]:
    """The drivers of :data:`DRIVER_COALESCING`, for a message."""
    return sorted(DRIVER_COALESCING)
