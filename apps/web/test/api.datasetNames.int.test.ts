import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiServer, type ApiServer } from "./helpers/apiServer";
import { openServices, uniqueId, type TestServices } from "./helpers/services";

/** POST /api/v1/datasets refuses a second dataset of one name, as the designer does. */

let services: TestServices;
let server: ApiServer;
let token: string;
const name = uniqueId("dup_ds").replace(/-/g, "_");

const upload = (body: string) =>
  fetch(`${server.baseUrl}/api/v1/datasets?name=${name}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/jsonl" },
    body,
  });

beforeAll(async () => {
  services = openServices();
  server = await startApiServer({ isolateQueue: true });
  token = (await services.apiToken("editor", "dataset-names")).token;
});
afterAll(async () => {
  await services?.db.dataset.deleteMany({ where: { name } });
  await server?.close();
  await services?.close();
});

describe("POST /datasets with a name in use", () => {
  it("answers 409 naming the field, and keeps the first dataset only", async () => {
    expect((await upload('{"prompt":"a"}\n')).status).toBe(201);
    const second = await upload('{"prompt":"b"}\n');
    expect(second.status).toBe(409);
    const problem = (await second.json()) as { detail: string; errors: { path: string; message: string }[] };
    expect(problem.errors).toEqual([{ path: "name", message: expect.stringContaining(`a dataset named "${name}" already exists`) }]);
    expect(await services.db.dataset.count({ where: { name } })).toBe(1);
  });
});
