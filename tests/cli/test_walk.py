"""What ``ctxtrio ingest`` takes from a folder: .gitignore, --exclude/--include, globs, symlinks (no command run)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import trio

from ctxtrio.cli.patterns import ignored, parse_rules
from ctxtrio.cli.walk import DUPLICATE_LINK, LINKED_DIRECTORY, find_files

if TYPE_CHECKING:
    from pathlib import Path


def _names(top: Path, arguments: list[str], **filters: list[str]) -> list[str]:
    found = find_files(arguments, (), **filters)
    return sorted(os.path.relpath(path, top) for path, _ in found.files)


def _tree(top: Path) -> None:
    for name in ("a/x.md", "a/b/y.txt", "a/keep.txt", "build/z.md", "docs/guide.md", "notes.md"):
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_text(f"{name}\n")
    (top / ".gitignore").write_text("# generated\nbuild/\n*.txt\n!keep.txt\n")


def test_gitignore_rules_as_git_reads_them() -> None:
    """Unanchored names match at any depth, a slash anchors, a trailing slash means directories, ! re-includes."""
    rules = parse_rules(["*.log", "/top.md", "cache/", "!important.log", "docs/**/draft*"])
    assert ignored(rules, "deep/down/x.log", is_dir=False)
    assert not ignored(rules, "deep/important.log", is_dir=False)
    assert ignored(rules, "top.md", is_dir=False) and not ignored(rules, "sub/top.md", is_dir=False)
    assert ignored(rules, "a/cache", is_dir=True) and not ignored(rules, "a/cache", is_dir=False)
    assert ignored(rules, "docs/draft1.md", is_dir=False) and ignored(rules, "docs/a/b/draft2.md", is_dir=False)
    assert not ignored(rules, "other/draft.md", is_dir=False)


def test_a_folder_honours_gitignore_and_filters(tmp_path: Path) -> None:
    """.gitignore leaves out build/ and *.txt but keeps keep.txt; --exclude and --include narrow further."""
    _tree(tmp_path)
    assert _names(tmp_path, [str(tmp_path)]) == ["a/keep.txt", "a/x.md", "docs/guide.md", "notes.md"]
    assert _names(tmp_path, [str(tmp_path)], exclude=["docs/"]) == ["a/keep.txt", "a/x.md", "notes.md"]
    assert _names(tmp_path, [str(tmp_path)], include=["*.md"]) == ["a/x.md", "docs/guide.md", "notes.md"]
    assert _names(tmp_path, [str(tmp_path / "a" / "b" / "y.txt")]) == ["a/b/y.txt"]  # a named file is always taken


def test_globs_match_while_walking(tmp_path: Path) -> None:
    """'dir/**' takes everything under dir, '**/*.md' any depth, '*.md' one level; .gitignore still applies."""
    _tree(tmp_path)
    assert _names(tmp_path, [f"{tmp_path}/**"]) == ["a/keep.txt", "a/x.md", "docs/guide.md", "notes.md"]
    assert _names(tmp_path, [f"{tmp_path}/**/*.md"]) == ["a/x.md", "docs/guide.md", "notes.md"]
    assert _names(tmp_path, [f"{tmp_path}/*.md"]) == ["notes.md"]
    found = find_files([f"{tmp_path}/*.rst"], ())
    assert found.refused == [(f"{tmp_path}/*.rst", "no file matches this pattern")]


def test_a_glob_whose_files_an_earlier_argument_listed_is_no_refusal(tmp_path: Path) -> None:
    """'docs docs/*.md', or one glob twice: the glob matches files already listed, so it is not refused (each file
    taken once). It was refused as "no file matches this pattern", counted, and made ingest exit 1."""
    _tree(tmp_path)
    for arguments in ([f"{tmp_path}/docs", f"{tmp_path}/docs/*.md"], [f"{tmp_path}/*.md", f"{tmp_path}/*.md"]):
        found = find_files(arguments, ())
        assert found.refused == [], arguments
        assert len(found.files) == 1, found.files


async def test_directory_symlink_loops_end(tmp_path: Path) -> None:
    """Two links to '.' and one to '..' under 'dir/**' are counted, not followed: the walk ends (issue 27, 8)."""
    _tree(tmp_path)
    (tmp_path / "loop1").symlink_to(".")
    (tmp_path / "a" / "loop2").symlink_to("..")
    (tmp_path / "docs" / "loop3").symlink_to(tmp_path)
    with trio.fail_after(30):
        found = await trio.to_thread.run_sync(lambda: find_files([f"{tmp_path}/**"], ()))
    assert len(found.files) == 4
    assert found.skipped[LINKED_DIRECTORY] == 3


def test_a_symlink_inside_the_folder_is_taken_once(tmp_path: Path) -> None:
    """A link to a file that is listed anyway is counted as such; a link to a file left out is taken."""
    _tree(tmp_path)
    (tmp_path / "alias.md").symlink_to(tmp_path / "notes.md")
    (tmp_path / "b.md").symlink_to(tmp_path / "build" / "z.md")  # build/ is ignored: the link is the only way in
    found = find_files([str(tmp_path)], ())
    names = sorted(os.path.relpath(path, tmp_path) for path, _ in found.files)
    assert names == ["a/keep.txt", "a/x.md", "b.md", "docs/guide.md", "notes.md"]
    assert found.skipped == {DUPLICATE_LINK: 1}


def test_a_link_to_a_folder_named_as_an_argument_is_walked_where_it_leads(tmp_path: Path) -> None:
    """'ingest LINK', 'ingest LINK/' and 'ingest LINK/**/*.md' take the folder the link leads to, rooted there (the
    sandbox follows links before checking a file against its root). Before, the first two were refused as 'a
    directory, not a regular file' and the glob matched nothing. A link met while walking is still not followed."""
    real = tmp_path / "real"
    real.mkdir()
    _tree(real)
    (real / "inner").symlink_to(real / "docs")
    link = tmp_path / "link"
    link.symlink_to(real)
    for argument in (str(link), f"{link}/"):
        found = find_files([argument], ())
        assert found.refused == [], argument
        assert sorted(os.path.relpath(path, real) for path, _ in found.files) == [
            "a/keep.txt",
            "a/x.md",
            "docs/guide.md",
            "notes.md",
        ], argument
        assert found.roots == [real.resolve()], argument
        assert found.skipped[LINKED_DIRECTORY] == 1, argument
    found = find_files([f"{link}/**/*.md"], ())
    assert found.refused == [] and found.roots == [real.resolve()]
    assert sorted(os.path.relpath(path, real) for path, _ in found.files) == ["a/x.md", "docs/guide.md", "notes.md"]
