"""docs/defined.kept_where: the one filter for rows a search read only for a definition they may hold."""

from __future__ import annotations

from functools import partial

from ctxtrio.docs.chunks import StoredChunk
from ctxtrio.docs.defined import defines_name, kept_where, member_in
from ctxtrio.docs.packing import Candidate
from ctxtrio.text.definitions import Member, Name

#: A HashMap method's definition line, and a line calling it (OpenJDK 17's java/util/HashMap.java).
DEFINING = "    final Node<K,V> getNode(Object key) {\n"
CALLING = "        return getNode(key);\n"
#: Does a row hold the member ``getNode`` of an owner spelled "hash map"?
HOLDS = partial(member_in, members=[Member("getnode", ("hash", "map"))])


def _rows(*texts: str) -> list[Candidate]:
    """Rows of HashMap.java holding ``texts``, indexed from 0, each under the class's trail."""
    chunks = [StoredChunk(n, text, 0, len(text), ("public class HashMap",), 9) for n, text in enumerate(texts)]
    return [Candidate("hashmap", "HashMap.java", chunk, 1.0) for chunk in chunks]


def test_rows_read_only_for_a_member_are_all_checked_and_leave_with_their_ranks() -> None:
    """``checked`` None checks every row (definition_rows.members_read's rows, each read only for a member): one that
    does not define it leaves, its places in the rankings with it; the others stay in their order."""
    candidates = _rows(DEFINING, CALLING, DEFINING)
    kept, ranks = kept_where(HOLDS, None, candidates, ["r0", "r1", "r2"])
    assert [c.chunk.index for c in kept] == [0, 2]
    assert ranks == ["r0", "r2"]


def test_rows_read_only_for_a_definition_leave_with_their_ranks() -> None:
    """kept_where drops a checked row that does not define the member, and its places in the rankings with it
    (the ``deep`` filter of before dropped the candidate and kept its ranks: the lists went out of step)."""
    candidates = _rows(CALLING, DEFINING, CALLING)
    kept, ranks = kept_where(HOLDS, {("hashmap", 1), ("hashmap", 2)}, candidates, ["r0", "r1", "r2"])
    assert [c.chunk.index for c in kept] == [0, 1]  # row 0 was not read for the definition: it stays
    assert ranks == ["r0", "r1"]
    name = Name("getnode")
    assert defines_name(candidates[1], name)
    assert not defines_name(candidates[0], name)
