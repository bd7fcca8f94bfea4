"""Real MCP clients against ctxtrio: the TypeScript SDK v2 client and the official conformance suite.

    npm ci --prefix stress/mcp-clients        # once: pinned versions from package-lock.json
    python stress/mcp_clients.py              # both; --only ts / --only conformance
    python stress/mcp_clients.py --only conformance --requirements 2026-07-28

The TypeScript part (Node 20+) calls all 15 tools over stdio and validates every
``structuredContent`` against its ``outputSchema`` (the v2 client does, and Ajv again).
The conformance part (Node 22+: the suite uses ``fs.globSync``) serves ctxtrio over HTTP
on a free loopback port, runs ``conformance server`` and classifies every failing scenario:

* ``optional``: a feature ctxtrio does not offer and does not advertise (the suite asks
  anyway and gets -32601 Method not found, which is the right answer);
* ``fixture``: the scenario calls the reference server's own fixtures (``test_*`` tools,
  prompts and ``test://`` resources), which ctxtrio answers as unknown names;
* ``draft``: a requirement of the in-progress draft that the SDK's dispatcher decides;
* ``ours``: anything else. Exits 1 when a failure is ours or a TypeScript check failed.

Prints the counts and one line per failing scenario with its class and the suite's message.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)

ROOT = Path(__file__).resolve().parents[1]

from testkit.processes import stop_popen  # noqa: E402

CLIENTS = ROOT / "stress" / "mcp-clients"

#: Scenario name prefixes -> (class, why), first match wins. Everything else is "ours".
#: The default ("active") suite needs only the first six; the rest come with --suite all
#: or --requirements 2026-07-28.
CLASSES: dict[str, tuple[str, str]] = {
    "tools-call-": ("fixture", "calls the reference server's test_* tools"),
    "elicitation-": ("fixture", "calls the reference server's test_elicitation_* tools"),
    "completion-complete": (
        "fixture",
        "completes an argument of the reference server's test_prompt_with_arguments (unknown here: -32602)",
    ),
    "resources-read-": ("fixture", "reads the reference server's test:// resources (unknown here: -32602)"),
    "resources-templates-read": ("fixture", "reads the reference server's test://template/{id}/data"),
    "prompts-get-": ("fixture", "gets the reference server's test_* prompts (unknown here: -32602)"),
    "server-sse-polling": ("optional", "SSE resumability (priming event, retry) needs an event store: not offered"),
    "http-custom-header-": ("fixture", "needs a tool with x-mcp-header annotations"),
    "json-schema-2020-12": ("fixture", "calls the suite's json_schema_2020_12_tool"),
    "server-stateless": ("fixture", "needs the suite's diagnostic test_* tools"),
    "input-required-result-": ("fixture", "SEP-2322: calls test_input_required_* tools (or prompts)"),
    "tasks-capability-negotiation": (
        "draft",
        "tasks extension not offered; the draft wants -32021 for tasks/* from a non-declaring server, "
        "the SDK's dispatcher answers -32601",
    ),
    "tasks-": ("optional", "tasks extension not offered (calls its greet/slow_compute fixtures)"),
}


_STAMP = re.compile(r"-\d{4}-\d\d-\d\dT[\dZ-]+$")  # the run's timestamp in a result folder's name


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _node_major(node: str) -> int:
    out = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout
    return int(out.strip().lstrip("v").split(".")[0])


def run_ts_client(node: str) -> bool:
    """Run ts_client.mjs; True when every tool's structured content validated."""
    done = subprocess.run(
        [node, str(CLIENTS / "ts_client.mjs"), sys.executable, str(ROOT)], cwd=CLIENTS, text=True, timeout=300
    )
    return done.returncode == 0


def classify(scenario: str) -> tuple[str, str]:
    for prefix, verdict in CLASSES.items():
        if scenario.startswith(prefix):
            return verdict
    return ("ours", "not explained by a missing optional feature or a fixture")


def run_conformance(node: str, suite: str, keep: str | None = None, requirements: str | None = None) -> bool:
    """Serve ctxtrio over HTTP, run the suite, classify failures; True when none is ours."""
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": f"{tmp}/cache"}
        args = ["--http", "--port", str(port), "--no-llm", "--no-audit", "--data-dir", f"{tmp}/data"]
        with open(f"{tmp}/server.log", "w") as log:
            server = subprocess.Popen([sys.executable, "-m", "ctxtrio", *args], env=env, stderr=log, cwd=ROOT)
        try:
            deadline = time.monotonic() + 30
            while "ready:" not in Path(f"{tmp}/server.log").read_text():
                if time.monotonic() > deadline or server.poll() is not None:
                    print(Path(f"{tmp}/server.log").read_text())
                    return False
                time.sleep(0.1)
            conformance = CLIENTS / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
            started = time.monotonic()
            subprocess.run(
                [node, str(conformance), "server", "--url", f"http://127.0.0.1:{port}/mcp",
                 *(["--requirements", requirements] if requirements else ["--suite", suite]), "-o", f"{tmp}/results"],
                cwd=CLIENTS, capture_output=True, text=True, timeout=900,
            )  # fmt: skip
            elapsed = time.monotonic() - started
        finally:
            stop_popen(server, grace_s=30)
        stderr = Path(f"{tmp}/server.log").read_text()
        if "Traceback" in stderr:
            print("server stderr:\n" + stderr[stderr.index("Traceback") - 300 :][:3000])
        if keep is not None:
            shutil.copytree(f"{tmp}/results", keep, dirs_exist_ok=True)
        return _report(Path(f"{tmp}/results"), requirements or suite, elapsed, "Traceback" in stderr)


def _report(results: Path, suite: str, elapsed: float, traceback: bool) -> bool:
    passed = failed = 0
    failing: dict[str, list[str]] = {}
    for checks_file in sorted(results.rglob("checks.json")):
        scenario = _STAMP.sub("", checks_file.parent.name.removeprefix("server-"))
        for check in json.loads(checks_file.read_text()):
            if check.get("status") == "SUCCESS":
                passed += 1
            elif check.get("status") in ("FAILURE", "WARNING"):
                failed += 1
                failing.setdefault(scenario, []).append(f"{check.get('id')}: {check.get('errorMessage', '')}")
    counts: dict[str, int] = {}
    print(f"conformance suite {suite!r}: {passed} checks passed, {failed} failed, {elapsed:.0f} s")
    for scenario, messages in sorted(failing.items()):
        kind, why = classify(scenario)
        counts[kind] = counts.get(kind, 0) + 1
        print(f"  {kind:8} {scenario}: {why}; {'; '.join(messages)[:160]}")
    print(f"failing scenarios by class: {counts or 'none'}; server stderr traceback: {traceback}")
    return counts.get("ours", 0) == 0 and not traceback


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=("ts", "conformance"))
    parser.add_argument("--suite", default="active", help="conformance suite: active (default), all, draft")
    parser.add_argument("--requirements", help="run exactly what a revision requires instead (e.g. 2026-07-28)")
    parser.add_argument("--keep", metavar="DIR", help="copy the suite's results (checks.json per scenario) here")
    parser.add_argument("--node", default=shutil.which("node") or "node", help="the node binary")
    args = parser.parse_args()
    if not (CLIENTS / "node_modules").is_dir():
        print("run `npm ci --prefix stress/mcp-clients` first (Node 20+ and the npm registry)")
        return 2
    ok = True
    if args.only in (None, "ts"):
        ok = run_ts_client(args.node) and ok
    if args.only in (None, "conformance"):
        if _node_major(args.node) < 22:
            print(f"conformance suite skipped: it needs Node 22+ (fs.globSync); {args.node} is older (--node)")
        else:
            ok = run_conformance(args.node, args.suite, args.keep, args.requirements) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
