"""Who may write: the HA lease and the writer-epoch fencing checked before every commit."""
