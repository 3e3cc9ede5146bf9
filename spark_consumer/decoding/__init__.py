"""Change records to typed changes: Debezium/Connect types as Spark's (`dbztypes`), one record
(`decode`, the reference) or a whole range at once (`columnar`, `arrowjson`); keys re-taken
from images (`rekey`) and flattened topics refused (`flattened`). No Spark here."""
