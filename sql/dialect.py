"""The ``nyala`` sqlglot dialect: PostgreSQL, the base for Kudu/Impala grammar extensions."""

from __future__ import annotations

from sqlglot.dialects.postgres import Postgres
from sqlglot.tokenizer_core import TokenizerCore
from sqlglot.tokens import TokenType


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


class Nyala(Postgres):
    """PostgreSQL's grammar; partition DDL and UPSERT are added here as the product grows."""

    class Tokenizer(Postgres.Tokenizer):
        def _init_core(self) -> TokenizerCore:
            core = super()._init_core()
            if type(core) is TokenizerCore:  # the pure-Python scanner (no sqlglotc)
                core.__class__ = _TokenizerCore
            return core
