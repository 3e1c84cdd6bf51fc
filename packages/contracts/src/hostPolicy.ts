import { z } from "zod";
import type { FieldIssue } from "./issues";

/**
 * What an operator lets a run reach on a runner host (issue 30): which environment variables an API actor
 * may name as its key (`TROUPE_ACTOR_KEY_ENVS`), which hosts an API actor may call (`TROUPE_API_HOSTS`), and
 * under which folders `file` datasets and `local` models may be read (`TROUPE_DATA_ROOTS`; a run's own folder
 * always). The runtime publishes the lists with its capabilities (`hostPolicy`), the launch check refuses a
 * spec no live runner allows (by field, naming the variable to set), and the runtime checks again before it
 * reads a key, calls a host or opens a file (gpu-runtime/src/troupe/host/host_policy.py, host/data_roots.py).
 */

export const ACTOR_KEY_ENVS_VAR = "TROUPE_ACTOR_KEY_ENVS";
export const API_HOSTS_VAR = "TROUPE_API_HOSTS";
export const DATA_ROOTS_VAR = "TROUPE_DATA_ROOTS";

/**
 * Troupe's own secrets: never in a runtime's environment, never a key an actor may name, whatever an operator
 * lists (the runner refuses to start when TROUPE_ACTOR_KEY_ENVS names one).
 */
export const TROUPE_SECRETS = ["DATABASE_URL", "REDIS_URL", "TROUPE_ADMIN_PASSWORD", "TROUPE_ADMIN_EMAIL", "TROUPE_TOKEN"] as const;

export const HostPolicy = z.looseObject({
  /** Variables an API actor may name as `apiKeyEnv` (the runner passes exactly these to its runs). */
  actorKeyEnvs: z.array(z.string()),
  /** Hosts (`api.example.com`, `*.example.com`, `10.0.0.5:8000`) an API actor's `baseUrl` may name. */
  apiHosts: z.array(z.string()),
  /** Absolute folders (symlinks resolved) `file` datasets and `local` models may be read under, besides the run folder. */
  dataRoots: z.array(z.string()),
});
export type HostPolicy = z.infer<typeof HostPolicy>;

/** Comma- or whitespace-separated list of an environment variable, empty entries dropped. */
export function parseList(raw: string | undefined): string[] {
  return (raw ?? "")
    .split(/[,\s]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `host` or `host:port` of a URL, lower case (IPv6 in brackets); null when it does not parse. */
function urlHost(url: string): { host: string; port: string } | null {
  try {
    const u = new URL(url);
    const port = u.port || (u.protocol === "https:" ? "443" : u.protocol === "http:" ? "80" : "");
    return { host: u.hostname.toLowerCase(), port };
  } catch {
    return null;
  }
}

/** Whether `url`'s host is on the list: `host` (any port), `host:port`, or `*.domain` (any subdomain). */
export function hostAllowed(url: string, allowed: readonly string[]): boolean {
  const at = urlHost(url);
  if (!at) return false;
  return allowed.some((raw) => {
    const entry = raw.toLowerCase();
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry);
    if (!m) return false;
    const [, name, port] = m as unknown as [string, string, string | undefined];
    if (port !== undefined && port !== at.port) return false;
    if (name.startsWith("*.")) return at.host.endsWith(name.slice(1)) && at.host.length > name.length - 1;
    return name === at.host;
  });
}

/** Normalises an absolute POSIX path lexically (`.`/`..`/`//`); null when it is not absolute. */
function normaliseAbsolute(path: string): string | null {
  if (!path.startsWith("/")) return null;
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return `/${parts.join("/")}`;
}

/** A relative path that stays inside its folder (no `..` climbing out of it). */
function staysInside(relative: string): boolean {
  let depth = 0;
  for (const part of relative.split("/")) {
    if (part === "" || part === ".") continue;
    depth += part === ".." ? -1 : 1;
    if (depth < 0) return false;
  }
  return true;
}

/**
 * Whether a spec path may be read under `roots` as far as can be told without the runner's file system:
 * relative paths inside the run folder, absolute ones under a root. Symlinks are resolved by the runtime
 * before it opens anything (data_roots.py), which refuses what this lexical check lets through.
 */
export function pathAllowed(path: string, roots: readonly string[]): boolean {
  if (!path.startsWith("/")) return staysInside(path);
  const at = normaliseAbsolute(path)!;
  return roots.some((root) => {
    const r = normaliseAbsolute(root);
    return r !== null && (at === r || at.startsWith(r === "/" ? "/" : `${r}/`));
  });
}

type Json = Record<string, unknown>;
const asList = (v: unknown): Json[] => (Array.isArray(v) ? (v.filter((x) => x !== null && typeof x === "object") as Json[]) : []);

/** The fields of a spec that reach outside the runtime: keys, API hosts, paths read from the host. */
interface Reach {
  keyEnvs: { path: string; name: string }[];
  apiUrls: { path: string; url: string }[];
  paths: { path: string; value: string; what: string }[];
}

function reachOf(spec: unknown): Reach {
  const doc = (spec ?? {}) as Json;
  const out: Reach = { keyEnvs: [], apiUrls: [], paths: [] };
  asList(doc.actors).forEach((actor, i) => {
    const api = actor.api as Json | undefined;
    if (api && typeof api === "object") {
      if (typeof api.apiKeyEnv === "string") out.keyEnvs.push({ path: `actors.${i}.api.apiKeyEnv`, name: api.apiKeyEnv });
      if (typeof api.baseUrl === "string") out.apiUrls.push({ path: `actors.${i}.api.baseUrl`, url: api.baseUrl });
    }
    const model = actor.model as Json | undefined;
    if (model?.source === "local" && typeof model.path === "string") out.paths.push({ path: `actors.${i}.model.path`, value: model.path, what: "a local model" });
  });
  asList(doc.environments).forEach((env, i) => {
    // Remote environments and MCP servers over HTTP are called from the runtime, as API actors are.
    if (typeof env.url === "string") out.apiUrls.push({ path: `environments.${i}.url`, url: env.url });
    const tools = env.tools as Json | undefined;
    asList(tools?.mcp).forEach((server, j) => {
      if (typeof server.url === "string") out.apiUrls.push({ path: `environments.${i}.tools.mcp.${j}.url`, url: server.url });
    });
  });
  asList(doc.datasets).forEach((dataset, i) => {
    const source = dataset.source as Json | undefined;
    if (source?.kind === "file" && typeof source.path === "string") out.paths.push({ path: `datasets.${i}.source.path`, value: source.path, what: "a file dataset" });
  });
  return out;
}

/** Refusals that hold on every runner: an actor naming one of Troupe's own secrets as its key. */
export function secretIssues(spec: unknown): FieldIssue[] {
  return reachOf(spec)
    .keyEnvs.filter((k) => (TROUPE_SECRETS as readonly string[]).includes(k.name))
    .map((k) => ({
      path: k.path,
      message: `${k.name} is one of Troupe's own secrets and never reaches a run; name a variable the operator lists in ${ACTOR_KEY_ENVS_VAR} on the runner host`,
    }));
}

/** A runner as this check sees it: its id and published policy (none: an older runtime, which allows nothing). */
export interface PolicyHolder {
  id: string;
  policy: HostPolicy | null;
}

const shown = (list: readonly string[]) => (list.length > 0 ? list.join(", ") : "none");

/**
 * Launch check of a spec's keys, API hosts and paths against the live runners' policies: a field no live
 * runner allows is refused, naming the variable the operator sets on the runner host. `runners` are the live
 * ones that reported capabilities; with none, nothing here is refused (the runtime checks again).
 */
export function hostPolicyIssues(spec: unknown, runners: readonly PolicyHolder[]): FieldIssue[] {
  if (runners.length === 0) return [];
  const reach = reachOf(spec);
  const issues: FieldIssue[] = [];
  const policies = runners.map((r) => ({ id: r.id, p: r.policy ?? { actorKeyEnvs: [], apiHosts: [], dataRoots: [] } }));
  for (const k of reach.keyEnvs) {
    if ((TROUPE_SECRETS as readonly string[]).includes(k.name)) continue; // secretIssues says it
    if (policies.some(({ p }) => p.actorKeyEnvs.includes(k.name))) continue;
    const lists = policies.map(({ id, p }) => `${id}: ${shown(p.actorKeyEnvs)}`).join("; ");
    issues.push({ path: k.path, message: `no runner passes ${k.name} to its runs: the operator adds it to ${ACTOR_KEY_ENVS_VAR} on the runner host (listed now: ${lists})` });
  }
  for (const a of reach.apiUrls) {
    if (policies.some(({ p }) => hostAllowed(a.url, p.apiHosts))) continue;
    const host = urlHost(a.url);
    const name = host ? host.host : a.url;
    const lists = policies.map(({ id, p }) => `${id}: ${shown(p.apiHosts)}`).join("; ");
    issues.push({ path: a.path, message: `host ${name} is not one an API actor may call: the operator adds it to ${API_HOSTS_VAR} on the runner host (listed now: ${lists})` });
  }
  for (const f of reach.paths) {
    if (policies.some(({ p }) => pathAllowed(f.value, p.dataRoots))) continue;
    const lists = policies.map(({ id, p }) => `${id}: ${shown(p.dataRoots)}`).join("; ");
    const where = f.value.startsWith("/") ? "is outside every data root" : "climbs out of the run folder";
    issues.push({ path: f.path, message: `${f.value} ${where}: ${f.what} is read only from the run folder or under a folder the operator lists in ${DATA_ROOTS_VAR} on the runner host (listed now: ${lists})` });
  }
  return issues;
}
