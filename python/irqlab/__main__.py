"""``python -m irqlab``: the ``irqlab`` command."""

from irqlab.cli import main

main()
