"""Answer checks: echoes, copies, empty and over-long answers, changed and dropped figures."""

from __future__ import annotations

import pytest

from ctxtrio.llm._keeping import checked
from ctxtrio.llm._plan import Step
from ctxtrio.llm.checks import copied_share, echo_so_far, figures, rejection, without_markup
from ctxtrio.text.tokens import TokenModel

MODEL = TokenModel.cold()
SOURCE = (
    "The staging server listens on port 8003 behind nginx. We agreed to keep the retention at 9 days "
    "because the audit needs a full week plus margin. The deploy script lives in scripts/deploy.sh and "
    "reads DEPLOY_TARGET from the environment. Rollbacks go through the rollback_release job. "
    "The on-call rotation changes every Monday; the pager number is unchanged. "
    "Older notes mention a second cluster, but it was retired in March and nothing points to it now."
)
STEP = Step("summary/v2", "Summarize the text below in at most 60 words. Keep numbers exactly.", SOURCE, 80)


def check(answer: str) -> str | None:
    return rejection(answer, source=SOURCE, instruction=STEP.instruction, target_tokens=80, model=MODEL)


def test_a_faithful_summary_passes() -> None:
    """A short summary in other words that keeps port 8003, 9 days and the script path is kept."""
    answer = "Staging runs on port 8003; retention stays 9 days for the audit; deploys use scripts/deploy.sh."
    assert check(answer) is None


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("", "empty answer"),
        ("   \n", "empty answer"),
        (STEP.prompt, "markup"),
        ("Summarize the text below in at most 60 words. Port 8003.", "echoes the instructions"),
        ("<text>\nThe staging server listens on port 8003", "markup"),
        (SOURCE + " And more.", "not shorter"),
        (SOURCE[:260], "verbatim"),
        ("Staging runs on port 8011; retention is 8 days; deploys use scripts/deploy.sh.", "does not (8, 8011)"),
        ("The team talked about servers, deploys and the on-call rotation in general terms.", "drops the figures"),
        (
            "Port 8003, 9 days and scripts/deploy.sh: a mountain village where farmers trade wool, honey, "
            "barley and cheese at every autumn festival near the lake.",
            "not about the text",
        ),
    ],
)
def test_junk_answers_are_rejected(answer: str, reason: str) -> None:
    """Each kind of junk a small model produces is named, so it is never kept as a summary."""
    found = check(answer)
    assert found is not None and reason in found


def test_numbers_of_the_instruction_are_not_invented() -> None:
    """'Part 3 of 9' in an answer comes from the prompt, not from nowhere."""
    step = Step("slice/v2", "The text below is part 3 of 9 of a longer text. Summarize it.", SOURCE, 80)
    answer = "Part 3 of 9: staging on port 8003, 9-day retention, scripts/deploy.sh deploys."
    assert rejection(answer, source=SOURCE, instruction=step.instruction, target_tokens=80, model=MODEL) is None


def test_copied_share_counts_long_runs_only() -> None:
    """Eight words in a row copied count; shorter quotes do not."""
    assert copied_share("port 8003 behind nginx is fine", SOURCE) == 0.0
    assert copied_share("We agreed to keep the retention at 9 days, yes.", SOURCE) == pytest.approx(8 / 9)  # "9" aside
    assert copied_share("port 8003, 9, DEPLOY_TARGET", SOURCE) == 0.0


def test_figures_are_numbers_and_identifiers() -> None:
    """Numbers lose thousands separators; paths, snake_case and CONSTANT_CASE count as identifiers."""
    found = figures("Port 8,003 and scripts/deploy.sh with DEPLOY_TARGET via rollback_release on v2.\n1. item")
    assert {"8003", "scripts/deploy.sh", "DEPLOY_TARGET", "rollback_release", "v2"} <= found
    assert "1" not in found  # a list marker is no figure


def test_an_echo_is_caught_while_streaming() -> None:
    """Six words into an answer that starts with the instructions, the stream can be cut."""
    assert echo_so_far("Summarize the text below in at", STEP.instruction, SOURCE) == "it echoes the instructions"
    assert echo_so_far("Staging runs on port 8003 and", STEP.instruction, SOURCE) is None
    copy = " ".join(SOURCE.split()[:20])
    assert echo_so_far(copy, STEP.instruction, SOURCE) == "it repeats the text word for word"


def test_a_figure_counts_as_kept_only_when_stated_whole() -> None:
    """Small numbers inside other numbers or list markers keep none of the text's figures."""
    source = "Run 1 failed, run 2 passed, run 3 failed; worker 12 uses port 9012 and worker 13 uses port 9013."
    answer = "1. Runs failed twice.\n2. Workers use two ports.\n3. Fine."
    found = rejection(answer, source=source, instruction="Summarize.", target_tokens=40, model=MODEL)
    assert found is not None and "drops the figures" in found


def test_echoed_markup_is_caught_while_streaming() -> None:
    """An answer that repeats the prompt's TEXT: marker is cut as soon as the marker arrives."""
    assert echo_so_far("TEXT:\nService svc0-1", STEP.instruction, SOURCE) == "it echoes the prompt's markup"
    assert echo_so_far("The text: port 8003", STEP.instruction, SOURCE) is None


@pytest.mark.parametrize(
    ("answer", "named"),
    [
        ("Staging on port 8003 for 9 days; deploys use scripts/release.sh.", "scripts/release.sh"),
        ("Staging on port 8003 for 9 days; see https://wiki.example.org/staging.", "https://wiki.example.org/staging"),
        ("Staging on port 8003 for 9 days; rollbacks go through rollbackRelease.", "rollbackRelease"),
    ],
)
def test_invented_identifiers_paths_and_urls_are_rejected(answer: str, named: str) -> None:
    """A path, URL or identifier the text does not state is invented, like a changed number."""
    found = check(answer)
    assert found is not None and "identifiers the text does not" in found and named in found


def test_markup_metadata_is_no_figure_to_keep() -> None:
    """Front matter, HTML comments and link targets hold no figures a summary must keep."""
    source = (
        "---\nid: 4411\ndate: 2024-05-06\nslug: post-77\n---\n<!-- build 9921, rev abc_123 -->\n"
        "The cache keeps entries for 30 minutes; see [the notes](https://x.org/n/88?page=2) and [ref].\n"
        "[ref]: https://x.org/r/55\n"
    )
    assert figures(without_markup(source)) == {"30"}
    answer = "Cache entries expire after 30 minutes."
    assert rejection(answer, source=source, instruction="Summarize.", target_tokens=40, model=MODEL) is None


def test_a_figure_written_in_words_is_kept() -> None:
    """ "three times every ten minutes" keeps "3 times" and "10 minutes": a faithful one-liner passes."""
    source = "The uploader retries 3 times every 10 minutes, then gives up and pages the on-call engineer."
    answer = "The uploader retries three times every ten minutes before paging someone."
    assert rejection(answer, source=source, instruction="Summarize.", target_tokens=48, model=MODEL) is None
    wrong = "The uploader retries twice, for a while, before paging someone."
    found = rejection(wrong, source=source, instruction="Summarize.", target_tokens=48, model=MODEL)
    assert found is not None and "drops the figures" in found


def test_an_announcement_is_no_answer() -> None:
    """ "The text is:" says nothing about the text, whatever figures the text has."""
    found = rejection(
        "The text is:", source="Cats sleep a lot and purr.", instruction="Summarize.", target_tokens=48, model=MODEL
    )
    assert found is not None and "announces" in found


def test_an_identifier_capitalized_to_open_a_sentence_is_not_invented() -> None:
    """SmolLM2-135M-Instruct opened a sentence of a session's summary with 'Test_tz_boundary' for the notes'
    test_tz_boundary: the answer was rejected as inventing an identifier, after 43 s of the compaction's 45 s
    deadline; a capital first letter is the sentence's, not another name. A capital in the middle is."""
    source = "test_tz_boundary fails because period_end is computed in local time on prod-2 (Europe/Berlin)."
    answer = "Test_tz_boundary fails: period_end uses local time on prod-2."
    assert rejection(answer, source=source, instruction="Summarize.", target_tokens=48, model=MODEL) is None
    renamed = "test_Tz_boundary fails: period_end uses local time on prod-2."
    found = rejection(renamed, source=source, instruction="Summarize.", target_tokens=48, model=MODEL)
    assert found is not None and "test_Tz_boundary" in found


@pytest.mark.parametrize("label", ["Summary:", "\nSummary:\n", "**Summary**", "## Summary", "**Summary:**"])
def test_a_summary_label_the_model_opens_with_is_not_kept(label: str) -> None:
    """SmolLM2-135M-Instruct opened its accepted summary of git-bisect.txt's chunk #3 with a line 'Summary:',
    which doc_summarize showed under its own 'Summary of bisect ...' head: the label is no part of the text."""
    faithful = "Staging runs on port 8003; retention stays 9 days for the audit; deploys use scripts/deploy.sh."
    assert checked(f"{label}\n{faithful}", STEP, MODEL) == faithful
    inline = f"{label.strip()} {faithful}"
    assert checked(inline, STEP, MODEL) == inline  # a label inside its line stays
