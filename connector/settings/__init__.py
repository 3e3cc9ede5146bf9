"""The connector's settings: the model, parsing a connector file, the keys honoured and
refused, TLS, table filters and the ExtractNewRecordState settings."""
