"""Debezium signal messages (`{"type": ..., "data": {...}, "id": ...}`) validated at the boundary.

`parse_signal` turns one Kafka record of the signal topic into a typed signal or raises
`SignalRejected` with one line saying why; the connector logs it and keeps streaming.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from connector.settings.model import MAX_CHUNK_DELAY_MS, MAX_CHUNK_SIZE
from signals.filters import combine, parse_filter
from signals.patterns import MatchBudget, collection_matches, compile_pattern

MAX_VALUE_BYTES = 64 * 1024


class SignalRejected(ValueError):
    """A signal the connector must skip; `reason` is the one-line explanation."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


MAX_COLLECTIONS = 256
MAX_ID_CHARS = 128
MAX_JSON_DEPTH = 16


def check_filter(text: str) -> str:
    """`text` with a leading WHERE dropped, if it parses in the filter grammar; else ValueError."""
    return parse_filter(text).text


def _check_collection(name: str) -> str:
    name = name.strip()
    if not name:
        raise ValueError("a data collection name is empty")
    compile_pattern(name)
    return name


def is_plain_name(name: str) -> bool:
    """`db.table` spelled without regex syntax."""
    return re.fullmatch(r"[\w$-]+(\.[\w$-]+)?", name) is not None


def _lower_type(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


# Debezium writes "INCREMENTAL"; both cases are accepted, lower case is kept.
SnapshotType = Annotated[Literal["incremental", "blocking"], BeforeValidator(_lower_type)]
CollectionName = Annotated[StrictStr, AfterValidator(_check_collection)]
WhereFragment = Annotated[StrictStr, AfterValidator(check_filter)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class AdditionalCondition(_Strict):
    """One table's extra WHERE fragment (Debezium 2.x `additional-conditions` item)."""

    data_collection: CollectionName = Field(alias="data-collection")
    filter: WhereFragment


class _SignalBase(_Strict):
    TYPE: ClassVar[str]
    id: Annotated[StrictStr, Field(max_length=MAX_ID_CHARS)] | None = None

    def data(self) -> dict[str, Any]:
        """The `data` object as Debezium writes it (aliases, no unset optionals)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True, exclude={"id"})

    def to_value(self) -> dict[str, Any]:
        """The whole message value: `{"type", "data", "id"?}`."""
        value: dict[str, Any] = {"type": self.TYPE, "data": self.data()}
        if self.id is not None:
            value["id"] = self.id
        return value

    def to_json(self) -> bytes:
        return json.dumps(self.to_value(), separators=(",", ":")).encode()


class ExecuteSnapshot(_SignalBase):
    """Start a snapshot of the listed tables (exact names or regexes)."""

    TYPE: ClassVar[str] = "execute-snapshot"
    data_collections: Annotated[list[CollectionName],
                                Field(min_length=1, max_length=MAX_COLLECTIONS)] = Field(
        alias="data-collections")
    snapshot_type: SnapshotType = Field("incremental", alias="type")
    additional_conditions: Annotated[list[AdditionalCondition],
                                     Field(max_length=MAX_COLLECTIONS)] = Field(
        default_factory=list, alias="additional-conditions")
    surrogate_key: StrictStr | None = Field(None, alias="surrogate-key")

    @model_validator(mode="before")
    @classmethod
    def _older_form(cls, data: Any) -> Any:
        """Debezium 1.x `additional-condition`: one filter for every listed collection."""
        if not isinstance(data, dict) or "additional-condition" not in data:
            return data
        data = dict(data)
        single = data.pop("additional-condition")
        if "additional-conditions" in data:
            raise ValueError("give additional-conditions or additional-condition, not both")
        if not isinstance(single, str):
            raise ValueError("additional-condition must be a string")  # noqa: TRY004
        collections = data.get("data-collections")
        if isinstance(collections, list) and single.strip():
            data["additional-conditions"] = [
                {"data-collection": c, "filter": single} for c in collections
                if isinstance(c, str)
            ]
        return data

    @field_validator("surrogate_key")
    @classmethod
    def _surrogate(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z0-9_$]+", value):
            raise ValueError(f"{value!r} is not a column name")
        return value

    @model_validator(mode="after")
    def _conditions_name_listed_tables(self) -> ExecuteSnapshot:
        """Refuse a condition that can match no listed table (when that can be told)."""
        plain = [p for p in self.data_collections if is_plain_name(p)]
        budget = MatchBudget()
        for cond in self.additional_conditions:
            name = cond.data_collection
            if is_plain_name(name):
                possible = any(collection_matches(p, name, budget) for p in self.data_collections)
            else:  # a regex: only plain listed names can be checked against it
                possible = len(plain) < len(self.data_collections) or any(
                    collection_matches(name, p, budget) for p in plain)
            if not possible:
                raise ValueError(f"additional-conditions: data-collection "
                                 f"{cond.data_collection!r} is not among data-collections")
        return self

    def condition_for(self, table: str, budget: MatchBudget | None = None) -> str | None:
        """The filter for `table` (`db.table`), several ANDed together, or None."""
        filters = [c.filter for c in self.additional_conditions
                   if collection_matches(c.data_collection, table, budget)]
        if not filters:
            return None
        return combine(filters)


class StopSnapshot(_SignalBase):
    """Cancel the running snapshot of the listed tables, or of all when the list is empty."""

    TYPE: ClassVar[str] = "stop-snapshot"
    data_collections: Annotated[list[CollectionName], Field(max_length=MAX_COLLECTIONS)] = \
        Field(default_factory=list, alias="data-collections")
    snapshot_type: SnapshotType = Field("incremental", alias="type")


class PauseSnapshot(_SignalBase):
    """Pause chunk reading; streaming continues."""

    TYPE: ClassVar[str] = "pause-snapshot"
    snapshot_type: SnapshotType | None = Field(None, alias="type")


class ResumeSnapshot(_SignalBase):
    """Resume a paused snapshot."""

    TYPE: ClassVar[str] = "resume-snapshot"
    snapshot_type: SnapshotType | None = Field(None, alias="type")


class Log(_SignalBase):
    """Ask the connector to write `message` to its log (Debezium's `log` action)."""

    TYPE: ClassVar[str] = "log"
    message: Annotated[StrictStr, Field(min_length=1, max_length=4096)]


class SetThrottle(_SignalBase):
    """gtidmark extension: change the snapshot chunk size and/or delay while running."""

    TYPE: ClassVar[str] = "set-throttle"
    chunk_size: Annotated[StrictInt, Field(gt=0, le=MAX_CHUNK_SIZE)] | None = Field(
        None, alias="chunk-size")
    chunk_delay_ms: Annotated[StrictInt, Field(ge=0, le=MAX_CHUNK_DELAY_MS)] | None = Field(
        None, alias="chunk-delay-ms")

    @model_validator(mode="after")
    def _something_to_set(self) -> SetThrottle:
        if self.chunk_size is None and self.chunk_delay_ms is None:
            raise ValueError("give chunk-size and/or chunk-delay-ms")
        return self


Signal = ExecuteSnapshot | StopSnapshot | PauseSnapshot | ResumeSnapshot | Log | SetThrottle

SIGNAL_TYPES: dict[str, type[_SignalBase]] = {
    cls.TYPE: cls
    for cls in (ExecuteSnapshot, StopSnapshot, PauseSnapshot, ResumeSnapshot, Log, SetThrottle)
}
# Types whose `data` may be absent.
_DATA_OPTIONAL = {"stop-snapshot", "pause-snapshot", "resume-snapshot"}


def signal_key(key: bytes | None) -> str | None:
    """A record's key as text (a JSON-serialized string key unwrapped)."""
    if key is None:
        return None
    text = key.decode("utf-8", errors="replace")
    if len(text) >= 2 and text[0] == text[-1] == '"':  # a JSON-serialized string key
        try:
            decoded = json.loads(text)
        except json.JSONDecodeError:
            return text
        return decoded if isinstance(decoded, str) else text
    return text


def parse_signal(key: bytes | None, value: bytes | None, expected_key: str) -> Signal:
    """Validate one signal record; raise `SignalRejected` naming the first problem."""
    got_key = signal_key(key)
    if got_key is None:
        raise SignalRejected(f"missing key (expected {expected_key!r}, the topic.prefix)")
    if got_key != expected_key:
        raise SignalRejected(f"key {got_key[:100]!r} is not this connector's topic.prefix "
                             f"{expected_key!r}")
    if value is None:
        raise SignalRejected("empty value (a tombstone), not a signal")
    document = decode_json(value, "value")
    if not isinstance(document, dict):
        raise SignalRejected(f"value is not a JSON object (got {type(document).__name__})")
    return _from_document(document)


def decode_json(text: bytes | str, what: str) -> Any:
    """`text` as JSON, bounded in size and nesting; SignalRejected naming `what` otherwise."""
    size = len(text.encode() if isinstance(text, str) else text)
    if size > MAX_VALUE_BYTES:
        raise SignalRejected(f"{what} is {size} bytes, more than {MAX_VALUE_BYTES}")
    try:
        document = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SignalRejected(f"{what} is not JSON ({exc})") from None
    except RecursionError:
        raise SignalRejected(f"{what} is nested deeper than {MAX_JSON_DEPTH} levels") from None
    if _depth(document) > MAX_JSON_DEPTH:
        raise SignalRejected(f"{what} is nested deeper than {MAX_JSON_DEPTH} levels")
    return document


def _depth(document: Any) -> int:
    """Nesting depth of decoded JSON, without recursion (a hostile value may be deep)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        children = node.values() if isinstance(node, dict) else node if isinstance(
            node, list) else ()
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, dict | list))
    return deepest


def signal_from_value(document: dict[str, Any]) -> Signal:
    """Validate an already-decoded `{"type", "data", "id"?}` object (no key check)."""
    return _from_document(document)


def _from_document(document: dict[str, Any]) -> Signal:
    extra = sorted(set(document) - {"type", "data", "id"})
    if extra:
        raise SignalRejected(f"unknown field {extra[0]!r} (a signal has type, data, id)")
    kind = document.get("type")
    if not isinstance(kind, str) or not kind:
        raise SignalRejected("missing type (a string such as \"execute-snapshot\")")
    cls = SIGNAL_TYPES.get(kind.lower())
    if cls is None:
        raise SignalRejected(f"unknown type {kind[:100]!r} (known: {', '.join(SIGNAL_TYPES)})")
    signal_id = document.get("id")
    if signal_id is not None and not isinstance(signal_id, str | int):
        raise SignalRejected("id must be a string")
    data = document.get("data")
    if isinstance(data, str):  # the signal-table form stores data as a JSON string
        try:
            data = json.loads(data) if data.strip() else None
        except json.JSONDecodeError as exc:
            raise SignalRejected(f"{kind}: data is not JSON ({exc})") from None
    if data is None and cls.TYPE in _DATA_OPTIONAL:
        data = {}
    if not isinstance(data, dict):
        raise SignalRejected(f"{kind}: data must be a JSON object")
    if "id" in data:
        raise SignalRejected(f"{kind}: data.id: unknown field")
    try:
        parsed = cls.model_validate(
            {**data, "id": None if signal_id is None else str(signal_id)})
    except ValidationError as exc:
        named = "" if signal_id is None else f" (id {str(signal_id)[:MAX_ID_CHARS]!r})"
        raise SignalRejected(f"{kind}{named}: {_first_error(exc)}") from None
    assert isinstance(parsed, Signal)  # every SIGNAL_TYPES class is a Signal member
    return parsed


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ""
    for part in err.get("loc", ()):
        loc += f"[{part}]" if isinstance(part, int) else f".{part}" if loc else str(part)
    message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    if err.get("type") == "missing":
        message = "required"
    elif err.get("type") == "extra_forbidden":
        message = "unknown field"
    where = f"data.{loc}" if loc else "data"
    return f"{where}: {message}"
