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
