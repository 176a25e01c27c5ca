"""What a catalogued column and table are (the catalogue itself: ``data.columns``).

A ``Column`` is a name, its SQL declaration as a ``CREATE TABLE`` spells it (type first,
then constraints) and its one-line meaning (the codebook's). A ``Table`` is a name and its
columns in the database's order, plus table constraints (primary key, unique); from it come
the DDL of a new migration (``create_sql``, ``add_column_sql``), the codebook's meanings and
checked rows to write (``row``: a column outside the table is an error where the row is made,
not later in the database).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Column:
    """One column: name, SQL declaration, meaning (module docstring).

    >>> from data import Column
    >>> seconds = Column("seconds", "DOUBLE", "time on the page")
    >>> seconds.ddl, seconds.type
    ('seconds DOUBLE', 'DOUBLE')
    """

    name: str
    sql: str  # the declaration after the name: "VARCHAR NOT NULL", "BIGINT DEFAULT ..."
    meaning: str

    @property
    def type(self) -> str:
        """The SQL type (as DuckDB's information_schema names it)."""
        return self.sql.split()[0]

    @property
    def ddl(self) -> str:
        return f"{self.name} {self.sql}"


@dataclass(frozen=True)
class Table:
    """A table's (or view's) columns in the database's order (module docstring).

    >>> from data import Column, Table
    >>> notes = Table("notes", (Column("note_id", "VARCHAR NOT NULL", "note id"),
    ...                         Column("text", "VARCHAR", "what was noted")),
    ...               constraints=("PRIMARY KEY (note_id)",))
    >>> print(notes.create_sql())
    CREATE TABLE notes (
        note_id VARCHAR NOT NULL,
        text VARCHAR,
        PRIMARY KEY (note_id)
    )
    >>> notes.row(note_id="n1", text="hello")
    {'note_id': 'n1', 'text': 'hello'}
    >>> notes.row(note_id="n1", txt="hello")
    Traceback (most recent call last):
    ...
    KeyError: 'notes has no column txt (data.columns)'
    """

    name: str
    columns: tuple[Column, ...]
    constraints: tuple[str, ...] = ()
    view: bool = False
    _by_name: dict[str, Column] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name = {c.name: c for c in self.columns}
        if len(by_name) != len(self.columns):
            raise ValueError(f"{self.name}: a column name repeats")
        object.__setattr__(self, "_by_name", by_name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        if name not in self._by_name:
            raise KeyError(f"{self.name} has no column {name} (data.columns)")
        return self._by_name[name]

    def pick(self, *names: str) -> tuple[str, ...]:
        """``names``, each checked to be a column of this table."""
        return tuple(self.column(n).name for n in names)

    def row(self, **values: Any) -> dict[str, Any]:
        """A row to insert: ``values`` keyed by column, every key checked (columns left out
        are NULL)."""
        self.pick(*values)
        return values

    def meanings(self) -> dict[str, str]:
        return {c.name: c.meaning for c in self.columns}

    def create_sql(self) -> str:
        """The ``CREATE TABLE`` statement of a new table (a new migration's)."""
        if self.view:
            raise ValueError(f"{self.name} is a view: its SQL is a query, not a column list")
        body = ",\n    ".join([c.ddl for c in self.columns] + list(self.constraints))
        return f"CREATE TABLE {self.name} (\n    {body}\n)"

    def add_column_sql(self, name: str) -> str:
        """The statement of a new migration that adds column ``name`` to an existing table."""
        return f"ALTER TABLE {self.name} ADD COLUMN IF NOT EXISTS {self.column(name).ddl}"
