"""Admin: whole sessions for people and scripts: archive (export/import), prune, lifecycle (delete/restore), listing.

Imports the state and sessions rooms.
"""
