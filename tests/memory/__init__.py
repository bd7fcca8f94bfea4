"""Tests of ctxtrio.memory: the service face here, each room in its own folder."""
