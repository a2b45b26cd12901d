"""Spark's Python worker daemon, importing PySpark from its installed package, not pyspark.zip.

Spark starts every Python worker daemon (task workers, and the planner
workers a Python data source needs for each query: schema, filter pushdown,
partitions, commit) with ``$SPARK_HOME/python/lib/pyspark.zip`` first on
``PYTHONPATH``.  Python never caches bytecode for a zip, so each daemon
compiles PySpark from source: about two seconds of CPU, paid again whenever
Spark starts a planner daemon, which profiling showed as the largest single
cost of a data-source read on a busy machine.  With
``spark.python.daemon.module=spark.daemon`` the daemon first moves the
PySpark and Py4J zips behind an installed PySpark of the same version (a
pip-installed PySpark always has one), then runs ``pyspark.daemon`` as usual.
Where no installed copy matches, the path is left alone.
"""

from __future__ import annotations

import importlib.util
import runpy
import sys
import zipfile
from pathlib import Path

_VERSION_FILE = "pyspark/version.py"


def prefer_installed_pyspark(path: list[str]) -> list[str]:
    """``path`` with the PySpark and Py4J zips last, if an installed PySpark matches the zip's."""
    zips = [p for p in path if p.endswith(".zip") and Path(p).name.startswith(("pyspark", "py4j"))]
    pyspark_zip = next((p for p in zips if Path(p).name.startswith("pyspark")), None)
    if pyspark_zip is None:
        return path
    rest = [p for p in path if p not in zips]
    installed = _installed_version(rest)
    if installed is None or installed != _zip_version(pyspark_zip):
        return path
    return rest + zips


def _installed_version(path: list[str]) -> str | None:
    for entry in path:
        candidate = Path(entry or ".") / _VERSION_FILE
        if candidate.is_file():
            return candidate.read_text()
    return None


def _zip_version(archive: str) -> str | None:
    try:
        with zipfile.ZipFile(archive) as zipped:
            return zipped.read(_VERSION_FILE).decode()
    except (OSError, KeyError, zipfile.BadZipFile):
        return None


def main() -> None:
    sys.path[:] = prefer_installed_pyspark(sys.path)
    importlib.invalidate_caches()
    assert importlib.util.find_spec("pyspark") is not None, "PySpark is on the path"
    runpy.run_module("pyspark.daemon", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
