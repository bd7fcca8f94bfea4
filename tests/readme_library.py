"""The README's "As a library" example, verbatim: tests/test_public_api.py checks both match."""

import trio

import ctxtrio

LOG = "\n".join(f"step {n}: ok" for n in range(2000)) + "\nERROR java.lang.OutOfMemoryError: Java heap space\n"


async def main() -> None:
    config = ctxtrio.Config(data_dir="ctxtrio-state", llm_enabled=False)  # any str or Path
    async with ctxtrio.open_context(config) as ctx:
        await ctx.sessions.append("refactor-auth", "Decision: keep cookies", role="decision", pinned=True)
        recalled = await ctx.sessions.recall("refactor-auth", "cookie decision", budget_tokens=800)
        print(recalled.text)
        ingested = await ctx.documents.ingest(text=LOG, title="build log")
        found = await ctx.documents.search("OutOfMemoryError", doc_id=ingested.doc.doc_id)
        for hit in found.hits:
            print(f"{hit.title} #{hit.index}, score {hit.score:.1f}, {hit.tokens} tokens")


if __name__ == "__main__":
    trio.run(main)
