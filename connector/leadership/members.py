"""Who is alive: the lease group's members as the broker describes them, and the leader.

Every running instance (leader or standby) is a member of `<name>-leader` for as long as
its lease consumer heartbeats; a process killed without leaving drops out after the
session timeout. The leader is the member assigned the signal topic's partition. This is
liveness; the offsets' writer is only who committed last, alive or not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient


@dataclass(frozen=True)
class Member:
    client_id: str  # gtidmark-<host>-<pid>
    host: str  # the address the broker sees the member connect from
    leader: bool  # holds the signal topic's partition: the active instance

    def to_json(self) -> dict[str, Any]:
        return {"client_id": self.client_id, "host": self.host, "leader": self.leader}


def lease_members(settings: dict[str, str], group: str, topic: str, timeout: float = 5.0
                  ) -> list[Member] | None:
    """The group's members (empty when none is alive, or the group does not exist); None when
    the broker does not answer the description."""
    conf: dict[str, Any] = {k: v for k, v in settings.items()
                            if k.startswith(("bootstrap.", "security.", "ssl.", "sasl."))}
    admin = AdminClient(conf)  # kept until the answer: a client collected first drops it
    try:
        description = admin.describe_consumer_groups([group])[group].result(timeout)
    except KafkaException as exc:
        code = exc.args[0].code() if exc.args and isinstance(exc.args[0], KafkaError) else None
        if code == KafkaError.GROUP_ID_NOT_FOUND:  # the consumer protocol: no group yet
            return []
        return None
    except (TimeoutError, ValueError):
        return None
    out = []
    for m in description.members:
        assigned = m.assignment.topic_partitions if m.assignment is not None else []
        out.append(Member(str(m.client_id), str(m.host).lstrip("/"),
                          any(tp.topic == topic for tp in assigned)))
    return out
