"""The ``nyala`` sqlglot dialect: PostgreSQL, the base for Kudu/Impala grammar extensions."""

from __future__ import annotations

from sqlglot.dialects.postgres import Postgres


class Nyala(Postgres):
    """PostgreSQL's grammar; partition DDL and UPSERT are added here as the product grows."""
