"""Tests for ctxtrio.text.extractive: TF-ISF summaries and outline lines (sentence splitting: test_sentences.py)."""

from __future__ import annotations

import functools
import random
from pathlib import Path

import pytest

from ctxtrio.text.extractive import first_sentence, summarize_extractive
from ctxtrio.text.prose import bare_signature, without_markup
from ctxtrio.text.sentences import split_sentences
from ctxtrio.text.tokens import TokenModel

FIXTURES = Path(__file__).parent / "fixtures"
MODEL = TokenModel.flat()


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def composed_of(summary: str, text: str) -> bool:
    """True when summary is whole sentences of text, in order, joined by a space or newline."""
    sentences = split_sentences(text)

    @functools.cache
    def rest_matches(first: int, position: int) -> bool:
        for index in range(first, len(sentences)):
            sentence = sentences[index]
            if summary.startswith(sentence, position):
                end = position + len(sentence)
                if end == len(summary):
                    return True
                if summary[end] in " \n" and rest_matches(index + 1, end + 1):
                    return True
        return False

    return rest_matches(0, 0)


def test_sentences_are_verbatim_substrings_of_fixtures() -> None:
    """Every sentence of every fixture occurs verbatim in it, CRLF text included."""
    for name in ["manual.md", "app.log", "korean.txt", "chinese.txt", "sample.py.txt"]:
        text = fixture(name)
        for variant in (text, text.replace("\n", "\r\n")):
            sentences = split_sentences(variant)
            assert sentences
            assert all(sentence and sentence in variant for sentence in sentences)


def test_text_within_target_returned_as_is() -> None:
    """Text already within the target is returned unchanged."""
    text = "Short text.  With odd   spacing.\n"
    assert summarize_extractive(text, target_tokens=100, model=MODEL) == text


@pytest.mark.parametrize("name", ["manual.md", "app.log", "korean.txt", "chinese.txt"])
@pytest.mark.parametrize("target", [20, 60, 200])
def test_summary_within_target_and_verbatim(name: str, target: int) -> None:
    """A summary fits the target and consists of verbatim input sentences."""
    text = fixture(name)
    summary = summarize_extractive(text, target_tokens=target, model=MODEL)
    assert summary
    assert MODEL.estimate(summary) <= target
    cut = any(sentence.startswith(summary) for sentence in split_sentences(text))
    assert composed_of(summary, text) or cut


def test_summary_keeps_document_order() -> None:
    """Chosen sentences appear in the summary in their document order."""
    text = fixture("chinese.txt")
    summary = summarize_extractive(text, target_tokens=150, model=MODEL)
    positions = [text.index(sentence) for sentence in split_sentences(summary)]
    assert positions == sorted(positions) and len(positions) > 1


def test_summary_is_deterministic() -> None:
    """The same input gives the same summary."""
    text = fixture("manual.md")
    first = summarize_extractive(text, target_tokens=120, model=MODEL)
    assert all(summarize_extractive(text, target_tokens=120, model=MODEL) == first for _ in range(3))


def test_rare_terms_win_over_common_ones() -> None:
    """The sentence with distinctive terms is chosen over repetitive filler."""
    filler = " ".join(f"The service handled request number {i} normally." for i in range(30))
    text = f"{filler} Disk corruption destroyed the replica journal at midnight. {filler}"
    summary = summarize_extractive(text, target_tokens=20, model=MODEL)
    assert "Disk corruption destroyed the replica journal at midnight." in summary


def test_cjk_bigrams_drive_the_scores() -> None:
    """In Chinese text the scoring sees bigram terms, so a distinctive sentence wins."""
    common = "系统运行正常。" * 20
    text = common + "数据库连接池耗尽导致订单超时。" + common
    summary = summarize_extractive(text, target_tokens=20, model=MODEL)
    assert "数据库连接池耗尽导致订单超时。" in summary


def test_repeated_sentences_chosen_once() -> None:
    """A sentence repeated in the input appears at most once in the summary."""
    text = "Unique opening statement here. " + "Same line again and again. " * 40
    summary = summarize_extractive(text, target_tokens=30, model=MODEL)
    assert summary.count("Same line again and again.") <= 1


def test_best_sentence_cut_when_nothing_fits() -> None:
    """When even the best sentence is too long, a verbatim prefix of it is returned."""
    text = " ".join(f"word{i}" for i in range(400)) + "."
    summary = summarize_extractive(text, target_tokens=10, model=MODEL)
    assert summary and text.startswith(summary)
    assert MODEL.estimate(summary) <= 10
    assert not summary.endswith(" ")


def test_text_without_sentences_cut_to_target() -> None:
    """Text with no letters at all is cut to the target instead of failing."""
    text = "=+-" * 400
    summary = summarize_extractive(text, target_tokens=5, model=MODEL)
    assert summary and text.startswith(summary) and MODEL.estimate(summary) <= 5


def test_target_must_be_positive() -> None:
    """A target below one token is a ValueError."""
    with pytest.raises(ValueError):
        summarize_extractive("x", target_tokens=0, model=MODEL)


def test_first_sentence_skips_headings_and_fits() -> None:
    """first_sentence returns the first body sentence, cut to max_tokens."""
    text = "## Install\n\nRun the installer first. Then reboot."
    assert first_sentence(text, max_tokens=50, model=MODEL) == "Run the installer first."
    cut = first_sentence(text, max_tokens=3, model=MODEL)
    assert "Run the installer first.".startswith(cut) and MODEL.estimate(cut) <= 3
    assert first_sentence("# Only a heading", max_tokens=50, model=MODEL) == "Only a heading"
    assert first_sentence("  \n", max_tokens=50, model=MODEL) == ""


def test_random_texts_always_give_a_fitting_verbatim_summary() -> None:
    """Random mixed-script texts give a non-empty verbatim summary within the target."""
    rng = random.Random(21)
    pieces = [
        "Alpha beta gamma.",
        "数据库连接失败。",
        "회의에서 결정했다.",
        "e.g. this",
        "!",
        "\n\n",
        "- item\n",
        "# Head\n",
        "word " * 30,
        "x" * 200,
        "？",
        "Done.",
    ]
    for _ in range(200):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randrange(1, 30)))
        target = rng.choice([1, 3, 10, 40])
        summary = summarize_extractive(text, target_tokens=target, model=MODEL)
        if text.strip():
            assert summary
        assert MODEL.estimate(summary) <= target
        cut = any(sentence.startswith(summary) for sentence in split_sentences(text))
        assert summary == text or composed_of(summary, text) or cut


def test_first_sentence_passes_over_rest_markup() -> None:
    """An outline's extractive line is the chunk's first prose, not a line of reST explicit markup (a directive
    with its options and backslash continuations, a link target, a comment); markup alone is still a line."""
    text = (
        "   .. versionchanged:: 3.4\n\n.. _json-dumps:\n\n..\n\n"
        ".. function:: dumps(obj, *, skipkeys=False, \\\n                 indent=None)\n   :noindex:\n\n"
        "   Keys in key/value pairs of JSON are always of the type str.\n"
    )
    first = first_sentence(text, max_tokens=50, model=MODEL)
    assert first == "Keys in key/value pairs of JSON are always of the type str."
    assert first_sentence(".. seealso::\n", max_tokens=50, model=MODEL) == ".. seealso::"
    assert first_sentence("... and so on. Then more.", max_tokens=50, model=MODEL) == "... and so on."


def test_first_sentence_passes_over_rest_titles() -> None:
    """A chunk that starts with a reST title underlined by ^^^ (which the splitter does not take for a heading)
    gave the title as its outline line, the same words as the trail beside it; its first prose is meant."""
    titled = "Infinite and NaN Number Values\n^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n\nThe RFC does not permit NaN. More."
    assert first_sentence(titled, max_tokens=50, model=MODEL) == "The RFC does not permit NaN."
    assert first_sentence("Only a title\n~~~~~~~~~~~~\n", max_tokens=50, model=MODEL) == "Only a title"
    rule = "Text before a rule.\n\n---\n\nText after."  # a transition after a blank line takes nothing with it
    assert first_sentence(rule, max_tokens=50, model=MODEL) == "Text before a rule."


def test_summaries_pass_over_rest_markup_and_keep_headings() -> None:
    """An extractive summary of reST held '.. function:: dump(obj, fp, *, \\' with its continued lines and
    '.. versionchanged:: 3.11' (user23's sitting: a quarter of json.rst.txt's 300-token summary); the prose
    under them is meant, under its section's heading. Markup alone is still summarized."""
    filler = " ".join(f"Detail {n} mentions widget{n} in passing." for n in range(30))
    text = (
        "Basic Usage\n-----------\n\n"
        ".. function:: dump(obj, fp, *, skipkeys=False, ensure_ascii=True, \\\n"
        "                   check_circular=True, allow_nan=True, cls=None, \\\n"
        "                   sort_keys=False, **kw)\n\n"
        "   Serialize obj as a JSON formatted stream to fp.\n\n"
        "   .. versionchanged:: 3.11\n      The default parse_int of int now limits the length.\n\n"
        f"{filler}\n"
    )
    summary = summarize_extractive(text, target_tokens=60, model=MODEL)
    assert ".. " not in summary and "skipkeys" not in summary and "versionchanged" not in summary
    assert summary.startswith("Basic Usage\n") and "Serialize obj as a JSON formatted stream to fp." in summary
    markup = ".. function:: loads(s, *, cls=None, object_hook=None, parse_float=None, parse_int=None) \\\n" * 9
    assert summarize_extractive(markup, target_tokens=20, model=MODEL).startswith(".. function:: loads(")


def test_summaries_say_which_api_entry_a_sentence_describes() -> None:
    """Since 467ff12 a summary passed over '.. function:: dump(obj, fp, *, \\' and so no longer said which
    function its sentences describe: an entry's bare signature goes in front of its first line of prose (one
    of several signatures each; an entry without a body gives nothing). Outline lines stay prose alone."""
    filler = " ".join(f"Detail {n} mentions widget{n} in passing." for n in range(30))
    text = (
        "Basic Usage\n-----------\n\n"
        ".. function:: dump(obj, fp, *, skipkeys=False, ensure_ascii=True, \\\n"
        "                   separators=(', ', ': '), **kw)\n\n"
        "   Serialize obj as a JSON formatted stream to fp.\n\n"
        ".. data:: NO_BODY\n\n"
        ".. function:: loads(s, *, cls=None)\n"
        "              load(fp)\n"
        "   :noindex:\n\n"
        "   Deserialize a JSON document to a Python object.\n\n"
        f"{filler}\n"
    )
    summary = summarize_extractive(text, target_tokens=80, model=MODEL)
    assert "\ndump(obj, fp, *, ...): Serialize obj as a JSON formatted stream to fp.\n" in summary, summary
    assert "\nloads(s, *, ...), load(fp): Deserialize a JSON document to a Python object.\n" in summary, summary
    assert "NO_BODY" not in summary and "noindex" not in summary and "skipkeys" not in summary, summary
    assert first_sentence(text, max_tokens=40, model=MODEL) == "Serialize obj as a JSON formatted stream to fp."


@pytest.mark.parametrize(
    ("signature", "bare"),
    [
        ("dump(obj, fp, *, skipkeys=False, separators=(', ', ': '), **kw)", "dump(obj, fp, *, ...)"),
        ("Popen.poll()", "Popen.poll()"),
        ("f(a: dict[str, int], b) -> None", "f(a: dict[str, int], b)"),
        ("h(*args, **kwargs)", "h(*args, ...)"),
        ("int PyList_Check(PyObject *p)", "int PyList_Check(PyObject *p)"),
        ("DEVNULL", "DEVNULL"),
        ("unclosed(a,  b", "unclosed(a, b"),
    ],
)
def test_a_bare_signature_is_the_name_and_what_a_call_must_give(signature: str, bare: str) -> None:
    """Parameters from the first with a default (or ``**``) on are '...'; no brackets or none closed: as given."""
    assert bare_signature(signature) == bare


def test_first_sentence_needs_a_positive_budget() -> None:
    """first_sentence with max_tokens below one is a ValueError."""
    with pytest.raises(ValueError):
        first_sentence("Text.", max_tokens=0, model=MODEL)


def test_sections_keep_their_heading_and_first_sentence() -> None:
    """In a sectioned document each section's opening sentence wins, shown under its heading."""
    filler = " ".join(f"Detail {n} mentions widget{n} and gadget{n} in passing." for n in range(12))
    text = "\n\n".join(
        f"## {name}\n\n{lead} {filler}"
        for name, lead in [
            ("Install", "Install the package with pip before anything else."),
            ("Configure", "Configuration lives in one TOML file per project."),
            ("Deploy", "Deployment copies the wheel to every host over SSH."),
        ]
    )
    summary = summarize_extractive(text, target_tokens=60, model=MODEL)
    for heading, lead in [
        ("Install", "Install the package"),
        ("Configure", "Configuration lives"),
        ("Deploy", "Deployment copies"),
    ]:
        assert lead in summary and f"{heading}\n" in summary
    assert MODEL.estimate(summary) <= 60


# git's manual (/usr/share/doc/git-doc/git-rebase.txt, git 2.39, GPL-2.0): an AsciiDoc labeled-list entry whose
# body is indented by a tab and whose later paragraphs are attached by a '+' line (asciidoc-py's user guide,
# ch17 "Lists": "List item continuation"), as every OPTIONS section of git's manual is written.
KEEP_BASE = (
    "--keep-base::\n"
    "\tSet the starting point at which to create the new commits to the\n"
    "\tmerge base of `<upstream>` and `<branch>`. Running\n"
    "\t`git rebase --keep-base <upstream> <branch>` is equivalent to\n"
    "\trunning\n"
    "\t`git rebase --reapply-cherry-picks --no-fork-point --onto <upstream>...<branch> <upstream> <branch>`.\n"
    "+\n"
    "This option is useful in the case where one is developing a feature on\n"
    "top of an upstream branch. While the feature is being worked on, the\n"
    "upstream branch may advance and it may not be the best idea to keep\n"
    "rebasing on top of the upstream but to keep the base commit as-is. As\n"
    "the base commit is unchanged this option implies `--reapply-cherry-picks`\n"
    "to avoid losing commits.\n"
    "+\n"
    "See also INCOMPATIBLE OPTIONS below.\n"
    "\n"
    "endif::git-pull[]\n"
    "[NOTE]\n"
    "`ORIG_HEAD` is not guaranteed to still point to the previous branch tip\n"
    "at the end of the rebase.\n"
)


def test_asciidoc_entries_split_into_whole_sentences() -> None:
    """An AsciiDoc option entry (a 'label::' line, a tab-indented body, paragraphs joined by '+' lines) is
    whole sentences under its label: with git's manual, extracts and outline lines were wrapped lines cut
    mid-sentence ('This option is useful in the case where one is developing a feature on') and an option's
    outline line was its label ('--keep-base::'), as the '+' lines kept the entry one paragraph that read
    as a log, line by line, and a block attribute line ('[NOTE]') was a sentence of its own."""
    sentences = split_sentences(KEEP_BASE)
    assert sentences == [
        "--keep-base",
        "Set the starting point at which to create the new commits to the\n"
        "\tmerge base of `<upstream>` and `<branch>`.",
        "Running\n\t`git rebase --keep-base <upstream> <branch>` is equivalent to\n\trunning\n"
        "\t`git rebase --reapply-cherry-picks --no-fork-point --onto <upstream>...<branch> <upstream> <branch>`.",
        "This option is useful in the case where one is developing a feature on\ntop of an upstream branch.",
        "While the feature is being worked on, the\nupstream branch may advance and it may not be the best idea to keep\n"
        "rebasing on top of the upstream but to keep the base commit as-is.",
        "As\nthe base commit is unchanged this option implies `--reapply-cherry-picks`\nto avoid losing commits.",
        "See also INCOMPATIBLE OPTIONS below.",
        "`ORIG_HEAD` is not guaranteed to still point to the previous branch tip\nat the end of the rebase.",
    ]
    # An outline line is one line: the sentence's wrapped lines joined by single spaces.
    assert first_sentence(KEEP_BASE, max_tokens=50, model=MODEL) == " ".join(sentences[1].split())
    assert first_sentence(KEEP_BASE[KEEP_BASE.index("[NOTE]") :], max_tokens=50, model=MODEL) == " ".join(
        sentences[-1].split()
    )


# pytest's manual (/usr/share/doc/python-pytest-doc/rst/how-to/fixtures.rst.txt, pytest 7.2, MIT), shortened:
# a section whose first block is a code-block directive's body, and a paragraph introducing a literal block.
QUICK_EXAMPLE = (
    "Quick example\n^^^^^^^^^^^^^\n\n.. code-block:: python\n\n    import pytest\n\n\n"
    '    # Arrange\n    @pytest.fixture\n    def fruit_bowl():\n        return [Fruit("apple"), Fruit("banana")]\n\n'
    "    def test_fruit_salad(fruit_bowl):\n        # Assert\n        assert all(fruit.cubed for fruit in fruit_salad.fruit)\n\n"
    'In this example, ``test_fruit_salad`` "**requests**" ``fruit_bowl`` (i.e.\nthe test function declares it).\n'
    "Running it gives::\n\n    $ pytest -q test_fruit.py\n    1 passed in 0.12s\n\nThe test passes.\n"
)


def test_rest_code_blocks_are_not_sentences_of_an_extract() -> None:
    """A reST code-block directive's body and a literal block after 'paragraph::' are code, passed over like a
    Markdown fence: doc_summarize's extracts of pytest's manual held code lines ('def expected_list():',
    'entry = first_entry()', '$ pytest -q'), and a section opening with an example had its code as first line."""
    first = first_sentence(QUICK_EXAMPLE, max_tokens=60, model=MODEL)
    assert first.startswith("In this example, ``test_fruit_salad``")
    summary = summarize_extractive(QUICK_EXAMPLE, target_tokens=60, model=MODEL)
    assert "requests" in summary and "pytest -q" not in summary and "def " not in summary
    assert first_sentence(".. code-block:: python\n\n    import pytest\n", max_tokens=60, model=MODEL)


def test_index_entries_are_no_sentences_of_an_extract() -> None:
    """An '.. index::' directive's body is a list of index entries, passed over: python3.11-doc's _thread page
    had the outline line 'single: light-weight processes single: processes, light-weight single: binary ...'."""
    thread = (
        ".. index::\n   single: light-weight processes\n   single: processes, light-weight\n"
        "   single: binary semaphores\n\nThis module provides low-level primitives for working with multiple threads.\n"
    )
    first = first_sentence(thread, max_tokens=60, model=MODEL)
    assert first == "This module provides low-level primitives for working with multiple threads."
    summary = summarize_extractive(
        thread + "\nThreads share the module's global data.\n", target_tokens=20, model=MODEL
    )
    assert "single:" not in summary


def test_an_asciidoc_entry_body_is_no_literal_block() -> None:
    """In AsciiDoc an indented body under a 'label::' is the entry's text, also after a blank line (git's
    manual has both forms, git-clean.txt's 'quit::' the second): it is not passed over as reST's literal block."""
    text = "help::\n  Show brief usage of git clean.\n\nquit::\n\n  This lets you quit without do cleaning.\n"
    assert without_markup(text) == text
    rest = "Example::\n\n  $ git clean -n\n\nThe end.\n"
    assert without_markup(rest) == "Example::\n\n\nThe end.\n"


def test_an_outline_line_passes_over_the_code_a_chunk_opens_with() -> None:
    """A chunk cut inside a long example (pytest's fixtures.rst, chunk #1) opens with indented code and no
    '::' before it: in a document of prose (past_code) its outline line is the prose after it, not '# Assert
    assert all(...)'. Code alone is still a line, and an AsciiDoc entry's tab-indented body is prose."""
    chunk = QUICK_EXAMPLE[QUICK_EXAMPLE.index("    # Arrange") :]
    assert first_sentence(chunk, max_tokens=60, model=MODEL, past_code=True).startswith(
        "In this example, ``test_fruit_salad``"
    )
    assert (
        first_sentence("    import pytest\n\n    x = 1\n", max_tokens=60, model=MODEL, past_code=True)
        == "import pytest"
    )
    body = "\tSet the starting point at which to create the new commits.\n+\nThis option is useful.\n"
    expected = "Set the starting point at which to create the new commits."
    assert first_sentence(body, max_tokens=60, model=MODEL, past_code=True) == expected


def test_a_chunk_of_source_code_keeps_the_code_it_opens_with() -> None:
    """In source code the indented lines a chunk opens with are its content (the method it starts in): passing
    over them gave _pyio.py's chunk 'class BytesIO(BufferedIOBase):' for 'def isatty(self):'. Without past_code
    (the default) the first line stays."""
    chunk = "    def isatty(self):\n        return self.raw.isatty()\n\n\nclass BytesIO(BufferedIOBase):\n    pass\n"
    assert first_sentence(chunk, max_tokens=60, model=MODEL).startswith("def isatty(self):")
