"""PromQL parse trees, one per expression text per process.

The build's syntax check, the linter, the scope rewrites, validate-queries' selectors and the demo's wanted metrics
each parse the queries of the same dashboards; a process that builds a profile and then lints, checks or scopes it
(``dashgen check``, a test session over four shipped profiles and copies of them) parsed each expression up to five
times. The parser's trees are read-only objects (no attribute of a node can be set), so one tree serves every
caller. A text that does not parse raises each time (its error is not kept). Callers still bound what they hand the
parser (``queries.promql.query_size``): this module parses whatever it is given."""

from __future__ import annotations

from typing import Any

import promql_parser

from dashgen.render.memo import Memo

TREES: Memo[str, Any] = Memo("promql trees", 16_384)


def parse(expr: str) -> Any:
    """``promql_parser.parse(expr)``, the same tree object for the same text while it is remembered."""
    tree = TREES.get(expr)
    if tree is None:
        tree = promql_parser.parse(expr)
        TREES.put(expr, tree)
    return tree
