"""Package list for setuptools (the rest of the metadata is in pyproject.toml).

The repository keeps ``panels/``, ``queries/`` and ``profiles/`` at the top level, where a reader looks for
them, but they install as ``dashgen_panels``, ``dashgen_queries`` and ``dashgen_profiles`` (the example
profiles ``dashgen init --from`` copies): site-packages gets no generic top-level package of those names.
"""

from setuptools import find_namespace_packages, setup

# dashgen.project.CONTENT_PACKAGES translates these names back (tests/test_architecture.py keeps the two equal)
FOLDERS = {"dashgen_panels": "panels", "dashgen_queries": "queries", "dashgen_profiles": "profiles"}

setup(
    packages=[*find_namespace_packages(include=["dashgen", "dashgen.*"], exclude=["*.__pycache__"]), *FOLDERS],
    package_dir=FOLDERS,
)
