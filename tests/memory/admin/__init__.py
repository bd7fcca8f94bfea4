"""Tests of ctxtrio.memory.admin."""
