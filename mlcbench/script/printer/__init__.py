"""Printer of TVMScript (to be written)."""
