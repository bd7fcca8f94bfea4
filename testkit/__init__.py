"""Helpers shared by tests/ and stress/ (not shipped): fakes of the outside world.

``fake_openai``: a small OpenAI-compatible server on loopback, with failure modes.
"""
