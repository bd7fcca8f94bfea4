"""doc_search over real source: which definition of a member asked for with its owner's words comes first.

Lines of Go 1.19, OpenJDK 17, serde_json 1.0.87 and serde 1.0.152 (Debian's golang-1.19-src,
openjdk-17-source, librust-serde-json-dev, librust-serde-dev), quoted where a test needs a line or two and
copied into ``fixtures`` (see ``fixtures/NOTICE.txt``) where it needs more.
"""

from __future__ import annotations

from pathlib import Path

from ctxtrio.docs.chunks import StoredChunk
from ctxtrio.docs.defined import copies_nearest_first, definitions_first, members_first
from ctxtrio.docs.packing import Candidate, pack_hits
from ctxtrio.text.asked import asked_keywords
from ctxtrio.text.definitions import Member, members_defined
from ctxtrio.text.member_names import member_names
from ctxtrio.text.query import query_terms
from ctxtrio.text.tokens import TokenModel

from .conftest import opened

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MODEL = TokenModel.cold()


def _candidate(source: str, index: int, text: str, trail: tuple[str, ...]) -> Candidate:
    chunk = StoredChunk(index, text, 0, len(text), trail, MODEL.estimate(text))
    return Candidate(source.rsplit("/", 1)[-1], source.rsplit("/", 1)[-1], chunk, 1.0, source=source)


def _first(candidates: list[Candidate], query: str) -> list[tuple[str, int]]:
    found = members_first(candidates, member_names(query), asked_keywords(query))
    return [(candidates[n].source, candidates[n].chunk.index) for n in found]


async def test_a_packages_folder_names_the_owner_of_its_files_definitions(tmp_path: Path) -> None:
    """``strconv parse float`` asks for ``func ParseFloat`` of Go's package ``strconv``, in ``strconv/atof.go``
    (its lines 673-701), whose text never says ``strconv`` while 30 programs call ``strconv.ParseFloat``: the
    member is looked for in the files of the folder its owner word names, and the folder names its owner
    (before: a caller first, no definition of ``parsefloat`` under an owner named ``strconv``)."""
    package = tmp_path / "root" / "strconv"
    package.mkdir(parents=True)
    (package / "atof.go").write_text((FIXTURES / "go_strconv_parsefloat.go.txt").read_text(encoding="utf-8"))
    caller = (
        'package main\n\nimport "strconv"\n\nfunc read(fields []string) {\n'
        + "".join(
            f"\tv{n}, _ := strconv.ParseFloat(fields[{n}], 64) // strconv parse float {n}\n\tuse(v{n})\n"
            for n in range(12)
        )
        + "}\n"
    )
    async with opened(tmp_path, tmp_path / "root") as ctx:
        for n in range(30):
            program = tmp_path / "root" / f"cmd{n}" / "main.go"
            program.parent.mkdir()
            program.write_text(caller)
            await ctx.documents.ingest(file_path=str(program))
        await ctx.documents.ingest(file_path=str(package / "atof.go"))
        result = await ctx.documents.search("strconv parse float", budget_tokens=1000)
        assert "func ParseFloat(s string, bitSize int) (float64, error) {" in result.hits[0].text, [
            (hit.title, hit.trail) for hit in result.hits
        ]


async def test_a_member_is_looked_for_where_rows_only_use_the_name_its_owner_spells(tmp_path: Path) -> None:
    """``module graph get module`` spells ``modulegraph``, which 30 callers hold (``this.moduleGraph``) and none
    defines: the member ``getModule`` is then looked for as when no row holds the name, and webpack's
    ``class ModuleGraph``'s ``getModule(dependency)`` comes first (webpack 5's lib/ModuleGraph.js lines 117 and
    414-421, MIT licence, Tobias Koppers; before: a caller first, the member never looked for)."""
    graph = ("class ModuleGraph {\n\tconstructor() {\n\t\tthis._dependencyMap = new WeakMap();\n\t}\n\n"
             "\t/**\n\t * @param {Dependency} dependency the dependency to look for a referenced module\n"
             "\t * @returns {Module} the referenced module\n\t */\n\tgetModule(dependency) {\n"
             "\t\tconst connection = this.getConnection(dependency);\n"
             "\t\treturn connection !== undefined ? connection.module : null;\n\t}\n}\n")  # fmt: skip
    caller = "".join(
        f"\tlink{n}(dependency) {{\n\t\tconst module = this.moduleGraph.getModule(dependency); // module graph\n"
        f"\t\treturn this.moduleGraph.isAsync(module);\n\t}}\n"
        for n in range(8)
    )
    async with opened(tmp_path) as ctx:
        for n in range(30):
            await ctx.documents.ingest(text=f"class Plugin{n} {{\n{caller}}}\n", doc_id=f"plugin{n}", title=f"P{n}.js")
        await ctx.documents.ingest(text=graph, doc_id="graph", title="ModuleGraph.js")
        result = await ctx.documents.search("module graph get module", budget_tokens=1000)
        assert "\tgetModule(dependency) {" in result.hits[0].text, [(hit.title, hit.trail) for hit in result.hits]


def test_the_kind_the_query_says_comes_first() -> None:
    """``http header type`` asks for Go's ``type Header`` (net/http/header.go line 24), not the method
    ``Header`` of fcgi's response (net/http/fcgi/child.go line 91), which ranks above it. With no kind said, the
    method's return type ``http.Header`` does not make ``http`` its owner (a type after its parameters names none),
    and header.go, named after the member, comes first too."""
    method = _candidate("/go/src/net/http/fcgi/child.go", 3, "func (r *response) Header() http.Header {\n", ())
    header = _candidate("/go/src/net/http/header.go", 1, "type Header map[string][]string\n", ())
    assert _first([method, header], "http header type") == [(header.source, 1)]
    assert _first([method, header], "http header")[0] == (header.source, 1)


def test_an_owner_named_whole_then_a_files_first_overload_comes_first() -> None:
    """``optional or else throw``: OpenJDK's ``Optional.orElseThrow()`` (Optional.java line 375) before Optional's
    own later overload ``orElseThrow(Supplier)`` (line 399), though both it and OptionalDouble's (line 246) rank
    above it; OptionalDouble's is not put first at all, ``optional`` being only inside its owner's name."""
    trail = ("public final class Optional<T>",)
    supplier = _candidate("/jdk/java/util/Optional.java", 12, "    public <X extends Throwable> T orElseThrow("
                          "Supplier<? extends X> exceptionSupplier) throws X {\n", trail)  # fmt: skip
    double = _candidate("/jdk/java/util/OptionalDouble.java", 7, "    public double orElseThrow() {\n",
                        ("public final class OptionalDouble",))  # fmt: skip
    plain = _candidate("/jdk/java/util/Optional.java", 11, "    public T orElseThrow() {\n", trail)
    assert _first([double, supplier, plain], "optional or else throw") == [(plain.source, 11), (supplier.source, 12)]


def test_a_public_function_before_a_trait_implementation_of_its_name() -> None:
    """``serde json from str``: serde_json's ``pub fn from_str`` (src/de.rs line 2598), not ``impl FromStr for
    Number`` (line 1211, which implements ``FromStr``) nor an impl's ``fn from_str``, though both come earlier
    in the file; the crate's folder ``serde_json-1.0.87`` names the owner."""
    source = "/cargo/registry/serde_json-1.0.87/src/de.rs"
    implemented = _candidate(source, 34, "impl FromStr for Number {\n    type Err = Error;\n\n"
                             "    fn from_str(s: &str) -> result::Result<Self, Self::Err> {\n", ())  # fmt: skip
    public = _candidate(source, 74, "pub fn from_str<'a, T>(s: &'a str) -> Result<T>\nwhere\n", ("pub fn from_str",))
    assert _first([implemented, public], "serde json from str")[0] == (source, 74)


def test_a_definition_in_a_comment_is_no_definition() -> None:
    """serde's doc examples write ``# trait Serialize {}`` in ``///`` comments (ser/mod.rs): no definition of
    ``serialize``; ``pub trait Serialize {`` is."""
    member = Member("serialize", ())
    assert members_defined("/// # mod fool {\n/// #     trait Serialize {}\n/// # }\n", (member,), "") == {}
    assert set(members_defined("pub trait Serialize {\n", (member,), "")) == {member}


def test_of_two_copies_of_a_file_the_nearer_comes_first() -> None:
    """@types/node ships ``ts4.8/http.d.ts``, a copy of ``http.d.ts``: whichever ranks first, the copy of the
    shorter path takes the first of their places; other hits keep theirs."""
    text = "    function createServer(requestListener?: RequestListener): Server;\n"
    copy = _candidate("/nodejs/@types/node/ts4.8/http.d.ts", 46, text, ('declare module "http"',))
    other = _candidate("/nodejs/@types/node/https.d.ts", 12, text.replace("Server", "https.Server"), ())
    own = _candidate("/nodejs/@types/node/http.d.ts", 46, text, ('declare module "http"',))
    assert [c.source for c in copies_nearest_first([copy, other, own])] == [own.source, other.source, copy.source]


def test_the_passage_of_a_member_put_first_holds_its_definition() -> None:
    """``where is ArrayList defined``: ArrayList.java's class Javadoc (OpenJDK 17, lines 34-115) names ArrayList
    and lists more than its declaration does, so the densest window of the query's words was the Javadoc; the
    passage of the chunk members_first puts first holds ``public class ArrayList<E>`` (before: lines 1-29)."""
    text = (FIXTURES / "java_arraylist_head.java.txt").read_text(encoding="utf-8")
    chunk = StoredChunk(3, text, 0, len(text), ("public class ArrayList",), MODEL.estimate(text))
    query = "where is ArrayList defined"
    ranked = definitions_first([Candidate("util", "ArrayList.java", chunk, 1.0)], query_terms(query), query)
    assert ranked[0].defines_at == text.index("public class ArrayList<E>")
    hits, _, _ = pack_hits(ranked, 400, MODEL, query_terms(query))
    assert "public class ArrayList<E> extends AbstractList<E>" in hits[0].text, hits[0].text


def test_a_private_name_comes_after_the_public_one_it_spells() -> None:
    """``shutil copy tree``: Python 3.11's shutil.py defines ``_copytree`` (line 452) before ``copytree`` (line
    518); both spell ``copytree``, and a name starting with ``_`` is the module's own, so ``copytree`` comes first."""
    private = _candidate("/usr/lib/python3.11/shutil.py", 11, "def _copytree(entries, src, dst, symlinks, ignore,"
                         " copy_function,\n                  ignore_dangling_symlinks, dirs_exist_ok=False):\n", ())  # fmt: skip
    public = _candidate("/usr/lib/python3.11/shutil.py", 13, "def copytree(src, dst, symlinks=False, ignore=None,"
                        " copy_function=copy2,\n             ignore_dangling_symlinks=False, dirs_exist_ok=False):\n",
                        ("def _copytree",))  # fmt: skip
    assert _first([private, public], "shutil copy tree") == [(public.source, 13), (private.source, 11)]
