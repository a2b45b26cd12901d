"""PostgreSQL's escape string constants (``E'...'``) as the plain strings they spell.

sqlglot's scanner decodes an ``E'...'`` constant's backslash escapes, as PostgreSQL's
does, but keeps it as an ``exp.ByteString``, which DuckDB would read as a blob with
escapes of its own (``E'\\\\xDEAD'::bytea`` became six bytes).  After the scanner it
is an ordinary string literal in PostgreSQL, so it becomes one here; a decoded NUL is
22021, as there.
"""

from __future__ import annotations

from sqlglot import exp

from storage.errors import CharacterNotInRepertoire


def decode_escape_strings(tree: exp.Expr) -> None:
    """Replace every ``E'...'`` constant in ``tree`` by a string literal of its value."""
    for node in list(tree.find_all(exp.ByteString)):
        text = node.this
        if isinstance(text, str):
            if "\x00" in text:
                raise CharacterNotInRepertoire('invalid byte sequence for encoding "UTF8": 0x00')
            node.replace(exp.Literal.string(text))
