import { describe, expect, it } from "vitest";
import { hostAllowed, hostPolicyIssues, pathAllowed, secretIssues } from "../src/hostPolicy";

/** Issue 30: a spec's keys, API hosts and host paths against what the live runners' operators allow. */

const apiSpec = (baseUrl: string, apiKeyEnv?: string) => ({
  actors: [
    { name: "Alice", model: { source: "tiny" } },
    { name: "Bob", backend: "openai", model: { source: "tiny" }, api: { baseUrl, model: "m", ...(apiKeyEnv ? { apiKeyEnv } : {}) } },
  ],
  datasets: [],
});
const fileSpec = (path: string) => ({ actors: [], datasets: [{ name: "d", source: { kind: "file", path, format: "jsonl" } }] });
const open = { id: "gpu-a", policy: { actorKeyEnvs: ["OPENAI_API_KEY"], apiHosts: ["api.openai.com", "10.0.0.5:8000"], dataRoots: ["/data", "/root/.cache/huggingface"] } };

describe("host policy at launch", () => {
  it("refuses Troupe's own secrets as a key on every runner, even with none live", () => {
    expect(secretIssues(apiSpec("http://127.0.0.1:9999/v1", "TROUPE_ADMIN_PASSWORD"))).toEqual([
      { path: "actors.1.api.apiKeyEnv", message: expect.stringMatching(/TROUPE_ADMIN_PASSWORD is one of Troupe's own secrets.*TROUPE_ACTOR_KEY_ENVS/) },
    ]);
    expect(secretIssues(apiSpec("https://api.openai.com/v1", "OPENAI_API_KEY"))).toEqual([]);
  });

  it("refuses a key variable or host no live runner lists, naming the variable to set", () => {
    const issues = hostPolicyIssues(apiSpec("http://127.0.0.1:9999/v1", "AWS_SECRET_ACCESS_KEY"), [open]);
    expect(issues.map((i) => i.path)).toEqual(["actors.1.api.apiKeyEnv", "actors.1.api.baseUrl"]);
    expect(issues[0]!.message).toMatch(/TROUPE_ACTOR_KEY_ENVS.*gpu-a: OPENAI_API_KEY/);
    expect(issues[1]!.message).toMatch(/host 127\.0\.0\.1 .*TROUPE_API_HOSTS/);
    expect(hostPolicyIssues(apiSpec("https://api.openai.com/v1", "OPENAI_API_KEY"), [open])).toEqual([]);
    // A runner of an older runtime publishes no lists: it allows nothing.
    expect(hostPolicyIssues(apiSpec("https://api.openai.com/v1"), [{ id: "old", policy: null }]).map((i) => i.path)).toEqual(["actors.1.api.baseUrl"]);
    expect(hostPolicyIssues(apiSpec("http://127.0.0.1:9999/v1", "X"), [])).toEqual([]); // none live: the runtime checks
  });

  it("refuses a remote environment's or MCP server's url whose host no live runner lists (the runtime calls it, as an API actor)", () => {
    const mcp = (url: string) => ({ actors: [], datasets: [], environments: [{ name: "t", kind: "tools", tools: { mcp: [{ kind: "mcp", command: ["python", "s.py"] }, { kind: "mcp", url }] } }] });
    expect(hostPolicyIssues(mcp("http://evil.example:8000/mcp"), [open]).map((i) => i.path)).toEqual(["environments.0.tools.mcp.1.url"]);
    expect(hostPolicyIssues(mcp("http://10.0.0.5:8000/mcp"), [open])).toEqual([]);
    const remote = (url: string) => ({ actors: [], datasets: [], environments: [{ name: "r", kind: "remote", url }] });
    expect(hostPolicyIssues(remote("grpc://evil.example:8101"), [open]).map((i) => i.path)).toEqual(["environments.0.url"]);
    expect(hostPolicyIssues(remote("http://10.0.0.5:8000"), [open])).toEqual([]);
  });

  it("refuses file datasets and local models outside the run folder and every data root", () => {
    const refused = (path: string) => hostPolicyIssues(fileSpec(path), [open]).map((i) => i.path);
    expect(refused("/etc/shadow")).toEqual(["datasets.0.source.path"]);
    expect(refused("/data/../etc/shadow")).toEqual(["datasets.0.source.path"]);
    expect(refused("../other-run/datasets/0-x.jsonl")).toEqual(["datasets.0.source.path"]);
    expect(refused("/database/x.jsonl")).toEqual(["datasets.0.source.path"]); // a prefix is not a parent
    expect(refused("datasets/0-x.jsonl")).toEqual([]);
    expect(refused("/data/gsm8k/train.jsonl")).toEqual([]);
    const model = { actors: [{ name: "A", model: { source: "local", path: "/root/.ssh" } }], datasets: [] };
    expect(hostPolicyIssues(model, [open])).toEqual([{ path: "actors.0.model.path", message: expect.stringMatching(/outside every data root.*TROUPE_DATA_ROOTS/) }]);
  });

  it("matches hosts by name, port and subdomain, and paths by folder", () => {
    expect(hostAllowed("https://api.openai.com/v1", ["api.openai.com"])).toBe(true);
    expect(hostAllowed("http://10.0.0.5:8001/v1", ["10.0.0.5:8000"])).toBe(false);
    expect(hostAllowed("https://eu.llm.example.com", ["*.example.com"])).toBe(true);
    expect(hostAllowed("https://example.com.evil.net", ["*.example.com"])).toBe(false);
    expect(pathAllowed("/data", ["/data/"])).toBe(true);
    expect(pathAllowed("./a/../b.jsonl", [])).toBe(true);
    expect(pathAllowed("a/../../b.jsonl", [])).toBe(false);
  });
});
