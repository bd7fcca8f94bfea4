"""doc_search over real source: a member asked for with its owner's words brings its definition first.

Go 1.19's ``strings/builder.go`` and ``strings/builder_test.go`` (Debian's golang-1.19-src, copied into
the fixtures, see ``fixtures/NOTICE.txt``): ``strings builder write string`` asks for the method
``func (b *Builder) WriteString``, which the test file calls nine times and the source defines once.
"""

from __future__ import annotations

from pathlib import Path

from ctxtrio.text.definitions import Member, defines, members_defined
from ctxtrio.text.member_names import member_names

from .conftest import opened

FIXTURES = Path(__file__).resolve().parent / "fixtures"


async def test_a_go_method_asked_for_by_its_owners_words_comes_first(tmp_path: Path) -> None:
    """The first hit of ``strings builder write string`` holds ``WriteString``'s definition (before: the test
    file's ``TestBuilder``, which calls it most; no name the query spells whole is defined anywhere)."""
    async with opened(tmp_path, FIXTURES) as ctx:
        for name in ("go_strings_builder_test.go.txt", "go_strings_builder.go.txt"):
            await ctx.documents.ingest(file_path=str(FIXTURES / name), title=name.removesuffix(".txt"))
        result = await ctx.documents.search("strings builder write string", budget_tokens=1000)
        first = result.hits[0]
        assert "func (b *Builder) WriteString(s string) (int, error) {" in first.text, [
            (hit.title, hit.trail) for hit in result.hits
        ]


def test_member_names_run_from_the_last_words_then_the_first() -> None:
    """A short query's members: its words whole when it said the kind of name, then its last words, its first, and
    the runs between; a member the query says is of (``in``, ``of``) something comes first."""
    assert member_names("json decoder decode") == [
        Member("decoderdecode", ("json",)),
        Member("decode", ("json", "decoder")),
        Member("jsondecoder", ("decode",)),
        Member("json", ("decoder", "decode")),
        Member("decoder", ("json",)),  # a run inside, of the words before it
    ]
    assert member_names("hash map get node")[1] == Member("getnode", ("hash", "map"))  # ``get`` is a name's here
    assert member_names("where is NewReader defined in bufio") == [
        Member("newreader", ("bufio",)),  # ``in`` says whose it is
        Member("newreaderbufio", ()),
        Member("bufio", ("newreader",)),
    ]
    assert member_names("text wrapper class")[0] == Member("textwrapper", ())
    assert member_names("what does the function that parses a url do") == []  # a question, not a name


def test_a_member_is_defined_under_an_owner_its_words_name() -> None:
    """The owner is named by the trail, the document's title or the definition's own line (a Go receiver)."""
    go = "// WriteString appends.\nfunc (b *Builder) WriteString(s string) (int, error) {\n"
    assert members_defined(go, (Member("writestring", ("strings", "builder")),), "builder.go")
    assert not members_defined(go, (Member("writestring", ("bytes",)),), "buffer.go")
    java = "    final Node<K,V> getNode(Object key) {\n        Node<K,V>[] tab;\n"
    assert members_defined(java, (Member("getnode", ("hash", "map")),), "public class HashMap HashMap.java")
    assert not members_defined(java, (Member("getnode", ("tree",)),), "public class LinkedList LinkedList.java")


def test_the_members_a_text_defines_are_found_in_one_pass() -> None:
    """Of several members, exactly those the text defines under a named owner (OpenJDK 17's HashMap: getNode and
    putVal; not ``get``, which it only calls, nor ``putval`` of an owner the context does not name)."""
    java = (
        "    final Node<K,V> getNode(Object key) {\n        return null;\n    }\n"
        "    final V putVal(int hash, K key, V value) {\n        return get(key);\n    }\n"
    )
    get_node, put_val, get = Member("getnode", ("map",)), Member("putval", ("hash",)), Member("get", ("map",))
    context = "public class HashMap HashMap.java"
    assert set(
        members_defined(
            java,
            (
                get,
                put_val,
                get_node,
            ),
            context,
        )
    ) == {get_node, put_val}
    assert members_defined(java, (Member("putval", ("tree",)),), context) == {}


def test_java_and_javascript_methods_are_definitions() -> None:
    """Methods no keyword announces (OpenJDK 17's HashMap and Collections, webpack's Compilation) define their
    names; calls, statements and ``new`` do not."""
    assert defines("    final Node<K,V> getNode(Object key) {\n", "getnode")
    assert defines("    public static <T extends Comparable<? super T>> void sort(List<T> list) {\n", "sort")
    assert defines("    public HashMap(int initialCapacity) {\n", "hashmap")
    assert defines("\taddModule(module, callback) {\n", "addmodule")
    # The name on the line after a long generic return type: OpenJDK 17's java/net/http/HttpClient.java, 585-587.
    send_async = ("    public abstract <T> CompletableFuture<HttpResponse<T>>\n    sendAsync(HttpRequest request,\n"
                  "              BodyHandler<T> responseBodyHandler);\n")  # fmt: skip
    assert defines(send_async, "sendasync")
    assert members_defined(send_async, (Member("sendasync", ("http", "client")),), "public abstract class HttpClient")
    assert not defines("    private static final Set<Characteristics>\n    CH_ID = of(IDENTITY);\n", "of")
    assert not defines("        return getNode(key);\n", "getnode")
    assert not defines("\t\tif (module) {\n", "if")
    assert not defines("        tab = resize(n);\n", "resize")


async def test_a_member_defined_past_the_querys_rows_is_looked_for(tmp_path: Path) -> None:
    """With 40 copies of builder_test.go (about 300 rows calling WriteString, the query's rows to the 30th), the
    definition is found by the member and its nearest owner word (``writestring`` and ``builder``) and comes first."""
    test_file = FIXTURES / "go_strings_builder_test.go.txt"
    async with opened(tmp_path, FIXTURES) as ctx:
        for n in range(40):
            await ctx.documents.ingest(file_path=str(test_file), doc_id=f"test{n}", title=f"builder{n}_test.go")
        await ctx.documents.ingest(file_path=str(FIXTURES / "go_strings_builder.go.txt"), title="builder.go")
        result = await ctx.documents.search("strings builder write string", budget_tokens=1000)
        assert "func (b *Builder) WriteString(s string) (int, error) {" in result.hits[0].text, [
            (hit.title, hit.trail) for hit in result.hits
        ]


def test_a_member_is_a_definition_in_source_code_only() -> None:
    """A manual's entry or heading is no member definition (python3.11-doc's ``.. attribute:: maxlen`` under
    ``deque``: the class's own text answers ``deque maxlen``); a keyword's, a Java or a JavaScript method's are."""
    deque = ".. class:: deque([iterable, [maxlen]])\n\n   .. attribute:: maxlen\n\n      Maximum size of a deque.\n"
    assert not members_defined(deque, (Member("maxlen", ("deque",)),), "collections deque objects")
    assert not members_defined("### `deque.maxlen`\n", (Member("maxlen", ("deque",)),), "deque")
    assert members_defined("class Deque:\n    def maxlen(self):\n", (Member("maxlen", ("deque",)),), "class Deque")


async def test_a_function_asked_for_with_its_modules_file_name_is_looked_for_in_that_file(tmp_path: Path) -> None:
    """``subprocess run`` asks for ``def run`` of ``subprocess.py`` (its lines 506-575 in Python 3.11, see
    ``fixtures/NOTICE.txt``), whose text names ``subprocess`` once, in prose, while 40 scripts call
    ``subprocess.run`` (the query's rows and those of ``run`` beside ``subprocess``): the member alone is looked
    for in the file its owner word names, and comes first (before: a script)."""
    script = "import subprocess\n\n\ndef build(target):\n" + "".join(
        f"    subprocess.run(['make', target, '-j{n}'], check=True)  # subprocess run {n}\n" for n in range(12)
    )
    async with opened(tmp_path, FIXTURES) as ctx:
        for n in range(40):
            await ctx.documents.ingest(text=script, doc_id=f"script{n}", title=f"build{n}.py")
        await ctx.documents.ingest(file_path=str(FIXTURES / "python_subprocess_run.py.txt"), title="subprocess.py")
        result = await ctx.documents.search("subprocess run", budget_tokens=1000)
        assert result.hits[0].text.lstrip().startswith("def run(*popenargs,"), [
            (hit.title, hit.trail) for hit in result.hits
        ]


def test_a_members_name_keeps_the_stopword_before_or_ending_it() -> None:
    """``with`` in ``context with timeout`` starts Go's ``WithTimeout`` (context/context.go line 506), which
    comes before context.go's ``Timeout`` method (line 166) that ``timeout`` alone names; ``or`` starts
    ``orElseThrow`` and ``by`` ends ``groupingBy``. ``in`` joins an owner to its member and starts no name."""
    assert member_names("context with timeout")[:2] == [
        Member("withtimeout", ("context",)),
        Member("timeout", ("context",)),
    ]
    assert member_names("optional or else throw")[0] == Member("orelsethrow", ("optional",))
    assert member_names("collectors grouping by")[0] == Member("groupingby", ("collectors",))
    assert member_names("where is NewReader defined in bufio") == [
        Member("newreader", ("bufio",)),  # ``in`` says whose it is
        Member("newreaderbufio", ()),
        Member("bufio", ("newreader",)),
    ]
    with_timeout = "func WithTimeout(parent Context, timeout time.Duration) (Context, CancelFunc) {\n"
    timeout = "func (deadlineExceededError) Timeout() bool   { return true }\n"
    first = member_names("context with timeout")[0]
    assert members_defined(with_timeout, (first,), "context.go")
    assert not members_defined(timeout, (first,), "context.go")
