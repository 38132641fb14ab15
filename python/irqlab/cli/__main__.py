"""``python -m irqlab.cli``: the ``irqlab`` command."""

from irqlab.cli import main

main()
