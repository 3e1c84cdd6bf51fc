"""Importing this package registers every detector (one module per family of kinds)."""

from . import answers, length, offline, policy, signals  # noqa: F401
