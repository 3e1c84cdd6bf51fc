import { randomUUID } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { extname } from "node:path";
import { parseDocument } from "yaml";
import { ApiAdvisoryList, type AdvisorySeverity, ApiCollectResult, ApiMetrics, ApiRun, ApiRunCancel, ApiRunControl, ApiRunDelete, ApiRunList, ApiRunWait, ApiRunWithSpec } from "@troupe/contracts";
import type { Command } from "./args";
import { ApiClient, ConnectionError, HttpError, parseAnswer } from "./client";
import { CliError, EXIT } from "./exitCodes";
import { formatNumber } from "./format";
import { checkThresholds, exitForChecks } from "./thresholds";

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function describe(run: ApiRun): string {
  const progress = run.lastStep !== null ? ` step ${run.lastStep}${run.totalSteps !== null ? `/${run.totalSteps}` : ""}` : "";
  const reward = run.lastReward !== null ? ` reward/mean ${formatNumber(run.lastReward)}` : "";
  return `run ${run.id} (${run.name}) ${run.status}${progress}${reward}`;
}

/** Retries a call while the server is unreachable or answers 5xx (a deploy, a restart), then gives up. */
async function withRetries<T>(io: Io, what: string, call: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const transient = error instanceof ConnectionError || (error instanceof HttpError && error.status >= 500);
      if (!transient || attempt >= attempts) throw error;
      io.err(`troupe: ${what}: ${(error as Error).message}; retrying (${attempt}/${attempts - 1})`);
      await sleep(Math.min(1000 * 2 ** (attempt - 1), 10_000));
    }
  }
}

async function readSpec(path: string): Promise<{ text: string; yaml: boolean }> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new CliError(`cannot read spec file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const ext = extname(path).toLowerCase();
  return { text, yaml: ext !== ".json" };
}

/** The launch body: the file as it is when no option changes it (so YAML errors come back with lines), else a JSON envelope. */
function launchBody(command: Extract<Command, { name: "run" }>, spec: { text: string; yaml: boolean }, path: string) {
  const hasOptions = command.tags.length > 0 || command.priority !== undefined || command.experimentId !== undefined;
  if (!hasOptions) return { body: spec.text, contentType: spec.yaml ? "application/yaml" : "application/json" };
  let value: unknown;
  if (spec.yaml) {
    const doc = parseDocument(spec.text, { prettyErrors: false });
    const first = doc.errors[0];
    if (first) {
      const pos = first.linePos?.[0];
      throw new CliError(`${path}${pos ? `:${pos.line}:${pos.col}` : ""}: invalid YAML: ${first.message.split("\n")[0]}`);
    }
    value = doc.toJS({ maxAliasCount: 100 });
  } else {
    try {
      value = JSON.parse(spec.text);
    } catch (error) {
      throw new CliError(`${path}: invalid JSON: ${(error as Error).message}`);
    }
  }
  const envelope = {
    spec: value,
    ...(command.tags.length ? { tags: command.tags } : {}),
    ...(command.priority !== undefined ? { priority: command.priority } : {}),
    ...(command.experimentId !== undefined ? { experimentId: command.experimentId } : {}),
  };
  return { body: JSON.stringify(envelope), contentType: "application/json" };
}

async function waitForEnd(client: ApiClient, io: Io, runId: string, timeoutSeconds: number | undefined): Promise<ApiRun | null> {
  const deadline = timeoutSeconds !== undefined ? Date.now() + timeoutSeconds * 1000 : Infinity;
  let lastLine = "";
  for (;;) {
    const left = Math.ceil((deadline - Date.now()) / 1000);
    if (left <= 0) return null;
    const result = await withRetries(io, "waiting", () =>
      client.json(ApiRunWait, "GET", `/runs/${encodeURIComponent(runId)}/wait`, { query: { timeout: Math.min(60, left) } }),
    );
    const line = describe(result.run);
    if (line !== lastLine) io.err(`troupe: ${line}`);
    lastLine = line;
    if (result.done) return result.run;
  }
}

export async function runCommand(command: Extract<Command, { name: "run" }>, client: ApiClient, io: Io): Promise<number> {
  const spec = await readSpec(command.specPath);
  const { body, contentType } = launchBody(command, spec, command.specPath);
  // One key for this invocation's own retries, so a dropped connection never launches two runs.
  const idempotencyKey = command.idempotencyKey ?? `troupe-cli-${randomUUID()}`;
  const created = await withRetries(io, "launching", () =>
    client.request("POST", "/runs", { body, contentType, headers: { "idempotency-key": idempotencyKey } }),
  );
  const run = parseAnswer(ApiRunWithSpec, "POST", "/runs", created);
  io.out(`${run.id}\n`);
  io.err(`troupe: launched ${describe(run)}: ${client.baseUrl}${run.url}`);
  if (!command.wait) return EXIT.ok;

  const ended = await waitForEnd(client, io, run.id, command.timeoutSeconds);
  if (command.metricsOut) {
    const csv = await withRetries(io, "fetching metrics", () =>
      client.request("GET", `/runs/${encodeURIComponent(run.id)}/metrics`, { query: { format: "csv" } }),
    );
    await writeFile(command.metricsOut, csv.text).catch((error: Error) => {
      throw new CliError(`cannot write ${command.metricsOut}: ${error.message}`);
    });
    io.err(`troupe: metrics written to ${command.metricsOut}`);
  }
  if (!ended) {
    io.err(`troupe: --timeout ${command.timeoutSeconds}s passed; run ${run.id} is still running (not cancelled)`);
    return EXIT.runFailed;
  }
  if (ended.status !== "succeeded") {
    io.err(`troupe: run ${ended.id} ${ended.status}${ended.error ? `: ${ended.error.split("\n")[0]}` : ""}`);
    return EXIT.runFailed;
  }
  if (command.thresholds.length === 0) return command.failOnAdvisory ? checkAdvisories(client, io, run.id, command.failOnAdvisory) : EXIT.ok;

  const metrics = await withRetries(io, "fetching metrics", () =>
    client.json(ApiMetrics, "GET", `/runs/${encodeURIComponent(run.id)}/metrics`, {
      query: { format: "json", ...(command.actor !== undefined ? { actor: command.actor } : {}) },
    }),
  );
  const results = checkThresholds(command.thresholds, metrics.series, command.actor);
  for (const r of results) io.err(`troupe: ${r.line}`);
  const code = exitForChecks(results);
  io.err(code === EXIT.ok ? "troupe: all thresholds met" : "troupe: a threshold was missed");
  if (code === EXIT.ok && command.failOnAdvisory) return checkAdvisories(client, io, run.id, command.failOnAdvisory);
  return code;
}

/** `--fail-on-advisory`: each advisory at or above the floor, printed with its evidence; exit 4 if any. */
async function checkAdvisories(client: ApiClient, io: Io, runId: string, floor: AdvisorySeverity): Promise<number> {
  const list = await withRetries(io, "fetching advisories", () =>
    client.json(ApiAdvisoryList, "GET", `/runs/${encodeURIComponent(runId)}/advisories`, { query: { severity: floor } }),
  );
  for (const a of list.items) {
    io.err(`troupe: advisory ${a.severity} ${a.kind}${a.actor ? ` (${a.actor})` : ""} at step ${a.step}: ${a.evidence.summary}`);
    io.err(`troupe:   try: ${a.hint}`);
  }
  if (list.items.length === 0) {
    io.err(`troupe: no health advisory of severity ${floor} or above`);
    return EXIT.ok;
  }
  io.err(`troupe: ${list.items.length} health ${list.items.length === 1 ? "advisory" : "advisories"} of severity ${floor} or above`);
  return EXIT.advisory;
}

/** `troupe wait RUN_ID`: until the run ends; 2 unless it succeeded; with --fail-on-advisory, 4 on an advisory. */
export async function waitCommand(command: Extract<Command, { name: "wait" }>, client: ApiClient, io: Io): Promise<number> {
  const ended = await waitForEnd(client, io, command.runId, command.timeoutSeconds);
  if (!ended) {
    io.err(`troupe: --timeout ${command.timeoutSeconds}s passed; run ${command.runId} is still running (not cancelled)`);
    return EXIT.runFailed;
  }
  if (ended.status !== "succeeded") {
    io.err(`troupe: run ${ended.id} ${ended.status}${ended.error ? `: ${ended.error.split("\n")[0]}` : ""}`);
    return EXIT.runFailed;
  }
  return command.failOnAdvisory ? checkAdvisories(client, io, ended.id, command.failOnAdvisory) : EXIT.ok;
}

export async function statusCommand(command: Extract<Command, { name: "status" }>, client: ApiClient, io: Io): Promise<number> {
  const path = `/runs/${encodeURIComponent(command.runId)}`;
  const response = await client.request("GET", path);
  const run = parseAnswer(ApiRunWithSpec, "GET", path, response);
  if (command.json) io.out(`${response.text}\n`);
  else io.out(`${describe(run)}${run.error ? ` (${run.error.split("\n")[0]})` : ""}\n`);
  return EXIT.ok;
}

/** `troupe runs`: GET /runs, one line per run (or the page as JSON). */
export async function runsCommand(command: Extract<Command, { name: "runs" }>, client: ApiClient, io: Io): Promise<number> {
  const query = { status: command.status, tag: command.tag, experimentId: command.experimentId, limit: command.limit };
  const response = await client.request("GET", "/runs", { query });
  const page = parseAnswer(ApiRunList, "GET", "/runs", response);
  if (command.json) {
    io.out(`${response.text}\n`);
    return EXIT.ok;
  }
  const rows = page.items.map((r) => [
    r.id,
    r.name,
    r.status,
    r.lastStep !== null ? `${r.lastStep}${r.totalSteps !== null ? `/${r.totalSteps}` : ""}` : "-",
    r.lastReward !== null ? formatNumber(r.lastReward) : "-",
    r.createdAt,
    r.specName,
  ]);
  const header = ["ID", "NAME", "STATUS", "STEP", "REWARD", "CREATED", "SPEC"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  for (const row of [header, ...rows]) io.out(`${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")}\n`);
  if (page.nextCursor) io.err(`troupe: more runs exist (showing ${page.items.length}); raise --limit (at most 100) or filter`);
  return EXIT.ok;
}

export async function metricsCommand(command: Extract<Command, { name: "metrics" }>, client: ApiClient, io: Io): Promise<number> {
  const response = await client.request("GET", `/runs/${encodeURIComponent(command.runId)}/metrics`, {
    query: { format: command.csv ? "csv" : "json", name: command.names, actor: command.actor, buckets: command.buckets },
  });
  if (command.out) {
    await writeFile(command.out, response.text).catch((error: Error) => {
      throw new CliError(`cannot write ${command.out}: ${error.message}`);
    });
    io.err(`troupe: metrics written to ${command.out}`);
  } else {
    io.out(response.text.endsWith("\n") ? response.text : `${response.text}\n`);
  }
  return EXIT.ok;
}

const CONTROL_DONE: Record<"pause" | "resume" | "stop", string> = {
  pause: "pause requested (it pauses after its current step)",
  resume: "resume requested (it continues with its next step)",
  stop: "stop requested (it stops after its current step and writes a checkpoint)",
};

/** `troupe pause|resume|stop RUN`: POST /runs/{id}/pause|resume|stop. */
export async function controlCommand(command: Extract<Command, { name: "pause" | "resume" | "stop" }>, client: ApiClient, io: Io): Promise<number> {
  const result = await client.json(ApiRunControl, "POST", `/runs/${encodeURIComponent(command.runId)}/${command.name}`);
  const what =
    result.outcome === "requeued" ? `queued to resume from the checkpoint of step ${result.fromStep}` : CONTROL_DONE[command.name];
  io.out(`run ${result.run.id} ${what}\n`);
  return EXIT.ok;
}

export async function cancelCommand(command: Extract<Command, { name: "cancel" }>, client: ApiClient, io: Io): Promise<number> {
  const result = await client.json(ApiRunCancel, "POST", `/runs/${encodeURIComponent(command.runId)}/cancel`);
  io.out(`run ${result.run.id} ${result.outcome === "cancelled" ? "cancelled" : "cancellation requested (it stops after its current step)"}\n`);
  return EXIT.ok;
}

/** `troupe delete RUN`: DELETE /runs/{id}; says where the run's files remain. */
export async function deleteCommand(command: Extract<Command, { name: "delete" }>, client: ApiClient, io: Io): Promise<number> {
  const result = await client.json(ApiRunDelete, "DELETE", `/runs/${encodeURIComponent(command.runId)}`);
  io.out(`run ${result.id} (${result.name}) deleted\n`);
  if (result.workDir) io.err(`troupe: its folder on runner ${result.runnerId ?? "(unknown)"} was not removed: ${result.workDir}`);
  return EXIT.ok;
}

/** `troupe collect RUN`: POST /runs/{id}/collect; prints the new dataset's id (or, with --json, the answer). */
export async function collectCommand(command: Extract<Command, { name: "collect" }>, client: ApiClient, io: Io): Promise<number> {
  const body = {
    name: command.datasetName,
    minReward: command.minReward,
    ...(Object.keys(command.minRewardByActor).length > 0 ? { minRewardByActor: command.minRewardByActor } : {}),
    ...(command.actors.length > 0 ? { actors: command.actors } : {}),
    ...(command.fromStep !== undefined ? { fromStep: command.fromStep } : {}),
    ...(command.evalFraction !== undefined ? { evalFraction: command.evalFraction } : {}),
    dedupe: command.dedupe,
  };
  const path = `/runs/${encodeURIComponent(command.runId)}/collect`;
  const response = await client.request("POST", path, { body: JSON.stringify(body), contentType: "application/json" });
  const result = parseAnswer(ApiCollectResult, "POST", path, response);
  if (command.json) io.out(`${response.text}\n`);
  else io.out(`${result.dataset.id}\n`);
  const counts = result.actors.map((a) => `${a.actor}: ${a.kept} of ${a.scanned} at reward >= ${a.threshold}`).join("; ");
  io.err(`troupe: dataset "${result.dataset.name}" (${result.dataset.id}): ${result.dataset.rowCount} rows from ${result.episodesScanned} episodes (${counts})`);
  return EXIT.ok;
}
