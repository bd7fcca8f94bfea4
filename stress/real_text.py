"""Real text for the ingest benchmarks: the Python stdlib sources, a documentation set, a log, CJK.

Synthetic text from a small vocabulary flatters an ingest (few distinct words, no
identifiers, no CJK): measured CPU per MB on the stdlib sources was 3.5 times that of
``bench_docs``' markdown. Every benchmark that reports ingest speed takes ``--corpus``
from :data:`CORPORA`:

* ``stdlib``: every non-empty ``.py`` file of the running Python's standard library
  (``site-packages`` excluded), read as UTF-8 (the few that are not are skipped);
  for 3.11: 1,760 files, 31.5 MB.
* ``docs``: the reStructuredText sources of the Python documentation, from Debian's
  ``python3-doc`` (``/usr/share/doc/python3.*/html/_sources``; 497 files, 11 MB).
* ``log``: the machine's package logs (``/var/log/dpkg.log``, ``apt/term.log``, ...).
* ``cjk``: the Simplified Chinese manual pages of Debian's ``manpages-zh`` (roff
  source, decompressed; 793 files, 6.3 MB).

``apt-get install python3-doc manpages-zh`` provides the last two; :func:`load` says
what is missing rather than falling back to something else.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["CORPORA", "Doc", "code_trees", "concatenated", "identifier_queries", "load", "megabytes", "tree_docs"]


@dataclass(frozen=True, slots=True)
class Doc:
    name: str
    text: str


def _stdlib() -> list[Doc]:
    root = Path(json.__file__).resolve().parent.parent
    docs: list[Doc] = []
    for path in sorted(root.rglob("*.py")):
        if "site-packages" in path.parts or path.stat().st_size == 0:
            continue
        try:
            docs.append(Doc(str(path.relative_to(root)), path.read_text(encoding="utf-8")))
        except (UnicodeDecodeError, OSError):
            continue
    return docs


def _docs() -> list[Doc]:
    found = sorted(Path("/usr/share/doc").glob("python3.*/html/_sources"))
    if not found:
        raise SystemExit("corpus 'docs' needs Debian's python3-doc: apt-get install python3-doc")
    root = found[-1]
    return [Doc(str(path.relative_to(root)), path.read_text(encoding="utf-8")) for path in sorted(root.rglob("*.txt"))]


def _log() -> list[Doc]:
    names = ["/var/log/dpkg.log", "/var/log/apt/term.log", "/var/log/apt/history.log", "/var/log/alternatives.log"]
    docs = [
        Doc(name.lstrip("/"), Path(name).read_text(encoding="utf-8", errors="replace"))
        for name in names
        if Path(name).is_file()
    ]
    if not docs:
        raise SystemExit("corpus 'log' found no package logs under /var/log")
    return docs


def _cjk() -> list[Doc]:
    root = Path("/usr/share/man/zh_CN")
    pages = sorted(root.glob("man*/*.gz"))
    if not pages:
        raise SystemExit("corpus 'cjk' needs Debian's manpages-zh: apt-get install manpages-zh")
    docs: list[Doc] = []
    for page in pages:
        text = gzip.decompress(page.read_bytes()).decode("utf-8", errors="replace")
        if text.strip():
            docs.append(Doc(str(page.relative_to(root)), text))
    return docs


CORPORA: dict[str, Callable[[], list[Doc]]] = {"stdlib": _stdlib, "docs": _docs, "log": _log, "cjk": _cjk}


#: Where ``stress/code_questions.py``'s ``--jdk`` default unzipped OpenJDK 17's ``src.zip``.
JDK = "/work/data/code25/jdk"


def tree_docs(paths: list[str]) -> list[Doc]:
    """The non-empty UTF-8 text files ``ctxtrio ingest PATHS`` walks (:func:`ctxtrio.cli.walk.find_files`),
    named by their paths, so a file's kind is the one its name gives a file ingest."""
    from ctxtrio.cli.walk import find_files

    docs: list[Doc] = []
    for path, _size in find_files(paths, ()).files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if text.strip() and "\0" not in text:
            docs.append(Doc(str(path), text))
    return docs


def code_trees(languages: list[str], jdk: str = JDK) -> list[Doc]:
    """The files of ``stress/code_questions.py``'s source trees (``TREES``) of ``languages``, in order."""
    from code_questions import TREES

    return [doc for language in languages for doc in tree_docs([path.format(jdk=jdk) for path in TREES[language]])]


def load(name: str) -> list[Doc]:
    """The documents of corpus ``name`` (see the module docstring)."""
    return CORPORA[name]()


def megabytes(docs: list[Doc]) -> float:
    """UTF-8 size of ``docs`` in MB (10^6 bytes)."""
    return sum(len(doc.text.encode("utf-8", "surrogatepass")) for doc in docs) / 1e6


_DEFINED = re.compile(r"^\s*(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]{5,})", re.MULTILINE)


_WORD = re.compile(r"\b[A-Za-z][A-Za-z0-9_]{5,}\b")


def identifier_queries(texts: list[str], count: int, seed: int = 7) -> list[str]:
    """``count`` names of functions and classes defined in ``texts`` (6+ characters), chosen
    with ``seed``; words of 6+ characters instead where the texts define fewer (logs, prose)."""
    names = sorted({name for text in texts for name in _DEFINED.findall(text)})
    if len(names) < count:
        names = sorted({word for text in texts for word in _WORD.findall(text)})
    return random.Random(seed).sample(names, min(count, len(names)))


def concatenated(docs: list[Doc], sizes: list[int]) -> list[str]:
    """Texts of about ``sizes`` bytes each, cut from the corpus files joined in order (wrapping
    round when used up), each cut at a line break; every text a different stretch while the
    corpus lasts."""
    joined = "".join(doc.text if doc.text.endswith("\n") else doc.text + "\n" for doc in docs)
    texts: list[str] = []
    position = 0
    for size in sizes:
        if position >= len(joined):
            position = 0
        end = joined.find("\n", min(len(joined), position + size)) + 1 or len(joined)
        texts.append(joined[position:end])
        position = end
    return texts


if __name__ == "__main__":
    for corpus in sys.argv[1:] or list(CORPORA):
        loaded = load(corpus)
        print(f"{corpus}: {len(loaded)} files, {megabytes(loaded):.1f} MB")
