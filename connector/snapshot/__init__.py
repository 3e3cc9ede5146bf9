"""Read-only incremental snapshots: chunk SQL, DBLog windows, and their coordination."""
