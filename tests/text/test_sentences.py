"""Tests for ctxtrio.text.sentences: where a text's sentences end, and the units they are split from."""

from __future__ import annotations

from ctxtrio.text.sentences import last_sentence_end, sentence_ends, split_sentences


def test_english_sentences_split_at_terminal_punctuation() -> None:
    """Sentences end at . ! ? followed by whitespace or the end, closers included."""
    text = 'It works. Does it? Yes! (He said "fine.") Done [1].'
    assert split_sentences(text) == ["It works.", "Does it?", "Yes!", '(He said "fine.")', "Done [1]."]


def test_abbreviations_initials_and_numbers_do_not_split() -> None:
    """e.g., Dr., initials, decimals and a following lowercase word keep a sentence whole."""
    text = "Use a cache, e.g. Redis or memcached. Dr. Smith and J. Doe agreed at 3.14 pm. Next."
    assert split_sentences(text) == [
        "Use a cache, e.g. Redis or memcached.",
        "Dr. Smith and J. Doe agreed at 3.14 pm.",
        "Next.",
    ]


def test_chinese_splits_without_spaces() -> None:
    """Chinese text splits at 。！？ with no space needed."""
    text = "数据库连接失败。请重试！真的吗？好的"
    assert split_sentences(text) == ["数据库连接失败。", "请重试！", "真的吗？", "好的"]


def test_japanese_splits_on_fullwidth_terminators() -> None:
    """Japanese text splits at 。！？ and the fullwidth full stop ．."""
    text = "東京の天気は晴れです。明日は雨でしょう！傘は要りますか？はい．以上"
    assert split_sentences(text) == [
        "東京の天気は晴れです。",
        "明日は雨でしょう！",
        "傘は要りますか？",
        "はい．",
        "以上",
    ]


def test_lines_of_lists_and_headings_are_breaks() -> None:
    """List items and headings are separate sentences even without punctuation."""
    text = "# Setup\nInstall it\n- first step\n- second step\n1. numbered\n\nPlain line\nwraps here"
    assert split_sentences(text) == [
        "Setup",
        "Install it",
        "first step",
        "second step",
        "numbered",
        "Plain line\nwraps here",
    ]


def test_code_tables_and_underlines_are_not_sentences() -> None:
    """Fenced code, table rows and setext underlines give no sentences; the title does."""
    text = "Title\n=====\n\n```\nx = 1. y = 2.\n```\n| a | b |\n|---|---|\nProse here."
    assert split_sentences(text) == ["Title", "Prose here."]


def test_log_lines_are_sentences_but_wrapped_prose_is_not() -> None:
    """Each line of a log is a sentence; prose wrapped over lines stays one sentence."""
    log = "2026-01-01 INFO started\n2026-01-01 WARN slow disk\nTraceback (most recent call last)"
    assert split_sentences(log) == [
        "2026-01-01 INFO started",
        "2026-01-01 WARN slow disk",
        "Traceback (most recent call last)",
    ]
    prose = "The server keeps a journal\nof every change and replays it\nafter a crash."
    assert split_sentences(prose) == [prose]


def test_last_sentence_end_in_a_window_of_a_line() -> None:
    """The last end sentence_ends gives inside text[start:stop]; a '.' cut off from its word is none."""
    line = "Use os.path here. See e.g. the docs! Then 这是。Done. More os.path"
    assert last_sentence_end(line, 0, len(line)) == sentence_ends(line)[-1] == line.index("Done.") + 5
    done = line.index("Done.") + 5
    assert last_sentence_end(line, 0, done) == done  # the space after it is the line's
    assert last_sentence_end(line, 0, done - 1) == line.index("。") + 1
    assert last_sentence_end(line, 0, line.index("。")) == line.index("!") + 1
    assert last_sentence_end(line, 0, line.index("path")) == -1  # 'os.' then the window's end
    assert last_sentence_end(line, done, line.rindex("path")) == -1
    assert last_sentence_end(line, 0, line.index(" the")) == line.index("here.") + 5  # 'e.g.' ends none
    assert last_sentence_end(line, line.index("See"), line.index("!")) == -1


def test_a_line_ending_in_colons_before_a_blank_line_stays_prose() -> None:
    """reST's 'paragraph::' (a literal block follows, after a blank line) is a sentence of its paragraph, not a
    label; a '+' inside a line and a bracketed word inside prose change nothing."""
    text = "For example, run it like this::\n\n    python -m json.tool\n\nThen add [x] and 1 + 2 to it.\n"
    assert split_sentences(text) == [
        "For example, run it like this::",
        "python -m json.tool",
        "Then add [x] and 1 + 2 to it.",
    ]
