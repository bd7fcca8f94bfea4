"""Tests of ctxtrio.memory.compaction."""
