"""The Java Kafka clients' security settings as librdkafka's, or one line why not.

A Connect worker's `security.protocol`, `sasl.*` and `ssl.*` (top level for every client,
or under `producer.`/`consumer.`) use the Java client's names. librdkafka shares some
(`security.protocol`, `sasl.mechanism`, `ssl.endpoint.identification.algorithm`); the
others are rewritten: a PLAIN/SCRAM `sasl.jaas.config` to `sasl.username`/`sasl.password`,
a PEM truststore to `ssl.ca.location`, a PKCS12 keystore to `ssl.keystore.location`. What
librdkafka cannot read (a JKS store, a PKCS12 truststore, other login modules) is refused.
The JVM's TLS tuning (`ssl.protocol`, `ssl.enabled.protocols`, key and trust manager
algorithms) is dropped: librdkafka negotiates with OpenSSL's defaults.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# Java names librdkafka reads under the same name and meaning.
SAME = frozenset({"security.protocol", "sasl.mechanism", "ssl.endpoint.identification.algorithm",
                  "sasl.kerberos.service.name", "ssl.key.password"})
# Java-only names rewritten here (the rest of ssl.*/sasl.* with a Java meaning is refused).
JAVA_ONLY = frozenset({
    "sasl.jaas.config", "ssl.truststore.location", "ssl.truststore.type",
    "ssl.truststore.password", "ssl.truststore.certificates", "ssl.keystore.location",
    "ssl.keystore.type", "ssl.keystore.password", "ssl.keystore.certificate.chain",
    "ssl.keystore.key", "ssl.protocol", "ssl.enabled.protocols",
    "ssl.cipher.suites", "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm",
    "ssl.secure.random.implementation", "ssl.engine.factory.class",
    "sasl.client.callback.handler.class", "sasl.login.callback.handler.class",
    "sasl.login.class", "sasl.kerberos.kinit.cmd",
})
LOGIN_MODULES = {
    "org.apache.kafka.common.security.plain.PlainLoginModule": ("PLAIN",),
    "org.apache.kafka.common.security.scram.ScramLoginModule": ("SCRAM-SHA-256",
                                                                "SCRAM-SHA-512"),
}
_JAAS = re.compile(r"^\s*(\S+)\s+(required|requisite|sufficient|optional)\s*(.*?);?\s*$",
                   re.DOTALL)
_OPTION = re.compile(r'(\w+)\s*=\s*(?:"((?:\\.|[^"\\])*)"|(\S+?))(?=\s|;|$)')


def is_security_key(key: str) -> bool:
    """A Java client security setting at the top level (for every client)."""
    return key in SAME or key in JAVA_ONLY


def _unescape(text: str) -> str:
    """A JAAS quoted value's backslash escapes."""
    return re.sub(r"\\(.)", r"\1", text)


def _jaas(text: str, mechanism: str | None) -> tuple[dict[str, str], str | None]:
    found = _JAAS.match(text)
    if found is None:
        return {}, ('not a JAAS entry: <LoginModule class> required username="..." '
                    'password="...";')
    module, options = found.group(1), found.group(3)
    mechanisms = LOGIN_MODULES.get(module)
    if mechanisms is None:
        return {}, (f"login module {module} is not mapped to librdkafka (PlainLoginModule and "
                    "ScramLoginModule are); set librdkafka's own sasl.* settings instead")
    values = {m.group(1): (m.group(2) if m.group(2) is not None else m.group(3))
              for m in _OPTION.finditer(options)}
    if "username" not in values or "password" not in values:
        return {}, f"{module} needs username=\"...\" and password=\"...\""
    if mechanism is not None and mechanism.upper() not in mechanisms:
        return {}, f"{module} is for sasl.mechanism {' or '.join(mechanisms)}, not {mechanism}"
    out = {"sasl.username": _unescape(values["username"]),
           "sasl.password": _unescape(values["password"])}
    if mechanism is None:
        out["sasl.mechanism"] = mechanisms[0]
    return out, None


def librdkafka(settings: Mapping[str, str], prefix: str = "",
               mechanism: str | None = None) -> tuple[dict[str, str], list[str]]:
    """`settings` with the Java security names rewritten for librdkafka, and one line per
    setting that cannot be (named with `prefix`, e.g. "producer."); `mechanism` is the
    sasl.mechanism they inherit (the top level's, for a client's own settings)."""
    out = {k: v for k, v in settings.items() if k not in JAVA_ONLY}
    problems: list[str] = []
    given = {k: str(v).strip() for k, v in settings.items() if k in JAVA_ONLY}

    def refuse(key: str, why: str) -> None:
        problems.append(f"{prefix}{key}: {why}")

    if "sasl.jaas.config" in given:
        mapped, why = _jaas(given["sasl.jaas.config"],
                            settings.get("sasl.mechanism", mechanism))
        if why is not None:
            refuse("sasl.jaas.config", why)
        out.update(mapped)
    trust_type = given.get("ssl.truststore.type", "JKS").upper()
    if "ssl.truststore.location" in given:
        if trust_type == "PEM":
            out["ssl.ca.location"] = given["ssl.truststore.location"]
        else:
            refuse("ssl.truststore.location",
                   f"a {trust_type} truststore cannot be read by librdkafka; export its "
                   "certificates as PEM (keytool -exportcert -rfc) and set "
                   f"{prefix}ssl.truststore.type=PEM")
    if "ssl.truststore.certificates" in given:
        out["ssl.ca.pem"] = given["ssl.truststore.certificates"]
    # librdkafka's ssl.keystore.location is a PKCS12 file: taken unless typed otherwise
    # (Java 9+ writes PKCS12 by default, and reads it under Kafka's default type JKS).
    key_type = given.get("ssl.keystore.type", "PKCS12").upper()
    if "ssl.keystore.location" in given:
        if key_type == "PKCS12":
            out["ssl.keystore.location"] = given["ssl.keystore.location"]
            if "ssl.keystore.password" in given:
                out["ssl.keystore.password"] = given["ssl.keystore.password"]
        else:
            refuse("ssl.keystore.location",
                   f"a {key_type} keystore cannot be read by librdkafka; convert it to "
                   f"PKCS12 ({prefix}ssl.keystore.type=PKCS12) or give "
                   f"{prefix}ssl.keystore.certificate.chain and {prefix}ssl.keystore.key")
    if "ssl.keystore.certificate.chain" in given:
        out["ssl.certificate.pem"] = given["ssl.keystore.certificate.chain"]
    if "ssl.keystore.key" in given:
        out["ssl.key.pem"] = given["ssl.keystore.key"]
    for key in sorted(given.keys() & {"ssl.cipher.suites", "ssl.engine.factory.class",
                                      "sasl.client.callback.handler.class",
                                      "sasl.login.callback.handler.class", "sasl.login.class",
                                      "sasl.kerberos.kinit.cmd"}):
        refuse(key, "a Java client setting librdkafka has no equivalent of; remove it or "
                    "set librdkafka's own setting")
    return out, problems
