"""The nodes of several kinds a catalog query's checks read, found in one walk of its AST.

Compiling a catalog query asks the same tree for its CTEs, tables, columns and casts; each
``find_all`` walks the whole tree again, which was most of what psql's ``\\d`` cost."""

from __future__ import annotations

from sqlglot import exp


def nodes_of(ast: exp.Expr, *kinds: type[exp.Expr]) -> dict[type[exp.Expr], list[exp.Expr]]:
    """Each kind's nodes in ``ast``, in ``find_all``'s breadth-first order (a node counts
    under every kind it is an instance of)."""
    found: dict[type[exp.Expr], list[exp.Expr]] = {kind: [] for kind in kinds}
    for node in ast.walk():
        if isinstance(node, kinds):
            for kind in kinds:
                if isinstance(node, kind):
                    found[kind].append(node)
    return found
