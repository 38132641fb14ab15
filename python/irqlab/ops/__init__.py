"""irqlab on a real host: the operator's side.

- :mod:`irqlab.ops.probe` — ``irqlab probe``: a scenario read from a live Linux host (or a
  recording of one), each value with where it was read;
- :mod:`irqlab.ops.tune` — ``irqlab tune``: the setting an operator can change that meets every
  SLO at the least cost, and the commands (``ethtool -C``, ``sysctl``) that apply it;
- :mod:`irqlab.ops.policies` — a moderation policy written in Python
  (``driver.moderation = "python"``), to try an algorithm before writing it in a driver.

Probe and tune share one table of the host's settings (:data:`irqlab.ops.probe.HOST_SETTINGS`):
what the probe reads, tune's commands write back. Nothing here is imported by ``import irqlab``:
each loads when used.
"""
