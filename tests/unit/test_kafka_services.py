"""The test harness's own pure parts: Kafka cluster ids StorageTool accepts."""

from __future__ import annotations

import base64
import uuid

import pytest

from tests import kafka_services


def test_a_cluster_id_never_starts_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    dashed = uuid.UUID(bytes=base64.urlsafe_b64decode("-" + "A" * 21 + "=="))
    plain = uuid.UUID(int=1)
    drawn = iter([dashed, dashed, plain])
    monkeypatch.setattr(kafka_services.uuid, "uuid4", lambda: next(drawn))
    assert kafka_services.new_cluster_id() == "AAAAAAAAAAAAAAAAAAAAAQ"
    monkeypatch.undo()
    for _ in range(2000):
        cluster_id = kafka_services.new_cluster_id()
        assert len(cluster_id) == 22 and not cluster_id.startswith("-")
