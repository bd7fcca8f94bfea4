"""Tests for ctxtrio.text.code: source split at definitions, with enclosing definitions as trails."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from ctxtrio.text import code
from ctxtrio.text.code import code_parts
from ctxtrio.text.definitions import defines
from ctxtrio.text.kinds import CODE_KINDS, Kind

FIXTURES = Path(__file__).parent / "fixtures"


def trails(text: str, kind: Kind) -> list[tuple[str, tuple[str, ...], bool]]:
    """(first line, trail, heading) of every part."""
    return [
        (text[start:end].strip().split("\n")[0], trail, heading)
        for start, end, trail, heading in code_parts(text, kind)
    ]


@pytest.mark.parametrize("kind", sorted(CODE_KINDS))
def test_parts_tile_random_code(kind: Kind) -> None:
    """Parts are contiguous, non-empty and cover the whole text, for any input."""
    rng = random.Random(9)
    pieces = ["def f():\n", "    def g(self):\n", "class A:\n", "    x = 1\n", "\n", "# c\n", "@dec\n",
              "func (r *R) Read() {\n", "}\n", "fn main() {\n", "impl A for B {\n", "  public void run() {\n",
              "export function h() {\n", "    m(a) {\n", "x", "\r\n", "\t\n"]  # fmt: skip
    for _ in range(300):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 30)))
        parts = list(code_parts(text, kind))
        assert parts[0][0] == 0 and parts[-1][1] == len(text)
        assert all(start < end for start, end, _, _ in parts)
        assert all(a[1] == b[0] for a, b in zip(parts, parts[1:]))


def test_python_methods_nest_and_dedent_closes() -> None:
    """Methods carry their class; top-level code after a definition leaves it."""
    text = ('"""Doc."""\nimport re\n\n\n# Use speedup if available\nclass A(B):\n    """A."""\n\n'
            "    @property\n    def x(self):\n        return 1\n\n        # inside\n        y = 2\n\n"
            "    async def y(self):\n        pass\n\n\nspeed = 1\n\ndef f():\n    pass\n")  # fmt: skip
    assert trails(text, Kind.PYTHON) == [
        ('"""Doc."""', (), False),
        ("# Use speedup if available", ("class A",), True),  # the comment above joins the definition
        ("@property", ("class A", "def x"), True),
        ("# inside", ("class A", "def x"), False),  # a comment is never a heading
        ("async def y(self):", ("class A", "async def y"), True),
        ("speed = 1", (), False),
        ("def f():", ("def f",), True),
    ]


def test_comment_lines_are_not_headings() -> None:
    """`#` comments at any indentation leave the trail alone."""
    text = "x = 1\n\n# Section one\ny = 2\n\n## Section two\nz = 3\n"
    assert {trail for _, trail, _ in trails(text, Kind.PYTHON)} == {()}


def test_javascript_functions_classes_and_methods() -> None:
    """JS/TS: exported functions, classes with methods, arrow functions and prototype assignments."""
    text = ("import x from 'y';\n\nexport async function load(url) {\n  return 1;\n}\n\n"
            "export default class Store extends Base {\n  constructor(a) {\n    super();\n  }\n\n"
            "  async get(key) {\n    if (key) {\n      return 2;\n    }\n  }\n}\n\n"
            "const add = (a, b) => a + b;\n\nmpl.figure.prototype.resize = function (fig) {\n};\n")  # fmt: skip
    found = [(line, trail) for line, trail, heading in trails(text, Kind.JAVASCRIPT) if heading]
    assert found == [
        ("export async function load(url) {", ("export async function load",)),
        ("export default class Store extends Base {", ("export default class Store",)),
        ("constructor(a) {", ("export default class Store", "constructor")),
        ("async get(key) {", ("export default class Store", "async get")),
        ("const add = (a, b) => a + b;", ("const add",)),
        ("mpl.figure.prototype.resize = function (fig) {", ("mpl.figure.prototype.resize",)),
    ]


def test_go_rust_java_definitions() -> None:
    """Go funcs and methods, Rust fn/impl with methods, Java classes with methods."""
    go = "package p\n\n// Run runs.\nfunc (c *Client) Run() error {\n\treturn nil\n}\n\ntype Client struct {\n}\n"
    assert [t for _, t, h in trails(go, Kind.GO) if h] == [("func (c *Client) Run",), ("type Client struct",)]
    rust = ("use std::fmt;\n\n#[derive(Debug)]\npub struct Point {\n    x: i32,\n}\n\n"
            "impl fmt::Display for Point {\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n"
            "        Ok(())\n    }\n}\n\nmod tests;\n")  # fmt: skip
    assert [t for _, t, h in trails(rust, Kind.RUST) if h] == [
        ("pub struct Point",),
        ("impl fmt::Display for Point",),
        ("impl fmt::Display for Point", "fn fmt"),
    ]
    java = ("package a.b;\n\n/**\n * Greets.\n */\npublic class Greeter {\n    private int n;\n\n"
            "    @Override\n    public String toString() {\n        return foo(n);\n    }\n\n"
            "    static <T> List<T> of(T item) {\n        if (item == null) {\n            throw new X();\n"
            "        }\n        return null;\n    }\n}\n")  # fmt: skip
    assert [t for _, t, h in trails(java, Kind.JAVA) if h] == [
        ("public class Greeter",),
        ("public class Greeter", "public String toString"),
        ("public class Greeter", "static <T> List<T> of"),
    ]


def test_a_java_method_named_on_the_line_after_its_generic_return_type() -> None:
    """OpenJDK writes a long generic return type, or the type parameters, on a line of their own and the name
    on the next (lines 1033-1036 and 1082-1086 of openjdk-17-source's java/util/stream/Collectors.java,
    GPL-2.0 with the Classpath Exception); both lines make the method's title. A field's type above its
    assignment (``= new``) and a call are no method."""
    java = ("public final class Collectors {\n\n"
            "    public static <T, K> Collector<T, ?, Map<K, List<T>>>\n"
            "    groupingBy(Function<? super T, ? extends K> classifier) {\n"
            "        return groupingBy(classifier, toList());\n    }\n\n"
            "    public static <T, K, A, D>\n"
            "    Collector<T, ?, Map<K, D>> groupingBy(Function<? super T, ? extends K> classifier,\n"
            "                                          Collector<? super T, A, D> downstream) {\n"
            "        return groupingBy(classifier, HashMap::new, downstream);\n    }\n\n"
            "    private static final Set<Collector.Characteristics>\n"
            "    CH_ID = Collections.unmodifiableSet(EnumSet.of(Collector.Characteristics.IDENTITY_FINISH));\n\n"
            "    static void run() {\n        int n = size\n        + count(x);\n    }\n}\n")  # fmt: skip
    assert [t for _, t, h in trails(java, Kind.JAVA) if h] == [
        ("public final class Collectors",),
        ("public final class Collectors", "public static <T, K> Collector<T, ?, Map<K, List<T>>> groupingBy"),
        ("public final class Collectors", "public static <T, K, A, D> Collector<T, ?, Map<K, D>> groupingBy"),
        ("public final class Collectors", "static void run"),
    ]


def test_the_chunker_and_defines_read_a_split_method_head_alike() -> None:
    """One pattern (text/methods.split_return_type): each method the chunker titles from two lines is one
    ``defines`` finds, and the reverse. The Java Language Specification allows a ``default`` interface method
    (JLS 17, 9.4) and a ``native`` method (8.4.3.4) with a generic return type, written OpenJDK's way (its type
    on a line of its own); before, only ``defines`` knew those modifiers, the chunker gave them no trail entry,
    and ``defines`` took a name indented less than its type's line, which the chunker does not."""
    java = ("public interface Streams<T> {\n\n"
            "    default <R> Stream<R>\n    mapAll(Function<? super T, ? extends R> mapper) {\n"
            "        return map(mapper);\n    }\n\n"
            "    public static native <E> List<E>\n    copyOf(Object[] array);\n\n"
            "    public static final Comparator<String>\nreversed(Comparator<String> order);\n}\n")  # fmt: skip
    titled = [t[-1] for _, t, h in trails(java, Kind.JAVA) if h][1:]
    assert titled == ["default <R> Stream<R> mapAll", "public static native <E> List<E> copyOf"]
    assert [name for name in ("mapall", "copyof", "reversed") if defines(java, name)] == ["mapall", "copyof"]


@pytest.mark.parametrize("kind", sorted(CODE_KINDS))
def test_definitions_after_line_feeds_are_those_of_line_starts(kind: Kind) -> None:
    """Searching a line feed then a definition finds what a MULTILINE ``^`` with a backtracking indent finds."""
    rng = random.Random(4)
    pieces = ["def f():\n", "    def g(self):\n", "class A:\n", "  async def h(x):\n", "\n", "x = 1\n", "@dec\n",
              "func (r *R) Read() {\n", "type T struct {\n", "}\n", "pub fn main() {\n", "impl A for B {\n",
              "  public void run() {\n", "export function h() {\n", "    m(a) {\n", "  static int f(int a)\n",
              "const g = (a) => a\n", "\tclass B {\n", "x", "\r\n", " \t\n", "def", " "]  # fmt: skip
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randrange(0, 25))) for _ in range(400)]
    texts += [(FIXTURES / name).read_text(encoding="utf-8") for name in ("sample.py.txt", "manual.md")]
    line = code._DEFINITION_LINES[kind].replace("[ \\t]*+", "[ \\t]*")
    reference = re.compile("^" + line, re.MULTILINE)
    for text in texts:
        expected = [(found.start(), found.group("indent"), found.group("head")) for found in reference.finditer(text)]
        first = code._FIRST_LINE[kind].match(text)
        found = ([first] if first is not None else []) + list(code.DEFINITIONS[kind].finditer(text))
        starts = [0] if first is not None else []
        starts += [match.start() + 1 for match in found[len(starts) :]]
        got = [(start, match.group("indent"), match.group("head")) for start, match in zip(starts, found, strict=True)]
        assert got == expected, text


def test_paragraphs_cut_at_blank_lines_and_leading_blanks_join() -> None:
    """Leading blank lines join the first part, whitespace-only lines cut, a gap before a definition is its start."""
    text = "\n  \n# lead\nx = 1\n \t\r\n\ny = 2\n\n@dec\ndef f():\n    a = 1\n\n    b = 2\n"
    cut = text.index
    assert list(code_parts(text, Kind.PYTHON)) == [
        (0, cut("y = 2"), (), False),
        (cut("y = 2"), cut("@dec"), (), False),
        (cut("@dec"), cut("    b = 2"), ("def f",), True),
        (cut("    b = 2"), len(text), ("def f",), False),
    ]


def test_a_doc_comment_of_any_length_joins_its_definition() -> None:
    """tokio's ``pub struct OpenOptions`` (src/fs/open_options.rs): its doc comment and attribute, 66 lines, are
    its part, under its trail; the imports and ``mod`` line above are not."""
    text = (FIXTURES / "tokio_open_options.rs.txt").read_text(encoding="utf-8")
    doc = text.index("/// Options and flags")
    assert [(start, trail, heading) for start, _, trail, heading in code_parts(text, Kind.RUST)] == [
        (0, (), False),
        (text.index("use std::io;"), (), False),
        (text.index("#[cfg(test)]"), (), False),
        (doc, ("pub struct OpenOptions",), True),
    ]


def test_go_type_declarations_of_every_kind_are_definitions() -> None:
    """Go's ``type`` declarations that are not structs or interfaces (net/http's header.go and server.go,
    sync/atomic's type.go, Go 1.19) carry their trail, as structs do."""
    go = ("package http\n\n// A Header represents the key-value pairs in an HTTP header.\n//\n"
          "// The keys should be in canonical form, as returned by\n// CanonicalHeaderKey.\n"
          "type Header map[string][]string\n\n// Add adds the key, value pair to the header.\n"
          "func (h Header) Add(key, value string) {\n\ttextproto.MIMEHeader(h).Add(key, value)\n}\n\n"
          "type HandlerFunc func(ResponseWriter, *Request)\n\ntype ConnState int\n\n"
          "// A Pointer is an atomic pointer of type *T. The zero value is a nil *T.\n"
          "type Pointer[T any] struct {\n\t_ [0]*T\n}\n\ntype (\n\tx int\n)\n")  # fmt: skip
    assert [(line, trail) for line, trail, heading in trails(go, Kind.GO) if heading] == [
        ("// A Header represents the key-value pairs in an HTTP header.", ("type Header",)),
        ("// Add adds the key, value pair to the header.", ("func (h Header) Add",)),
        ("type HandlerFunc func(ResponseWriter, *Request)", ("type HandlerFunc",)),
        ("type ConnState int", ("type ConnState",)),
        ("// A Pointer is an atomic pointer of type *T. The zero value is a nil *T.", ("type Pointer[T any] struct",)),
    ]


def test_a_typescript_ambient_module_encloses_its_declarations() -> None:
    """@types/node's http.d.ts (Debian's node-types-node) wraps everything in ``declare module "http" {``: its
    classes and functions carry the module in their trail, as a namespace's do; ``module.exports`` is no module."""
    ts = ('declare module "http" {\n    import * as stream from "node:stream";\n\n    /**\n'
          "     * @since v0.1.17\n     */\n    class IncomingMessage extends stream.Readable {\n"
          "        constructor(socket: Socket);\n    }\n\n    function createServer(): Server;\n}\n"
          'declare module "node:http" {\n    export * from "http";\n}\n\nmodule.exports = { a };\n')  # fmt: skip
    assert [(line, trail) for line, trail, heading in trails(ts, Kind.JAVASCRIPT) if heading] == [
        ('declare module "http" {', ('declare module "http"',)),
        ("/**", ('declare module "http"', "class IncomingMessage")),
        ("function createServer(): Server;", ('declare module "http"', "function createServer")),
        ('declare module "node:http" {', ('declare module "node:http"',)),
    ]
