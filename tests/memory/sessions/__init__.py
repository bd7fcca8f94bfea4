"""Tests of ctxtrio.memory.sessions."""
