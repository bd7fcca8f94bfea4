"""Helpers shared by tests/ and stress/ (not shipped): fakes of the outside world.

``fake_openai``: a small OpenAI-compatible server on loopback, with failure modes.
``processes``: stop a server process (SIGTERM, a grace period, SIGKILL).
``results``: ``text_of``, a tool result's text.
"""
