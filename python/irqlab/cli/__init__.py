"""The ``irqlab`` command line.

Every subcommand has ``--help``. User errors (bad scenario, a file that cannot be read, an
output that cannot be written) print one line on stderr and exit with status 2; they never
print a traceback. A setting that has no effect in its scenario prints one warning line.

:func:`main` is the group (``irqlab.cli:main``, also ``python -m irqlab.cli``); each module
here adds the commands of one family to it:

- ``common``: the group, error handling, the options several commands share;
- ``run``: ``run``, ``check``, ``keys``;
- ``sweep``: ``sweep`` (and the summary it prints), ``plot``, ``rerun``;
- ``analytic``: ``analytic``;
- ``reproduce``: ``reproduce``, ``report``;
- ``tune``: ``tune``;
- ``calibrate``: ``calibrate``;
- ``probe``: ``probe``;
- ``measure``: ``measure``;
- ``lab``: ``lab``;
- ``trace``: ``trace-info``.

A command imports what it needs when it runs, so that ``--help`` and the quick commands load
neither rich nor the scientific libraries.
"""

from __future__ import annotations

from irqlab.cli import (  # noqa: F401
    analytic,
    calibrate,
    lab,
    measure,
    probe,
    reproduce,
    run,
    sweep,
    trace,
    tune,
)
from irqlab.cli.common import main

__all__ = ["main"]
