"""The `kb` command: one file of standard-library Python (`kb.py`), installable alone."""
