"""Notebook 00's printed sentences in Chinese (i18n.tr)."""

SENTENCES = {}
