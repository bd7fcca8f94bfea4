"""Query terms: question words do not dilute a query; flags, dotted and snake_case names stay searchable;
a long question leaves out the prefix of a hyphenated word; a contraction is its first word."""

from __future__ import annotations

from ctxtrio.docs.search import search_words
from ctxtrio.text.query import compounds, query_terms, uncontracted, without_prefixes


def test_question_words_are_left_out() -> None:
    """'What does ... do?' keeps only what the question is about."""
    assert query_terms("What does the -X importtime option do?") == ["x", "importtime", "option"]
    assert query_terms("How can I see why my query is slow?") == ["see", "query", "slow"]


def test_flags_dotted_names_and_identifiers_stay_searchable() -> None:
    """--flag, a.b and snake_case give the same terms the index holds for them."""
    assert query_terms("pg_dump --if-exists") == ["pgdump", "pg", "dump", "ifexists", "exists"]
    assert query_terms("os.path.join") == ["os", "path", "join"]
    assert query_terms("return_exceptions") == ["returnexceptions", "return", "exceptions"]


def test_a_query_of_only_question_words_still_searches_them() -> None:
    """Nothing else left: the words are kept rather than searching for nothing."""
    assert query_terms("what does it do") == ["what", "does", "do"]


def test_keywords_that_are_also_question_shaped_are_kept() -> None:
    """not, all, before and only are SQL and shell words: they stay."""
    assert query_terms("Can SET NOT NULL run before all rows?") == [
        "set",
        "not",
        "null",
        "run",
        "before",
        "all",
        "rows",
    ]


def test_words_of_quantity_and_manner_are_left_out() -> None:
    """'How many ... instead ... still' name no topic; each, like and out (SQL words) stay."""
    assert query_terms("How many listeners can an event have before a warning is printed?") == [
        "listeners",
        "event",
        "before",
        "warning",
        "printed",
    ]
    assert query_terms("let the program exit even though a timer is still pending") == [
        "program",
        "exit",
        "though",
        "timer",
        "pending",
    ]
    assert query_terms("FOR EACH ROW triggers like the other ones") == ["each", "row", "triggers", "like", "ones"]
    assert query_terms("run some cleanup code when my program ends") == ["run", "cleanup", "code", "program", "ends"]
    assert query_terms("= ANY or SOME (subquery)") == ["any", "some", "subquery"]  # SQL's SOME, in capitals
    assert query_terms("make the program sleep for a few seconds") == ["make", "program", "sleep", "seconds"]


def test_a_question_word_written_in_capitals_names_something() -> None:
    """EXPLAIN (SQL), GET (HTTP), DO (PL/pgSQL) as written in capitals stay; 'explain' and 'do' as
    words of the question, and a one-letter capital (I), are left out as before."""
    assert query_terms("Does EXPLAIN ANALYZE actually execute the statement?") == [
        "explain",
        "analyze",
        "execute",
        "statement",
    ]
    assert query_terms("Does explain analyze actually execute the statement?") == ["analyze", "execute", "statement"]
    assert query_terms("What does GET return when I DO nothing?") == ["get", "return", "do", "nothing"]
    assert query_terms("How do I explain a plan?") == ["plan"]


def test_a_long_question_leaves_out_a_prefix_only_a_hyphenated_word_gives() -> None:
    """'re-raising' gives reraising, re and raising; 're' (the regex module's name) is left out of a
    question of more terms than the search asks level by level, kept in a short query, kept when the
    query says it alone too; options (--no-owner) and other hyphenated words (f-string) are no prefixes."""
    question = "How do I add a note to an exception before re-raising it?"
    assert query_terms(question) == ["add", "note", "exception", "before", "reraising", "re", "raising"]
    assert search_words(question) == (["add", "note", "exception", "before", "reraising", "raising"], False)
    assert search_words("make a socket non-blocking") == (["make", "socket", "nonblocking", "non", "blocking"], False)
    assert compounds(question) == {"reraising": "raising"}
    assert compounds("pg_dump --no-owner, an f-string, a.re-b and re-raise-x") == {}
    assert compounds("Multi-line or non-blocking") == {"multiline": "line", "nonblocking": "blocking"}
    assert without_prefixes("re-raising with re", ["reraising", "re", "raising"]) == ["reraising", "re", "raising"]
    assert without_prefixes(
        "use re-raising or a non-blocking call", query_terms("use re-raising or a non-blocking call")
    ) == [
        "use",
        "reraising",
        "raising",
        "nonblocking",
        "blocking",
        "call",
    ]
    assert without_prefixes("re-run", ["rerun", "re", "run"]) == ["rerun", "run"]
    assert without_prefixes("re-do", ["redo", "re", "do"]) == [
        "redo",
        "re",
        "do",
    ]  # a word after it of 3 letters or more
    assert without_prefixes("re-", ["re"]) == ["re"]  # nothing else left


def test_a_contraction_is_its_first_word() -> None:
    """doesn't, can't, won't, I'm and you're give no 'doesn', 'ca', 'wo' or 'm' term (the
    question words they are left out), straight or curly apostrophe; python -m keeps its 'm'."""
    assert query_terms("Why doesn't Python have a switch statement?") == ["python", "switch", "statement"]
    assert query_terms("Why can't I'm, you're, won't and isn\u2019t match?") == ["match"]
    assert uncontracted("I can't, it won't, we shan't, they'd") == "I can, it will, we shall, they"
    assert query_terms("What does python -m do?") == ["python", "m"]
    assert query_terms("Python's XML parsers") == ["python", "xml", "parsers"]


def test_a_contraction_in_capitals_names_nothing() -> None:
    """DON'T is no PL/pgSQL DO: the capitals rule reads the query as written, where DON is no question word."""
    assert query_terms("DON'T VACUUM FULL") == ["vacuum", "full"]
