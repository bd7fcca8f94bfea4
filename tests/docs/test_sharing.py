"""How the hits of one answer share its budget (docs/sharing.Shares), apart from what each shows."""

from __future__ import annotations

from ctxtrio.docs.chunks import StoredChunk
from ctxtrio.docs.packing import Candidate, pack_hits
from ctxtrio.docs.sharing import MEANING_SHARE, MIN_SHARE, Shares
from ctxtrio.text.tokens import TokenModel

MODEL = TokenModel.cold()
TEXT = "".join(f"Line {n} of a long section about the cache.\n" for n in range(200))


def candidates(*scores: float) -> list[Candidate]:
    chunk = StoredChunk(0, TEXT, 0, len(TEXT), ("Cache",), MODEL.estimate(TEXT))
    return [Candidate(f"doc{n}", f"doc{n}.txt", chunk, score) for n, score in enumerate(scores)]


def test_a_first_hit_that_leads_takes_more_than_half_and_a_close_one_half() -> None:
    """Of 1,000 tokens the first hit takes 550 when the second scores 7 against its 10, 500 at 9."""
    assert Shares(candidates(10.0, 7.0, 6.0), MODEL, ["cache"]).share(0, 1000) == 550
    assert Shares(candidates(10.0, 9.0, 6.0), MODEL, ["cache"]).share(0, 1000) == 500


def test_a_hit_after_which_none_could_be_shown_takes_the_rest() -> None:
    """The last candidate takes all that is left, and so does one whose share would leave too little."""
    shares = Shares(candidates(10.0, 9.0), MODEL, ["cache"])
    assert shares.share(1, 400) == 400
    assert shares.share(0, 2 * MIN_SHARE - 1) == 2 * MIN_SHARE - 1
    assert not shares.any_shown(2, 10_000)


def test_a_query_whose_words_match_poorly_gives_each_hit_more_and_no_lead() -> None:
    """Not ``worded`` (semantic recall ordered its hits): of 1,000 tokens each hit may take MEANING_SHARE, 600,
    the first as much whether or not its BM25 score leads; a worded query's first takes 550 or 500."""
    for scores in ((10.0, 7.0, 6.0), (10.0, 9.0, 6.0)):
        shares = Shares(candidates(*scores), MODEL, ["cache"], worded=False)
        assert shares.share(0, 1000) == shares.share(1, 1000) == int(1000 * MEANING_SHARE) == 600
    assert Shares(candidates(10.0, 7.0, 6.0), MODEL, ["cache"], worded=True).share(0, 1000) == 550


def test_pack_hits_gives_the_first_hit_of_a_poorly_matched_query_more_room() -> None:
    """pack_hits passes ``worded`` on: the first of two long hits shows more of its text when it is False."""
    texts = ["".join(f"Line {n} of {page}, a long section about the cache.\n" for n in range(200)) for page in "ab"]
    two = [
        Candidate(f"doc{n}", f"doc{n}.txt", StoredChunk(0, text, 0, len(text), ("Cache",), MODEL.estimate(text)), 9.0)
        for n, text in enumerate(texts)
    ]
    worded, _, _ = pack_hits(two, 1000, MODEL, ["cache"])
    meaning, _, _ = pack_hits(two, 1000, MODEL, ["cache"], worded=False)
    assert len(worded) == len(meaning) == 2
    assert meaning[0].tokens > worded[0].tokens and meaning[1].tokens < worded[1].tokens
