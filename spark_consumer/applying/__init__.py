"""A batch into its table: MERGE of the last change per key (`merge`), whole-row apply of
tables without a key (`keyless`), source column drops and renames (`column_ddl`)."""
