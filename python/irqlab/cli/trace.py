"""``irqlab trace-info``: what a capture holds, before replaying it."""

from __future__ import annotations

import json
from pathlib import Path

import click

from irqlab.cli.common import (
    Console,
    format_option,
    main,
    user_errors,
)


@main.command("trace-info")
@click.argument("capture", type=click.Path(path_type=Path))
@click.option(
    "--top", type=click.IntRange(min=0), default=5, show_default=True, help="Largest flows to list."
)
@format_option
@user_errors
def trace_info(capture: Path, top: int, fmt: str) -> None:
    """What CAPTURE (pcap or pcapng, gzip-compressed or not) holds, before replaying it with
    traffic.kind = "pcap" and traffic.pcap = CAPTURE: packets, duration (a replay's default
    length), rate, frame sizes, flows (5-tuples) and the largest gaps. A capture the replay
    cannot read gets the same one-line reason here.

    \b
      irqlab trace-info examples/web.pcapng.gz
      irqlab trace-info examples/web.pcapng.gz --format json --top 20
      irqlab run examples/replay.toml
    """
    from irqlab.trace import render
    from irqlab.trace import trace_info as info

    result = info(capture, top)
    if fmt == "json":
        click.echo(json.dumps(result, indent=2))
    else:
        Console().print(render(result))
