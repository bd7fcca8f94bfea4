"""Tool arguments as clients send them: a boolean written as a string reads the way a setting does."""

from __future__ import annotations

import pytest

from ctxtrio._errors import InputError
from ctxtrio.tools.spec import Param, parse_arguments

PINNED = (Param("pinned", "boolean", default=False),)


def test_boolean_argument_sent_as_text_reads_as_a_switch() -> None:
    """ "Yes " and "off" are True and False (yes_no's spellings); "maybe" is an InputError naming the argument."""
    assert parse_arguments(PINNED, {"pinned": "Yes "}).flag("pinned") is True
    assert parse_arguments(PINNED, {"pinned": "off"}).flag("pinned") is False
    with pytest.raises(InputError, match="pinned must be true or false"):
        parse_arguments(PINNED, {"pinned": "maybe"})


RECALL = (
    Param("session_id", "string", required=True),
    Param("query", "string"),
    Param("budget_tokens", "integer"),
    Param("tags", "array"),
)


@pytest.mark.parametrize(
    ("key", "meant"),
    [("budget", "budget_tokens"), ("max_tokens", "budget_tokens"), ("sessionId", "session_id"), ("tag", "tags")],
)
def test_an_argument_name_close_to_one_not_given_is_refused_naming_it(key: str, meant: str) -> None:
    """A misspelt 'budget' was ignored and the answer took the default 4,000 tokens: it is refused, naming the parameter."""
    given = {"session_id": "s1", key: 200} if key != "sessionId" else {key: "s1"}
    with pytest.raises(InputError, match=f"^unknown argument '{key}': did you mean {meant}\\? Nothing was done.$"):
        parse_arguments(RECALL, given)


SEARCH = (Param("query", "string", required=True), Param("limit", "integer"), Param("doc_id", "string"))


@pytest.mark.parametrize(
    ("key", "meant"), [("top_k", "limit"), ("k", "limit"), ("q", "query"), ("Search", "query"), ("document", "doc_id")]
)
def test_another_tools_name_for_a_parameter_is_refused_naming_it(key: str, meant: str) -> None:
    """top_k and q (other tools' names for limit and query) were ignored: limit's default for top_k=3, or 'query is required'."""
    given: dict[str, object] = {"query": "json decode", key: 3} if meant != "query" else {key: "json decode"}
    with pytest.raises(InputError, match=f"^unknown argument '{key}': did you mean {meant}\\? Nothing was done.$"):
        parse_arguments(SEARCH, given)


def test_other_unknown_names_are_still_ignored() -> None:
    """A name close to none (a host's extra key), or close to one the call gives too, changes nothing."""
    given = {"session_id": "s1", "budget_tokens": 200, "budget": 300, "_meta": {}, "foo": 1}
    assert parse_arguments(RECALL, given).integer("budget_tokens") == 200


@pytest.mark.parametrize("given", [{"top_k": 3}, {"k": 3, "budget_tokens": 500}])
def test_a_count_for_a_tool_without_limit_names_what_bounds_it(given: dict[str, object]) -> None:
    """memory (compact) has no limit: top_k=3 was ignored and the answer took what fit the budget. It is refused
    naming budget_tokens, also when budget_tokens is given (the count asked still could not be kept)."""
    message = "^unknown argument '(top_k|k)': this tool takes no count of results; budget_tokens bounds its answer."
    with pytest.raises(InputError, match=message):
        parse_arguments(RECALL, {"session_id": "s1", **given})
    assert parse_arguments((Param("doc_id", "string"),), {"doc_id": "d", "top_k": 3}).opt_text("doc_id") == "d"


def test_a_count_for_a_tool_with_a_range_end_names_it() -> None:
    """doc_window has no limit but to: n=3 means three chunks, which to says (it was told only that budget_tokens
    bounds the answer, and reading on to the budget is not three chunks)."""
    window = (
        Param("doc_id", "string"),
        Param("from", "integer"),
        Param("to", "integer"),
        Param("budget_tokens", "integer"),
    )
    message = (
        "^unknown argument 'n': this tool takes no count of results; to \\(the last chunk\\) and budget_tokens bound"
    )
    with pytest.raises(InputError, match=message):
        parse_arguments(window, {"doc_id": "d", "n": 3})


def test_one_string_for_a_list_of_tags_is_one_tag() -> None:
    """tags="auth" is ["auth"] (it was refused: "tags must be a list of strings, got 'auth'"); a JSON-encoded
    list is still a list, and a string that starts one but is not JSON is still refused."""
    assert parse_arguments(RECALL, {"session_id": "s1", "tags": "auth"}).strings("tags") == ["auth"]
    assert parse_arguments(RECALL, {"session_id": "s1", "tags": '["a", "b"]'}).strings("tags") == ["a", "b"]
    with pytest.raises(InputError, match=r"tags must be a list of strings, got '\[a'"):
        parse_arguments(RECALL, {"session_id": "s1", "tags": "[a"})
    with pytest.raises(InputError, match="tags must be a list of strings, got 3"):
        parse_arguments(RECALL, {"session_id": "s1", "tags": 3})


def test_a_blank_optional_number_flag_list_id_or_defaulted_string_is_not_given() -> None:
    """A small model fills every field of the schema: '' for limit, pinned, tags, doc_id, session_id or role was
    refused ('limit must be an integer, got '''); it is the default. Required ones and other text stay given."""
    params = (
        Param("session_id", "string", required=True),
        Param("query", "string"),
        Param("doc_id", "string"),
        Param("limit", "integer", default=10),
        Param("pinned", "boolean", default=False),
        Param("tags", "array"),
        Param("role", "string", default="note"),
    )
    blank = {"query": "", "doc_id": " ", "limit": "", "pinned": "", "tags": "", "role": ""}
    args = parse_arguments(params, {"session_id": "s1", **blank})
    assert (args.opt_text("doc_id"), args.integer("limit"), args.flag("pinned")) == (None, 10, False)
    assert (args.strings("tags"), args.text("role"), args.opt_text("query")) == (None, "note", "")
    assert parse_arguments(params, {"session_id": ""}).text("session_id") == ""  # the service refuses it by name


@pytest.mark.parametrize(
    ("params", "key", "meant"),
    [
        ((Param("from", "integer"),), "offset", "from"),  # doc_list
        ((Param("from", "integer"),), "start", "from"),
        ((Param("offset", "integer"),), "from", "offset"),  # context_list_sessions
        ((Param("offset", "integer"),), "start", "offset"),
    ],
)
def test_the_other_list_tools_paging_name_is_refused_naming_this_ones(
    params: tuple[Param, ...], key: str, meant: str
) -> None:
    """doc_list pages by from=, context_list_sessions by offset=: either name sent to the other was ignored and
    answered the first page again (a model paging on looped over it); it is refused, naming the tool's own."""
    with pytest.raises(InputError, match=f"^unknown argument '{key}': did you mean {meant}\\? Nothing was done.$"):
        parse_arguments(params, {key: 5})


COMPACT = (Param("session_id", "string", required=True), Param("keep_recent", "integer"), Param("dry_run", "boolean"))


def test_undo_asked_of_the_compaction_that_only_folds_names_the_undo() -> None:
    """The full profile's context_compact ignored undo= (and restore=) and folded; it names context_update's
    restore. The compact profile's, which takes undo, names it for restore=."""
    for key in ("undo", "restore"):
        with pytest.raises(InputError, match=f"^unknown argument '{key}': this tool only folds; context_update "):
            parse_arguments(COMPACT, {"session_id": "s", key: "e5"})
    with pytest.raises(InputError, match="^unknown argument 'restore': did you mean undo\\? Nothing was done.$"):
        parse_arguments((*COMPACT, Param("undo", "string")), {"session_id": "s", "restore": True})
    assert (
        parse_arguments((Param("session_id", "string"),), {"session_id": "s", "undo": "e5"}).text("session_id") == "s"
    )
