"""How the hits of one answer share its budget (docs/sharing.Shares), apart from what each shows."""

from __future__ import annotations

from ctxtrio.docs.chunks import StoredChunk
from ctxtrio.docs.packing import Candidate
from ctxtrio.docs.sharing import MIN_SHARE, Shares
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
