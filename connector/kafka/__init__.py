"""The Kafka side of the connector: topics as Kafka Connect creates them, the producer with
its delivery tracking (and transactions), reading internal topics to their end, the
reachability check and librdkafka's own log lines.
"""
