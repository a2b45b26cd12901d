"""The ``nyala`` sqlglot dialect: PostgreSQL plus Kudu/Impala partition DDL.

Grammar added on top of PostgreSQL's (all parsed here, never by regular
expressions over the text):

- ``PARTITION BY HASH [(cols)] PARTITIONS n [, HASH ...] [, RANGE (cols) [(PARTITION ...)]]``
  in CREATE TABLE, with Impala's range partitions ``PARTITION VALUES < x``,
  ``PARTITION x <= VALUES < y``, ``PARTITION y <= VALUES`` and ``PARTITION VALUE = z``
  (``<`` and ``<=`` on either side).  PostgreSQL's ``PARTITION BY RANGE (cols)`` is the
  same range level with no ranges yet.
- ``UPSERT INTO t ...`` as Impala writes it.
- Impala's column attributes ``ENCODING <encoding>`` and ``COMPRESSION <codec>``.
- ``ALTER TABLE t ADD RANGE PARTITION ..., DROP RANGE PARTITION ...`` (several in one
  statement) and ``ALTER TABLE t DETACH PARTITION p``.

And the statements sqlglot reads as opaque commands or misreads, each parsed
into a typed statement (``statements``) by a grammar module keyed by its
first keyword: utility statements (``utility``), cursors (``cursors``),
COMMENT ON (``comments``), COPY (``copy``), roles (``roles``), sequences and ADD
GENERATED ... AS IDENTITY (``sequence_grammar``), GRANT, REVOKE and
ALTER TABLE ... OWNER TO (``privileges``), EXPLAIN (``explain``) and LOCK (``lock_grammar``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import TokenError
from sqlglot.parsers.postgres import PostgresParser
from sqlglot.tokenizer_core import TokenizerCore
from sqlglot.tokens import Token, TokenType

from sql.common.names import fold_identifiers
from sql.frontend import (
    comments,
    constraint_modes,
    copy_grammar,
    cursors,
    explain,
    extensions,
    lock_grammar,
    maintenance,
    prepared,
    privileges,
    roles,
    security_labels,
    sequence_grammar,
    utility,
)
from sql.frontend.escape_strings import decode_escape_strings
from sql.frontend.statements import ExplainStatement, ParsedStatement
from storage.errors import SqlSyntaxError


class _TokenizerCore(TokenizerCore):
    """sqlglot's scanner, reading ``$<digit>`` as a parameter, never as a dollar-quote tag.

    A dollar-quote tag cannot start with a digit, so ``$1,$2`` is two
    parameters; sqlglot 30 takes ``1,`` for a tag and fails to find ``$1,$``.
    """

    __slots__ = ()

    def _scan_string(self, start: str) -> bool:
        if start == "$" and self._peek.isdigit():
            self._add(TokenType.PARAMETER)
            return True
        return super()._scan_string(start)


class HashPartitionLevel(exp.Expression):
    """``HASH [(cols)] PARTITIONS n``; no columns means all key columns."""

    arg_types = {"expressions": False, "buckets": True}


class RangePartition(exp.Expression):
    """One range: ``lower``/``upper`` bound expressions, each inclusive or not; either may be
    absent (unbounded).  ``VALUE = z`` sets both to z, upper inclusive."""

    arg_types = {
        "lower": False,
        "lower_inclusive": False,
        "upper": False,
        "upper_inclusive": False,
    }


class RangePartitionLevel(exp.Expression):
    """``RANGE (cols) [(PARTITION ..., ...)]``."""

    arg_types = {"expressions": True, "partitions": False}


class NyalaPartitionBy(exp.Expression):
    """The levels of a ``PARTITION BY`` clause, hash levels first."""

    arg_types = {"expressions": True}


# What may follow PostgreSQL's PARTITION BY key (Impala's continues with PARTITIONS, ( or ,).
_PG_PARTITION_BY_ENDS = {TokenType.SEMICOLON, TokenType.R_PAREN, TokenType.SENTINEL}


class PgPartitionBy(exp.Expression):
    """PostgreSQL's ``PARTITION BY LIST | RANGE | HASH (cols)``: partitions come with
    ``CREATE TABLE ... PARTITION OF``."""

    arg_types = {"strategy": True, "expressions": True}


class AttachPartition(exp.Expression):
    """``ALTER TABLE t ATTACH PARTITION p FOR VALUES ... | DEFAULT``; ``bound`` as in
    ``PARTITION OF`` (a PartitionBoundSpec or the Var DEFAULT)."""

    arg_types = {"this": True, "expression": True, "bound": True}


class AttachIndexPartition(exp.Expression):
    """``ALTER INDEX parent_index ATTACH PARTITION partition_index`` (pg_dump writes it for
    each partition's primary key)."""

    arg_types = {"this": True, "expression": True}


class AlterRangePartitions(exp.Expression):
    """``ALTER TABLE t ADD|DROP RANGE PARTITION ...`` actions, applied together."""

    arg_types = {"this": True, "add": False, "drop": False}


class DetachPartition(exp.Expression):
    """``ALTER TABLE t DETACH PARTITION p``."""

    arg_types = {"this": True, "expression": True}


class ColumnEncoding(exp.Expression):
    """Impala's ``ENCODING <encoding>`` column attribute."""

    arg_types = {"this": True}


class ColumnCompression(exp.Expression):
    """Impala's ``COMPRESSION <codec>`` column attribute."""

    arg_types = {"this": True}


class TrailingPrimaryKey(exp.Expression):
    """``PRIMARY KEY (cols)`` written after a CREATE TABLE's column list (Spark's
    ``createTableOptions`` can only append text there)."""

    arg_types = {"expressions": True}


class ValidateConstraint(exp.Expression):
    """ALTER TABLE ... VALIDATE CONSTRAINT name: check existing rows against a NOT VALID one."""

    arg_types = {"this": True}


class OnCommitDrop(exp.Property):
    """``ON COMMIT DROP`` of a temporary table (sqlglot knows only PRESERVE/DELETE ROWS)."""

    arg_types = {"this": False}


class Upsert(exp.Insert):
    """Impala's ``UPSERT INTO t [(cols)] VALUES ... | SELECT ...``."""


SPELT_NOW = "spelt_now"
"""Meta key of a CURRENT_TIMESTAMP written ``now()``, which a column default shows as such."""


def _spelt_now(node: exp.Expr) -> exp.Expr:
    node.meta[SPELT_NOW] = True
    return node


class NyalaParser(PostgresParser):
    # PostgreSQL has no lambdas: in ``f(doc -> 'a')`` the arrow is json's ``->``; ``=>``
    # stays, as a named argument (``make_interval(days => 3)``).
    LAMBDAS: ClassVar[dict[TokenType, Any]] = {
        token: parse for token, parse in PostgresParser.LAMBDAS.items() if token != TokenType.ARROW
    }
    # ``#-`` is one of PostgreSQL's generic operators, left-associative at the tier of ``->``
    # (``doc #- '{a,0}' -> 0`` is ``(doc #- '{a,0}') -> 0``), not a comparison's.
    RANGE_PARSERS: ClassVar[dict[TokenType, Any]] = {
        token: parse
        for token, parse in PostgresParser.RANGE_PARSERS.items()
        if token != TokenType.HASH_DASH
    }
    JSON_OPERATORS: ClassVar[dict[TokenType, Any]] = {
        **PostgresParser.JSON_OPERATORS,
        TokenType.HASH_DASH: lambda self, this, path: self.expression(
            exp.JSONBDeleteAtPath(this=this, expression=path)
        ),
    }
    # ``FROM t PARTITION (tablet_id, ...)``: MySQL's partition selection, reading only those tablets.
    SUPPORTS_PARTITION_SELECTION = True

    # ``ADD CHECK (...)`` without CONSTRAINT name, as PostgreSQL allows; VALIDATE CONSTRAINT.
    ADD_CONSTRAINT_KEYWORDS = {*PostgresParser.ADD_CONSTRAINT_KEYWORDS, "CHECK"}
    # Foreign keys: ``NOT DEFERRABLE``, and PostgreSQL 15's ``ON DELETE SET NULL (cols)``.
    KEY_CONSTRAINT_OPTIONS = {
        **PostgresParser.KEY_CONSTRAINT_OPTIONS,
        "NOT": ("ENFORCED", "DEFERRABLE"),
    }

    def _parse_key_constraint_options(self) -> list[str]:
        options = super()._parse_key_constraint_options()
        while (
            options
            and options[-1].upper().startswith("ON DELETE SET ")
            and self._match(TokenType.L_PAREN, advance=False)
        ):
            columns = self._parse_wrapped_csv(self._parse_id_var)
            options[-1] += " (" + ", ".join(c.sql(dialect="postgres") for c in columns) + ")"
            options.extend(super()._parse_key_constraint_options())
        return options

    ALTER_PARSERS = {
        **PostgresParser.ALTER_PARSERS,
        "VALIDATE": lambda self: (
            self._match(TokenType.CONSTRAINT)
            and self.expression(ValidateConstraint(this=self._parse_id_var()))
        ),
    }

    # to_char's pattern is read by the planner (sql/planner/to_char.py), not turned into a
    # strftime format here, which loses what strftime cannot say.
    FUNCTIONS = {
        **PostgresParser.FUNCTIONS,
        "TO_CHAR": lambda args: exp.Anonymous(this="to_char", expressions=args),
        "NOW": lambda args: _spelt_now(exp.CurrentTimestamp.from_arg_list(args)),
    }

    PROPERTY_PARSERS = {
        **PostgresParser.PROPERTY_PARSERS,
        "PARTITION BY": lambda self: self._parse_nyala_partition_by(),
        "PRIMARY KEY": lambda self: self.expression(
            TrailingPrimaryKey(expressions=self._parse_wrapped_id_vars())
        ),
    }
    CONSTRAINT_PARSERS = {
        **PostgresParser.CONSTRAINT_PARSERS,
        "ENCODING": lambda self: self.expression(
            ColumnEncoding(this=self._parse_var(any_token=True))
        ),
        "COMPRESSION": lambda self: self.expression(
            ColumnCompression(this=self._parse_var(any_token=True))
        ),
    }

    def _parse_on_property(self) -> exp.Expr | None:
        if self._match_text_seq("COMMIT", "DROP"):
            return self.expression(OnCommitDrop())
        return super()._parse_on_property()

    def _parse_nyala_partition_by(self) -> exp.Expr:
        index = self._index
        levels: list[exp.Expr] = []
        pg = self._parse_pg_partition_by()
        if pg is not None:
            return pg
        while True:
            if self._match_text_seq("HASH"):
                columns = self._parse_wrapped_id_vars() if self._at(TokenType.L_PAREN) else []
                if not self._match_text_seq("PARTITIONS"):
                    self.raise_error("Expecting PARTITIONS")
                levels.append(
                    self.expression(
                        HashPartitionLevel(expressions=columns, buckets=self._parse_number())
                    )
                )
            elif self._match_text_seq("RANGE"):
                columns = self._parse_wrapped_id_vars()
                partitions = []
                if self._match(TokenType.L_PAREN):
                    partitions = self._parse_csv(self._parse_range_partition)
                    self._match_r_paren()
                levels.append(
                    self.expression(RangePartitionLevel(expressions=columns, partitions=partitions))
                )
            elif not levels:
                self._retreat(index)
                return self._parse_partitioned_by()
            else:
                self.raise_error("Expecting HASH or RANGE")
            if not self._match(TokenType.COMMA):
                break
        return self.expression(exp.PartitionedByProperty(this=NyalaPartitionBy(expressions=levels)))

    def _parse_pg_partition_by(self) -> exp.Expr | None:
        """``LIST (cols)``, or ``RANGE (cols)`` / ``HASH (cols)`` with nothing of Impala's after."""
        index = self._index
        for strategy in ("LIST", "RANGE", "HASH"):
            if not self._match_text_seq(strategy):
                continue
            if self._at(TokenType.L_PAREN):
                columns = self._parse_wrapped_csv(self._parse_bitwise)
                if self._curr is None or self._curr.token_type in _PG_PARTITION_BY_ENDS:
                    node = PgPartitionBy(strategy=strategy.lower(), expressions=columns)
                    return self.expression(exp.PartitionedByProperty(this=node))
            break
        self._retreat(index)
        return None

    def _at(self, token_type: TokenType) -> bool:
        return self._curr is not None and self._curr.token_type is token_type

    def _parse_range_partition(self) -> exp.Expr:
        if not self._match(TokenType.PARTITION):
            self.raise_error("Expecting PARTITION")
        args: dict[str, object] = {}
        if self._match_text_seq("VALUE"):
            if not self._match(TokenType.EQ):
                self.raise_error("Expecting =")
            value = self._parse_bound()
            return self.expression(
                RangePartition(
                    lower=value,
                    lower_inclusive=True,
                    upper=value and value.copy(),
                    upper_inclusive=True,
                )
            )
        if not self._match(TokenType.VALUES):
            args["lower"] = self._parse_bound()
            if self._match(TokenType.LTE):
                args["lower_inclusive"] = True
            elif self._match(TokenType.LT):
                args["lower_inclusive"] = False
            else:
                self.raise_error("Expecting < or <=")
            if not self._match(TokenType.VALUES):
                self.raise_error("Expecting VALUES")
        if self._match(TokenType.LTE):
            args["upper"], args["upper_inclusive"] = self._parse_bound(), True
        elif self._match(TokenType.LT):
            args["upper"], args["upper_inclusive"] = self._parse_bound(), False
        if "lower" not in args and "upper" not in args:
            self.raise_error("A range partition needs a bound")
        return self.expression(RangePartition(**args))

    def _parse_bound(self) -> exp.Expr | None:
        bound = self._parse_bitwise()
        if bound is None:
            self.raise_error("Expecting a value")
        return bound

    def _parse_interval_span(
        self, this: exp.Expr, parse_function_unit: bool = True
    ) -> exp.Interval:
        """``INTERVAL 'P0001-02-03T04:05:06'`` or ``INTERVAL '-1 day +02:00:00'``: a string
        that is not one number and unit is one value (``sql.common.interval_input`` reads
        it), not the first number and unit sqlglot would keep, dropping the rest."""
        if (
            this is not None
            and this.is_string
            and (
                this.name.startswith("P")
                or (
                    exp.INTERVAL_STRING_RE.fullmatch(this.name) is None
                    and not self._at(TokenType.VAR)
                )
            )
        ):
            return self.expression(exp.Interval(this=this))
        return super()._parse_interval_span(this, parse_function_unit)

    def _parse_number(self) -> exp.Expr | None:
        number = self._parse_primary()
        if not isinstance(number, exp.Literal) or number.is_string:
            self.raise_error("Expecting a number of partitions")
        return number

    def _parse_insert_table(self) -> exp.Expr | None:
        """PostgreSQL's ``OVERRIDING {SYSTEM | USER} VALUE`` after the column list."""
        this = super()._parse_insert_table()
        if self._match_text_seq("OVERRIDING"):
            if self._match_text_seq("SYSTEM", "VALUE"):
                self._overriding.append("SYSTEM")
            elif self._match_text_seq("USER", "VALUE"):
                self._overriding.append("USER")
            else:
                self.raise_error("Expected SYSTEM VALUE or USER VALUE after OVERRIDING")
        return this

    def reset(self) -> None:
        super().reset()
        self._overriding: list[str] = []

    def _parse_insert(self) -> exp.Insert | exp.MultitableInserts:
        """An INSERT, with its OVERRIDING clause (if any) as the ``overriding`` arg."""
        depth = len(self._overriding)
        insert = super()._parse_insert()
        if len(self._overriding) > depth:
            insert.set("overriding", self._overriding.pop())
        return insert

    # Read before a failed transaction block refuses the statement (``admit``).
    _BEFORE_ADMISSION: dict[str, Callable[[NyalaParser, list[Token]], exp.Expr | None]] = {
        **dict.fromkeys(utility.KEYWORDS, lambda self, tokens: utility.parse(tokens)),
        **dict.fromkeys(
            cursors.KEYWORDS,
            lambda self, tokens: cursors.parse(self.sql, tokens, self._retokenized(tokens)),
        ),
        "comment": lambda self, tokens: comments.parse(self.sql, tokens),
    }
    _AFTER_ADMISSION: dict[str, Callable[[NyalaParser, list[Token]], exp.Expr | None]] = {
        "copy": lambda self, tokens: copy_grammar.parse(self.sql, tokens),
        **dict.fromkeys(
            prepared.KEYWORDS,
            lambda self, tokens: prepared.parse(self.sql, tokens, self._retokenized(tokens)),
        ),
        **dict.fromkeys(
            privileges.KEYWORDS, lambda self, tokens: privileges.parse(self.sql, tokens)
        ),
        "explain": lambda self, tokens: self._parse_explain(tokens),
        **dict.fromkeys(
            maintenance.KEYWORDS,
            lambda self, tokens: maintenance.parse(self.sql, tokens[0], self._retokenized(tokens)),
        ),
        **dict.fromkeys(
            ("create", "alter", "drop"),
            lambda self, tokens: (
                roles.parse(self.sql, tokens)
                if roles.is_role_statement(tokens)
                else sequence_grammar.parse(self.sql, tokens)
                if sequence_grammar.is_sequence_statement(tokens)
                else extensions.parse(self.sql, tokens)
                or sequence_grammar.parse_identity(self.sql, tokens)
                or privileges.parse_owner(self.sql, tokens)
                or privileges.parse_owned(self.sql, tokens)
                or privileges.parse_default(self.sql, tokens)
            ),
        ),
        "reassign": lambda self, tokens: privileges.parse_owned(self.sql, tokens),
        "security": lambda self, tokens: security_labels.parse(self.sql, tokens),
        "set": lambda self, tokens: constraint_modes.parse(self.sql, tokens),
        "lock": lambda self, tokens: lock_grammar.parse(
            self.sql, [tokens[0], *self._retokenized(tokens)]
        ),
    }

    admit: Callable[[], None] | None = None
    """Called before parsing a statement a failed transaction block refuses (all but utility,
    cursor and COMMENT statements), so such a block reports that before any syntax error."""

    def _parse_typed_statement(self) -> exp.Expr | None:
        """The typed statement of a nyala grammar module, keyed by the first keyword, if any."""
        tokens = self._tokens[self._index :]
        words = tokens[0].text.lower().split()
        head = words[0] if words else ""
        statement = None
        parse = self._BEFORE_ADMISSION.get(head)
        if parse is not None:
            statement = parse(self, tokens)
        if statement is None:
            if self.admit is not None:
                self.admit()
            parse = self._AFTER_ADMISSION.get(head)
            if parse is not None:
                statement = parse(self, tokens)
        if statement is not None:
            self._advance(len(tokens))
        return statement

    def _retokenized(self, tokens: list[Token]) -> list[Token]:
        """The tokens after a leading command keyword (EXPLAIN, DECLARE, FETCH), which the
        postgres tokenizer reads as one opaque string: the text is tokenized again with the
        keyword blanked out, which keeps every token's offset into the whole query string."""
        head, end = tokens[0], tokens[-1].end
        masked = (
            self.sql[: head.start] + " " * (head.end + 1 - head.start) + self.sql[head.end + 1 :]
        )
        return [t for t in tokenize(masked) if head.end < t.start <= end]

    def _parse_explain(self, tokens: list[Token]) -> ExplainStatement:
        analyze, fmt, rest = explain.split_options(self._retokenized(tokens))
        return ExplainStatement(
            analyze=analyze, statement=parse_statement(self.sql, rest), json=fmt == "json"
        )

    def _parse_statement(self) -> exp.Expr | None:
        if self._index == 0 and self._curr is not None:
            statement = self._parse_typed_statement()
            if statement is not None:
                return statement
        if self._curr is not None and self._curr.text.upper() == "UPSERT":
            self._advance()
            insert = self._parse_insert()
            return Upsert(**insert.args)
        return super()._parse_statement()

    def _parse_types(self, *args: Any, **kwargs: Any) -> exp.Expr | None:
        """sqlglot's, with arrays of the object identifier types (``oid[]``, ``regclass[]``,
        ``regtype[]``), which drivers and psql send in catalog queries and sqlglot reads
        as a subscript without an index.  A reg* element is spelt ``pg_catalog.regclass``,
        as the catalog emulation reads reg* arrays; ``oid`` is DuckDB's too."""
        node = super()._parse_types(*args, **kwargs)
        if not isinstance(node, exp.ObjectIdentifier) or not self._at(TokenType.L_BRACKET):
            return node
        typed: exp.Expr = node
        if node.name.lower() != "oid":
            qualified = exp.Dot(
                this=exp.to_identifier("pg_catalog"),
                expression=exp.to_identifier(node.name.lower()),
            )
            typed = exp.DataType(this=exp.DataType.Type.USERDEFINED, kind=qualified)
        while self._curr is not None and self._next is not None:
            if not (
                self._curr.token_type is TokenType.L_BRACKET
                and self._next.token_type is TokenType.R_BRACKET
            ):
                break
            self._advance(2)
            typed = exp.DataType(this=exp.DataType.Type.ARRAY, expressions=[typed], nested=True)
        return typed

    def _parse_type(self, *args: Any, **kwargs: Any) -> exp.Expr | None:
        """sqlglot's, with a typed literal's postfix operators applied to the typed value:
        PostgreSQL reads ``date '2020-01-02'::text`` as ``(date '2020-01-02')::text``,
        where sqlglot casts the string to text first and the result stays a date."""
        index = self._index
        node = super()._parse_type(*args, **kwargs)
        if not (
            isinstance(node, exp.Cast)
            and type(node) is exp.Cast
            and not isinstance(node.this, exp.Literal)
            and index + 1 < len(self._tokens)
            and self._tokens[index].token_type in self.TYPE_TOKENS
            and self._tokens[index].token_type is not TokenType.INTERVAL
            and self._tokens[index + 1].token_type is TokenType.STRING
        ):
            return node
        ops: list[exp.Expr] = []
        inner: exp.Expr = node.this
        while not isinstance(inner, exp.Literal):
            ops.append(inner)
            operand = inner.this
            if not isinstance(operand, exp.Expr):
                return node
            inner = operand
        typed: exp.Expr = exp.Cast(this=inner, to=node.to)
        for op in reversed(ops):
            op.set("this", typed)
            typed = op
        return typed

    def _parse_function_call(self, *args: Any, **kwargs: Any) -> exp.Expr | None:
        """sqlglot's, noting the name the query called the function by (``substr``,
        ``lpad``), which PostgreSQL names the result column after."""
        token = self._curr
        node = super()._parse_function_call(*args, **kwargs)
        inner = node.this if isinstance(node, exp.Window) else node
        if isinstance(inner, exp.Func) and token is not None:
            inner.meta.setdefault("called_as", token.text.lower())
        return node

    # Also returns nyala's partition ALTER nodes, which sqlglot's signature does not name.
    def _parse_alter(self) -> exp.Expr:  # type: ignore[override]
        index = self._index
        if self._match(TokenType.INDEX):
            parent = self._parse_table_parts()
            if self._match_text_seq("ATTACH", "PARTITION"):
                return self.expression(
                    AttachIndexPartition(this=parent, expression=self._parse_table_parts())
                )
            self._retreat(index)
            return super()._parse_alter()
        if self._match(TokenType.TABLE):
            self._parse_exists()
            self._match(TokenType.ONLY)  # pg_dump writes ALTER TABLE ONLY; nothing inherits
            table = self._parse_table_parts()
            if self._match_text_seq("ATTACH", "PARTITION"):
                attached = self._parse_table_parts()
                bound: exp.Expr | None = None
                if self._match(TokenType.DEFAULT):
                    bound = exp.var("DEFAULT")
                elif self._match_text_seq("FOR", "VALUES"):
                    bound = self._parse_partition_bound_spec()
                else:
                    self.raise_error("Expecting either DEFAULT or FOR VALUES clause.")
                return self.expression(
                    AttachPartition(this=table, expression=attached, bound=bound)
                )
            if self._match_text_seq("DETACH", "PARTITION"):
                return self.expression(
                    DetachPartition(this=table, expression=self._parse_table_parts())
                )
            add: list[exp.Expr] = []
            drop: list[exp.Expr] = []
            while self._curr is not None:
                if self._match_text_seq("ADD", "RANGE", "PARTITION"):
                    self._retreat(self._index - 1)
                    add.append(self._parse_range_partition())
                elif self._match_text_seq("DROP", "RANGE", "PARTITION"):
                    self._retreat(self._index - 1)
                    drop.append(self._parse_range_partition())
                else:
                    break
                if not self._match(TokenType.COMMA):
                    break
            if add or drop:
                return self.expression(AlterRangePartitions(this=table, add=add, drop=drop))
        self._retreat(index)
        return super()._parse_alter()


class Nyala(Postgres):
    """PostgreSQL's grammar with Kudu/Impala partition DDL."""

    Parser = NyalaParser

    class Tokenizer(Postgres.Tokenizer):
        def _init_core(self) -> TokenizerCore:
            core = super()._init_core()
            if type(core) is TokenizerCore:  # the pure-Python scanner (no sqlglotc)
                core.__class__ = _TokenizerCore
            return core


DIALECT = Nyala()


def tokenize(sql: str) -> list[Token]:
    try:
        tokens = DIALECT.tokenize(sql)
    except TokenError as exc:
        message = str(exc)
        if "'" in sql and message.startswith("Error tokenizing"):
            message = "unterminated quoted string"
        raise SqlSyntaxError(message, position=len(sql)) from exc
    return _quantified_operators(_unqualified_catalog_calls(tokens))


_QUANTIFIED = (TokenType.ANY, TokenType.ALL, TokenType.SOME)
_COMPARISONS = (
    TokenType.EQ, TokenType.NEQ, TokenType.LT, TokenType.LTE, TokenType.GT, TokenType.GTE,
)  # fmt: skip


def _quantified_operators(tokens: list[Token]) -> list[Token]:
    """``OPERATOR(pg_catalog.=) ANY (...)`` (psql's and pg_dump's spelling) as ``= ANY (...)``:
    the built-in comparison itself, which sqlglot reads before ANY and ALL."""
    out: list[Token] = []
    index = 0
    while index < len(tokens):
        window = tokens[index : index + 7]
        if (
            len(window) == 7
            and window[0].token_type is TokenType.OPERATOR
            and window[1].token_type is TokenType.L_PAREN
            and window[2].text.lower() == "pg_catalog"
            and window[3].token_type is TokenType.DOT
            and window[4].token_type in _COMPARISONS
            and window[5].token_type is TokenType.R_PAREN
            and window[6].token_type in _QUANTIFIED
        ):
            out.append(window[4])
            index += 6
            continue
        out.append(tokens[index])
        index += 1
    return out


def _unqualified_catalog_calls(tokens: list[Token]) -> list[Token]:
    """``pg_catalog.f(...)`` as ``f(...)``: every built-in function lives in pg_catalog (and
    is found first on the search path), and sqlglot only recognises ``max``, ``round`` ...
    as the functions they are when unqualified."""
    out: list[Token] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if (
            token.text.lower() == "pg_catalog"
            and index + 3 < len(tokens)
            and tokens[index + 1].token_type is TokenType.DOT
            and tokens[index + 2].text.isidentifier()
            and tokens[index + 3].token_type is TokenType.L_PAREN
            and not (out and out[-1].token_type is TokenType.DOT)
        ):
            index += 2
            continue
        out.append(token)
        index += 1
    return out


def parse_statement(
    sql: str, tokens: list[Token], admit: Callable[[], None] | None = None
) -> ParsedStatement:
    """One statement's tokens (all of them, no semicolon) as a typed statement; sqlglot's
    ParseError is left for the caller to report."""
    parser = NyalaParser(dialect=DIALECT)
    parser.admit = admit
    trees = [t for t in parser.parse(tokens, sql) if t is not None]
    if len(trees) != 1:
        raise SqlSyntaxError("syntax error", position=tokens[0].start + 1)
    fold_identifiers(trees[0])
    decode_escape_strings(trees[0])
    start, end = tokens[0].start, tokens[-1].end + 1
    return ParsedStatement(trees[0], sql[start:end], start, tuple(tokens))
