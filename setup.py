"""Package list for setuptools (the rest of the metadata is in pyproject.toml).

The repository keeps ``panels/`` and ``queries/`` at the top level, where a reader looks for a panel,
but they install as ``dashgen_panels`` and ``dashgen_queries``: site-packages gets no generic
top-level ``panels`` or ``queries`` package to clash with anything else of that name.
"""

from setuptools import find_namespace_packages, setup

FOLDERS = {"dashgen_panels": "panels", "dashgen_queries": "queries"}

setup(
    packages=[*find_namespace_packages(include=["dashgen", "dashgen.*"], exclude=["*.__pycache__"]), *FOLDERS],
    package_dir=FOLDERS,
)
