"""Semantic recall of session entries: background embedding, fusion in context_recall, and how long a vector lives."""

from __future__ import annotations

import sqlite3
from contextlib import asynccontextmanager, closing
from typing import TYPE_CHECKING

import pytest
import trio

from ctxtrio._app import open_context
from ctxtrio._config import Config
from ctxtrio.llm.client import open_llm_client
from ctxtrio.llm.embeddings import Embedder
from ctxtrio.llm.messages import LLMSettings
from ctxtrio.memory.admin.prune import replay_records
from ctxtrio.memory.ranking import fuse_meaning
from ctxtrio.memory.semantic import EntryVectors, embeddable
from ctxtrio.memory.service import held_sessions
from ctxtrio.memory.state.base import entry_key
from ctxtrio.store import vector_task
from ctxtrio.store.vectors import VectorStore
from testkit.fake_embeddings import (
    FakeEmbeddings,
    quick_embedders,
    serve_fake_embeddings,
    served_config,
    whole_batches,
)
from tests.docs.test_embedding_reuse import as_schema_3

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence
    from pathlib import Path

    from ctxtrio._context import Context
    from ctxtrio._wiring import Wiring

BASE = "http://embed.test/v1"
SYNONYMS = [{"login", "signin"}, {"tokens", "credentials"}, {"expire", "lapse"}]
TOKENS = "Signin credentials lapse after one hour; refresh them before calling the API."
DEPLOY = "We deploy with docker compose on the staging box."
DATABASE = "The database is postgres 15, backed up nightly."
QUERY = "when do login tokens expire"


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Real time here (the store's worker threads), so the embedder retries and polls quickly."""
    quick_embedders(monkeypatch, poll_s=0.2, retry_max_s=0.2)


@asynccontextmanager
async def opened(tmp_path: Path) -> AsyncIterator[Context]:
    # Meaning alone, not query expansion (memory/expansion.py: the thesaurus gives "login" "credentials").
    config = Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False, query_expansion=False)
    async with open_context(config) as ctx:
        yield ctx


@asynccontextmanager
async def entry_vectors(ctx: Context | Wiring, fake: FakeEmbeddings) -> AsyncIterator[EntryVectors]:
    """``ctx``'s sessions (a library context, or the wiring beneath one) with semantic recall on ``fake``, wired
    as ``_wiring.py`` does."""
    settings = LLMSettings(BASE, model=fake.model, concurrency=2)
    async with open_llm_client(settings, transport=fake.transport()) as client, trio.open_nursery() as nursery:
        vectors = VectorStore(ctx.data.session_vectors_path)
        index = EntryVectors(held_sessions(ctx.sessions), Embedder(client, fake.model), vectors)
        await nursery.start(index.run)
        ctx.sessions.semantic = index
        try:
            yield index
        finally:
            ctx.sessions.semantic = None
            nursery.cancel_scope.cancel()


async def settled(index: EntryVectors) -> None:
    """Wait until a whole look at the journals began after this call and found nothing to do (30 s at most)."""
    with trio.fail_after(30):
        start = index.passes
        while index.passes < start + 2 or index.state != "caught up":
            index.wake()
            await trio.sleep(0.05)


def stored(ctx: Context, model: str, dim: int) -> dict[str, set[str]]:
    """Session id -> entry keys with a vector (or refused), read from the file."""
    store = VectorStore(ctx.data.session_vectors_path)
    store.open()
    try:
        return store.done(model, dim)
    finally:
        store.close()


async def test_an_entry_in_other_words_is_recalled_by_meaning_and_named(tmp_path: Path) -> None:
    """A query sharing no word with an entry recalls it only with embeddings, named as found by meaning."""
    fake = FakeEmbeddings(synonyms=SYNONYMS)
    async with opened(tmp_path) as ctx:
        for text in (DEPLOY, TOKENS, DATABASE):
            await ctx.sessions.append("s1", text)
        before = await ctx.sessions.recall("s1", QUERY)
        async with entry_vectors(ctx, fake) as index:
            await settled(index)
            found = await ctx.sessions.recall("s1", QUERY, limit=1)
            said = index.describe()
    assert said == "session entries by meaning: 3 embedded (3 vectors); caught up"
    assert before.entries == () and "no unpinned entry matches" in before.text
    assert [entry.text for entry in found.entries] == [TOKENS]
    assert found.by_meaning == (found.entries[0].id,) and found.semantic_skipped is None
    assert f"found by meaning, not by their words: {found.entries[0].id}" in found.text


async def test_a_keyword_match_comes_first_and_is_not_named(tmp_path: Path) -> None:
    """A query whose words an entry holds recalls that entry first, not named as found by meaning."""
    async with opened(tmp_path) as ctx:
        for text in (DEPLOY, TOKENS, DATABASE):
            await ctx.sessions.append("s1", text)
        async with entry_vectors(ctx, FakeEmbeddings(synonyms=SYNONYMS)) as index:
            await settled(index)
            found = await ctx.sessions.recall("s1", "docker compose staging", limit=1)
    assert [entry.text for entry in found.entries] == [DEPLOY] and found.by_meaning == ()
    assert "found by meaning" not in found.text


async def test_append_never_waits_and_recall_falls_back(tmp_path: Path) -> None:
    """With a hung endpoint an append is acknowledged at once, and recall answers from BM25, saying so."""
    fake = FakeEmbeddings(synonyms=SYNONYMS)
    async with opened(tmp_path) as ctx:
        await ctx.sessions.append("s1", DEPLOY)
        async with entry_vectors(ctx, fake) as index:
            await settled(index)
            fake.delay_s = 10_000  # hung from now on
            with trio.fail_after(5):
                await ctx.sessions.append("s1", DATABASE)
                await trio.sleep(0.5)  # the embedder is now waiting on the endpoint
                found = await ctx.sessions.recall("s1", "postgres backups")
    assert len(fake.requests) == 1  # the second entry was never answered
    assert [entry.text for entry in found.entries] == [DATABASE]
    assert found.semantic_skipped is not None and "did not answer within 0.5 s" in found.semantic_skipped
    assert "keyword recall only: semantic recall skipped" in found.text


async def test_endpoint_killed_mid_backfill_resumes_without_repeats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after 2 batches: recall answers from BM25 meanwhile; back: every entry embedded, none twice."""
    whole_batches(monkeypatch)  # (2 requests are 2 batches, not as many as the machine's pace cut them into)
    fake = FakeEmbeddings(down_after=2)
    texts = [f"Entry {i} is about topic{i} and detail{i}." for i in range(50)]
    async with opened(tmp_path) as ctx:
        for text in texts:
            await ctx.sessions.append("s1", text)
        async with entry_vectors(ctx, fake) as index:
            with trio.fail_after(30):
                while index.state != "endpoint unreachable":
                    await trio.sleep(0.05)
            assert 0 < index.embedded[0] < len(texts)
            found = await ctx.sessions.recall("s1", "topic37 detail37", limit=1)
            assert [entry.text for entry in found.entries] == [texts[37]] and found.semantic_skipped is not None
            fake.down = False
            await settled(index)
    assert sorted(fake.embedded) == sorted(texts)


async def test_restart_resumes_from_the_vectors_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stopped mid-backfill and started again, the embedder asks only for the entries not stored yet."""
    # Down after the first batch, one request (in requests of the machine's pace, with the fake answering in 0.06 s,
    # the first two held 4 and 9 texts: answered, not stored, and asked again after the restart).
    whole_batches(monkeypatch)
    first = FakeEmbeddings(down_after=1)
    texts = [f"Entry {i} is about topic{i}." for i in range(40)]
    async with opened(tmp_path) as ctx:
        for text in texts:
            await ctx.sessions.append("s1", text)
        async with entry_vectors(ctx, first):
            with trio.fail_after(30):
                while not first.down:
                    await trio.sleep(0.05)
    second = FakeEmbeddings()
    async with opened(tmp_path) as ctx, entry_vectors(ctx, second) as index:
        await settled(index)
    assert first.embedded and not set(first.embedded) & set(second.embedded)
    assert sorted(first.embedded + second.embedded) == sorted(texts)


async def test_a_vector_lives_as_long_as_the_journal_holds_its_text(tmp_path: Path) -> None:
    """Deleted and compacted entries keep their vectors (undoable) but are never recalled; prune drops them, and a
    session pruned whole loses all of its; the summary is embedded like any entry."""
    fake = FakeEmbeddings(synonyms=SYNONYMS)
    async with opened(tmp_path) as ctx:
        ids = [(await ctx.sessions.append("s1", text)).entry.id for text in (TOKENS, DEPLOY, DATABASE)]
        await ctx.sessions.append("s2", DEPLOY)
        async with entry_vectors(ctx, fake) as index:
            await settled(index)
            await ctx.sessions.update("s1", ids[0], delete=True)
            await settled(index)
            dim = fake.dimension
            assert len(stored(ctx, fake.model, dim)["s1"]) == 3  # the deleted entry's vector stays
            recalled = await ctx.sessions.recall("s1", QUERY)
            assert ids[0] not in [entry.id for entry in recalled.entries]  # never recalled while deleted
            compacted = await ctx.sessions.compact("s1", keep_recent=0)
            assert compacted.summary is not None
            await settled(index)
            keys = stored(ctx, fake.model, dim)["s1"]
            assert entry_key(compacted.summary.id, compacted.summary.text) in keys and len(keys) == 4
            await ctx.sessions.prune(0)
            await ctx.sessions.delete_session("s2")
            await trio.sleep(0.01)  # records keep ms: a deletion stamped this very ms may round past prune's cutoff
            await ctx.sessions.prune(0)
            await settled(index)
            after = stored(ctx, fake.model, dim)
    assert after == {"s1": {entry_key(compacted.summary.id, compacted.summary.text)}}


async def test_an_imported_session_is_embedded_like_a_new_one(tmp_path: Path) -> None:
    """An export carries no vectors; the imported session's live entries get rows under its own id, and
    their texts, already embedded for the session exported, are not sent again."""
    fake = FakeEmbeddings()
    async with opened(tmp_path) as ctx:
        await ctx.sessions.append("s1", DEPLOY)
        await ctx.sessions.append("s1", DATABASE)
        records = await ctx.sessions.records("s1")
        async with entry_vectors(ctx, fake) as index:
            await settled(index)
            imported = await ctx.sessions.import_session("s9", records)
            await settled(index)
            keys = stored(ctx, fake.model, fake.dimension)
    assert imported.session_id == "s9" and len(keys["s9"]) == 2 and keys["s9"] == keys["s1"]
    assert sorted(fake.embedded) == sorted([DEPLOY, DATABASE])


async def test_an_entry_whose_texts_vanish_before_its_rows_are_stored_is_embedded_at_the_next_pass(
    tmp_path: Path,
) -> None:
    """Another server on the data dir may evict a text between ``known`` (held) and ``add``: the
    entry is then not stored (its rows would name a text gone), and the session must be looked at
    again, though its journal did not change since: the entry is embedded at the next pass."""
    fake = FakeEmbeddings()
    async with opened(tmp_path) as ctx:
        await ctx.sessions.append("s1", DEPLOY)
        records = await ctx.sessions.records("s1")
        async with entry_vectors(ctx, fake) as index:
            await settled(index)
            vectors = index._vectors  # (the file this task writes)
            known = vectors.known
            evicted: list[bytes] = []

            def known_then_evicted(
                model: str, dim: int, journal: str, parts: Sequence[tuple[str, int, tuple[int, int], bytes]]
            ) -> set[bytes]:
                held = known(model, dim, journal, parts)
                if not evicted:  # once: what another process's collect would do meanwhile
                    evicted.extend(held)
                    with closing(sqlite3.connect(vectors.path)) as other, other:
                        other.executemany("DELETE FROM texts WHERE digest = ?", [(d,) for d in held])
                return held

            vectors.known = known_then_evicted  # type: ignore[method-assign]
            await ctx.sessions.import_session("s9", records)
            await settled(index)
            keys = stored(ctx, fake.model, fake.dimension)
    assert evicted, "the import's text was held"
    assert len(keys.get("s9", set())) == 1 and fake.embedded == [DEPLOY, DEPLOY]


async def test_fusion_skips_a_vector_of_another_text(tmp_path: Path) -> None:
    """A key whose text hash is not the entry's (an old session under the same id) is not taken as near."""
    async with opened(tmp_path) as ctx:
        entry = (await ctx.sessions.append("s1", TOKENS)).entry
        await ctx.sessions.append("s1", DEPLOY)
        held = await embeddable(held_sessions(ctx.sessions), "s1")
        state = replay_records("s1", await ctx.sessions.records("s1"))
    assert held is not None and entry_key(entry.id, TOKENS) in held.held
    _, matched, meaning = fuse_meaning(state, ["docker"], frozenset(), [entry_key(entry.id, "other text")])
    assert meaning == frozenset() and matched == 1
    _, matched, meaning = fuse_meaning(state, ["docker"], frozenset(), [entry_key(entry.id, TOKENS)])
    assert meaning == {entry.id} and matched == 2


async def test_the_best_keyword_match_stays_first_beside_entries_near_in_meaning(tmp_path: Path) -> None:
    """A query whose words its note holds a third of weighs the vector ranking high: the entries nearest in
    meaning were fused above the one match BM25 found, which a small budget then left out."""
    async with opened(tmp_path) as ctx:
        deploy = (await ctx.sessions.append("s1", DEPLOY)).entry
        tokens = (await ctx.sessions.append("s1", TOKENS)).entry
        database = (await ctx.sessions.append("s1", DATABASE)).entry
        state = replay_records("s1", await ctx.sessions.records("s1"))
    near = [entry_key(tokens.id, TOKENS), entry_key(database.id, DATABASE)]
    ranked, matched, meaning = fuse_meaning(state, ["docker", "rollout", "window"], frozenset(), near)
    assert [item.id for item in ranked] == [deploy.id, tokens.id, database.id]
    assert matched == 3 and meaning == {tokens.id, database.id}


async def test_wired_by_embed_model_through_loopback_http(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--embed-model and --embed-base-url start the entry embedder too: a served fake embeds, a paraphrase is recalled."""
    monkeypatch.setattr(vector_task, "QUERY_S", 10.0)  # wiring, not latency: loopback HTTP on a loaded machine
    fake = FakeEmbeddings(synonyms=SYNONYMS)
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fake)
        config = served_config(tmp_path / "data", fake, url)
        async with open_context(config) as ctx:
            await ctx.sessions.append("s1", DEPLOY)
            await ctx.sessions.append("s1", TOKENS)
            index = ctx.sessions.semantic
            assert index is not None
            await settled(index)
            found = await ctx.sessions.recall("s1", QUERY, limit=1)
        nursery.cancel_scope.cancel()
    assert [entry.text for entry in found.entries] == [TOKENS] and found.by_meaning


async def test_a_schema_3_session_vectors_file_is_migrated_without_requests(tmp_path: Path) -> None:
    """session-vectors.sqlite3 of the layout before texts were kept apart: every live entry takes its
    old vector (same session, key and characters) and nothing is sent again."""
    first = FakeEmbeddings()
    async with opened(tmp_path) as ctx:
        await ctx.sessions.append("s1", DEPLOY)
        await ctx.sessions.append("s1", TOKENS)
        await ctx.sessions.append("s2", DATABASE)
        async with entry_vectors(ctx, first) as index:
            await settled(index)
        before = stored(ctx, first.model, first.dimension)
        as_schema_3(ctx.data.session_vectors_path)
        second = FakeEmbeddings()
        async with entry_vectors(ctx, second) as index:
            await settled(index)
        after = stored(ctx, first.model, first.dimension)
    assert sorted(first.embedded) == sorted([DEPLOY, TOKENS, DATABASE])
    assert second.embedded == [] and after == before and len(after["s1"]) == 2


async def test_after_a_dimension_change_every_session_is_embedded_again(tmp_path: Path) -> None:
    """The endpoint answers another dimension (another model loaded under the same name), noticed while
    embedding an entry appended to one session: the rows of the old dimension are dropped, and every
    live entry of every session, those of sessions whose journals did not change since too, gets a
    vector of the new one at the next passes (not when their journals next change)."""
    fake = FakeEmbeddings(dimension=24)
    async with opened(tmp_path) as ctx:
        await ctx.sessions.append("s1", DEPLOY)
        await ctx.sessions.append("s2", DATABASE)
        async with entry_vectors(ctx, fake) as index:
            await settled(index)
            fake.dimension = 32
            await ctx.sessions.append("s1", TOKENS)
            await settled(index)
            keys = stored(ctx, fake.model, 32)
            old = stored(ctx, fake.model, 24)
    assert {session: len(held) for session, held in keys.items()} == {"s1": 2, "s2": 1}
    assert old == {}
