"""gtidmark's Kafka Connect REST API against a real Kafka Connect worker, call for call.

tests/integration/rest_script.py is played against Debezium's MySQL connector on a Kafka
Connect 4.3 worker and against `gtidmark run` on the same MySQL replica, under the same
connector name and topic prefix. Status codes, body shapes and the state after each call
must be equal, except the steps in MESSAGE_ONLY (the `message` text alone) and DIFFERENT,
each with the reason the README gives; an exception that no longer differs fails too.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.connect_services import ConnectWorker
from tests.connector_tools import ConnectorProcess, connector_document
from tests.integration.rest_script import Context, differences, in_message_only, play
from tests.integration.test_debezium_migration import debezium_on_worker
from tests.kafka_services import Broker
from tests.mysql_services import MySqlPair
from tests.rest_tools import RestClient
from tests.services import free_port, wait_for

JACKSON = ("a body that cannot be bound is a 500 as in Connect; the message is gtidmark's "
           "parser's, not Jackson's")
OFFSETS_ELSEWHERE = ("Debezium's MySQL connector does not implement alterOffsets, so Connect "
                     "adds that offsets kept outside Connect need changing too; gtidmark keeps "
                     "none elsewhere and answers as Connect does for a connector that says so")
# Step label -> why gtidmark answers otherwise (the README's REST section says the same).
# Those in MESSAGE_ONLY may differ in the `message` text alone: status, state and the rest
# of the body stay equal.
MESSAGE_ONLY: dict[str, str] = {
    "PATCH offsets not JSON": JACKSON,
    "PATCH offsets unknown field": JACKSON,
    "PUT config not JSON": JACKSON,
    "PUT config a list": JACKSON,
    "PATCH offsets (stopped)": OFFSETS_ELSEWHERE,
    "PATCH offsets back": OFFSETS_ELSEWHERE,
    "DELETE offsets (stopped)": OFFSETS_ELSEWHERE,
}
DIFFERENT: dict[str, str] = {
    "PUT config changed": "the configuration of a running gtidmark is its file: a change is "
                          "refused (400, naming the settings) instead of applied in memory, "
                          "where the next start would silently undo it",
    "PUT config invalid value": "Connect 4.3.1 answers Debezium 3.6.1's invalid settings with "
                                "a 500 (a NullPointerException in AbstractHerder."
                                "maybeAddConfigErrors); gtidmark gives the 400 and the words "
                                "Connect has for them, with its own checks' lines",
    "PATCH offsets foreign partition": "gtidmark reads one source partition, "
                                       "{\"server\": topic.prefix}; an offset under another "
                                       "would never be read, so it is refused (400)",
    "POST task 0 restart (stopped)": "Connect 4.3.1 answers 409 'no known leader URL' (its "
                                     "herder finds the stopped connector's task on no worker "
                                     "and has nowhere to forward the request); gtidmark "
                                     "answers Connect's 404 `Unknown task`, as a STOPPED "
                                     "connector lists no tasks",
    "PUT pause (stopped)": "pause from STOPPED starts the engine paused (connected, taking "
                           "nothing), so its task shows PAUSED; Connect creates the tasks only "
                           "on resume",
}


def has_offsets(client: RestClient, name: str) -> bool:
    reply = client.get(f"/connectors/{name}/offsets")
    return reply.status == 200 and bool(reply.body["offsets"])


def test_rest_script_answers_as_kafka_connect(mysql: MySqlPair, broker: Broker,
                                              connect_worker: ConnectWorker, unique_name: str,
                                              tmp_path: Path) -> None:
    db = unique_name
    mysql.primary.execute(f"CREATE DATABASE {db}")
    mysql.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(20))")
    port = free_port()
    doc = connector_document(mysql, broker, db, rest__port=str(port))
    name = doc["name"]
    dbz = debezium_on_worker(connect_worker, mysql, doc, tmp_path / "dbz")
    ours = ConnectorProcess(doc, tmp_path)
    try:
        ours.start()
        dbz.start()
        client = RestClient(port)
        mysql.primary.execute(f"INSERT INTO {db}.t VALUES (1, 'one')")
        for side in (connect_worker.rest, client):
            wait_for(lambda side=side: has_offsets(side, name), 120,
                     f"offsets on {side.base}", interval=0.2)
        with ThreadPoolExecutor(2) as both:  # the sides are independent: played at once
            connect = both.submit(play, connect_worker.rest, Context(name, db), "Connect")
            mine = play(client, Context(name, db), "gtidmark")
            theirs = connect.result()
        assert ours.stop() == 0
        assert "Traceback" not in ours.log()
    finally:
        ours.ensure_stopped()
        dbz.stop()
    found = differences(theirs, mine)
    unexpected = {label: text for label, text in found.items() if label not in DIFFERENT and (
        label not in MESSAGE_ONLY or not in_message_only(theirs[label], mine[label]))}
    stale = sorted((set(DIFFERENT) | set(MESSAGE_ONLY)) - set(found))
    assert not unexpected and not stale, (
        "differences not allowed:" + "".join(f"\n{label}:{text}"
                                             for label, text in unexpected.items())
        + f"\nallowed but equal now: {stale}")
