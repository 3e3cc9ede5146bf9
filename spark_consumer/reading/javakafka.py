"""The job's Kafka settings (librdkafka names) as options of Spark's Kafka source (Java names).

Settings spelt the same in both clients pass as they are; SASL's username and password become
the Java client's JAAS line, a PEM CA file its PEM trust store. A setting with no Java
counterpart here is refused (`--kafka-reader python`, librdkafka, takes every one).
"""

from __future__ import annotations

SAME = frozenset({"bootstrap.servers", "security.protocol", "client.id", "sasl.mechanism",
                  "socket.connection.setup.timeout.ms", "request.timeout.ms",
                  "ssl.endpoint.identification.algorithm"})
_LOGIN = {"PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
          "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
          "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule"}


def _jaas_text(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class NoJavaSetting(ValueError):
    """A librdkafka setting with no Java counterpart here (the message names it)."""


def java_options(conf: dict[str, str]) -> dict[str, str]:
    """`kafka.`-prefixed options for Spark's Kafka source (NoJavaSetting for a setting with no
    Java counterpart here)."""
    out: dict[str, str] = {}
    rest = dict(conf)
    if "sasl.mechanisms" in rest:
        rest.setdefault("sasl.mechanism", rest.pop("sasl.mechanisms"))
    user, password = rest.pop("sasl.username", None), rest.pop("sasl.password", None)
    if user is not None or password is not None:
        login = _LOGIN.get(rest.get("sasl.mechanism", "PLAIN").upper())
        if login is None or user is None or password is None:
            raise NoJavaSetting("sasl.username and sasl.password need each other and a "
                                "PLAIN or SCRAM sasl.mechanism")
        out["sasl.jaas.config"] = (f"{login} required username={_jaas_text(user)} "
                                   f"password={_jaas_text(password)};")
    ca = rest.pop("ssl.ca.location", None)
    if ca is not None:
        out["ssl.truststore.type"] = "PEM"
        out["ssl.truststore.location"] = ca
    for key, value in rest.items():
        if key not in SAME:
            raise NoJavaSetting(f"{key} has no Java client counterpart the job knows")
        out[key] = value
    return {f"kafka.{k}": v for k, v in out.items()}
