"""Debezium/Kafka Connect keys that change what is written: the ones honoured, the ones refused.

A key that changes records and is not honoured must stop the start (exit 2) rather than be
ignored: an ignored `column.mask.*` sends personal data to Kafka. Keys that change nothing
here stay warnings (parse.py). Add a key you implement to the supported sets below.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from connector.settings import smt

# Record-changing keys gtidmark honours, each read by a ConnectorConfig field.
SUPPORTED_KEYS = frozenset({
    "column.include.list", "column.exclude.list", "message.key.columns", "skipped.operations",
    "column.propagate.source.type", "datatype.propagate.source.type",
    "decimal.handling.mode", "time.precision.mode", "tombstones.on.delete",
    "provide.transaction.metadata", "key.converter", "value.converter",
    "key.converter.schemas.enable", "value.converter.schemas.enable",
    "key.converter.schema.registry.url", "value.converter.schema.registry.url",
    "key.converter.replace.null.with.default", "value.converter.replace.null.with.default",
    "key.converter.ignore.default.for.nullables", "value.converter.ignore.default.for.nullables",
    "topic.prefix",
})

# Java MessageDigest names (column.mask.hash.<ALGO>...) -> hashlib's names.
JAVA_DIGESTS = {
    "MD5": "md5", "SHA-1": "sha1", "SHA-224": "sha224", "SHA-256": "sha256",
    "SHA-384": "sha384", "SHA-512": "sha512", "SHA-512/224": "sha512_224",
    "SHA-512/256": "sha512_256", "SHA3-224": "sha3_224", "SHA3-256": "sha3_256",
    "SHA3-384": "sha3_384", "SHA3-512": "sha3_512",
}

# The column mapper keys, as Debezium's ColumnMappers matches them (whole key).
TRUNCATE_KEY = re.compile(r"column\.truncate\.to\.(\d+)\.chars")
MASK_KEY = re.compile(r"column\.mask\.with\.(\d+)\.chars")
HASH_KEY = re.compile(r"column\.mask\.hash\.(?P<algorithm>[^.]+)\.with\.salt\.(?P<salt>.+)")
HASH_V2_KEY = re.compile(
    r"column\.mask\.hash\.v2\.(?P<algorithm>[^.]+)\.with\.salt\.(?P<salt>.+)")
COLUMN_MAPPER_PREFIXES = ("column.mask.", "column.truncate.")

# Transforms (SMTs) honoured: class -> the option names honoured after transforms.<alias>.
SUPPORTED_TRANSFORMS: dict[str, frozenset[str]] = {smt.EXTRACT_NEW_RECORD_STATE: smt.OPTIONS}

# Keys refused whatever their value.
REFUSED_KEYS = {
    "converters": "custom converters are Java classes",
    "post.processors": "post processors are Java classes",
    "snapshot.select.statement.overrides": "snapshot rows come from whole-table chunk queries",
    "gtid.source.includes": "events are not filtered by GTID source",
    "gtid.source.excludes": "events are not filtered by GTID source",
    "snapshot.include.collection.list": "snapshot.mode=initial reads every captured table; "
                                        "others are snapshotted with execute-snapshot",
}
REFUSED_PREFIXES = {
    "predicates.": "predicates are Java classes",
    "snapshot.select.statement.overrides.": "snapshot rows come from whole-table chunk queries",
}

# Confluent's default subject naming, lower-cased as values are compared.
AVRO_TOPIC_NAMES = "io.confluent.kafka.serializers.subject.topicnamestrategy"
# Keys honoured only at the value(s) listed (Debezium's defaults, case-insensitive).
DEFAULT_ONLY: dict[str, tuple[str, ...]] = {
    "predicates": ("",),
    "include.schema.changes": ("true",),
    "include.schema.comments": ("false",),
    "include.query": ("false",),
    "binary.handling.mode": ("bytes",),
    "bigint.unsigned.handling.mode": ("long",),
    "field.name.adjustment.mode": ("none",),
    "schema.name.adjustment.mode": ("none",),
    "skip.messages.without.change": ("false",),
    "table.ignore.builtin": ("true",),
    "enable.time.adjuster": ("true",),
    "gtid.source.filter.dml.events": ("true",),
    "topic.naming.strategy": ("io.debezium.schema.defaulttopicnamingstrategy",),
    "topic.delimiter": (".",),
    "topic.transaction": ("transaction",),
    "topic.heartbeat.prefix": ("__debezium-heartbeat",),
    "sourceinfo.struct.maker": ("",),
    "transaction.metadata.factory": ("",),
    "header.converter": ("org.apache.kafka.connect.storage.simpleheaderconverter",),
    "key.converter.decimal.format": ("base64",),
    "value.converter.decimal.format": ("base64",),
    "key.converter.connect.meta.data": ("true",),
    "value.converter.connect.meta.data": ("true",),
    "key.converter.enhanced.avro.schema.support": ("false",),
    "value.converter.enhanced.avro.schema.support": ("false",),
    "key.converter.scrub.invalid.names": ("false",),
    "value.converter.scrub.invalid.names": ("false",),
    "key.converter.key.subject.name.strategy": (AVRO_TOPIC_NAMES,),
    "value.converter.value.subject.name.strategy": (AVRO_TOPIC_NAMES,),
}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip()


def _transform_refusal(key: str, value: Any, settings: Mapping[str, Any]) -> str | None:
    if key == "transforms":
        for alias in (a.strip() for a in _text(value).split(",") if a.strip()):
            kind = _text(settings.get(f"transforms.{alias}.type", ""))
            if kind not in SUPPORTED_TRANSFORMS:
                return (f"transform {alias!r} ({kind or 'no type'}) is not applied here"
                        f" (supported: {', '.join(sorted(SUPPORTED_TRANSFORMS)) or 'none'});"
                        f" take {alias!r} out of transforms")
        return None
    alias, _, option = key.removeprefix("transforms.").partition(".")
    aliases = {a.strip() for a in _text(settings.get("transforms", "")).split(",")}
    if alias not in aliases or option == "type":
        return None  # Kafka Connect reads options of listed transforms only
    kind = _text(settings.get(f"transforms.{alias}.type", ""))
    if option not in SUPPORTED_TRANSFORMS.get(kind, frozenset()):
        return (f"option {option!r} of {kind or 'the transform'} is not applied here; "
                "remove the key")
    return None


def _mapper_refusal(key: str) -> str | None:
    if TRUNCATE_KEY.fullmatch(key) or MASK_KEY.fullmatch(key):
        return None
    found = HASH_V2_KEY.fullmatch(key) or HASH_KEY.fullmatch(key)
    if found is None:
        return ("not a column mapper this connector (or Debezium) knows: column.mask.with.N"
                ".chars, column.mask.hash[.v2].ALGORITHM.with.salt.SALT, "
                "column.truncate.to.N.chars")
    if found.group("algorithm") not in JAVA_DIGESTS:
        return (f"hash algorithm {found.group('algorithm')!r} is not supported "
                f"(supported: {', '.join(JAVA_DIGESTS)})")
    return None


def refusal(key: str, value: Any, settings: Mapping[str, Any]) -> str | None:
    """Why `key` = `value` cannot be honoured (it would change records), or None.

    `settings` is the whole connector map (transform options depend on `transforms`).
    """
    if key in SUPPORTED_KEYS:
        return None
    if key == "transforms" or key.startswith("transforms."):
        return _transform_refusal(key, value, settings)
    if key.startswith(COLUMN_MAPPER_PREFIXES):
        return _mapper_refusal(key)
    if key in REFUSED_KEYS:
        return (f"changes what is written and is not supported ({REFUSED_KEYS[key]}); "
                "remove the key")
    for prefix, why in REFUSED_PREFIXES.items():
        if key.startswith(prefix):
            return f"changes what is written and is not supported ({why}); remove the key"
    allowed = DEFAULT_ONLY.get(key)
    if allowed is not None and _text(value).lower() not in allowed:
        shown = allowed[0] or "empty"
        return (f"changes what is written; only {shown!r} (Debezium's default) is supported "
                f"(got {_text(value)!r}); set it to {shown!r} or remove the key")
    return None


def changes_records(key: str) -> bool:
    """Whether `key` is one of the record-changing keys this module decides on."""
    return (key in SUPPORTED_KEYS or key in REFUSED_KEYS or key in DEFAULT_ONLY
            or key == "transforms" or key.startswith(("transforms.", *REFUSED_PREFIXES,
                                                      *COLUMN_MAPPER_PREFIXES)))
