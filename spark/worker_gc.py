"""Spark's Python workers' garbage collection: keep the imported modules out of each task's sweep.

A reused Python worker runs ``gc.collect()`` after every task and every
planner call (``pyspark.daemon``'s loop).  A worker that has imported
PySpark, pyarrow, pandas and psycopg holds about 90,000 tracked objects, so
each full collection costs about 20 ms of CPU: more than a small task's own
work, paid for each of a read's tasks and each planner step (schema,
partitions, write, commit).  ``freeze_imports`` moves what the worker holds
the first time it runs our code (the modules, mostly) into the permanent
generation, which collections skip; what each task creates afterwards is
collected as before (a cycle that was alive at the freeze and dies later is
never reclaimed: a bounded, one-time cost).  Only a reused worker (``SPARK_REUSE_WORKER``, Spark's
default) collects after each task, so anywhere else (a driver, a test) this
does nothing.
"""

from __future__ import annotations

import gc
import os

_state = {"frozen": False}


def freeze_imports() -> None:
    """Freeze the objects this reused worker holds now, once per process."""
    if _state["frozen"] or os.environ.get("SPARK_REUSE_WORKER") != "1":
        return
    _state["frozen"] = True
    gc.freeze()
