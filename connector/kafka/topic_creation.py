"""Which partitions, replication factor and topic settings a new topic gets (KIP-158).

Kafka Connect's source-connector topic creation, under its property names:
`topic.creation.groups` lists groups in order; a topic belongs to the first group whose
`include` regexes match it fully and whose `exclude` regexes do not, else to `default`.
A group's unset `replication.factor`, `partitions` and topic settings are the default
group's; the default group's unset ones are -1, the broker's own defaults
(`default.replication.factor`, `num.partitions`), never a hard-coded 1. Any other key under
a group (`cleanup.policy`, `retention.ms`, `compression.type`...) is a topic setting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PREFIX = "topic.creation."
DEFAULT_GROUP = "default"
BROKER_DEFAULT = -1
_OWN_KEYS = ("include", "exclude", "replication.factor", "partitions")


@dataclass(frozen=True)
class TopicSpec:
    """How one topic is created: -1 means the broker's default."""

    partitions: int = BROKER_DEFAULT
    replication_factor: int = BROKER_DEFAULT
    config: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CreationGroup:
    name: str
    include: tuple[re.Pattern[str], ...]
    exclude: tuple[re.Pattern[str], ...]
    spec: TopicSpec

    def matches(self, topic: str) -> bool:
        return (any(p.fullmatch(topic) for p in self.include)
                and not any(p.fullmatch(topic) for p in self.exclude))


@dataclass(frozen=True)
class TopicCreation:
    """The groups of `topic.creation.*`, in the order `topic.creation.groups` gives them."""

    default: TopicSpec = field(default_factory=TopicSpec)
    groups: tuple[CreationGroup, ...] = ()

    def spec_for(self, topic: str) -> TopicSpec:
        for group in self.groups:
            if group.matches(topic):
                return group.spec
        return self.default

    @classmethod
    def parse(cls, settings: dict[str, str]) -> TopicCreation:
        """From the `topic.creation.*` keys (prefix included); ValueError names the key."""
        names = [n.strip() for n in settings.get(f"{PREFIX}groups", "").split(",") if n.strip()]
        if DEFAULT_GROUP in names:
            raise ValueError(f"{PREFIX}groups: 'default' is implicit and cannot be listed")
        by_group: dict[str, dict[str, str]] = {name: {} for name in [DEFAULT_GROUP, *names]}
        for key, value in settings.items():
            rest = key.removeprefix(PREFIX)
            if rest in ("groups", "enable"):
                continue
            group = next((g for g in by_group if rest.startswith(f"{g}.")), None)
            if group is None:
                raise ValueError(f"{key}: group {rest.split('.', 1)[0]!r} is not in "
                                 f"{PREFIX}groups")
            by_group[group][rest.removeprefix(f"{group}.")] = str(value)
        own = by_group.pop(DEFAULT_GROUP)
        for key in ("include", "exclude"):
            if key in own:
                raise ValueError(f"{PREFIX}default.{key}: the default group takes every topic "
                                 "no other group takes; it has no include or exclude")
        default = _spec(DEFAULT_GROUP, own, TopicSpec())
        groups = []
        for name, values in by_group.items():
            if not values.get("include", "").strip():
                raise ValueError(f"{PREFIX}{name}.include: required for a group in "
                                 f"{PREFIX}groups (a list of topic regexes)")
            groups.append(CreationGroup(name, _patterns(name, "include", values),
                                        _patterns(name, "exclude", values),
                                        _spec(name, values, default)))
        return cls(default, tuple(groups))


def _spec(group: str, values: dict[str, str], base: TopicSpec) -> TopicSpec:
    config = {**base.config, **{k: v for k, v in values.items() if k not in _OWN_KEYS}}
    return TopicSpec(_count(group, "partitions", values, base.partitions),
                     _count(group, "replication.factor", values, base.replication_factor),
                     config)


def _count(group: str, key: str, values: dict[str, str], inherited: int) -> int:
    raw = values.get(key)
    if raw is None:
        return inherited
    try:
        number = int(raw.strip())
    except ValueError:
        number = 0
    if number == 0 or number < BROKER_DEFAULT:
        raise ValueError(f"{PREFIX}{group}.{key}: a positive number, or -1 for the broker's "
                         f"default (got {raw!r})")
    return number


def _patterns(group: str, key: str, values: dict[str, str]) -> tuple[re.Pattern[str], ...]:
    out = []
    for text in (p.strip() for p in values.get(key, "").split(",")):
        if not text:
            continue
        try:
            out.append(re.compile(text))
        except re.error as exc:
            raise ValueError(f"{PREFIX}{group}.{key}: {text!r} is not a regular expression "
                             f"({exc})") from None
    return tuple(out)
