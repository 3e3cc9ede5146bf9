"""`additional-conditions` filters as an allow-listed expression grammar, rendered with bound literals.

A filter is never pasted into SQL. It is tokenized and parsed here; only this grammar passes:

    expr      := term (OR term)*            term := factor (AND factor)*
    factor    := NOT factor | '(' expr ')' | predicate
    predicate := operand ( cmp operand | [NOT] IN '(' literal {',' literal} ')'
                 | [NOT] BETWEEN operand AND operand | IS [NOT] NULL | [NOT] LIKE string )
    operand   := column | literal           cmp := = <> != < <= > >= <=>
    literal   := number | -number | 'string' | NULL | TRUE | FALSE

Columns must be the captured table's own (checked by `Filter.render`), every literal is a
query parameter, and there are no functions, subqueries or variables: a filter can neither
read another table nor call SLEEP(), and no sql_mode changes how it is quoted.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

MAX_FILTER_CHARS = 4096
MAX_TOKENS = 512
MAX_DEPTH = 16

_KEYWORDS = frozenset({"and", "or", "not", "in", "between", "is", "null", "like", "true",
                       "false", "where"})
_COMPARISONS = ("<=>", "<>", "!=", "<=", ">=", "=", "<", ">")
_NUMBER = re.compile(r"\d+(\.\d*)?([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?")
_WORD = re.compile(r"[A-Za-z_$\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*")
_ESCAPES = {"0": "\x00", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a"}


class FilterError(ValueError):
    """The filter is outside the grammar; the message says where."""


@dataclass(frozen=True, slots=True)
class Token:
    kind: str   # "kw", "col", "num", "str", "op", "(", ")", ","
    text: str   # keyword (lower case), column name, operator, or literal source
    value: Any = None


def _string(text: str, start: int) -> tuple[str, int]:
    """A single-quoted string from `start` (at the quote): its value and the index after it."""
    out: list[str] = []
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == "'":
            if text.startswith("''", i):
                out.append("'")
                i += 2
                continue
            return "".join(out), i + 1
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    raise FilterError("unterminated string literal")


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch == "'":
            chars, i = _string(text, i)
            tokens.append(Token("str", "'", chars))
        elif ch == "`":
            end = i + 1
            name: list[str] = []
            while True:
                stop = text.find("`", end)
                if stop < 0:
                    raise FilterError("unterminated `quoted` column name")
                name.append(text[end:stop])
                if text.startswith("``", stop):
                    name.append("`")
                    end = stop + 2
                    continue
                break
            tokens.append(Token("col", "".join(name)))
            i = stop + 1
        elif ch == '"':
            raise FilterError("double quotes are not allowed: write strings in 'single "
                              "quotes' and names in `backticks`")
        elif ch == "-":
            tokens.append(Token("neg", "-"))
            i += 1
        elif ch in "(),":
            tokens.append(Token(ch, ch))
            i += 1
        elif (m := _NUMBER.match(text, i)) is not None:
            literal = m.group(0)
            number = int(literal) if literal.isdigit() else decimal.Decimal(literal)
            tokens.append(Token("num", literal, number))
            i = m.end()
        elif (m := _WORD.match(text, i)) is not None:
            word = m.group(0)
            low = word.lower()
            tokens.append(Token("kw", low) if low in _KEYWORDS else Token("col", word))
            i = m.end()
        else:
            op = next((o for o in _COMPARISONS if text.startswith(o, i)), None)
            if op is None:
                raise FilterError(f"character {ch!r} at position {i} is not allowed")
            tokens.append(Token("op", op))
            i += len(op)
        if len(tokens) > MAX_TOKENS:
            raise FilterError(f"more than {MAX_TOKENS} tokens")
    return tokens


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.i = 0
        self.depth = 0

    def peek(self, kind: str, text: str | None = None, ahead: int = 0) -> bool:
        j = self.i + ahead
        if j >= len(self.tokens):
            return False
        tok = self.tokens[j]
        return tok.kind == kind and (text is None or tok.text == text)

    def take(self, kind: str, text: str | None = None) -> Token:
        if not self.peek(kind, text):
            got = self.tokens[self.i].text if self.i < len(self.tokens) else "the end"
            raise FilterError(f"expected {text or kind} but found {got!r}")
        self.i += 1
        return self.tokens[self.i - 1]

    def expr(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise FilterError(f"nested deeper than {MAX_DEPTH} levels")
        self.term()
        while self.peek("kw", "or"):
            self.i += 1
            self.term()
        self.depth -= 1

    def term(self) -> None:
        self.factor()
        while self.peek("kw", "and"):
            self.i += 1
            self.factor()

    def factor(self) -> None:
        if self.peek("kw", "not"):
            self.i += 1
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise FilterError(f"nested deeper than {MAX_DEPTH} levels")
            self.factor()
            self.depth -= 1
        elif self.peek("("):
            self.i += 1
            self.expr()
            self.take(")")
        else:
            self.predicate()

    def operand(self) -> None:
        if self.peek("col") or self.peek("str"):
            self.i += 1
        else:
            self.literal()

    def literal(self) -> None:
        if self.peek("neg") and self.peek("num", ahead=1):
            self.i += 2
        elif self.peek("num") or self.peek("str") or any(
                self.peek("kw", k) for k in ("null", "true", "false")):
            self.i += 1
        else:
            got = self.tokens[self.i].text if self.i < len(self.tokens) else "the end"
            raise FilterError(f"expected a column or a literal but found {got!r}")

    def predicate(self) -> None:
        self.operand()
        negated = self.peek("kw", "not")
        if negated:
            self.i += 1
        if not negated and self.peek("op"):
            self.i += 1
            self.operand()
        elif self.peek("kw", "in"):
            self.i += 1
            self.take("(")
            self.literal()
            while self.peek(","):
                self.i += 1
                self.literal()
            self.take(")")
        elif self.peek("kw", "between"):
            self.i += 1
            self.operand()
            self.take("kw", "and")
            self.operand()
        elif self.peek("kw", "like"):
            self.i += 1
            self.take("str")
        elif not negated and self.peek("kw", "is"):
            self.i += 1
            if self.peek("kw", "not"):
                self.i += 1
            self.take("kw", "null")
        else:
            got = self.tokens[self.i].text if self.i < len(self.tokens) else "the end"
            raise FilterError(f"expected a comparison, IN, BETWEEN, LIKE or IS NULL but "
                              f"found {got!r}")


@dataclass(frozen=True, slots=True)
class Filter:
    """A parsed filter: `text` as the user wrote it (a leading WHERE dropped) and its tokens."""

    text: str
    tokens: tuple[Token, ...]

    def columns(self) -> set[str]:
        return {t.text for t in self.tokens if t.kind == "col"}

    def render(self, columns: Collection[str]) -> tuple[str, list[Any]]:
        """SQL for pymysql (`%` escaped, literals as `%s`) and its parameters.

        Raises FilterError naming a column the table does not have.
        """
        by_lower = {c.lower(): c for c in columns}
        parts: list[str] = []
        params: list[Any] = []
        for tok in self.tokens:
            if tok.kind == "col":
                name = by_lower.get(tok.text.lower())
                if name is None:
                    raise FilterError(f"no column {tok.text[:64]!r} in this table")
                parts.append("`" + name.replace("`", "``").replace("%", "%%") + "`")
            elif tok.kind in ("num", "str"):
                parts.append("%s")
                params.append(tok.value)
            elif tok.kind == "kw":
                parts.append(tok.text.upper())
            else:
                parts.append(tok.text)
        return " ".join(parts), params


def parse_filter(text: str) -> Filter:
    """Parse one filter (an optional leading WHERE keyword is dropped) or raise FilterError."""
    if len(text) > MAX_FILTER_CHARS:
        raise FilterError(f"longer than {MAX_FILTER_CHARS} characters")
    tokens = tokenize(text)
    text = text.strip()
    if tokens and tokens[0] == Token("kw", "where"):
        tokens = tokens[1:]
        text = text[len("where"):].strip()  # the first token, so the text's first word
    if not tokens:
        raise FilterError("filter is empty")
    if any(t == Token("kw", "where") for t in tokens):
        raise FilterError("WHERE may only start the filter")
    parser = _Parser(tokens)
    parser.expr()
    if parser.i != len(tokens):
        raise FilterError(f"unexpected {tokens[parser.i].text!r} after a complete condition")
    return Filter(text, tuple(tokens))


def combine(filters: list[str]) -> str:
    """Several filters for one table, ANDed (each parenthesised)."""
    return filters[0] if len(filters) == 1 else " AND ".join(f"({f})" for f in filters)
