"""The dashgen command line: one module per command family and one explicit command table (``app``)."""

from dashgen.cli.app import main

__all__ = ["main"]
