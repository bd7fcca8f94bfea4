"""What the FTS5 tokenizer is given: its tokens cover every search term of the text."""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from ctxtrio.store.index_tables import TOKENIZER
from ctxtrio.text.terms import index_text, terms

FIXTURES = Path(__file__).resolve().parents[1] / "text" / "fixtures"


def fts_tokens(text: str) -> Counter[str]:
    """The tokens SQLite's own tokenizer (as the index configures it) makes of ``text``."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f'CREATE VIRTUAL TABLE t USING fts5(body, tokenize="{TOKENIZER}")')
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
    conn.execute("INSERT INTO t(body) VALUES(?)", (text,))
    return Counter({str(term): int(count) for term, count in conn.execute("SELECT term, cnt FROM v")})


def covers(text: str) -> bool:
    """Every term of ``text`` is a token of its index text, at least as often."""
    wanted = Counter(terms(text))
    have = fts_tokens(index_text(text))
    return all(have[term] >= count for term, count in wanted.items())


@pytest.mark.parametrize(
    "text",
    [
        "def getUserName(retry_policy): return HTTPServer(load-balancer)",
        "is_valid __init__ foo--bar x_1 ABCdef IOError XMLHttpRequest2 a-b-c",
        "The quick brown fox. Don't stop; 3.14 v2_beta _private trailing_",
        "회의에서 결정했다. API를 사용 数据库连接失败 Café Straße ΣΟΦΙΑ getÜberName",
        "",
    ],
)
def test_index_text_covers_terms(text: str) -> None:
    """Identifiers, connectors, case splits and other scripts: no term is missing from the index."""
    assert covers(text)


def test_index_text_covers_fixtures() -> None:
    """The test corpora (logs, code, markdown, Chinese, Korean) lose no term."""
    for path in sorted(FIXTURES.iterdir()):
        assert covers(path.read_text(encoding="utf-8")), path.name


def test_index_text_covers_random_identifiers() -> None:
    """Random mixes of camelCase, snake_case, kebab-case and punctuation lose no term."""
    rng = random.Random(3)
    alphabet = "abcXYZ019_-. ()"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
        assert covers(text), text


def test_ascii_index_text_is_the_text_plus_only_what_rules_add() -> None:
    """ASCII text is handed over as is; only identifier terms are appended."""
    assert index_text("plain words only.") == "plain words only."
    assert index_text("call getUserName now") == "call getUserName now\nget user name"
    assert index_text("retry_policy") == "retry_policy\nretrypolicy"
