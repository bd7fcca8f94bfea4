// The TypeScript SDK v2 client against ctxtrio over stdio: every tool's structuredContent
// is validated against its outputSchema.
//
//   node ts_client.mjs <python> <repo root>      (stress/ts_client.py runs this)
//
// The v2 client compiles each listed tool's outputSchema and, in callTool, throws a
// ProtocolError when a result's structuredContent does not match it (or is missing).
// This script also validates every result itself with Ajv (JSON Schema 2020-12), so a
// client that skipped validation would not make it pass. Prints one line per tool and
// exits 1 on the first mismatch.

import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Ajv2020 } from "ajv/dist/2020.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [python, root] = process.argv.slice(2);
const work = mkdtempSync(join(tmpdir(), "ctxtrio-ts-"));
// Hosts pass the server only a few variables (this very transport: HOME, LOGNAME, PATH,
// SHELL, TERM, USER) plus the config's env: everything ctxtrio needs goes in args or env.
const transport = new StdioClientTransport({
  command: python,
  args: ["-m", "ctxtrio", "--no-llm", "--no-audit", "--data-dir", join(work, "data")],
  env: { PYTHONPATH: root, XDG_CACHE_HOME: join(work, "cache") },
  cwd: root,
  stderr: "pipe",
});
const client = new Client({ name: "ctxtrio-ts-check", version: "1.0.0" });
const ajv = new Ajv2020({ strict: false });

let failed = 0;
try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  const size = JSON.stringify(tools).length;
  console.log(`tools/list: ${tools.length} tools, ${size} characters of JSON`);
  const schemas = new Map(tools.map((tool) => [tool.name, tool.outputSchema]));
  for (const tool of tools) {
    if (!tool.outputSchema) {
      console.log(`FAIL ${tool.name}: no outputSchema`);
      failed++;
    }
  }
  const results = new Map();
  const call = async (name, args) => {
    const result = await client.callTool({ name, arguments: args }); // throws on a schema mismatch
    if (result.isError) throw new Error(`${name} failed: ${result.content[0].text}`);
    results.set(name, result);
    return result;
  };
  await call("context_guide", {});
  await call("context_open", { session_id: "ts", title: "TypeScript client" });
  for (let n = 0; n < 6; n++) await call("context_append", { session_id: "ts", text: `note ${n} about cookies` });
  const goal = await call("context_append", { session_id: "ts", text: "goal: keep the API", pinned: true });
  await call("context_recall", { session_id: "ts", query: "cookies" });
  await call("context_status", { session_id: "ts" });
  await call("context_compact", { session_id: "ts", keep_recent: 2 });
  await call("context_update", { session_id: "ts", entry_id: goal.structuredContent.id, pinned: false });
  await call("context_list_sessions", {});
  const log = Array.from({ length: 3000 }, (_, n) => `2026-12-01 step ${n} ok`).join("\n");
  await call("doc_ingest", { text: `${log}\nERROR java.lang.OutOfMemoryError: heap\n`, doc_id: "log", title: "build log" });
  await call("doc_outline", { doc_id: "log" });
  await call("doc_search", { query: "OutOfMemoryError", budget_tokens: 100 });
  await call("doc_window", { doc_id: "log", budget_tokens: 300 });
  await call("doc_summarize", { doc_id: "log", target_tokens: 100 });
  await call("doc_list", {});
  await call("doc_forget", { doc_id: "log" });
  for (const [name, result] of results) {
    const validate = ajv.compile(schemas.get(name));
    const ok = validate(result.structuredContent);
    if (!ok) failed++;
    const keys = Object.keys(result.structuredContent).join(", ");
    console.log(`${ok ? "ok  " : "FAIL"} ${name}: {${keys}}${ok ? "" : " " + ajv.errorsText(validate.errors)}`);
  }
  const missing = tools.filter((tool) => !results.has(tool.name)).map((tool) => tool.name);
  if (missing.length) {
    console.log(`FAIL not called: ${missing.join(", ")}`);
    failed++;
  }
  console.log(`${results.size} of ${tools.length} tools validated by the SDK v2 client and Ajv; ${failed} failures`);
} catch (error) {
  console.log(`FAIL ${error}`);
  failed++;
} finally {
  await client.close();
  rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
