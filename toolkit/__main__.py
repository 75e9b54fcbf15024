"""``python -m toolkit`` (and ``torchrun -m toolkit``) is the ``toolkit`` command."""

from toolkit.cli import main

main()
