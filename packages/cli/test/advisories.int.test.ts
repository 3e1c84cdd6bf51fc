import type { AdvisoryEvent, RunEvent } from "@troupe/contracts";
import { storeEvents, transitionRun } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiServer, type ApiServer } from "../../../apps/web/test/helpers/apiServer";
import { createBareRun, openServices, type TestServices } from "../../../apps/web/test/helpers/services";
import { EXIT } from "../src/exitCodes";
import { main } from "../src/main";

/**
 * `troupe wait RUN_ID --fail-on-advisory[=SEVERITY]` over real HTTP against real Postgres and Redis:
 * exit 4 when the ended run raised an advisory at or above the floor, each printed with its evidence.
 */

let services: TestServices;
let server: ApiServer;
let env: Record<string, string>;
let warned: string;
let healthy: string;
let failed: string;

const advisory = (seq: number, severity: AdvisoryEvent["severity"]): AdvisoryEvent => ({
  seq, ts: Date.now(), type: "advisory", step: 42, actor: "student", kind: "collapse", severity,
  evidence: { summary: "Over steps 38-42, 5 different prompts got nearly the same answer: mostly 'b'.", fromStep: 38, toStep: 42, values: {}, episodes: [], examples: [] },
  hint: "Lower the learning rate.",
});

async function endedRun(state: "succeeded" | "failed", extra: RunEvent[]): Promise<string> {
  const id = await createBareRun(services);
  await storeEvents(services.db, id, extra);
  await transitionRun(services.db, id, { from: ["running"], to: state });
  return id;
}

async function troupe(argv: string[]): Promise<{ code: number; err: string }> {
  let err = "";
  const code = await main(argv, env, { out: () => {}, err: (line) => void (err += `${line}\n`) });
  return { code, err };
}

beforeAll(async () => {
  services = openServices();
  server = await startApiServer({ isolateQueue: true });
  const { token } = await services.apiToken("viewer", "cli-advisories");
  env = { TROUPE_URL: server.baseUrl, TROUPE_TOKEN: token };
  warned = await endedRun("succeeded", [advisory(2, "warning")]);
  healthy = await endedRun("succeeded", []);
  failed = await endedRun("failed", [advisory(2, "critical")]);
});

afterAll(async () => {
  await server?.close();
  await services?.close();
});

describe("troupe wait --fail-on-advisory", () => {
  it("exits 4 on a warning (bare flag = warning), printing the advisory's evidence and hint", async () => {
    const r = await troupe(["wait", warned, "--fail-on-advisory"]);
    expect(r.code).toBe(EXIT.advisory);
    expect(r.err).toContain("advisory warning collapse (student) at step 42: Over steps 38-42");
    expect(r.err).toContain("try: Lower the learning rate.");
  });

  it("exits 0 when the advisories are below the floor, when there are none, and without the flag", async () => {
    expect((await troupe(["wait", warned, "--fail-on-advisory=critical"])).code).toBe(EXIT.ok);
    expect((await troupe(["wait", healthy, "--fail-on-advisory=info"])).code).toBe(EXIT.ok);
    expect((await troupe(["wait", warned])).code).toBe(EXIT.ok);
  });

  it("a failed run is 2 whatever its advisories; a bad severity is a usage error naming the flag", async () => {
    expect((await troupe(["wait", failed, "--fail-on-advisory"])).code).toBe(EXIT.runFailed);
    const bad = await troupe(["wait", warned, "--fail-on-advisory=loud"]);
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.err).toContain('--fail-on-advisory "loud": must be one of info, warning, critical');
    const notWaiting = await troupe(["run", "spec.yaml", "--fail-on-advisory"]);
    expect(notWaiting.code).toBe(EXIT.usage);
    expect(notWaiting.err).toContain("need --wait");
  });
});
