"""Rows that may define the name a query asks for, past those its words found (for :mod:`.search`).

A query that spells a name in parts or qualified (``json decode error``, ``re.VERBOSE``) asks the index for the
name alone (:func:`named_hits`); one whose words spell a member of an owner they name, when no row read defines
the name whole (``json decoder decode``: Go's ``func (dec *Decoder) Decode``), asks for the member beside its
owner's word and in the files the owner names (:func:`members_read`). Which of them define it, and their order,
is :mod:`.defined`'s.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from ..text.asked import asked_keywords
from ..text.definitions import Member, owner_runs
from ..text.query import QUESTION_WORDS
from ..text.terms import STOPWORDS
from .defined import in_tests, kept_where, member_in, members_first, named_only
from .hits import hits_within, read_fused
from .hybrid import Fused

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..store.rows import Hit
    from ..text.definitions import Name
    from .catalog import DocEntry
    from .defined import DefinitionOrder
    from .hybrid import Ranks
    from .packing import Candidate
    from .repository import Repository

__all__ = ["members_asked", "members_read", "named_hits"]

#: Rows holding a spelled identifier whole that are checked for its definition.
_DEFINITION_HITS = 8
#: The same for an identifier that is a stopword or a question word, searched with its qualifier.
_LEFT_OUT_HITS = 30
#: How many of a query's members with an owner (:func:`_member_hits`) the index is asked for.
_MEMBERS_ASKED = 2


async def named_hits(repo: Repository, name: Name, by_journal: Mapping[str, DocEntry], *, all_docs: bool) -> list[Hit]:
    """Rows that may define ``name``: those holding its identifier, the best :data:`_DEFINITION_HITS`.
    An identifier that is a word the query leaves out (``shutil.which``, ``dict.get``: a stopword
    or a question word, held by most rows) is searched with its qualifier, among more rows."""
    if name.qualifier is None or not _left_out(name.identifier):
        return await hits_within(repo, [name.identifier], by_journal, _DEFINITION_HITS, all_docs=all_docs)
    return await hits_within(repo, [name.qualifier, name.identifier], by_journal, _LEFT_OUT_HITS, all_docs=all_docs)


def members_asked(
    order: DefinitionOrder, query_terms: list[str], query: str, candidates: Sequence[Candidate]
) -> list[Member]:
    """The members to look for past the rows read (:func:`members_read`): those the query's words spell
    (:attr:`~.defined.DefinitionOrder.members`) when no row read defines the name they spell whole
    (:func:`~.defined.named_only`) or the query is a question (no name) that writes names as code (``how does
    WaitGroup Wait block ...``); a dotted name's last part as a member of its qualifier when no row read defines it
    so in source code outside tests (``errors.Is``: Go's ``func Is`` in ``errors/wrap.go``, whose chunk does not
    say ``errors``, and not a helper of ``wrap_test.go``, which does)."""
    name = order.name
    if name is None or named_only(order, query_terms, candidates):
        return order.members
    if name.qualifier is None:
        return []
    owned = [Member(name.identifier, (name.qualifier,))]
    found = members_first(candidates, owned, asked_keywords(query))
    return [] if any(not in_tests(candidates[n].source) for n in found) else owned


async def members_read(
    repo: Repository,
    members: list[Member],
    by_journal: Mapping[str, DocEntry],
    ranked: list[Fused],
    *,
    all_docs: bool,
    kinds: frozenset[str] | None = None,
) -> tuple[list[Candidate], list[Ranks]]:
    """The chunks of the rows :func:`_member_hits` finds past ``ranked`` that define one of ``members``, with
    their places in the rankings: when no row holds the name a query spells whole (``json decoder decode``), or
    rows hold it and none defines it (``module graph get module``: ``moduleGraph`` is in every caller of
    webpack's ModuleGraph; ``getModule`` is asked for). Only members some row holds are looked for (``hash map
    compute if absent`` spells ``mapcomputeifabsent`` and ``computeabsent`` too): the lookups go to names there
    are. ``kinds``: as :func:`~.defined.members_first` asks them after, so each chunk's definitions are found
    once."""
    seen = {(one.hit.journal, one.hit.item) for one in ranked}
    held = await repo.store.doc_counts("chunks", [member.identifier for member in members])
    looked = [member for member in members if held.get(member.identifier, 0)]
    found = await _member_hits(repo, looked, by_journal, all_docs=all_docs)
    fresh = [Fused(hit) for hit in found if hit.item.isdigit() and (hit.journal, hit.item) not in seen]
    late, late_ranks = await read_fused(repo, by_journal, fresh)
    return kept_where(partial(member_in, members=members, kinds=kinds), None, late, late_ranks)


async def _member_hits(
    repo: Repository, members: Sequence[Member], by_journal: Mapping[str, DocEntry], *, all_docs: bool
) -> list[Hit]:
    """Rows that may define a member the query's words spell of an owner they name (``members``, as :func:`~ctxtrio.
    text.asked.member_names` gives them), for the first :data:`_MEMBERS_ASKED` members with an owner: the best
    :data:`_DEFINITION_HITS` rows holding the member and its owner's word nearest it (``writestring`` and
    ``builder`` for ``strings builder write string``): the callers that repeat the query's words outrank the
    definition (Go's strings/builder.go's ``WriteString`` past the 20th row; with ``builder`` beside it, the first).
    Where owner words name a source file or its folder (:func:`~.defined.file_names`: ``subprocess.py``, Go's
    package ``strconv/``; :meth:`~.repository.Repository.files_named`), the member alone is looked for in those files, whose definitions seldom repeat the
    module's name. A name asked for whole with its kind (``where is ArrayList defined``) is looked for alone."""
    found: list[Hit] = []
    if members and not members[0].owners:  # the name whole, its kind said (``where is ArrayList defined``)
        found += await hits_within(repo, [members[0].identifier], by_journal, _DEFINITION_HITS, all_docs=all_docs)
    owned = [member for member in members if member.owners][:_MEMBERS_ASKED]
    for member in owned:
        found += await hits_within(
            repo, [member.identifier, member.owners[-1]], by_journal, _DEFINITION_HITS, all_docs=all_docs
        )
    for member in owned:
        names = frozenset(owner_runs(member.owners))  # ``hash map``: HashMap.java too
        files = await repo.files_named(names, by_journal)
        if files:
            found += await hits_within(repo, [member.identifier], files, _LEFT_OUT_HITS, all_docs=False)
    firsts: dict[tuple[str, str], Hit] = {}
    for hit in found:  # a row more than one lookup found is read once, where it was first found
        firsts.setdefault((hit.journal, hit.item), hit)
    return list(firsts.values())


def _left_out(word: str) -> bool:
    return word in STOPWORDS or word in QUESTION_WORDS
