"""Statement-logged writes in a row-based stream: which tables they write, if one can tell.

Even with `binlog_format=ROW` globally, a session may log its writes as statements (on a
primary) and they carry no row images. The connector must not drop them silently: it names
the tables each statement writes, and when it cannot name them all, the write counts as one
on a captured table.

What a statement in the binlog writes, by its form:
- INSERT/REPLACE [INTO] t, LOAD DATA/XML ... INTO TABLE t: t.
- UPDATE of one table: that table. UPDATE of several (JOIN or comma): the tables its SET
  assigns to (`SET o.v = 1`: the table aliased `o`), every table named when a column is
  not qualified.
- DELETE FROM t: t. DELETE a, b FROM ... / DELETE FROM a, b USING ...: the tables a and b
  name in the table references.
- CREATE TABLE t ... SELECT (statement-logged, the rows it copies come with it): t.
- `SELECT f()`, how the server logs a stored function that wrote (called by `DO f()`,
  `SELECT f()` or `SET @x = f()`): what it wrote cannot be named; nor what a CALL wrote,
  nor the tables of a form not read here.
Triggers and views are not followed: a statement names the table or view it was given.
"""

from __future__ import annotations

from typing import NamedTuple

from connector.binlog.sqltokens import END, TokenReader, UnknownForm, tokens
from connector.binlog.transactions import Gap

Table = tuple[str, str]

# Verbs of statements that write rows (as the binlog holds them).
_WRITES = frozenset({"INSERT", "REPLACE", "UPDATE", "DELETE", "LOAD", "SELECT", "DO", "CALL",
                     "WITH"})
# Words that end a table factor rather than name its alias.
_NOT_ALIAS = frozenset({
    "ON", "USING", "JOIN", "INNER", "CROSS", "LEFT", "RIGHT", "NATURAL", "STRAIGHT_JOIN",
    "OUTER", "FULL", "SET", "WHERE", "USE", "FORCE", "IGNORE", "PARTITION", "ORDER", "LIMIT",
    "FROM", "RETURNING", "GROUP", "HAVING", "WINDOW", "UNION", "EXCEPT", "INTERSECT", "FOR",
    "LOCK", "INTO", "VALUES", "VALUE", "SELECT", "AS", "LATERAL", "TABLE", "WITH"})
_ENDS_ASSIGNMENT = frozenset({"WHERE", "ORDER", "LIMIT", "RETURNING"})


class _Ref(NamedTuple):
    """A table reference: a table (db None: the default database) or a derived table."""

    db: str | None
    table: str | None  # None: a derived table, JSON_TABLE or the like (never written)
    alias: str | None


class _Parser(TokenReader):
    """The tables a statement writes, from no more of its tokens than its form needs."""

    def __init__(self, query: str, default_db: str | None) -> None:
        super().__init__(query)
        self._default_db = default_db
        self._ctes: set[str] = set()

    def table(self, db: str | None, table: str) -> Table:
        db = db or self._default_db
        if not db:
            raise UnknownForm  # no default database: the name alone does not tell the table
        return db, table

    # -- table references ------------------------------------------------------------------

    def alias(self) -> str | None:
        if self.keyword("AS"):
            token = self.take()
            if token.kind == "s":
                return token.text[1:-1]
            if token.name is None:
                raise UnknownForm
            return token.name
        token = self.peek()
        if token.kind == "q" or token.kind == "w" and token.word not in _NOT_ALIAS:
            self.take()
            return token.text
        if token.kind == "s":  # MySQL takes a string as an alias too
            self.take()
            return token.text[1:-1]
        return None

    def derived(self, refs: list[_Ref]) -> None:
        self.skip_group()
        refs.append(_Ref(None, None, self.alias()))
        if self.peek().text == "(":  # its column names
            self.skip_group()

    def factor(self, refs: list[_Ref]) -> None:
        token = self.peek()
        if token.text == "(":
            inner = self.peek(1)
            if inner.word in ("SELECT", "WITH", "VALUES", "TABLE") or inner.text == "(":
                self.derived(refs)
            else:
                self.take()
                self.references(refs)
                if self.take().text != ")":
                    raise UnknownForm
            return
        if token.word == "LATERAL":
            self.take()
            self.derived(refs)
            return
        if token.word == "JSON_TABLE" and self.peek(1).text == "(":
            self.take()
            self.derived(refs)
            return
        db, table = self.name()
        if self.keyword("PARTITION"):
            self.skip_group()
        alias = self.alias()
        while self.peek().word in ("USE", "IGNORE", "FORCE") and \
                self.peek(1).word in ("INDEX", "KEY"):
            self.take()
            self.take()
            if self.keyword("FOR") and self.expect("JOIN", "ORDER", "GROUP") != "JOIN":
                self.expect("BY")
            self.skip_group()
        if db is None and table.lower() in self._ctes:
            refs.append(_Ref(None, None, alias or table))  # a common table expression
        else:
            refs.append(_Ref(db, table, alias))

    def at_join(self) -> bool:
        word = self.peek().word
        return word in ("JOIN", "STRAIGHT_JOIN", "INNER", "CROSS", "NATURAL") or (
            word in ("LEFT", "RIGHT", "FULL") and self.peek(1).word in ("JOIN", "OUTER"))

    def join(self) -> None:
        if self.keyword("JOIN", "STRAIGHT_JOIN"):
            return
        if self.keyword("NATURAL"):
            self.keyword("LEFT", "RIGHT", "FULL")
        elif not self.keyword("INNER", "CROSS"):
            self.expect("LEFT", "RIGHT", "FULL")
        self.keyword("OUTER")
        self.expect("JOIN")

    def skip_expression(self, ends: frozenset[str]) -> None:
        """Past an expression: up to a comma, a closing parenthesis, a join or a word of
        `ends` outside parentheses, or the end."""
        while True:
            token = self.peek()
            if token is END or token.kind == "p" and token.text in (",", ")") or \
                    token.word in ends or self.at_join():
                return
            if token.kind == "p" and token.text == "(":
                self.skip_group()
            else:
                self.take()

    def reference(self, refs: list[_Ref]) -> None:
        self.factor(refs)
        while self.at_join():
            self.join()
            self.factor(refs)
            if self.keyword("ON"):
                self.skip_expression(frozenset({"SET", "WHERE", "ORDER", "LIMIT", "USING",
                                                "RETURNING"}))
            elif self.keyword("USING"):
                self.skip_group()

    def references(self, refs: list[_Ref]) -> None:
        self.reference(refs)
        while self.peek().text == ",":
            self.take()
            self.reference(refs)

    def resolve(self, refs: list[_Ref], db: str | None, name: str) -> list[Table]:
        """The tables `name` (an alias, or a table name as written) stands for in `refs`."""
        folded = name.lower()
        if db is None:
            found = [r for r in refs if r.alias is not None and r.alias.lower() == folded]
            if not found:
                found = [r for r in refs if r.alias is None and r.table is not None
                         and r.db is None and r.table.lower() == folded]
            if not found:
                found = [r for r in refs if r.alias is None and r.table is not None
                         and r.table.lower() == folded]
        else:
            found = [r for r in refs if r.table is not None and r.table.lower() == folded
                     and (r.db or self._default_db or "").lower() == db.lower()]
            if not found:
                return [(db, name)]
        if not found or any(r.table is None for r in found):
            raise UnknownForm  # not a table of the statement, or a derived one
        return [self.table(r.db, r.table) for r in found if r.table is not None]

    def real(self, refs: list[_Ref]) -> list[Table]:
        return [self.table(r.db, r.table) for r in refs if r.table is not None]

    # -- statements ------------------------------------------------------------------------

    def statement(self) -> tuple[Table, ...] | None:
        verb = self.peek().word
        if verb == "WITH":
            self.take()
            self.ctes()
            verb = self.peek().word
        if verb in ("INSERT", "REPLACE"):
            self.take()
            while self.keyword("LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY", "IGNORE"):
                pass
            self.keyword("INTO")
            return (self.table(*self.name()),)
        if verb == "UPDATE":
            self.take()
            return self.update()
        if verb == "DELETE":
            self.take()
            return self.delete()
        if verb == "LOAD":
            return self.load()
        if verb == "CREATE":
            return self.create()
        return None if verb in _WRITES else ()

    def ctes(self) -> None:
        self.keyword("RECURSIVE")
        while True:
            name = self.take().name
            if name is None:
                raise UnknownForm
            self._ctes.add(name.lower())
            if self.peek().text == "(":
                self.skip_group()
            self.expect("AS")
            self.skip_group()
            if self.peek().text != ",":
                return
            self.take()

    def update(self) -> tuple[Table, ...]:
        while self.keyword("LOW_PRIORITY", "IGNORE"):
            pass
        refs: list[_Ref] = []
        self.references(refs)
        self.expect("SET")
        real = self.real(refs)
        if len(refs) == 1:
            if not real:
                raise UnknownForm
            return tuple(real)
        written: list[Table] = []
        while True:
            parts = [self.take().name]
            while self.peek().text == "." and len(parts) < 3:
                self.take()
                parts.append(self.take().name)
            if any(part is None for part in parts) or self.peek().text not in ("=", ":"):
                raise UnknownForm
            names = [part for part in parts if part is not None]
            if len(names) == 1:
                written += real  # an unqualified column: any of the tables may have it
            elif len(names) == 2:
                written += self.resolve(refs, None, names[0])
            else:
                written += self.resolve(refs, names[0], names[1])
            self.skip_expression(_ENDS_ASSIGNMENT)
            if self.peek().text != ",":
                break
            self.take()
        return tuple(dict.fromkeys(written))

    def targets(self, first: tuple[str | None, str]) -> list[tuple[str | None, str]]:
        """The `a[.*], b[.*]` list of a multi-table DELETE, its first name read."""
        found = [first]
        while True:
            if self.peek().text == "." and self.peek(1).text == "*":
                self.take()
                self.take()
            if self.peek().text != ",":
                return found
            self.take()
            found.append(self.name())

    def delete(self) -> tuple[Table, ...]:
        while self.keyword("LOW_PRIORITY", "QUICK", "IGNORE", "HISTORY"):
            pass
        refs: list[_Ref] = []
        if self.keyword("FROM"):
            first = self.name()
            if self.peek().text not in (",", ".") and self.peek().word != "USING":
                return (self.table(*first),)  # DELETE FROM t [[AS] alias] [WHERE ...]
            targets = self.targets(first)  # DELETE FROM a, b USING <references>
            self.expect("USING")
        else:
            targets = self.targets(self.name())  # DELETE a, b FROM <references>
            self.expect("FROM")
        self.references(refs)
        written: list[Table] = []
        for db, name in targets:
            written += self.resolve(refs, db, name)
        return tuple(dict.fromkeys(written))

    def load(self) -> tuple[Table, ...]:
        while True:
            token = self.take()
            if token is END:
                raise UnknownForm
            if token.word == "INTO" and self.peek().word == "TABLE":
                self.take()
                return (self.table(*self.name()),)

    def create(self) -> tuple[Table, ...]:
        """A CREATE TABLE ... SELECT writes its new table's rows; other DDL writes none."""
        self.take()
        if self.keyword("OR"):
            self.keyword("REPLACE")
        if self.keyword("TEMPORARY") or not self.keyword("TABLE"):
            return ()  # a temporary table is never captured; not a table: other DDL
        if self.keyword("IF"):
            self.keyword("NOT")
            self.keyword("EXISTS")
        try:
            name: tuple[str | None, str] | None = self.name()
        except UnknownForm:
            name = None
        depth = 0
        while (token := self.take()) is not END:
            if token.kind == "p":
                depth += {"(": 1, ")": -1}.get(token.text, 0)
            elif token.word == "SELECT" or token.word == "TABLE" and depth == 0:
                if name is None:
                    raise UnknownForm
                return (self.table(*name),)
            elif token.word == "LIKE" and depth == 0:
                return ()
        return ()


def is_dml(query: str) -> bool:
    """Whether a statement found in the binlog writes rows: DML, LOAD DATA, or a stored
    function or procedure called (`SELECT f()`)."""
    first = next(tokens(query), END)
    word = first.word
    return word in _WRITES


def written_tables(query: str, default_db: str | None) -> tuple[Table, ...] | None:
    """The (db, table) pairs a statement found in the binlog writes: () when it writes none
    (BEGIN, DDL but CREATE TABLE ... SELECT), None when it writes tables that cannot all be
    named (a stored function or procedure, a form not read here, an unqualified table
    without a default database)."""
    parser = _Parser(query, default_db or None)
    try:
        return parser.statement()
    except UnknownForm:
        return None


def statement_gap(query: str, default_db: str | None) -> Gap | None:
    """The gap a statement found in the binlog leaves: None when it writes no rows."""
    written = written_tables(query, default_db)
    if written == ():
        return None
    excerpt = " ".join(query[:400].split())[:80]
    return Gap(written, default_db, f"as a statement ({excerpt!r}), which has no row images",
               "binlog_format=ROW")
