"""On-disk bytes per column encoding and compression for the bench data.

Each column of the bench tables (``metrics`` and TPC-H ``lineitem``, generated
as in the bench, sorted by primary key as a flush writes them) is written as a
cfile once per encoding its type allows, with the default compression, and
once more for each other compression with the type's default encoding.  The
table gives the bytes and the ratio to the column's raw Arrow size.

    python -m bench.encodings --rows 1000000 [--out bench/results/encodings.json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow as pa

from bench import datasets
from storage import data_type as t
from storage.cfile.compression import CompressionType
from storage.cfile.encoding import EncodingType, allowed_encodings, resolve_encoding
from storage.cfile.writer import write_cfile
from storage.data_type import DataType

KEYS = {"metrics": ["host", "metric", "time"], "lineitem": ["l_orderkey", "l_linenumber"]}


@dataclass(frozen=True, slots=True)
class Measurement:
    table: str
    column: str
    type: str
    encoding: str
    compression: str
    bytes: int
    raw_bytes: int

    @property
    def ratio(self) -> float:
        return self.bytes / self.raw_bytes if self.raw_bytes else 0.0


def data_type(arrow_type: pa.DataType) -> DataType:
    """The nyala column type the bench DDL gives an Arrow column."""
    if pa.types.is_int64(arrow_type):
        return t.INT64
    if pa.types.is_int32(arrow_type):
        return t.INT32
    if pa.types.is_float64(arrow_type):
        return t.DOUBLE
    if pa.types.is_decimal(arrow_type):
        return t.decimal(arrow_type.precision, arrow_type.scale)
    if pa.types.is_date32(arrow_type):
        return t.DATE
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return t.STRING
    raise ValueError(f"no nyala type for {arrow_type}")


def measure(rows: int, workdir: Path) -> list[Measurement]:
    tables = {"metrics": datasets.metrics(rows), "lineitem": datasets.lineitem(rows)}
    out = []
    for table_name, table in tables.items():
        table = table.sort_by([(k, "ascending") for k in KEYS[table_name]])
        for field in table.schema:
            dtype = data_type(field.type)
            array = table.column(field.name).combine_chunks().cast(dtype.arrow_type)
            raw = array.nbytes
            default = resolve_encoding(dtype, EncodingType.AUTO_ENCODING)
            choices = [
                (encoding, CompressionType.DEFAULT_COMPRESSION)
                for encoding in sorted(allowed_encodings(dtype), key=lambda e: e.value)
                if encoding is not EncodingType.AUTO_ENCODING
            ] + [
                (default, compression)
                for compression in CompressionType
                if compression is not CompressionType.DEFAULT_COMPRESSION
            ]
            for encoding, compression in choices:
                path = workdir / f"{table_name}-{field.name}-{encoding.value}-{compression.value}"
                size = write_cfile(path, array, dtype, encoding, compression, fsync=False)
                path.unlink()
                out.append(
                    Measurement(
                        table_name, field.name, dtype.pg_name(), encoding.value,
                        compression.value, size, raw,
                    )
                )  # fmt: skip
    return out


def markdown(measurements: list[Measurement]) -> str:
    lines = [
        "| table | column | type | encoding | compression | bytes | of raw Arrow |",
        "|---|---|---|---|---|---:|---:|",
    ]
    for m in measurements:
        lines.append(
            f"| {m.table} | {m.column} | {m.type} | {m.encoding} | {m.compression} "
            f"| {m.bytes:,} | {m.ratio:.1%} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args_parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    args_parser.add_argument("--rows", type=int, default=1_000_000)
    args_parser.add_argument("--out", type=Path)
    args = args_parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as workdir:
        measurements = measure(args.rows, Path(workdir))
    print(markdown(measurements))
    if args.out is not None:
        payload = {"rows": args.rows, "measurements": [asdict(m) for m in measurements]}
        args.out.write_text(json.dumps(payload, indent=2))


if __name__ == "__main__":
    main()
