"""bench: nyala side by side with PostgreSQL 15 and DuckDB, in one run.

``python -m bench --scale 1`` (``make bench``) starts a nyala server from this
working tree and a throwaway PostgreSQL 15, runs the same workloads against
both through psycopg 3 and the analytic ones against DuckDB in-process, and
writes a table, a JSON file and a PNG chart of the ratios to
``bench/results/``.  See the README's Performance section.
"""

import logging
import sys


def log_progress() -> None:
    """Every bench entry point reports its steps on stderr, leaving stdout to the figures."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )  # fmt: skip
