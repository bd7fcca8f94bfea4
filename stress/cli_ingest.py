"""``ctxtrio ingest`` of a directory of many files: live progress, throughput, and the no-change rerun.

Run as ``python stress/cli_ingest.py`` from the repository root. Writes ``--files``
markdown files (default 1,000) of ``--total-mb`` together (default 100 MB) into a temp
dir, then runs the real command twice on a fresh data dir, exactly as a person would
(``python -m ctxtrio ingest DIR --data-dir ... --no-llm``), with stderr a pipe (so
progress comes as plain lines). It prints:

* first run: wall time, MB/s, how many progress lines arrived and when the first and
  last did (live progress means they arrive spread over the run, not all at the end);
* second run (nothing changed): wall time, which must be <= 2 s (exit 1 otherwise),
  and that every file was reported unchanged.

``--corpus stdlib`` (or ``docs``, ``log``, ``cjk``: :mod:`real_text`) copies real text
instead, one file per corpus file under its own name (``--joined N``: joined into N files of
about equal size, a few big files); the first run then also prints the CPU seconds (user +
system) of the command and its chunking processes per MB, and the peak RSS of the largest
process (one process: the chunking processes are not added).

``--tty`` runs the first ingest under a pseudo-terminal instead, to show the tqdm bar
redrawing (it counts the carriage-return redraws). ``--folder PATH`` ingests a real
folder instead of the synthetic one (``--folder /usr/lib/python3.11``: source files
among compiled ones, libraries and empty ``__init__.py``); the rate is then the bytes
the command processed (its ``--json`` report) over wall time, and the CPU seconds of the
command (user + system, its children included) are printed beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
from real_text import CORPORA, load

ROOT = Path(__file__).resolve().parent.parent
WORDS = (
    "cookie session token rotation middleware header parser cache index journal writer "
    "budget window outline summary chunk heading paragraph fence query"
).split()


def write_tree(folder: Path, files: int, total_mb: float, seed: int = 7) -> int:
    """``files`` markdown files of about ``total_mb`` MB in 10 subfolders; returns the bytes written."""
    rng = random.Random(seed)
    per_file = int(total_mb * (1 << 20) / files)
    written = 0
    for number in range(files):
        sub = folder / f"part{number % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        parts = [f"# File {number}\n\n"]
        size = len(parts[0])
        section = 0
        while size < per_file:
            if size // 4000 > section:
                section += 1
                line = f"\n## Section {section}\n\n"
            else:
                line = " ".join(rng.choice(WORDS) for _ in range(14)) + f" id{number}x{size}.\n"
            parts.append(line)
            size += len(line)
        text = "".join(parts)
        (sub / f"doc{number:04}.md").write_text(text)
        written += len(text)
    return written


def command(folder: Path, data: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "ctxtrio", "ingest", str(folder), "--data-dir", str(data), "--no-llm", *extra]


def write_corpus(folder: Path, corpus: str, joined: int = 0) -> tuple[int, int]:
    """The files of ``corpus`` under their own names, or joined in order into ``joined`` files of about
    equal size (``part00.txt`` ...: a few big files); returns (files, bytes)."""
    written = 0
    docs = load(corpus)
    if joined:
        folder.mkdir(parents=True, exist_ok=True)
        texts = [doc.text.encode("utf-8", "surrogatepass") for doc in docs]
        share = sum(map(len, texts)) / joined
        parts: list[list[bytes]] = [[] for _ in range(joined)]
        done = 0
        for text in texts:
            parts[min(joined - 1, int(done // share))].append(text)
            done += len(text)
        for number, part in enumerate(parts):
            data = b"\n\n".join(part)
            (folder / f"part{number:02}.txt").write_bytes(data)
            written += len(data)
        return joined, written
    for doc in docs:
        target = folder / doc.name.removesuffix(".gz").lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        data = doc.text.encode("utf-8", "surrogatepass")
        target.write_bytes(data)
        written += len(data)
    return len(docs), written


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _peak_rss_mb() -> float:
    """The largest peak RSS of any command run so far (Linux reports KiB), in MiB."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def run_plain(folder: Path, data: Path, *extra: str) -> tuple[float, list[float], str, int]:
    """Wall time, arrival time of each progress line (with --verbose), stdout, exit code."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryFile("w+") as out:  # a file: a full stdout pipe would stall the command
        started = time.monotonic()
        process = subprocess.Popen(
            command(folder, data, *extra), stdout=out, stderr=subprocess.PIPE, cwd=ROOT, env=env, text=True
        )
        assert process.stderr is not None
        arrivals = [time.monotonic() - started for line in process.stderr if line.startswith("ingest ")]
        code = process.wait()
        wall = time.monotonic() - started
        out.seek(0)
        return wall, arrivals, out.read(), code


def run_tty(folder: Path, data: Path) -> tuple[float, int]:
    """Wall time and the number of bar redraws seen on a pseudo-terminal."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    pid, fd = pty.fork()
    if pid == 0:  # the child: stdin, stdout and stderr are the terminal
        os.chdir(ROOT)
        os.execvpe(sys.executable, command(folder, data), env)
    redraws = 0
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        redraws += chunk.count(b"\r")
    os.waitpid(pid, 0)
    return time.monotonic() - started, redraws


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--files", type=int, default=1000)
    p.add_argument("--total-mb", type=float, default=100.0)
    p.add_argument("--tty", action="store_true", help="first run under a pseudo-terminal (tqdm bar)")
    p.add_argument("--folder", type=Path, help="ingest this real folder instead of writing synthetic files")
    p.add_argument("--corpus", choices=sorted(CORPORA), help="real text (stress/real_text.py) instead of markdown")
    p.add_argument("--joined", type=int, default=0, metavar="N", help="with --corpus: its files joined into N files")
    args = p.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    with tempfile.TemporaryDirectory(prefix="ctxtrio-cli-ingest-") as tmp:
        folder, data = Path(tmp) / "docs", Path(tmp) / "data"
        if args.folder is not None:
            return real_folder(args.folder, data)
        if args.corpus:
            args.files, size = write_corpus(folder, args.corpus, args.joined)
        else:
            size = write_tree(folder, args.files, args.total_mb)
        mb = size / (1 << 20)
        print(f"wrote {args.files} files, {mb:.1f} MB")
        cpu = _cpu_s()
        if args.tty:
            wall, redraws = run_tty(folder, data)
            print(f"first run (terminal): {wall:.2f} s, {mb / wall:.1f} MB/s, {redraws} bar redraws")
        else:
            wall, arrivals, out, code = run_plain(folder, data, "--verbose")
            print(f"first run: {wall:.2f} s, {mb / wall:.1f} MB/s, exit {code}; {out.strip()}")
            if arrivals:
                print(f"  progress: {len(arrivals)} lines, first at {arrivals[0]:.2f} s, last at {arrivals[-1]:.2f} s")
        cpu = _cpu_s() - cpu
        print(
            f"  command + chunking processes: {cpu:.2f} CPU-s = {cpu / (size / 1e6):.3f} CPU-s per MB (10^6 bytes); "
            f"peak RSS of the largest process {_peak_rss_mb():.0f} MB; load {os.getloadavg()[0]:.1f}"
        )
        again, _, out, code = run_plain(folder, data, "--json")
        report = json.loads(out)
        unchanged = len(report["unchanged"])
        print(f"second run, nothing changed: {again:.2f} s, exit {code}, {unchanged} of {args.files} unchanged")
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        ok = again <= 2.0 and unchanged == args.files
        print("must show (second run <= 2 s, all unchanged):", "met" if ok else "NOT met")
        return 0 if ok else 1


def real_folder(folder: Path, data: Path) -> int:
    """First and second ingest of ``folder``: counts by outcome, MB/s of the bytes processed, CPU seconds."""
    cpu = _cpu_s()
    wall, _, out, code = run_plain(folder, data, "--json")
    cpu = _cpu_s() - cpu
    report = json.loads(out)
    mb = report["bytes"] / (1 << 20)
    text_mb = sum(os.path.getsize(item["path"]) for item in report["ingested"]) / (1 << 20)
    print(
        f"first run: exit {code}, {len(report['ingested'])} ingested, skipped {report['skipped']}, "
        f"{len(report['refused'])} refused; {mb:.1f} MB processed in {wall:.2f} s ({mb / wall:.2f} MB/s), "
        f"CPU {cpu:.1f} s; of it {text_mb:.1f} MB of text ingested ({text_mb / wall:.2f} MB/s, "
        f"{text_mb / cpu:.2f} MB per CPU-second)"
    )
    for item in report["refused"]:
        print(f"  refused {item['path']}: {item['reason']}")
    again, _, out, code = run_plain(folder, data, "--json")
    unchanged = len(json.loads(out)["unchanged"])
    print(
        f"second run, nothing changed: {again:.2f} s, exit {code}, {unchanged} of {len(report['ingested'])} unchanged"
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0 if code == 0 and unchanged == len(report["ingested"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
