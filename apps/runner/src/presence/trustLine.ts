import type { RunnerCapabilities } from "@troupe/contracts";

/**
 * What the runner's `capabilities:` log line says about what runs may reach (issue 30): how a sandbox's
 * memory is bounded (one cgroup per sandbox, or per process only where none can be made) and the operator's
 * lists (TROUPE_API_HOSTS, TROUPE_ACTOR_KEY_ENVS, TROUPE_DATA_ROOTS) as the runtime read them.
 */
export function describeTrust(caps: RunnerCapabilities): string {
  const parts: string[] = [];
  const memory = /memory: ([^;]*)/.exec(caps.sandbox.detail ?? "")?.[1];
  if (caps.sandbox.usable && memory) parts.push(`sandbox memory: ${memory}`);
  const policy = caps.hostPolicy;
  const list = (xs: string[] | undefined) => (xs && xs.length > 0 ? xs.join(", ") : "none");
  if (policy) {
    parts.push(`API hosts: ${list(policy.apiHosts)}`, `key variables: ${list(policy.actorKeyEnvs)}`, `data roots: the run folder, ${list(policy.dataRoots)}`);
  } else {
    parts.push("no host policy published (an older runtime): API actors and host paths are refused");
  }
  return parts.map((p) => `; ${p}`).join("");
}
