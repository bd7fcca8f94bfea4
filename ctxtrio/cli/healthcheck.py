"""``python -m ctxtrio.cli.healthcheck [PID] [--timeout S]``: the container's HEALTHCHECK, asking the server it runs.

The server's settings may come from flags (``docker run ... ctxtrio:latest --http
--port 8000 --http-token ...``) or from variables (``-e CTX_TRANSPORT=http``), so the
check reads them where the server got them: its command line and environment in
``/proc/PID`` (PID: the oldest ``ctxtrio`` process in the container unless given), put
through the same settings table (:func:`.settings.config_from_args`). A stdio server has no
socket to ask and is healthy while it runs; an HTTP one (started with ``--port 0``: on the port it
listens on, found in ``/proc/PID/net/tcp``) must answer ``GET /health``
(with its bearer token, when it has one) within 4 s (``--timeout``; Docker's own
``--timeout=5s`` ends the check anyway). Exit 0 healthy, 1 not.
"""

from __future__ import annotations

import argparse
import os
import sys
import urllib.request
from pathlib import Path

from .._errors import ConfigError
from .commands import find_subcommand
from .settings import config_from_args, serving_parser, value_flags

__all__ = ["main", "server_process"]

_TIMEOUT_S = 4.0


def _argv(pid: int, proc: Path) -> list[str] | None:
    """The server's arguments after ``ctxtrio`` / ``-m ctxtrio``, or None when ``pid`` is no ctxtrio server."""
    try:
        words = [os.fsdecode(word) for word in (proc / str(pid) / "cmdline").read_bytes().split(b"\0") if word]
    except OSError:
        return None
    for position, word in enumerate(words):
        if word == "-m" and words[position + 1 : position + 2] == ["ctxtrio"]:
            return words[position + 2 :]
        if Path(word).name == "ctxtrio" and (position == 0 or words[position - 1] != "-m"):
            return words[position + 1 :]
    return None


def server_process(proc: Path = Path("/proc")) -> int | None:
    """The lowest-numbered process running ctxtrio without a subcommand (the container's server)."""
    for pid in sorted(int(name) for name in os.listdir(proc) if name.isdigit()):
        argv = _argv(pid, proc) if pid != os.getpid() else None
        if argv is not None and find_subcommand(argv, value_flags()) is None:
            return pid
    return None


def _environment(pid: int, proc: Path) -> dict[str, str]:
    pairs = (proc / str(pid) / "environ").read_bytes().split(b"\0")
    return dict(os.fsdecode(pair).split("=", 1) for pair in pairs if b"=" in pair)


def listening_port(pid: int, proc: Path = Path("/proc")) -> int | None:
    """The TCP port process ``pid`` listens on, or None: its sockets (``/proc/PID/fd``) looked up among
    the listening ones (state ``0A``) of its network namespace's ``net/tcp`` and ``net/tcp6``."""
    inodes: set[str] = set()
    try:
        descriptors = list((proc / str(pid) / "fd").iterdir())
    except OSError:
        return None
    for descriptor in descriptors:
        try:
            target = os.readlink(descriptor)
        except OSError:  # closed meanwhile
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    for table in ("tcp", "tcp6"):
        try:
            rows = (proc / str(pid) / "net" / table).read_text(encoding="ascii").splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()  # sl local_address rem_address st ... uid timeout inode
            if len(fields) > 9 and fields[3] == "0A" and fields[9] in inodes:
                return int(fields[1].rsplit(":", 1)[1], 16)
    return None


def check(pid: int, proc: Path = Path("/proc"), *, timeout_s: float = _TIMEOUT_S) -> str | None:
    """None when the server ``pid`` is healthy, else what is wrong (one line)."""
    argv = _argv(pid, proc)
    if argv is None:
        return f"process {pid} is not a ctxtrio server"
    try:
        # Not build_config: its refusal of relative paths in / judges a start in this process's working
        # directory, and the server started in its own (a check run from / called one using --data-dir state
        # from /srv unhealthy).
        config = config_from_args(serving_parser().parse_args(argv), _environment(pid, proc))
    except (ConfigError, OSError) as exc:
        return f"cannot read the server's settings: {exc}"
    except SystemExit:  # argparse refused a flag (the server would not have started either)
        return "the server's flags do not parse"
    if config.transport != "http":
        return None  # stdio: running is all there is to know
    host = "127.0.0.1" if config.http_host in ("0.0.0.0", "::", "localhost") else config.http_host
    port: int | None = config.http_port
    if port == 0:  # --port 0: the port the server got is known only to it and the kernel
        port = listening_port(pid, proc)
    if port is None:
        return "the server was started with --port 0 and listens on no TCP port (yet)"
    # An IPv6 literal is bracketed in a URL and its Host header: "::1:39481" was sent as the Host, which the
    # server's DNS-rebinding check refused with 403, so a healthy --host ::1 server was called unhealthy.
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    request = urllib.request.Request(f"http://{netloc}/health")
    if config.http_token:
        request.add_header("Authorization", f"Bearer {config.http_token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:
            return None if answer.status == 200 else f"/health answered {answer.status}"
    except OSError as exc:
        return f"/health on {netloc} did not answer: {exc}"


def _seconds(value: str) -> float:
    """A ``--timeout``: seconds > 0 (0, a negative or NaN reached urlopen, which raised a traceback or "Operation
    now in progress" for a healthy server)."""
    seconds = float(value)
    if not 0 < seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"must be seconds > 0, got {value}")
    return seconds


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ctxtrio.cli.healthcheck", description="Is the ctxtrio server healthy?"
    )
    parser.add_argument("pid", nargs="?", type=int, help="the server's pid (default: the oldest ctxtrio server)")
    parser.add_argument("--timeout", type=_seconds, default=_TIMEOUT_S, metavar="S", help="seconds /health may take")
    args = parser.parse_args(argv)
    pid = args.pid if args.pid is not None else server_process()
    if pid is None:
        sys.stderr.write("unhealthy: no ctxtrio server process found\n")
        return 1
    problem = check(pid, timeout_s=args.timeout)
    if problem is not None:
        sys.stderr.write(f"unhealthy: {problem}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
