"""Tests for ctxtrio.text.terms: one tokenizer for indexed text and queries."""

from __future__ import annotations

import random
import unicodedata

from ctxtrio.text.terms import STOPWORDS, terms, unique_terms


def found_by(query: str, text: str) -> bool:
    """True when every query term is among the text's terms (how the index matches)."""
    return set(unique_terms(query)) <= set(terms(text))


def test_korean_stem_finds_inflected_word() -> None:
    """A Korean stem finds the space-separated inflected word it starts."""
    assert found_by("결정", "회의에서 결정했다")
    assert terms("회의에서 결정했다") == [
        "회의에서",
        "회의",
        "의에",
        "에서",
        "결정했다",
        "결정",
        "정했",
        "했다",
    ]


def test_hangul_words_indexed_whole_and_as_bigrams() -> None:
    """A Hangul word is whole plus bigrams; two syllables once; one syllable as itself."""
    assert terms("결정") == ["결정"]
    assert terms("를") == ["를"]
    assert terms("결정했다") == ["결정했다", "결정", "정했", "했다"]
    assert found_by("결정했다", "우리는 결정했다")


def test_chinese_run_indexed_as_bigrams() -> None:
    """A Chinese run without spaces is indexed as overlapping bigrams."""
    assert terms("数据库连接失败") == ["数据", "据库", "库连", "连接", "接失", "失败"]
    assert found_by("连接", "数据库连接失败，请重试。")
    assert not found_by("连败", "数据库连接失败")


def test_japanese_kana_and_kanji_share_runs() -> None:
    """Kanji and kana runs are bigrammed together, so a word spanning both is found."""
    text = "東京の天気はカタカナです"
    assert found_by("天気", text)
    assert found_by("カタカナ", text)
    assert "京の" in terms(text)


def test_bigram_edge_cases() -> None:
    """One-character runs stay whole; punctuation ends runs; digits and Latin split off."""
    assert terms("中") == ["中"]
    assert terms("中。国") == ["中", "国"]
    assert terms("2024年3月") == ["2024", "年", "3", "月"]
    assert terms("用Python写") == ["用", "python", "写"]
    assert terms("API를 사용") == ["api", "를", "사용"]
    assert terms("\U00020000\U00020001") == ["\U00020000\U00020001"]  # astral ideographs


def test_halfwidth_kana_normalized() -> None:
    """Halfwidth Katakana is NFKC-normalized before bigramming."""
    assert terms("ｶﾀｶﾅ") == terms("カタカナ") == ["カタ", "タカ", "カナ"]


def test_accented_words_kept_whole() -> None:
    """Accented Latin words are one term each, casefolded, marks kept."""
    assert terms("Café Müller") == ["café", "müller"]
    assert found_by("MÜLLER", "Herr Müller kommt")
    assert terms("Straße") == ["strasse"]


def test_decomposed_accents_compose() -> None:
    """A decomposed accent (e + combining acute) gives the same term as the composed one."""
    assert terms("cafe\u0301") == terms("café") == ["café"]


def test_cyrillic_and_greek_words() -> None:
    """Cyrillic and Greek words are terms, casefolded."""
    assert terms("Привет мир") == ["привет", "мир"]
    assert terms("ΣΟΦΙΑ") == ["σοφια"]


def test_combining_marks_stay_inside_words() -> None:
    """Devanagari and Thai words with combining vowel signs are not split at the marks."""
    assert terms("हिन्दी") == ["हिन्दी"]
    assert terms("ภาษาไทย") == ["ภาษาไทย"]


def test_camel_case_identifiers_whole_and_split() -> None:
    """camelCase and acronym identifiers are indexed whole and split on case changes."""
    assert terms("getUserName") == ["getusername", "get", "user", "name"]
    assert terms("HTTPServer") == ["httpserver", "http", "server"]
    assert terms("parseJSON") == ["parsejson", "parse", "json"]
    assert terms("Base64Encode") == ["base64encode", "base64", "encode"]


def test_connector_identifiers_whole_and_split() -> None:
    """snake_case and kebab-case identifiers are indexed whole and split on connectors."""
    assert terms("retry_policy") == ["retrypolicy", "retry", "policy"]
    assert terms("load-balancer") == ["loadbalancer", "load", "balancer"]
    assert terms("__init__") == ["init"]
    assert terms("MAX_RETRY_COUNT") == ["maxretrycount", "max", "retry", "count"]
    assert terms("a - b --verbose") == ["b", "verbose"]


def test_identifier_parts_drop_stopwords() -> None:
    """A stopword part of an identifier is dropped; the whole stays."""
    assert terms("isValid") == ["isvalid", "valid"]
    assert terms("the_end") == ["theend", "end"]


def test_plain_words_not_split() -> None:
    """Lowercase, uppercase and capitalized words are one term each."""
    assert terms("Hello WORLD hello2 X86 MP3") == ["hello", "world", "hello2", "x86", "mp3"]


def test_stopwords_dropped() -> None:
    """English stopwords are dropped in any case."""
    assert terms("The cat is on THE mat and it was in a box") == ["cat", "mat", "box"]
    assert 30 <= len(STOPWORDS) <= 60


def test_nfkc_fullwidth_and_ligatures() -> None:
    """Fullwidth letters and ligatures normalize to plain lowercase terms."""
    assert terms("ＡＢＣ") == ["abc"]
    assert terms("ﬁle") == ["file"]
    assert terms("x²") == ["x2"]
    assert terms("getＵｓｅｒ") == ["getuser", "get", "user"]


def test_duplicates_kept_in_document_order() -> None:
    """terms keeps duplicates in order; unique_terms dedupes keeping first occurrence."""
    assert terms("cache miss cache hit cache") == ["cache", "miss", "cache", "hit", "cache"]
    assert unique_terms("cache miss cache hit cache") == ["cache", "miss", "hit"]


def test_punctuation_and_symbols_give_no_terms() -> None:
    """Text with no letters or digits gives no terms."""
    assert terms("") == []
    assert terms("--- *** → 🎉 。、") == []


def test_emoji_split_words() -> None:
    """An emoji between letters separates two terms."""
    assert terms("a🎉bc") == ["bc"]
    assert terms("x🎉y") == ["x", "y"]


def test_query_and_text_agree_whatever_the_surroundings() -> None:
    """A token gives the same terms alone, in ASCII text, and in non-ASCII text."""
    for token in ["getUserName", "retry_policy", "HTTPServer", "Hello", "x86_64", "MP3"]:
        alone = terms(token)
        assert terms(f"see {token} now") == ["see", *alone, "now"]
        assert terms(f"café {token} 数据") == ["café", *alone, "数据"]


def test_terms_compose_over_whitespace_on_random_text() -> None:
    """terms of space-joined words equals the concatenation of each word's terms."""
    rng = random.Random(11)
    pool = [
        "getUserName",
        "retry_policy",
        "load-balancer",
        "HTTPServer",
        "the",
        "Café",
        "数据库",
        "결정했다",
        "カタカナ",
        "Привет",
        "x86_64",
        "ＡＢＣ",
        "a🎉b",
        "--",
        "é_x",
        "iPhone",
        "MAX_SIZE",
        "2024年",
        "हिन्दी",
        "...",
        "fooBAR",
        "_x_",
        "ǅemal",
    ]
    for _ in range(300):
        words = [rng.choice(pool) for _ in range(rng.randrange(1, 8))]
        expected = [term for word in words for term in terms(word)]
        assert terms(" ".join(words)) == expected
        assert terms("\n".join(words)) == expected


def test_terms_are_single_fts_tokens_on_random_text() -> None:
    """Every term is letters, digits and marks only: one FTS5 unicode61 token."""
    rng = random.Random(5)
    blocks = [
        (0x20, 0x7E),
        (0xA0, 0x24F),
        (0x300, 0x36F),
        (0x400, 0x4FF),
        (0x900, 0x97F),
        (0x2000, 0x206F),
        (0x3000, 0x30FF),
        (0x4E00, 0x4E80),
        (0xAC00, 0xAC80),
        (0xFF00, 0xFFEF),
        (0x1D400, 0x1D4FF),
        (0x1F300, 0x1F3FF),
        (0x20000, 0x20080),
    ]
    for _ in range(300):
        chars = []
        for _ in range(rng.randrange(1, 80)):
            low, high = rng.choice(blocks)
            chars.append(chr(rng.randint(low, high)))
        for term in terms("".join(chars)):
            assert term
            assert all(unicodedata.category(ch)[0] in "LNM" for ch in term), term
            assert term not in STOPWORDS


def test_dense_and_sparse_non_ascii_paths_agree() -> None:
    """Text mostly ASCII and text mostly non-ASCII tokenize each word the same way."""
    rng = random.Random(17)
    ascii_words = [
        "getUserName",
        "retry_policy",
        "the",
        "HTTPServer",
        "plain",
        "x86_64",
        "2026-03-01T00",
        "668Z",
        "--flag",
        "MAX_SIZE",
        "a-b-c",
        "Hello",
        "iPhone",
    ]
    other_words = ["Café", "数据库连接", "결정했다", "Привет", "ｶﾀｶﾅ", "é_x", "🎉", "MüllerStraße"]
    for _ in range(200):
        words = [rng.choice(ascii_words) for _ in range(rng.randrange(1, 12))]
        words.insert(rng.randrange(len(words) + 1), rng.choice(other_words))
        sparse = " ".join(words + ["filler"] * 200)  # under a tenth non-ASCII
        dense = " ".join(words + ["数据"] * 200)  # over a tenth non-ASCII
        expected = [term for word in words for term in terms(word)]
        assert terms(sparse) == expected + ["filler"] * 200
        assert terms(dense) == expected + ["数据"] * 200
