"""Reading a batch from Kafka: the offset ranges it reads and where each partition resumes
(driver: `planner`, `resume`), where a range's key changes (`keys`), and the MERGE source
built in the executors (`reader` + `source` in Python, `jvmsource` + `javakafka` in the JVM)."""
