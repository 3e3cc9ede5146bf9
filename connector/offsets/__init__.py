"""The offsets topic: its records, how a start resumes from them, and the commit that writes them."""
