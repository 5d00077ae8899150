"""The template corpus: sync and import templates, run them all, compare runs."""
