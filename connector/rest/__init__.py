"""The operator's HTTP side of `gtidmark run`: Kafka Connect's REST API, Prometheus, probes."""
