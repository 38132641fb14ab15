"""What the operator types: the commands that apply a setting on a Linux host — ``ethtool -C``
for the moderation policy and coalescing, ``sysctl -w`` or a write to sysfs for the kernel's
settings, netlink's ``napi-set`` for a per-NAPI one. The host's settings come from the probe's
table (:data:`irqlab.ops.probe.HOST_SETTINGS`): what the probe reads, these commands write."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from irqlab.formatting import plain
from irqlab.ops.probe import settings
from irqlab.ops.probe.settings import HostSetting

#: The adaptive policies an operator can choose, and what each is (for the command's comment).
_ADAPTIVE = {
    "ixgbe-legacy": "ixgbe before 4.15 / the out-of-tree 3.x driver's adaptive ITR",
    "ixgbe": "ixgbe's adaptive ITR (4.15 and later)",
    "i40e": "i40e/iavf's dynamic ITR",
    "dim": "net_dim (mlx5, ice, bnxt, ...)",
    "linear": "the linear ITR patch of Emmerich et al. (2015); not in mainline drivers",
}


def commands(
    setting: Mapping[str, Any], params: Mapping[str, Any], iface: str = "IFACE"
) -> list[str]:
    """The commands that apply ``setting`` on a Linux host (``params``: the whole scenario)."""
    out: list[str] = []
    coalesce: list[str] = []
    moderation = setting.get("driver.moderation", params.get("driver.moderation"))
    if "driver.moderation" in setting or "nic.itr_us" in setting:
        if moderation == "static":
            itr = setting.get("nic.itr_us", params.get("nic.itr_us"))
            coalesce += ["adaptive-rx off", f"rx-usecs {plain(itr)}"]
        elif moderation == "off":
            coalesce += ["adaptive-rx off", "rx-usecs 0"]
        elif moderation in _ADAPTIVE:
            coalesce += ["adaptive-rx on"]
    if "nic.rx_usecs" in setting:
        coalesce.append(f"rx-usecs {plain(setting['nic.rx_usecs'])}")
    if "nic.rx_frames" in setting:
        coalesce.append(f"rx-frames {plain(setting['nic.rx_frames'])}")
    if coalesce:
        note = f"   # {_ADAPTIVE[moderation]}" if moderation in _ADAPTIVE else ""
        out.append(f"ethtool -C {iface} {' '.join(coalesce)}{note}")
    written = {"driver.moderation", "nic.itr_us", "nic.rx_usecs", "nic.rx_frames"}
    # the host's own settings, as the probe reads them (one table for both directions)
    for host in settings.HOST_SETTINGS:
        if host.key is not None and host.key in setting:
            out.append(_host_command(host, setting[host.key], iface))
            written.add(host.key)
    for key, value in setting.items():
        if key not in written:
            out.append(f"# {key} = {plain(value)} (a model setting: no operator command)")
    return out


def _host_command(host: HostSetting, value: Any, iface: str) -> str:
    """The command that writes one of the host's settings (``value`` in the key's unit)."""
    if host.scale != 1.0 and isinstance(value, int | float) and not isinstance(value, bool):
        value = round(value / host.scale)
    shown = ("1" if value else "0") if host.boolean else plain(value)
    path = host.path
    if path is None:  # netlink only (per NAPI): each of the device's NAPIs
        return (
            f'ynl --family netdev --do napi-set --json \'{{"id": NAPI_ID, '
            f'"{host.napi}": {shown}}}\'   # each NAPI of {iface} (napi-get lists them)'
        )
    if path.startswith("/proc/sys/"):
        return f"sysctl -w {path.removeprefix('/proc/sys/').replace('/', '.')}={shown}"
    return f"echo {shown} > {path.replace('{iface}', iface)}"
