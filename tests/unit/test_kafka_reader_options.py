"""`--kafka-reader spark`: the job's librdkafka settings as Spark Kafka source options, and a
setting with no Java counterpart refused at start in one line."""

from __future__ import annotations

import pytest

from spark_consumer.job.options import UsageError, parse_options
from spark_consumer.reading.javakafka import NoJavaSetting, java_options

BASE = ["--bootstrap-servers", "k:9092", "--topics", "a.b.c"]


def test_same_names_pass_and_sasl_becomes_the_jaas_line() -> None:
    assert java_options({"bootstrap.servers": "k:9092", "security.protocol": "SASL_SSL",
                         "sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": "u",
                         "sasl.password": 'p"w', "ssl.ca.location": "/ca.pem"}) == {
        "kafka.bootstrap.servers": "k:9092", "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
                                  'required username="u" password="p\\"w";',
        "kafka.ssl.truststore.type": "PEM", "kafka.ssl.truststore.location": "/ca.pem"}


def test_a_setting_without_a_java_counterpart_is_refused() -> None:
    with pytest.raises(NoJavaSetting, match="enable.ssl.certificate.verification"):
        java_options({"enable.ssl.certificate.verification": "false"})
    with pytest.raises(NoJavaSetting, match="need each other"):
        java_options({"sasl.username": "u"})


def test_the_option_defaults_to_python_and_refuses_an_unmapped_setting_at_start() -> None:
    assert parse_options(BASE).kafka_reader == "python"
    assert parse_options([*BASE, "--kafka-conf", "enable.ssl.certificate.verification=false"]
                         ).kafka_reader == "python"
    assert parse_options([*BASE, "--kafka-reader", "spark"]).kafka_reader == "spark"
    with pytest.raises(UsageError, match=r"^--kafka-reader spark: "
                                         r"enable.ssl.certificate.verification has no Java"):
        parse_options([*BASE, "--kafka-reader", "spark", "--kafka-conf",
                       "enable.ssl.certificate.verification=false"])
