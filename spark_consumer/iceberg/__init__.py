"""The job's Iceberg tables: naming, creation and schema evolution (`tables`, `evolution`),
the Kafka offsets each commit carries (`offsets`), --partition-by/--sort-by (`layout*`) and
the maintenance run between batches (`maintenance*`)."""
