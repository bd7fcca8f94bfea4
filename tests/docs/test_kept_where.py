"""docs/defined.kept_where: the one filter for rows a search read only for a definition they may hold."""

from __future__ import annotations

from functools import partial

from ctxtrio.docs.chunks import StoredChunk
from ctxtrio.docs.defined import kept_where, member_in
from ctxtrio.docs.packing import Candidate
from ctxtrio.text.definitions import Member


def test_rows_read_only_for_a_member_are_all_checked_and_leave_with_their_ranks() -> None:
    """``checked`` None checks every row (search._members_read's rows, each read only for a member): one that
    does not define it leaves, its places in the rankings with it; the others stay in their order."""
    defining = "    final Node<K,V> getNode(Object key) {\n"
    calling = "        return getNode(key);\n"
    chunks = [StoredChunk(n, text, 0, len(text), ("public class HashMap",), 9) for n, text in enumerate(
        (defining, calling, defining)
    )]  # fmt: skip
    candidates = [Candidate("hashmap", "HashMap.java", chunk, 1.0) for chunk in chunks]
    holds = partial(member_in, members=[Member("getnode", ("hash", "map"))])
    kept, ranks = kept_where(holds, None, candidates, ["r0", "r1", "r2"])
    assert [c.chunk.index for c in kept] == [0, 2]
    assert ranks == ["r0", "r2"]
