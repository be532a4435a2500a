"""dashgen's benchmarks (``make bench`` / ``python -m bench``): not a test suite, not installed, not run by CI.

Every speed figure is a ratio against a baseline measured in the same run; see ``harness.py`` and docs/bench.md.
"""
