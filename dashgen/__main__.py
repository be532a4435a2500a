"""Allows ``python -m dashgen``."""

from dashgen.cli import main

main()
