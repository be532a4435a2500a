"""Allows ``python -m dashgen`` (the same command line as ``dashgen``)."""

from dashgen.cli.app import main

main(prog_name="dashgen")
