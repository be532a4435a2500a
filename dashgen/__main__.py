"""Allows ``python -m dashgen``."""

from dashgen.cli.app import main

main()
