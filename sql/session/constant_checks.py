"""ConstantChecks: the constants of a DDL statement, checked and evaluated by DuckDB.

Partition bounds are evaluated as the column's type; a column DEFAULT is
checked to give the column's type, as PostgreSQL checks it at CREATE or ALTER.
"""

from __future__ import annotations

import duckdb
from sqlglot import exp

from sql.common.datatypes import duckdb_type
from sql.common.duckdb_errors import translate
from storage.data_type import DataType
from storage.errors import DatatypeMismatch, FeatureNotSupported


class ConstantChecks:
    """A session's DuckDB connection, used for the constants of its DDL statements."""

    def __init__(self, duck: duckdb.DuckDBPyConnection) -> None:
        self._duck = duck

    def evaluate_constant(self, node: exp.Expr, dtype: DataType) -> object:
        """A constant expression's value as ``dtype`` (a partition bound), computed by DuckDB."""
        if node.find(exp.Column, exp.Parameter, exp.Subquery):
            raise FeatureNotSupported(
                f"partition bound {node.sql(dialect='postgres')} is not a constant"
            )
        cast = exp.Cast(
            this=node.copy(), to=exp.DataType.build(duckdb_type(dtype), dialect="duckdb")
        )
        cursor = self._duck.cursor()
        try:
            # Through Arrow: DuckDB's own conversion of a timestamptz needs pytz.
            result = cursor.sql(f"SELECT {cast.sql(dialect='duckdb')}").to_arrow_table()
            return result.column(0)[0].as_py()
        except duckdb.Error as exc:
            raise translate(exc) from exc
        finally:
            cursor.close()

    def check_default(self, default_sql: str, dtype: DataType) -> None:
        """A DEFAULT must give the column's type: a text expression (not a constant, which
        PostgreSQL reads as the column's type) for another type is 42804, a value that does
        not convert is the cast's error."""
        cursor = self._duck.cursor()
        try:
            expression: exp.Expr = exp.maybe_parse(default_sql, dialect="postgres")
            if not dtype.is_string and not isinstance(expression, (exp.Literal, exp.Null)):
                typed = cursor.sql(f"SELECT typeof({expression.sql(dialect='duckdb')})")
                if typed.fetchall()[0][0] == "VARCHAR":
                    raise DatatypeMismatch(
                        f"column is of type {dtype.pg_name()} but default expression is of "
                        "type text",
                        hint="You will need to rewrite or cast the expression.",
                    )
            cast = exp.Cast(
                this=expression, to=exp.DataType.build(duckdb_type(dtype), dialect="duckdb")
            )
            cursor.sql(f"SELECT ({cast.sql(dialect='duckdb')}) IS NULL").fetchall()
        except duckdb.Error as exc:
            raise translate(exc) from exc
        finally:
            cursor.close()
