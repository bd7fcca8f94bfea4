"""Tests of ctxtrio.memory.state."""
