"""The one way the CLI builds a rich Console, and tables that fit the terminal.

Everything the CLI prints may hold text from outside (a query, a skill's
description, a session title, a model's answer). rich would read ``[red]`` or
``[/]`` in such text as markup (and fail on the second) and ``:smile:`` as an
emoji code, so every console here has markup, emoji codes and highlighting
off: styles are given with :class:`rich.text.Text` instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table
from rich.text import Text

from hermes.text import brief, printable


def make_console(**options) -> Console:
    """A Console that never interprets the text it prints."""
    return Console(markup=False, emoji=False, highlight=False, **options)


@dataclass(frozen=True)
class Column:
    """One column of a :func:`fitted_table`.

    ``share`` is None for a column that always shows in full (ids, counts,
    dates); otherwise the column is text that is cut with "…" to its share of
    the width left over.
    """

    header: str
    share: int | None = None
    justify: str = "left"
    style: str = ""


GAP = 2  # spaces between two columns


def fitted_table(width: int, columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> Table:
    """A borderless table no wider than ``width``: fixed columns in full, text columns cut."""
    cells = [[printable(str(cell)) for cell in row] for row in rows]
    widths = []
    for n, column in enumerate(columns):
        longest = max((len(row[n]) for row in cells), default=0)
        widths.append(max(len(column.header), longest))
    fixed = sum(w for w, c in zip(widths, columns, strict=True) if c.share is None)
    # GAP spaces between columns, and one GAP of margin so no line ends in the last cell.
    left = width - fixed - GAP * len(columns)
    pending = [n for n, c in enumerate(columns) if c.share]
    # Text columns narrower than their share give the rest to the others.
    while pending:
        total = sum(columns[n].share for n in pending)
        fits = [n for n in pending if widths[n] <= left * columns[n].share // max(total, 1)]
        if not fits:
            for n in pending:
                widths[n] = max(len(columns[n].header), left * columns[n].share // total, 3)
            break
        for n in fits:
            left -= widths[n]
            pending.remove(n)
    table = Table(box=None, padding=(0, GAP, 0, 0), header_style="dim", pad_edge=False)
    for n, column in enumerate(columns):
        table.add_column(
            column.header,
            justify=column.justify,
            style=column.style,
            width=widths[n],
            no_wrap=True,
            overflow="ellipsis",
        )
    for row in cells:
        table.add_row(
            *(
                Text(brief(cell, widths[n]) if columns[n].share else cell)
                for n, cell in enumerate(row)
            )
        )
    return table
