"""Entry leads (text/leads.py): one short embedding input per API entry and title, on real reference text."""

from __future__ import annotations

from pathlib import Path

from ctxtrio.text.leads import NAME_CHARS, entry_leads

FIXTURES = Path(__file__).parent / "fixtures"


def _said(text: str, trail: tuple[str, ...] = ()) -> dict[str, str]:
    """Each lead's text after its trail line, by the characters it shows."""
    return {lead.text.split("\n", 1)[-1]: text[lead.start : lead.end] for lead in entry_leads(text, trail)}


def test_an_api_entry_leads_with_its_signature_and_first_sentence() -> None:
    text = (FIXTURES / "python_json.rst.txt").read_text(encoding="utf-8")
    leads = _said(text)
    lead = next(said for said in leads if said.startswith("function loads(s, *"))
    assert lead.endswith(
        ": Deserialize s (a str, bytes or bytearray instance containing a JSON document)"
        " to a Python object using this conversion table."
    )
    shown = leads[lead]
    assert shown.startswith(".. function:: loads(s, *")
    assert shown.endswith("using this\n   :ref:`conversion table <json-to-py-table>`.")


def test_a_module_leads_with_its_synopsis_and_options_are_not_sentences() -> None:
    text = (FIXTURES / "python_json.rst.txt").read_text(encoding="utf-8")
    first = entry_leads(text, ("json --- JSON encoder and decoder",))[0]
    assert first.text == "json --- JSON encoder and decoder\nmodule json: Encode and decode the JSON format."
    assert text[first.start : first.end] == ".. module:: json\n   :synopsis: Encode and decode the JSON format."
    assert not any(":noindex:" in said or said.endswith(": ") for said in _said(text))


def test_further_signatures_join_the_name_and_a_long_one_is_cut() -> None:
    text = (
        ".. function:: chdir(path)\n"
        "              fchdir(fd)\n"
        "              getcwd()\n"
        "   :noindex:\n"
        "\n"
        "   These functions are described in :ref:`os-file-dir`.\n"
        "\n"
        f".. function:: spam({'x, ' * 100}y)\n"
        "\n"
        "   Eat it.\n"
    )
    leads = list(_said(text))
    long_name = "spam(" + "x, " * 100 + "y)"
    assert leads[0] == "function chdir(path), fchdir(fd), getcwd(): These functions are described in os-file-dir."
    assert leads[1] == f"function {long_name[:NAME_CHARS]}: Eat it."


def test_titles_lead_with_their_first_sentence_and_a_title_over_a_title_has_none() -> None:
    text = (
        "Overview\n"
        "========\n"
        "\n"
        "Turtle methods\n"
        "--------------\n"
        "\n"
        "The turtle moves forward. It turns.\n"
        "\n"
        "Tables\n"
        "------\n"
        "\n"
        "+-----+-----+\n"
        "| a   | b   |\n"
        "+-----+-----+\n"
    )
    assert _said(text, ("Turtle graphics",)) == {
        "Turtle methods: The turtle moves forward.": "Turtle methods\n--------------\n\nThe turtle moves forward."
    }


def test_markdown_entries_skip_metadata_parameter_lists_and_notes() -> None:
    text = (FIXTURES / "node_timers.md").read_text(encoding="utf-8")
    leads = _said(text, ("Timers",))
    assert "clearTimeout(timeout): Cancels a Timeout object created by setTimeout()." in leads
    assert "immediate.hasRef(): If true, the Immediate object will keep the Node.js event loop active." in leads
    assert not any("YAML" in said or "Returns:" in said or "Stability:" in said for said in leads)


def test_the_trail_drops_entries_and_markup() -> None:
    text = ".. method:: Path.stem\n\n   The final path component, without its suffix.\n"
    (lead,) = entry_leads(text, (":mod:`pathlib` --- Object-oriented filesystem paths", "method Path.suffix"))
    assert lead.text == (
        "pathlib --- Object-oriented filesystem paths\nmethod Path.stem: The final path component, without its suffix."
    )


def test_text_without_entries_has_no_leads() -> None:
    assert entry_leads("just a paragraph of prose. Another sentence.\n\nAnd one more.") == []
    assert entry_leads("") == []
    assert entry_leads("# add the totals up\ntotal = sum(values) + extra\n") == []  # a comment over code
