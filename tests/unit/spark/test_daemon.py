"""spark.daemon's path order: the PySpark zips go last only behind an installed PySpark of their version."""

from __future__ import annotations

import zipfile
from pathlib import Path

from spark.daemon import prefer_installed_pyspark


def _zip(path: Path, version: str) -> str:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("pyspark/version.py", version)
    return str(path)


def _installed(root: Path, version: str) -> str:
    (root / "pyspark").mkdir(parents=True)
    (root / "pyspark" / "version.py").write_text(version)
    return str(root)


def test_the_zips_move_behind_an_installed_pyspark_of_the_same_version(tmp_path):
    pyspark_zip = _zip(tmp_path / "pyspark.zip", '__version__ = "4.3.0"\n')
    py4j_zip = _zip(tmp_path / "py4j-0.10.9.9-src.zip", "")
    site = _installed(tmp_path / "site", '__version__ = "4.3.0"\n')
    path = [pyspark_zip, py4j_zip, "/repo", site]
    assert prefer_installed_pyspark(path) == ["/repo", site, pyspark_zip, py4j_zip]


def test_another_installed_version_or_none_leaves_the_path_alone(tmp_path):
    pyspark_zip = _zip(tmp_path / "pyspark.zip", '__version__ = "4.3.0"\n')
    other = _installed(tmp_path / "site", '__version__ = "4.1.0"\n')
    assert prefer_installed_pyspark([pyspark_zip, other]) == [pyspark_zip, other]
    assert prefer_installed_pyspark([pyspark_zip, "/repo"]) == [pyspark_zip, "/repo"]
    assert prefer_installed_pyspark(["/repo", other]) == ["/repo", other]
