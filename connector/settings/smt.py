"""Debezium's ExtractNewRecordState SMT as configured in the connector file (transforms.*).

Read as Debezium 3.6.3 reads it (ExtractNewRecordStateConfigDefinition): the options, their
defaults, and the names `add.fields` / `add.headers` give (`__op`, `__source_ts_ms`, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

EXTRACT_NEW_RECORD_STATE = "io.debezium.transforms.ExtractNewRecordState"
DELETE_MODES = ("drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone")
# Options Debezium 2.x removed and 3.6 no longer reads: accepted, with a warning, and ignored.
REMOVED_OPTIONS = {
    "drop.tombstones": "delete.tombstone.handling.mode",
    "delete.handling.mode": "delete.tombstone.handling.mode",
}
OPTIONS = frozenset({"delete.tombstone.handling.mode", "add.fields", "add.fields.prefix",
                     "add.headers", "add.headers.prefix", "replace.null.with.default",
                     *REMOVED_OPTIONS})
# Unqualified names that are not in `source` (Debezium's FieldReference.determineStruct).
_TRANSACTION_FIELDS = frozenset({"id", "total_order", "data_collection_order"})
_ENVELOPE_FIELDS = frozenset({"op", "ts_ms", "ts_us", "ts_ns"})


@dataclass(frozen=True, slots=True)
class FieldRef:
    """One `add.fields` / `add.headers` entry: where the value is, and the name it gets."""

    struct: str | None  # "source", "transaction", or None for a top-level envelope field
    field: str
    name: str

    @classmethod
    def parse(cls, prefix: str, entry: str) -> FieldRef:
        """`field`, `struct.field` or either with `:new_name`, as Debezium names them."""
        parts = entry.split(":")
        if len(parts) > 2:
            raise ValueError(f"unexpected field name {entry!r}")
        splits = parts[0].split(".")
        field = splits[0] if len(splits) == 1 else splits[1]
        if len(splits) == 1:
            struct: str | None = ("transaction" if field in _TRANSACTION_FIELDS else
                                  None if field in _ENVELOPE_FIELDS else "source")
        else:
            struct = splits[0]
        if len(parts) == 2:
            name = prefix + parts[1]
        else:
            name = prefix + (field if len(splits) == 1 else f"{struct}_{field}")
        return cls(struct, field, name)


@dataclass(frozen=True, slots=True)
class UnwrapSettings:
    """transforms.<alias>.* of an ExtractNewRecordState transform, with Debezium's defaults."""

    alias: str
    mode: str = "tombstone"
    add_fields: tuple[FieldRef, ...] = ()
    add_headers: tuple[FieldRef, ...] = ()
    replace_null: bool = True  # the SMT's own: defaults for nulls when it rewrites (rewrite*)

    @property
    def rewrites(self) -> bool:
        return self.mode in ("rewrite", "rewrite-with-tombstone")


def _refs(prefix: str, text: str) -> tuple[FieldRef, ...]:
    return tuple(FieldRef.parse(prefix, entry.strip()) for entry in text.split(",")
                 if entry.strip())


def _boolean(key: str, text: str) -> bool:
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise ValueError(f"{key}: expected true or false (got {text!r})")
    return value == "true"


def unwrap_settings(transforms: Mapping[str, str]) -> UnwrapSettings | None:
    """The ExtractNewRecordState transform among `transforms` (the `transforms` and
    `transforms.*` keys), or None; ValueError naming the key for a bad value."""
    aliases = [a.strip() for a in transforms.get("transforms", "").split(",") if a.strip()]
    found = [a for a in aliases
             if transforms.get(f"transforms.{a}.type", "").strip() == EXTRACT_NEW_RECORD_STATE]
    if not found:
        return None
    if len(aliases) > 1:
        raise ValueError(f"transforms: one transform is applied here, {len(aliases)} given")
    alias = found[0]

    def option(name: str, default: str) -> str:
        return str(transforms.get(f"transforms.{alias}.{name}", default))

    mode = option("delete.tombstone.handling.mode", "tombstone").strip().lower()
    if mode not in DELETE_MODES:
        raise ValueError(f"transforms.{alias}.delete.tombstone.handling.mode: {mode!r} is not "
                         f"one of {', '.join(DELETE_MODES)}")
    try:
        return UnwrapSettings(
            alias, mode,
            _refs(option("add.fields.prefix", "__"), option("add.fields", "")),
            _refs(option("add.headers.prefix", "__"), option("add.headers", "")),
            _boolean(f"transforms.{alias}.replace.null.with.default",
                     option("replace.null.with.default", "true")))
    except ValueError as exc:
        raise ValueError(f"transforms.{alias}: {exc}") from None


def removed_options(transforms: Mapping[str, str]) -> list[str]:
    """Keys of options Debezium 3.6 no longer reads (it ignores them; so does gtidmark)."""
    return [key for key in transforms if key.startswith("transforms.")
            and any(key.endswith(f".{name}") for name in REMOVED_OPTIONS)]
