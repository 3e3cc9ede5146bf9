"""Statement tokens as the server reads them (comments out, /*!...*/ in), for statements.py."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

_SCAN = re.compile(r"""
    \s+
  | (?P<open>/\*M?!\d*)                        # an executable comment: its text is SQL
  | /\*.*?\*/ | --(?=\s|$)[^\n]* | \#[^\n]*    # comments
  | (?P<close>\*/)
  | `(?P<quoted>(?:[^`]|``)*)`
  | (?P<string>'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")
  | (?P<word>[\w$]+)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)


class Token(NamedTuple):
    kind: str  # "w" word, "q" quoted identifier, "s" string, "p" punctuation
    text: str

    @property
    def word(self) -> str:
        """The keyword this token is, upper case; '' for anything but a bare word."""
        return self.text.upper() if self.kind == "w" else ""

    @property
    def name(self) -> str | None:
        """The identifier this token is, None for a string or punctuation."""
        return self.text if self.kind in ("w", "q") else None


class UnknownForm(Exception):
    """Text not in a form the reader reads (statements.py: its written tables cannot be named)."""


def tokens(query: str) -> Iterator[Token]:
    executable = 0
    for match in _SCAN.finditer(query):
        kind = match.lastgroup
        if kind is None:
            continue
        if kind == "open":
            executable += 1
        elif kind == "close":
            if executable:
                executable -= 1
            else:
                yield Token("p", "*")
                yield Token("p", "/")
        elif kind == "quoted":
            yield Token("q", match.group("quoted").replace("``", "`"))
        elif kind == "word":
            yield Token("w", match.group())
        elif kind == "string":
            yield Token("s", match.group())
        else:
            yield Token("p", match.group())


END = Token("p", "")


class TokenReader:
    """Reads the tokens a statement needs, no more: a large INSERT is not scanned whole."""

    def __init__(self, query: str) -> None:
        self._source = tokens(query)
        self._ahead: list[Token] = []

    def peek(self, n: int = 0) -> Token:
        while len(self._ahead) <= n:
            token = next(self._source, None)
            if token is None:
                return END
            self._ahead.append(token)
        return self._ahead[n]

    def take(self) -> Token:
        token = self.peek()
        if self._ahead:
            del self._ahead[0]
        return token

    def keyword(self, *words: str) -> str:
        """The next token's keyword, taken, if it is one of `words`; '' otherwise."""
        word = self.peek().word
        if word and word in words:
            self.take()
            return word
        return ""

    def expect(self, *words: str) -> str:
        word = self.keyword(*words)
        if not word:
            raise UnknownForm
        return word

    def skip_group(self) -> None:
        """Past a parenthesised group, the next token its opening parenthesis."""
        if self.take().text != "(":
            raise UnknownForm
        depth = 1
        while depth:
            token = self.take()
            if token is END:
                raise UnknownForm
            if token.kind == "p":
                depth += {"(": 1, ")": -1}.get(token.text, 0)

    def name(self) -> tuple[str | None, str]:
        """`t` or `db.t`: (None, t) for a name the default database qualifies."""
        first = self.take().name
        if first is None:
            raise UnknownForm
        if self.peek().text == "." and self.peek(1).name is not None:
            self.take()
            second = self.take().name
            assert second is not None
            return first, second
        return None, first
