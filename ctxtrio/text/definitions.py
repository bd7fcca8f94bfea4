"""Does a text define the identifier a query spells? (``json decode error`` → ``class JSONDecodeError``).

A search for a function or class by its words should bring its definition first, not the chunks that merely use
it most. What a query asks for (the identifier its words spell, qualified where it writes a dotted name, the
members of an owner it names) is :mod:`.asked`'s. :func:`defines` says whether a text holds
a definition of an identifier of that spelling: a ``def``/``class``/``function``/
``func``/``fn``/``struct``/... line, a reST or Sphinx API entry (``.. function:: name``)
(each of its signatures: Sphinx takes one a line, ``.. data:: X`` then ``VERBOSE``
aligned below it, as ``re``'s flags and overloaded functions are written) or a markdown
heading that starts with the name, after a label (``### Static method:
`Buffer.allocUnsafe(size)```). Where the definition names a qualifier (``fsPromises.rm``),
it must be the one asked for (``fs.rm``); :func:`members_defined` says which members of an owner a
text defines.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from .methods import METHOD_MODIFIERS, split_return_type

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "Defined",
    "Member",
    "Name",
    "declared_name",
    "definition_at",
    "definition_lines",
    "defines",
    "last_definition",
    "members_defined",
    "names_qualifier",
    "owner_runs",
    "spelling",
]

_DEFINED: Final = re.compile(
    r"(?:(?P<keyword>)\b(?:def|class|function|func|fn|fun|struct|enum|trait|interface|type|record|impl|module|object|protocol)"
    # Rust's ``impl<I> ops::Index<I> for Value``: an impl's type parameters, then a path to the trait.
    r"(?:(?<=impl)(?:<[^\n{]*?>)?[ \t]+(?:[\w$]+::)*|(?<!impl)"
    r"[ \t]+(?:\([^)\n]*\)[ \t]*)?(?:(?P<code>[\w$]+)\.)?)"
    r"|^[ \t]*\.\.[ \t]+c(?:pp)?:(?:function|member|type|var|macro|struct)::[ \t]+"
    r"(?:[^(\n]*\([ \t]*\*[ \t]*|(?:[^(\n]*[ \t*&])?)"
    r"|^[ \t]*\.\.[ \t]+(?:\w+:)?(?:class|function|method|attribute|exception|data|decorator|module)::[ \t]+"
    r"(?:(?P<entry>[\w.]+)\.)?"
    r"|^#{1,6}[ \t]+(?:[A-Z][A-Za-z ]{0,30}:[ \t]+)?`?(?:(?P<heading>[\w.]+)\.)?"
    # A Java or C# method or constructor, which no keyword announces: a line of modifiers, type
    # parameters and a return type before the name and its ``(`` (``public T get()``, ``final
    # Node<K,V> getNode(Object key)``, ``public static <T extends Comparable<? super T>> void sort(``), or
    # the name on the next line, after a long generic return type (the chunker's pattern, split_return_type:
    # OpenJDK's ``public static <T, K> Collector<T, ?, Map<K, List<T>>>`` then ``groupingBy(Function<...``).
    r"|(?P<method>)^(?P<method_indent>[ \t]*)(?:"
    + split_return_type("(?P=method_indent)")
    + rf"|(?:(?:{METHOD_MODIFIERS})[ \t]+)+(?:<[^\n(]*?>[ \t]+)?(?:[\w$.<>\[\],?]+[ \t]+)?)"
    r"(?=[A-Za-z_$][\w$]*[ \t]*\()"
    # A JavaScript class method: an indented name, its parameters on the line and ``{`` ending it
    # (``  addModule(module, callback) {``), not a call or a statement such as ``if (x) {``.
    # A JavaScript function assigned to a property or a variable (acorn's ``pp$8.parseStatement = function(``,
    # ``exports.parse = function``, ``var parse = function``).
    r"|(?P<assigned>)^[ \t]*(?:(?:const|let|var)[ \t]+|(?:[\w$]+\.)+)"
    r"(?=[A-Za-z_$][\w$]*[ \t]*=[ \t]*(?:async[ \t]+)?function\b)"
    r"|(?P<js_method>)^[ \t]+(?:(?:static|async|get|set)[ \t]+)*\*?(?!(?:if|for|while|switch|catch|return|function|with|else)\b)"
    r"(?=[A-Za-z_$][\w$]*[ \t]*\([^()\n]*\)[ \t]*\{[ \t]*$))"
    r"(?P<name>[A-Za-z_$][\w$]*)",
    re.MULTILINE,
)
#: A Sphinx API entry with more signatures than one: the directive's line, then its further
#: signatures, one a line, indented, up to a blank line or the entry's options (``:noindex:``).
_ENTRY_SIGNATURES: Final = re.compile(
    r"^([ \t]*)\.\.[ \t]+(?:\w+:)?(?:class|function|method|attribute|exception|data|decorator)::[^\n]*\n"
    r"((?:\1[ \t]+[^\s:][^\n]*\n?)+)",
    re.MULTILINE,
)
#: The name a further signature starts with, and the qualifier it is written with.
_SIGNATURE: Final = re.compile(r"[ \t]*(?:(?P<entry>[\w.]+)\.)?(?P<name>[A-Za-z_$][\w$]*)")
_SEPARATORS: Final = str.maketrans("", "", "_$")
_NONE_DEFINED: Final[Mapping[Member, Defined]] = MappingProxyType({})
#: What follows a name defined as another definition of a name: ``= Error;``, ``= bufio.Reader``, ``= io::Error;``.
_ALIAS: Final = re.compile(r"[ \t]*=[ \t]*(?:[\w$]+(?:::|\.))*([\w$]+)[ \t]*;?[ \t]*$", re.MULTILINE)
#: The words that say a definition is not for its owner's users, before its name.
_HIDDEN: Final = frozenset(("private", "protected"))
#: What a comment's line starts with, in the languages whose definitions :data:`_DEFINED` finds (and a
#: docstring's example, ``>>>``).
_COMMENTS: Final = ("//", "/*", "*", "#", ">>>", "--")
#: Words as written: of a definition's line and of what names its owner (:func:`members_defined`).
_WORDS: Final = re.compile(r"[\w$]+")
#: The name a C or C++ declaration declares: the one in a function pointer's ``(*name)``, else
#: the last identifier before the parameters (``PyObject* PyList_New(Py_ssize_t len)``, ``void *buf``).
#: Dotted, as Sphinx writes a member of a struct (``const char* PyTypeObject.tp_name``).
_C_POINTER: Final = re.compile(r"\(\s*\*\s*([A-Za-z_][\w.]*)\s*\)")
_C_NAME: Final = re.compile(r"[A-Za-z_][\w.]*")


@dataclass(frozen=True, slots=True)
class Member:
    """A name a short query may ask for with its owner's words: ``identifier`` (spelled as
    :func:`spelling` spells) and the query's other words, ``owners`` (``decode`` of a Go ``Decoder``
    for ``json decoder decode``; ``getnode`` of Java's ``HashMap`` for ``hash map get node``)."""

    identifier: str
    owners: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Name:
    """The name a query asks for: ``identifier`` spelled as :func:`~.asked.spelled_identifier` does, and
    the last part of the qualifier it was written with (``buffer`` for ``Buffer.allocUnsafe``), if any."""

    identifier: str
    qualifier: str | None = None


@dataclass(frozen=True, slots=True)
class Defined:
    """How a text defines a member (:func:`members_defined`): where the definition's line starts (``at``), the
    keyword that announces it (``class``, ``func``, ``type``, ``trait``...; ``""`` for a Java or JavaScript method
    no keyword announces, as a constructor shares its class's name), whether its owner is named whole near it (in
    the chunk's trail, its document's title or the definition's line: ``near``; not inside a longer name, as
    ``parse`` in ``parser.js``, nor only by the folders its file is in) and whether its owner is named as a whole name (``owner_whole``: ``Optional`` for ``optional or
    else throw``, not inside ``OptionalDouble``), and whether it is said to be hidden: ``private`` or ``protected``
    before its name, a Rust ``fn`` without ``pub`` (``fn from_str`` of an ``impl FromStr``, not ``pub fn
    from_str``), or a name starting with ``_`` (Python's ``_copytree`` beside ``copytree``); a line that says none
    of these, or that a chunk's start cut from its modifiers, is not."""

    at: int
    keyword: str
    near: bool
    owner_whole: bool
    hidden: bool = False
    #: The name as the definition writes it (``ParseFile``, ``parseFile``).
    written: str = ""


@functools.lru_cache(maxsize=512)
def members_defined(
    text: str, members: tuple[Member, ...], context: str, folders: str = "", kinds: frozenset[str] | None = None
) -> Mapping[Member, Defined]:
    """Which of ``members`` ``text`` defines in source code (see :func:`_in_code`), not in a comment, where one of
    the member's owner words is named: in ``context`` (the chunk's heading trail and its document's title: ``public
    class HashMap``, ``bufio.go``), on the definition's own line (a Go method's receiver, ``func (dec *Decoder)
    Decode``) or in ``folders`` (the folders its file is in: Go's package ``strconv``, a crate's ``tokio-1.24.2``);
    each with its first such definition, or its first of the ``kinds`` asked for (the keywords of
    :func:`asked_keywords`: @types/node's ``class EventEmitter`` after its ``interface EventEmitter`` in one chunk,
    for ``where is the EventEmitter class declared``). One pass over ``text`` for all of them: the text and the context are
    spelled once. Remembered (the last 512): a search asks it of the same chunks two or three times (before and
    after re-ranking, and of a row read only for a member: ~37 calls a search over the code trees); not to be
    changed."""
    spelled = spelling(text)
    wanted = [member for member in members if member.identifier in spelled]
    if not wanted:
        return _NONE_DEFINED  # the common case, without the regex
    named_around, named_folders = spelling(context), spelling(folders)
    found: dict[Member, Defined] = {}
    for definition in _code_definitions(text):
        here = [
            member
            for member in wanted
            if member.identifier == definition.name
            and (
                member not in found
                or (kinds is not None and found[member].keyword not in kinds and definition.keyword in kinds)
            )
        ]
        if not here:
            continue
        line_start = definition.line_start
        named = named_around + " " + spelling(text[line_start : definition.line_end])
        names_near = frozenset(_WORDS.findall(named))
        names = names_near | frozenset(_WORDS.findall(named_folders))
        for member in here:
            runs = owner_runs(member.owners)
            if not member.owners or any(owner in named or owner in named_folders for owner in member.owners):
                near = not member.owners or any(run in names_near for run in runs)
                whole = any(run in names for run in runs)
                found[member] = Defined(
                    line_start, definition.keyword, near, whole, definition.hidden, definition.written
                )
    return MappingProxyType(found)


@dataclass(frozen=True, slots=True)
class _CodeDefinition:
    """A definition in source code that :data:`_DEFINED` finds (:func:`_code_definitions`)."""

    #: Its name, spelled (:func:`spelling`), and as written.
    name: str
    written: str
    #: The keyword that announces it (``""``: none, a Java or JavaScript method).
    keyword: str
    #: Where its line starts, and where the part of it that may name an owner ends: before its parameters, whose
    #: types name none, or at the line's end.
    line_start: int
    line_end: int
    #: Said not for its owner's users (see :class:`Defined`).
    hidden: bool


@functools.lru_cache(maxsize=2048)
def _code_definitions(text: str) -> tuple[_CodeDefinition, ...]:
    """The definitions in source code ``text`` holds, in order (see :func:`_in_code`), but those in a comment, an
    example (Rust's ``/// #  trait Serialize {}``), and an alias of the same name (``type Error = Error;``, an
    impl's associated type: it names the definition, it is not it). Remembered by text (the last 2,048): a search
    asks which members a chunk defines for several lists of members (the rows a lookup read, the candidates
    before and after re-ranking, a dotted name's qualifier), one pass of the regex for all."""
    found: list[_CodeDefinition] = []
    for match in _DEFINED.finditer(text):
        if not _in_code(match):
            continue
        line_start = text.rfind("\n", 0, match.start()) + 1
        if text[line_start : match.start()].lstrip().startswith(_COMMENTS):
            continue
        written = match.group("name")
        name = spelling(written)
        if _alias_of(text, match.end("name"), name):
            continue
        keyword = _WORDS.match(text, match.start()) if match.group("keyword") is not None else None
        line_end = text.find("\n", match.end())
        line_end = line_end if line_end >= 0 else len(text)
        parameters = text.find("(", match.end("name"), line_end)
        said = frozenset(_WORDS.findall(text, line_start, match.start("name")))
        hidden = not _HIDDEN.isdisjoint(said) or ("fn" in said and "pub" not in said) or written.startswith("_")
        found.append(
            _CodeDefinition(
                name,
                written,
                keyword.group(0) if keyword else "",
                line_start,
                parameters if parameters >= 0 else line_end,
                hidden,
            )
        )
    return tuple(found)


def _alias_of(text: str, end: int, name: str) -> bool:
    """Whether the definition whose name ends at ``end`` gives it another definition of the same name (spelled
    ``name``): Rust's ``type Error = Error;`` in an impl, Go's ``type Reader = bufio.Reader``."""
    alias = _ALIAS.match(text, end)
    return alias is not None and spelling(alias.group(1)) == name


def definition_lines(text: str) -> tuple[int, ...]:
    """Where the lines of the definitions in source code ``text`` holds start, in order (as :func:`members_defined`
    finds them: not in a comment, not an alias)."""
    return tuple(definition.line_start for definition in _code_definitions(text))


def owner_runs(words: Sequence[str]) -> list[str]:
    """The runs of consecutive ``words`` joined (``hash map``: ``hash``, ``hashmap``, ``map``): how an owner's
    name may be spelled whole."""
    return ["".join(words[start:end]) for start in range(len(words)) for end in range(start + 1, len(words) + 1)]


def _in_code(match: re.Match[str]) -> bool:
    """Whether a :data:`_DEFINED` match is a definition in source code (a keyword's, a Java or a JavaScript
    method's), not a reST entry or a markdown heading: a manual's ``.. attribute:: maxlen`` under ``deque``
    answers ``deque maxlen`` less than the class's own text does, which the dotted-name rules already weigh."""
    return (
        match.group("keyword") is not None
        or match.group("method") is not None
        or match.group("js_method") is not None
        or match.group("assigned") is not None
    )


def names_qualifier(doc_id: str, qualifier: str) -> bool:
    """Whether a document's id ends with the name ``qualifier`` spells (``library.re``, ``re``;
    ``fs`` for ``fs``): the page of a module or class holds its own entries."""
    return spelling(doc_id.rsplit(".", 1)[-1]) == qualifier


def spelling(word: str) -> str:
    """How definitions compare names: lower case, without ``_`` and ``$`` (``JSONDecodeError``,
    ``json_decode_error`` and ``jsondecodeerror`` are one)."""
    return word.lower().translate(_SEPARATORS)


def declared_name(declaration: str) -> str | None:
    """The name a C or C++ declaration (a ``c:`` or ``cpp:`` entry's signature) declares, not the type
    written before it: ``PyList_New`` of ``PyObject* PyList_New(Py_ssize_t len)``, ``visitproc`` of
    ``int (*visitproc)(PyObject *object, void *arg)``, ``PyTypeObject.tp_name`` of ``const char*
    PyTypeObject.tp_name``; None when it holds no identifier."""
    pointer = _C_POINTER.search(declaration)
    if pointer is not None:
        return pointer.group(1).rstrip(".")
    names = _C_NAME.findall(declaration.partition("(")[0])
    return names[-1].rstrip(".") if names else None


def defines(text: str, identifier: str, qualifier: str | None = None) -> bool:
    """Whether ``text`` defines a name spelled ``identifier`` (case and ``_`` ignored); with a
    ``qualifier``, a definition that names its own qualifier must name that one."""
    return definition_at(text, identifier, qualifier) is not None


def definition_at(text: str, identifier: str, qualifier: str | None = None) -> int | None:
    """Where in ``text`` the first definition :func:`defines` looks for starts, or None."""
    if identifier not in spelling(text):
        return None  # the common case, without the regex
    for match in _DEFINED.finditer(text):
        if spelling(match.group("name")) != identifier:
            continue
        own = match.group("code") or match.group("entry") or match.group("heading")
        if _qualified(own, qualifier):
            return match.start()
    further = [at for own, at in _further_signatures(text, identifier) if _qualified(own, qualifier)]
    return min(further, default=None)


def last_definition(text: str, at: int) -> bool:
    """Whether no line after the one at ``at`` starts with a definition of any name (as :func:`defines`
    knows them): the entry defined there runs to the end of ``text``."""
    end = text.find("\n", at)
    if end < 0:
        return True
    for match in _DEFINED.finditer(text, end):
        line_start = text.rfind("\n", 0, match.start()) + 1
        if not text[line_start : match.start()].strip():  # a line that starts with it, not prose ("an object using")
            return False
    return True


def _qualified(own: str | None, qualifier: str | None) -> bool:
    """Whether a definition written with qualifier ``own`` (None: none) is of the one asked for."""
    return qualifier is None or own is None or spelling(own.rsplit(".", 1)[-1]) == qualifier


def _further_signatures(text: str, identifier: str) -> list[tuple[str | None, int]]:
    """The qualifiers (None: none written) and places of the further signatures of ``text``'s Sphinx
    entries that name ``identifier`` (a line after one ending in ``\\`` goes on with the signature above)."""
    found: list[tuple[str | None, int]] = []
    for entry in _ENTRY_SIGNATURES.finditer(text):
        after_backslash = entry.group(0).split("\n", 1)[0].rstrip().endswith("\\")
        at = entry.start(2)
        for line in entry.group(2).splitlines(keepends=True):
            signature = None if after_backslash else _SIGNATURE.match(line)
            after_backslash = line.rstrip().endswith("\\")
            if signature is not None and spelling(signature.group("name")) == identifier:
                found.append((signature.group("entry"), at))
            at += len(line)
    return found
