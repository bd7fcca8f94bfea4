"""doc_search over real source: a question that writes names as code (``errors.Is``, ``WaitGroup Wait``,
``ParseFile``) brings their definitions first, whatever its length.

Lines of Go 1.19, OpenJDK 17, serde_json 1.0.87, acorn 8 and CPython 3.11 (Debian's golang-1.19-src,
openjdk-17-source, librust-serde-json-dev, node-acorn, libpython3.11-stdlib), quoted where a test needs a line or
two, and Go's ``src/sync/waitgroup.go`` copied into ``fixtures`` (see ``fixtures/NOTICE.txt``).
"""

from __future__ import annotations

from pathlib import Path

from ctxtrio.docs.chunks import StoredChunk
from ctxtrio.docs.defined import definitions_first, in_tests
from ctxtrio.docs.packing import Candidate
from ctxtrio.text.asked import asked_name
from ctxtrio.text.definitions import Member, Name, members_defined
from ctxtrio.text.member_names import member_names
from ctxtrio.text.query import query_terms
from ctxtrio.text.tokens import TokenModel

from .conftest import opened

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MODEL = TokenModel.cold()


def _candidate(source: str, index: int, text: str, trail: tuple[str, ...] = ()) -> Candidate:
    chunk = StoredChunk(index, text, 0, len(text), trail, MODEL.estimate(text))
    return Candidate(source.rsplit("/", 1)[-1], source.rsplit("/", 1)[-1], chunk, 1.0, source=source)


def _first(candidates: list[Candidate], query: str) -> tuple[str, int]:
    """The source and chunk of the first of ``candidates`` once definitions come first, as a search orders them."""
    first = definitions_first(candidates, query_terms(query), query)[0]
    return first.source, first.chunk.index


async def test_a_long_question_brings_the_method_it_writes_first(tmp_path: Path) -> None:
    """``how does WaitGroup Wait block until the counter is zero`` asks for ``func (wg *WaitGroup) Wait()``
    (sync/waitgroup.go line 112), which its nine words never spelled as a name (before: no name at all, the
    first hit the file's head, its doc comment on waiting, without Wait's line)."""
    package = tmp_path / "root" / "sync"
    package.mkdir(parents=True)
    (package / "waitgroup.go").write_text((FIXTURES / "go_sync_waitgroup.go.txt").read_text(encoding="utf-8"))
    async with opened(tmp_path, tmp_path / "root") as ctx:
        await ctx.documents.ingest(file_path=str(package / "waitgroup.go"))
        result = await ctx.documents.search(
            "how does WaitGroup Wait block until the counter is zero", budget_tokens=1000
        )
        assert "func (wg *WaitGroup) Wait() {" in result.hits[0].text, [(hit.title, hit.trail) for hit in result.hits]


def test_a_question_asks_for_the_names_it_writes_as_code() -> None:
    """Past five words a question is no name, but the names it writes as code are asked for: a dotted name's last
    part of its qualifier, a name in mixed case and the capitalised word after it."""
    assert member_names("how does WaitGroup Wait block until the counter is zero")[0] == Member("wait", ("waitgroup",))
    assert member_names("how does errors.Is walk the chain of wrapped errors")[0] == Member("is", ("errors",))
    assert member_names("how does the scanner split its input into tokens at each newline") == []


def test_a_dotted_name_of_a_question_is_not_a_tests_helper() -> None:
    """``errors.Is`` asks for Go's ``func Is`` in errors/wrap.go (line 40), not the test's ``errorUncomparable``'s
    ``Is`` in errors/wrap_test.go (line 237), which ranks above it: a test's file defines helpers."""
    helper = _candidate("/go/src/errors/wrap_test.go", 5, "func (errorUncomparable) Is(target error) bool {\n")
    api = _candidate("/go/src/errors/wrap.go", 1, "func Is(err, target error) bool {\n")
    assert _first([helper, api], "how does errors.Is walk the chain of wrapped errors") == (api.source, 1)
    assert in_tests("/x/errors/wrap_test.go") and in_tests("/x/tests/time_sleep.rs") and in_tests("/x/test_os.py")
    assert not in_tests("/x/errors/wrap.go") and not in_tests("/x/contest.py")


def test_the_member_a_query_writes_of_its_owner_in_its_own_case() -> None:
    """``where is ParseFile defined in go/parser``: ``in`` makes go/parser the owner and ``ParseFile`` the member,
    and Go's exported ``func ParseFile`` (go/parser/interface.go line 82) comes before the parser's own
    ``parseFile`` (parser.go line 2875), whose receiver names ``parser`` (before: a question of five words, no
    member; then ``parser`` of ``parsefile`` and ``go``, which the extension of ``parser.go`` named)."""
    assert member_names("where is ParseFile defined in go/parser")[0] == Member("parsefile", ("go", "parser"))
    own = _candidate("/go/src/go/parser/parser.go", 71, "func (p *parser) parseFile() *ast.File {\n")
    exported = _candidate(
        "/go/src/go/parser/interface.go",
        2,
        "func ParseFile(fset *token.FileSet, filename string, src any, mode Mode) (f *ast.File, err error) {\n",
    )
    assert _first([own, exported], "where is ParseFile defined in go/parser") == (exported.source, 2)


def test_of_overloads_the_one_whose_parameters_the_query_names() -> None:
    """``string indexOf string from index`` asks for ``indexOf(String str, int fromIndex)`` (String.java line
    2536), not the first overload in the file (line 2379); ``arrays binary search int array`` for
    ``binarySearch(int[] a, int key)`` (Arrays.java line 1658), not the range search of longs before it."""
    string = "/jdk/java/lang/String.java"
    trail = ("public final class String", "public int indexOf")
    overloads = [
        _candidate(string, 76, "    public int indexOf(int ch) {\n", trail),
        _candidate(string, 78, "    public int indexOf(int ch, int fromIndex) {\n", trail),
        _candidate(string, 82, "    public int indexOf(String str) {\n", trail),
        _candidate(string, 83, "    public int indexOf(String str, int fromIndex) {\n", trail),
    ]
    assert _first(overloads, "string indexOf string from index") == (string, 83)
    arrays = "/jdk/java/util/Arrays.java"
    trail = ("public class Arrays", "public static int binarySearch")
    searches = [
        _candidate(arrays, 68, "    public static int binarySearch(long[] a, long key) {\n", trail),
        _candidate(arrays, 69, "    public static int binarySearch(long[] a, int fromIndex, int toIndex,\n", trail),
        _candidate(arrays, 70, "    public static int binarySearch(int[] a, int key) {\n", trail),
    ]
    assert _first(searches, "arrays binary search int array") == (arrays, 70)


def test_a_modules_function_before_a_method_of_another_class() -> None:
    """``logging.getLogger`` asks for the module's ``def getLogger(name=None)`` (logging/__init__.py line 2081),
    not ``class Manager``'s ``def getLogger(self, name)`` (line 1327), which comes first in the file: only the
    folder names ``logging``, and the method is nested in a class that does not."""
    manager = _candidate(
        "/usr/lib/python3.11/logging/__init__.py", 35, "    def getLogger(self, name):\n", ("class Manager",)
    )
    module = _candidate("/usr/lib/python3.11/logging/__init__.py", 56, "def getLogger(name=None):\n")
    query = "how does logging.getLogger find or create a logger by name"
    assert _first([manager, module], query) == (module.source, 56)


def test_rust_impls_of_generic_traits_and_javascript_functions_assigned_are_definitions() -> None:
    """serde_json's ``impl<I> ops::Index<I> for Value`` (value/index.rs line 178) implements ``Index``, and acorn's
    ``pp$8.parseStatement = function(...)`` (acorn.js line 883) defines ``parseStatement``; an impl's
    ``type Error = Error;`` (ser.rs line 65) names a definition and is none."""
    impl = "impl<I> ops::Index<I> for Value\nwhere\n    I: Index,\n{\n"
    index = members_defined(impl, (Member("index", ("value",)),), "index")
    assert [(found.keyword, found.near) for found in index.values()] == [("impl", True)]
    acorn = "  pp$8.parseStatement = function(context, topLevel, exports) {\n"
    assert members_defined(acorn, (Member("parsestatement", ("acorn",)),), "acorn.js", "dist acorn")
    alias = "impl serde::Serializer for Serializer {\n    type Error = Error;\n"
    assert not members_defined(alias, (Member("error", ("serde", "json")),), "ser serde::Serializer", "src serde_json")


def test_a_manuals_example_defines_no_member() -> None:
    """A ``def`` in a reST page's example is the page's illustration, not what a question about the library asks
    for: only source files' definitions are members (before: ``asyncio run timeout`` put the example's ``timeout``
    first, its title naming ``asyncio``)."""
    example = _candidate("/doc/library/asyncio-task.rst", 3, "    async def timeout():\n        pass\n")
    prose = _candidate("/doc/library/asyncio-task.rst", 9, "Timeouts\n========\n")
    assert _first([prose, example], "asyncio run timeout") == (prose.source, 9)


def test_question_words_after_a_name_are_its() -> None:
    """``get`` after ``thread local`` is a name's (Java's ``ThreadLocal.get``), and a stopword between a member's
    words is kept (``computeIfAbsent``)."""
    assert asked_name("thread local get", query_terms("thread local get")) == Name("threadlocalget")
    assert asked_name("How do I get the home folder", query_terms("How do I get the home folder")) == Name("homefolder")
    assert Member("computeifabsent", ("hash", "map")) in member_names("hash map compute if absent")


async def test_a_doc_comment_found_by_its_words_shows_the_definition_it_documents(tmp_path: Path) -> None:
    """A question that describes a function without its name matches its doc comment (Go 1.19's strconv/atof.go
    lines 673-694): the passage shown, cut to the budget, holds ``func ParseFloat`` (line 695), the line the
    comment documents, not only the comment's lines that hold the query's words."""
    source = tmp_path / "root" / "strconv" / "atof.go"
    source.parent.mkdir(parents=True)
    source.write_text((FIXTURES / "go_strconv_parsefloat.go.txt").read_text(encoding="utf-8"))
    async with opened(tmp_path, tmp_path / "root") as ctx:
        await ctx.documents.ingest(file_path=str(source))
        query = (
            "the function that accepts decimal and hexadecimal floating-point numbers with IEEE754 unbiased rounding"
        )
        result = await ctx.documents.search(query, budget_tokens=200)
        assert result.hits[0].cut, result.hits[0].text  # the budget cuts the chunk: the passage is chosen
        assert "func ParseFloat(s string, bitSize int) (float64, error) {" in result.hits[0].text, result.hits[0].text
