"""Helpers shared by tests/ and stress/ (not shipped): fakes of the outside world.

``fake_openai``: a small OpenAI-compatible server on loopback, with failure modes.
``processes``: stop a server process (SIGTERM, a grace period, SIGKILL).
``clock``: ``held_clock``, virtual time that holds still while a worker thread runs.
``results``: ``text_of``, a tool result's text.
``sqlite_lock``: ``write_lock_held``, another process's hold on a SQLite file's write lock.
``stdio_lines``: JSON-RPC messages as lines for a server's stdin, and a 2026-07-28 request's ``_meta``.
"""
