"""llm/_json.status_message: what an HTTP error answer says, built once for every error that quotes it."""

from __future__ import annotations

import httpx
import pytest

from ctxtrio._errors import LLMResponseError
from ctxtrio.llm._json import json_object, status_message
from ctxtrio.llm._wire import InputRefusedError, parse_embeddings
from testkit.fake_embeddings import TOO_LARGE

#: llama-server's answer to an input longer than its physical batch (testkit/fake_embeddings.TOO_LARGE cites
#: server-context.cpp and server-common.cpp's format_error_response for the body's shape).
LLAMA_500 = {"error": {"code": 500, "message": TOO_LARGE.format(tokens=522, ubatch=512), "type": "server_error"}}


def test_the_message_quotes_the_status_and_the_server_s_words() -> None:
    """The status and the body's error message, or the body itself (on one line) when it is not JSON."""
    assert status_message(httpx.Response(500, json=LLAMA_500), "embeddings") == (
        "embeddings: HTTP 500: input (522 tokens) is too large to process. increase the physical batch size "
        "(current batch size: 512)"
    )
    assert status_message(httpx.Response(502, text="Bad\n  Gateway"), "chat completion") == (
        "chat completion: HTTP 502: Bad Gateway"
    )


def test_the_errors_of_an_error_status_say_the_message_and_nothing_else() -> None:
    """A refused input (400) and an unusable answer (500) are raised with status_message's words as they are
    (the refusal was built as an LLMResponseError first, only to read its message: rvB25 finding 5)."""
    refused = httpx.Response(400, json={"error": {"message": "too long", "type": "invalid_request_error"}})
    with pytest.raises(InputRefusedError) as caught:
        parse_embeddings(refused, 1)
    assert str(caught.value) == status_message(refused, "embeddings") == "embeddings: HTTP 400: too long"
    failed = httpx.Response(500, json=LLAMA_500)
    with pytest.raises(LLMResponseError) as unusable:
        json_object(failed, "embeddings")
    assert str(unusable.value) == status_message(failed, "embeddings")
