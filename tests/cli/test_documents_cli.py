"""ingest, docs, search and doctor through the real command, beside a real stdio server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from dataclasses import replace
from pathlib import Path

import trio
from mcp import Client

from ctxtrio.cli.documents import _forgetting
from ctxtrio.docs.model import DocumentInfo
from testkit.fake_openai import FakeServer, closed_port_url, open_fake_openai

from .runner import ENV, ROOT, cli, command, server


def tree(root: Path, outside: Path) -> None:
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("# Alpha\n\nThe cookie middleware expects a session.\n")
    (root / "sub" / "b.txt").write_text("Token rotation happens every fifteen minutes.\n")
    (root / "blob.bin").write_bytes(bytes(range(256)) * 8)
    outside.write_text("a secret outside the root\n")
    (root / "escape.md").symlink_to(outside)
    os.mkfifo(root / "pipe.md")


async def test_ingest_refuses_and_names_symlink_and_fifo_and_counts_binary(tmp_path: Path) -> None:
    """A symlink out of the folder and a FIFO are refused by name, once each; a binary file is counted; exit 0."""
    data, docs = tmp_path / "data", tmp_path / "docs"
    tree(docs, tmp_path / "secret.txt")
    with trio.fail_after(120):
        async with Client(server(data)) as client:
            ran = await cli(data, "ingest", str(docs), "--json")
            assert ran.code == 0, ran.err
            report = ran.json()
            assert isinstance(report, dict)
            refused = {Path(item["path"]).name: item["reason"] for item in report["refused"]}
            assert set(refused) == {"escape.md", "pipe.md"}
            assert "outside the ingest roots" in refused["escape.md"]
            assert "FIFO" in refused["pipe.md"]
            assert report["skipped"] == {"binary": 1}
            assert sorted(Path(item["path"]).name for item in report["ingested"]) == ["a.md", "b.txt"]
            found = await client.call_tool("doc_search", {"query": "rotation"})
            assert not found.is_error and "fifteen minutes" in str(found.content)
            human = await cli(data, "ingest", str(docs))
            assert human.code == 0, human.err
            said = human.err.splitlines()
            assert len(said) == 2 and all(line.startswith("refused") for line in said), said
            for name in ("escape.md", "pipe.md"):
                assert sum(str(docs / name) in line for line in said) == 1
            assert (
                human.out
                == "done: 0 ingested, 0 replaced, 2 unchanged, 1 skipped (1 binary), 2 refused; "
                + human.out.split("refused; ", 1)[1]
            )


async def test_every_refused_line_has_one_shape(tmp_path: Path) -> None:
    """'refused PATH: REASON', as 'skipped PATH: REASON': the library's reasons name the file ('refused: /x/pipe.md
    is a FIFO ...') where the walk's do not ('refused /nope: no such file or directory'), two shapes of one line."""
    data, docs = tmp_path / "data", tmp_path / "docs"
    tree(docs, tmp_path / "secret.txt")
    (docs / "long.md").write_text("word " * 400)
    named = [docs / name for name in ("pipe.md", "escape.md", "long.md", "nope.md", "*.none")]
    ran = await cli(data, "ingest", *map(str, named), "--max-ingest-chars", "1000")
    said = ran.err.splitlines()
    assert len(said) == len(named), said
    reasons = {}
    for line in said:
        path = next(str(path) for path in named if line.startswith(f"refused {path}: "))
        reasons[Path(path).name] = line.removeprefix(f"refused {path}: ")
        assert path not in reasons[Path(path).name], line
    assert reasons["pipe.md"] == "a FIFO (named pipe), not a regular file", reasons
    assert reasons["escape.md"].startswith("outside the ingest roots ("), reasons
    assert reasons["nope.md"] == "no such file or directory", reasons


async def test_ingest_of_a_named_file_it_refuses_exits_1(tmp_path: Path) -> None:
    """A file named as an argument and refused (a FIFO, over the size limit, a symlink out of its folder) is an
    argument that stored nothing: exit 1, as for a path that does not exist (it was 0: 'ctxtrio ingest
    notes.md && ...' went on with nothing stored); the files beside it are stored all the same."""
    data, docs = tmp_path / "data", tmp_path / "docs"
    tree(docs, tmp_path / "secret.txt")
    (docs / "long.md").write_text("word " * 400)
    with trio.fail_after(120):
        for named in ("pipe.md", "escape.md", "long.md"):
            ran = await cli(data, "ingest", str(docs / "a.md"), str(docs / named), "--max-ingest-chars", "1000")
            assert ran.code == 1 and "refused" in ran.err and named in ran.err, ran
            assert (
                ", 1 refused;" in ran.out and ("done: 1 ingested" if named == "pipe.md" else "1 unchanged") in ran.out
            )
        walked = await cli(data, "ingest", str(docs), "--max-ingest-chars", "1000")
        assert walked.code == 0 and walked.out.startswith("done: 1 ingested, 0 replaced, 1 unchanged"), walked


async def test_second_ingest_skips_unchanged_and_replaces_changed(tmp_path: Path) -> None:
    """Unchanged files are skipped by content hash; a changed file replaces its document under the same id."""
    data, docs = tmp_path / "data", tmp_path / "docs"
    docs.mkdir()
    (docs / "one.md").write_text("first version about cookies\n")
    (docs / "two.md").write_text("never changes\n")
    first = (await cli(data, "ingest", str(docs / "*.md"), "--json")).json()
    assert isinstance(first, dict) and len(first["ingested"]) == 2
    ids = {Path(item["path"]).name: item["doc_id"] for item in first["ingested"]}
    (docs / "one.md").write_text("second version about tokens\n")
    second = (await cli(data, "ingest", str(docs), "--json")).json()
    assert isinstance(second, dict)
    assert [(Path(i["path"]).name, i["doc_id"]) for i in second["replaced"]] == [("one.md", ids["one.md"])]
    assert [Path(i["path"]).name for i in second["unchanged"]] == ["two.md"]
    listed = (await cli(data, "docs", "--json")).json()
    assert isinstance(listed, list) and len(listed) == 2
    hits = (await cli(data, "search", "tokens", "--doc", ids["one.md"], "--json")).json()
    assert isinstance(hits, dict) and "second version" in hits["hits"][0]["text"]
    assert "no match" in (await cli(data, "search", "cookies")).out
    long = await cli(data, "search", "tokens " + " ".join(f"extra{n}" for n in range(40)))
    assert "second version" in long.out and "only the first 16 distinct words" in long.out


async def test_search_names_each_hits_rank_not_a_score_that_rounds_to_zero(tmp_path: Path) -> None:
    """A word every file holds scores near 0 in BM25 ("score 0.00" on every hit): the header says the rank."""
    data, docs = tmp_path / "data", tmp_path / "docs"
    docs.mkdir()
    for n in range(4):
        (docs / f"f{n}.md").write_text(f"# Part {n}\n\nThe parser reads tabs in part {n}.\n")
    assert (await cli(data, "ingest", str(docs))).code == 0
    found = await cli(data, "search", "parser")
    heads = [line for line in found.out.splitlines() if line.startswith(str(docs))]
    assert [head.rsplit(" · ", 1)[1] for head in heads] == ["hit 1]", "hit 2]", "hit 3]", "hit 4]"], found.out
    assert "score" not in found.out
    scores = [hit["score"] for hit in (await cli(data, "search", "parser", "--json")).json()["hits"]]
    assert len(scores) == 4 and all(0 < score < 0.005 for score in scores)  # (the case: "0.00" at two places)
    limited = await cli(data, "search", "parser", "--limit", "0")  # said 'limit must be ...', a flag spelt --limit
    assert limited.code == 2 and limited.err == "ctxtrio: error: --limit must be between 1 and 50, got 0\n", limited


async def test_search_doc_takes_a_files_path_or_name_when_it_names_one(tmp_path: Path) -> None:
    """A folder's files get generated ids (doc-2286e5d7) and a person types the file: --doc a.md was 'no document'.
    A path or the end of one naming one document is taken; one naming several says which; one naming none says so
    (a path was 'invalid doc_id', the library's syntax check)."""
    data, docs = tmp_path / "data", tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "other").mkdir()
    (docs / "a.md").write_text("the parser reads tokens\n")
    (docs / "sub" / "b.md").write_text("the parser in sub\n")
    (docs / "other" / "b.md").write_text("the parser elsewhere\n")
    ingested = (await cli(data, "ingest", str(docs), "--json")).json()
    ids = {str(Path(item["path"]).relative_to(docs)): item["doc_id"] for item in ingested["ingested"]}
    for given, meant in [("a.md", "a.md"), ("sub/b.md", "sub/b.md"), (str(docs / "other" / "b.md"), "other/b.md")]:
        hits = (await cli(data, "search", "parser", "--doc", given, "--json")).json()
        assert {hit["doc_id"] for hit in hits["hits"]} == {ids[meant]}, (given, hits)
    several = await cli(data, "search", "parser", "--doc", "b.md")
    assert several.code == 2 and several.err.startswith("ctxtrio: error: --doc 'b.md' names 2 documents: "), several
    assert (
        ids["sub/b.md"] in several.err
        and ids["other/b.md"] in several.err
        and several.err.endswith("; pass one's id\n")
    )
    none = await cli(data, "search", "parser", "--doc", "sub/c.md")
    assert none.err == "ctxtrio: error: no document 'sub/c.md'; ctxtrio docs lists them\n", none


async def test_forget_takes_a_files_path_or_name_and_refuses_one_naming_several(tmp_path: Path) -> None:
    """forget takes a document as search --doc does ('forget a.md' was 'no document'); a name of several
    forgets nothing and lists them, and the question names each document's file."""
    data, docs = tmp_path / "data", tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "other").mkdir()
    for name in ("a.md", "c.md", "sub/b.md", "other/b.md"):
        (docs / name).write_text(f"the parser of {name}\n")
    ingested = (await cli(data, "ingest", str(docs), "--json")).json()
    ids = {str(Path(item["path"]).relative_to(docs)): item["doc_id"] for item in ingested["ingested"]}
    several = await cli(data, "forget", "a.md", "b.md", "--yes")
    assert several.code == 2 and several.err.startswith("ctxtrio: error: 'b.md' names 2 documents: "), several
    assert ids["sub/b.md"] in several.err and several.err.endswith("; pass one's id\n"), several
    asked = await cli(data, "forget", "sub/b.md")  # no terminal: it asks nothing, and says what it would forget
    assert asked.code == 2 and "--yes" in asked.err, asked
    done = await cli(data, "forget", "a.md", str(docs / "sub" / "b.md"), ids["c.md"], "--yes")
    assert done.code == 0, done
    assert done.out.splitlines() == [
        f'forgot {ids["a.md"]} "a.md" (1 chunk)',
        f'forgot {ids["sub/b.md"]} "b.md" (1 chunk)',
        f'forgot {ids["c.md"]} "c.md" (1 chunk)',
    ], done.out
    left = (await cli(data, "docs", "--json")).json()
    assert [doc["doc_id"] for doc in left] == [ids["other/b.md"]]
    file = DocumentInfo("doc-1", "b.md", "/f/sub/b.md", 1, 10, 3, 0.0)
    assert _forgetting(file) == 'doc-1 ("b.md", 1 chunk, /f/sub/b.md)'  # the question at a terminal
    assert _forgetting(replace(file, source="inline", chunks=2)) == 'doc-1 ("b.md", 2 chunks)'


async def test_a_file_ingested_through_a_link_is_found_by_the_links_path(tmp_path: Path) -> None:
    """A linked file is stored as the file it names: 'ingest alias.md' then 'forget alias.md' said 'no document'."""
    data, docs = tmp_path / "data", tmp_path / "docs"
    (docs / "real").mkdir(parents=True)
    (docs / "real" / "a.md").write_text("the parser of a\n")
    (docs / "alias.md").symlink_to(docs / "real" / "a.md")
    [item] = (await cli(data, "ingest", str(docs / "alias.md"), "--json")).json()["ingested"]
    hits = (await cli(data, "search", "parser", "--doc", str(docs / "alias.md"), "--json")).json()
    assert [hit["doc_id"] for hit in hits["hits"]] == [item["doc_id"]], hits
    done = await cli(data, "forget", str(docs / "alias.md"), "--yes")
    assert done.code == 0 and done.out.startswith(f"forgot {item['doc_id']} "), done


async def test_a_link_to_a_folder_is_ingested_as_the_folder(tmp_path: Path) -> None:
    """'ctxtrio ingest LINK-TO-FOLDER' ingests the folder's files (exit 0); it was refused as a directory (exit 1)."""
    data, docs = tmp_path / "data", tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("the parser of a\n")
    (docs / "b.md").write_text("the lexer of b\n")
    (tmp_path / "link").symlink_to(docs)
    done = await cli(data, "ingest", str(tmp_path / "link"), "--json")
    assert done.code == 0, done
    assert sorted(Path(item["path"]).name for item in done.json()["ingested"]) == ["a.md", "b.md"], done


async def test_ctrl_c_stops_ingest_with_nothing_half_committed(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the whole process group) mid-ingest: exit 130, no traceback, true counts, all whole."""
    data, docs = tmp_path / "data", tmp_path / "docs"
    docs.mkdir()
    paragraph = "Some words about cookies and tokens that repeat. " * 40 + "\n\n"
    (docs / "a-big.md").write_text(paragraph * 1100)  # over 2M characters: chunked in a child process
    for number in range(40):
        (docs / f"f{number:02}.md").write_text(f"# File {number}\n\n" + paragraph * 150)
    with trio.fail_after(120):
        process = await trio.lowlevel.open_process(
            command(data, "ingest", str(docs), "--verbose", "--json"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env=ENV,
            start_new_session=True,
        )
        assert process.stderr is not None and process.stdout is not None
        seen = b""
        while b"ingested" not in seen:
            seen += await process.stderr.receive_some(4096)
        os.killpg(process.pid, signal.SIGINT)  # what a terminal does: the children get it too
        out = b""
        while chunk := await process.stdout.receive_some(4096):
            out += chunk
        while chunk := await process.stderr.receive_some(4096):
            seen += chunk
        code = await process.wait()
    assert code == 130
    assert b"Traceback" not in seen and b"KeyboardInterrupt" not in seen, seen.decode()[-3000:]
    summary = json.loads(out)
    assert summary["interrupted"] is True
    sizes = {path.name: path.stat().st_size for path in docs.iterdir()}
    assert summary["bytes"] == sum(sizes[Path(item["path"]).name] for item in summary["ingested"])
    assert summary["bytes"] < sum(sizes.values())
    doctor = await cli(data, "doctor", "--json")
    assert doctor.code == 0, doctor.out
    report = doctor.json()
    assert isinstance(report, dict)
    count = report["documents"]["count"]
    assert 1 <= count < 41
    assert count == len(summary["ingested"])  # an ingest that committed as the signal came is counted too
    generations = sorted(p.parent.name for p in (data / "docs").glob("*/*.jsonl"))
    assert len(generations) == count  # no leftover uncommitted generation file


async def doctor(data: Path, *flags: str) -> subprocess.CompletedProcess[bytes]:
    """``ctxtrio doctor`` on ``data`` with ``flags``, output captured, whatever its exit code."""
    return await trio.run_process(
        [*command(data, "doctor")[:-1], *flags],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        cwd=ROOT,
        env=ENV,
    )


async def doctor_llm_line(data: Path, server: FakeServer) -> str:
    """``ctxtrio doctor`` against ``server`` (exit 0): its one ``ok  llm:`` line."""
    async with trio.open_nursery() as nursery:
        fake = await open_fake_openai(nursery, server)
        with trio.fail_after(60):
            done = await doctor(data, "--llm-base-url", fake.base_url)
        nursery.cancel_scope.cancel()
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    [line] = [line for line in out.splitlines() if line.startswith("ok  llm:")]
    return line


async def test_doctor_reports_the_endpoint_and_a_stopped_one_in_one_line(tmp_path: Path) -> None:
    """doctor names the model, tokenize and context length; a stopped one is one warn line, exit 0 (1 with --strict)."""
    data = tmp_path / "data"
    llm = await doctor_llm_line(data, FakeServer(model_id="gemma-3-270m-it", n_ctx=8192))
    assert "model gemma-3-270m-it" in llm and "tokenize available" in llm and "context length 8192" in llm
    stopped = await doctor(data, "--llm-base-url", closed_port_url())
    lines = [line for line in stopped.stdout.decode().splitlines() if "llm" in line]
    assert (
        stopped.returncode == 0 and len(lines) == 1 and lines[0].startswith("warn llm:") and "not reachable" in lines[0]
    )
    strict = await doctor(data, "--llm-base-url", closed_port_url(), "--strict")
    assert strict.returncode == 1


async def test_doctor_learns_a_llama_cpp_python_window_from_its_overflow_error(tmp_path: Path) -> None:
    """Against a server shaped like llama-cpp-python (extras/tokenize, no context endpoint) doctor reports its window."""
    server = FakeServer(model_id="gemma-3-270m-it", n_ctx=8192, tokenize="extras", context_style=None)
    llm = await doctor_llm_line(tmp_path / "data", server)
    assert "tokenize available" in llm and "context length 8192 tokens" in llm, llm


async def test_doctor_repair_rebuilds_a_deleted_index(tmp_path: Path) -> None:
    """With the index's rows gone, doctor says so and --repair brings search back."""
    data, docs = tmp_path / "data", tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("rotation of tokens\n")
    assert (await cli(data, "ingest", str(docs))).code == 0
    import sqlite3

    with sqlite3.connect(data / "index.sqlite3") as conn:
        conn.execute("DELETE FROM chunks")
    broken = await cli(data, "doctor")
    assert broken.code == 1 and "BAD index" in broken.out and "--repair" in broken.out
    fixed = await cli(data, "doctor", "--repair")
    assert fixed.code == 0 and "rebuilt 1 document journal," in fixed.out, fixed.out
    assert "rotation" in (await cli(data, "search", "rotation")).out
