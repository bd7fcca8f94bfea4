"""``context_guide``: the intended workflow, and this instance's settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..docs.embedding import describe_semantic
from .output import Output
from .results import ToolResult, text_result
from .spec import Args, Call, Hints, Tool

if TYPE_CHECKING:
    from .._wiring import Wiring

__all__ = ["GUIDE", "guide_text"]

#: What turns the LLM off, both spellings: Config keeps no record of which one gave a value,
#: and naming only the flag sent a user whose host config set the variable looking for a flag
#: (the budget line says "--budget / CTX_BUDGET" for the same reason).
_LLM_OFF = "--no-llm / CTX_LLM_ENABLED=false"

_WORKFLOW = """\
ctxtrio keeps what does not fit in your context window. Nothing is automatic: call it.
Sessions (working memory):
1. context_open at the start of a task; reuse the same session_id later.
2. context_append each fact, decision or dead end as you go. Pin constraints, goals and user preferences (pinned=true); keep pins few.
3. context_recall with a short query before you act on earlier work; pins come first.
4. context_status now and then; context_compact when it recommends (from 80% of the budget).
Documents (too large to read at once):
1. doc_ingest text or a file once; you get a doc_id and a chunk count, not the text.
2. doc_outline to see the structure, doc_search for keywords, doc_window to read chunks in order, doc_summarize for an overview.
Never paste a whole document or log into a session entry: ingest it."""


def guide_text(ctx: Wiring) -> str:
    """The workflow plus the settings of this instance."""
    config, live = ctx.config, ctx.live
    if config.llm_enabled:
        model = config.llm_model or "whatever model is loaded"
        summarizer = f"LLM at {config.llm_base_url} ({model}), extractive when it is down or too slow"
    else:
        summarizer = f"extractive only (LLM off: {_LLM_OFF})"
    roots = ", ".join(str(root) for root in config.ingest_roots) or "none: inline text only"
    settings = [
        f"data dir: {ctx.data.root}",
        f"default budget: {live.budget_tokens} tokens ({live.budget_source})",
        f"chunks: {config.chunk_tokens} tokens, {config.chunk_overlap_tokens} overlap",
        f"summaries: {summarizer}",
        f"file ingest roots: {roots}",
        f"token counts: {live.counter.describe()}",
        describe_semantic(ctx.documents.semantic.status() if ctx.documents.semantic is not None else None),
        *([ctx.sessions.semantic.describe()] if ctx.sessions.semantic is not None else []),
        f"context window: {_window(ctx)}",
        "tools: "
        + (
            "compact profile (--tools compact): memory, context_compact, doc_ingest, doc_read"
            if config.tools == "compact"
            else "full profile; --tools compact offers five combined tools for 4k-8k windows"
        ),
    ]
    return _WORKFLOW + "\nSettings:\n" + "\n".join(f"- {line}" for line in settings)


@dataclass(frozen=True, slots=True)
class GuideFacts:
    """The settings context_guide reports as structured content."""

    data_dir: str
    budget_tokens: int


_FACTS = Output(GuideFacts, ("data_dir", "budget_tokens"))


def _window(ctx: Wiring) -> str:
    """The detected window, or why there is none and what to do."""
    if ctx.live.context_length is not None:
        return f"{ctx.live.context_length} tokens (detected from the server)"
    if not ctx.config.llm_enabled:
        return f"unknown (LLM off: {_LLM_OFF}); set --budget to fit your model's window"
    return (
        "not detected (yet): this server reports no context length (llama-cpp-python tells it only "
        "when a request overflows; LM Studio, llama.cpp, Ollama and vLLM report it); set --budget to be sure"
    )


async def context_guide(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    facts = GuideFacts(str(ctx.data.root), ctx.live.budget_tokens)
    return text_result(guide_text(ctx), _FACTS.dump(facts))


GUIDE = Tool(
    name="context_guide",
    title="How to use ctxtrio",
    description="Read first: the workflow for sessions and documents, and this server's settings.",
    params=(),
    handler=context_guide,
    output=_FACTS,
    hints=Hints(read_only=True, idempotent=True),
)
