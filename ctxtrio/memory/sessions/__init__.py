"""Sessions: a session held in memory and kept in step with its journal (registry, repository, journals, summary files).

Imports the state room only.
"""
