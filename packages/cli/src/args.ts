import { parseArgs } from "node:util";
import { ADVISORY_SEVERITIES, type AdvisorySeverity } from "@troupe/contracts";
import { CliError } from "./exitCodes";
import { parseThreshold, type Threshold } from "./thresholds";

export const USAGE = `usage: troupe <command> [options]

commands:
  run SPEC.yaml|SPEC.json [--wait] [--fail-below METRIC=VALUE ...] [--fail-above METRIC=VALUE ...]
                [--actor NAME] [--metrics-out FILE.csv] [--timeout SECONDS] [--idempotency-key KEY]
                [--tag TAG ...] [--priority N] [--experiment ID] [--fail-on-advisory[=SEVERITY]]
      Launch a run. Prints its id. With --wait, waits for the end, writes the metrics CSV, checks thresholds
      against each metric's final value (METRIC may use _ for /, e.g. reward_mean).
  wait RUN_ID [--timeout SECONDS] [--fail-on-advisory[=SEVERITY]]
                              Wait for a run to end; exit 2 unless it succeeded.
      --fail-on-advisory: also exit 4 when the run raised a health advisory (collapse, KL blow-up, NaN, ...)
      of at least SEVERITY (info, warning or critical; bare: warning); each is printed with its evidence.
  runs [--status S] [--tag T] [--experiment ID] [--limit N] [--json]
                              Recent runs, newest first: id, name, status, step, latest reward.
  status RUN_ID [--json]      Status, progress and latest reward of a run.
  metrics RUN_ID [--csv] [--name N[,N...]] [--actor NAME] [--buckets N] [--out FILE]
                              Metric series (JSON, or CSV with --csv) to stdout or FILE.
  cancel RUN_ID               Cancel a queued, running or paused run.
  delete RUN_ID               Delete an ended run and its stored data (metrics, episodes, events, logs). Its
                              folder on the runner host is not removed: the answer says where it is.
  pause RUN_ID                Pause a running run after its current step.
  resume RUN_ID               Resume a paused run; or resume a stopped, failed or cancelled run from its
                              latest checkpoint (a new attempt).
  stop RUN_ID                 Stop a running or paused run after its current step, with a checkpoint.
  collect RUN_ID --name NAME --min-reward X [--min-reward-for ACTOR=X ...] [--actor NAME ...]
                [--from-step N] [--eval-fraction F] [--keep-duplicates] [--json]
      Save a finished run's recorded episodes at or above the reward threshold (per actor) as a dataset
      with prompt/completion columns. Prints the dataset id (--json: the whole answer, with the
      RunSpec datasets[] entry that reads it).

common options:
  --url URL      Troupe web URL (default: $TROUPE_URL)
  --token TOKEN  API token (default: $TROUPE_TOKEN; create one at <url>/settings/tokens)
  --help

exit codes: 0 ok; 1 a threshold was missed; 2 the run failed, was cancelled or stopped, or --timeout passed;
            3 usage, connection, token or request error; 4 a health advisory (--fail-on-advisory).`;

export interface Common {
  url: string;
  token: string;
}

export type Command =
  | { name: "help" }
  | {
      name: "run";
      common: Common;
      specPath: string;
      wait: boolean;
      thresholds: Threshold[];
      actor?: string;
      metricsOut?: string;
      timeoutSeconds?: number;
      idempotencyKey?: string;
      tags: string[];
      priority?: number;
      experimentId?: string;
      failOnAdvisory?: AdvisorySeverity;
    }
  | { name: "wait"; common: Common; runId: string; timeoutSeconds?: number; failOnAdvisory?: AdvisorySeverity }
  | { name: "runs"; common: Common; status?: string; tag?: string; experimentId?: string; limit?: number; json: boolean }
  | { name: "status"; common: Common; runId: string; json: boolean }
  | { name: "delete"; common: Common; runId: string }
  | { name: "metrics"; common: Common; runId: string; csv: boolean; names?: string; actor?: string; buckets?: number; out?: string }
  | { name: "cancel"; common: Common; runId: string }
  | { name: "pause" | "resume" | "stop"; common: Common; runId: string }
  | {
      name: "collect";
      common: Common;
      runId: string;
      datasetName: string;
      minReward: number;
      minRewardByActor: Record<string, number>;
      actors: string[];
      fromStep?: number;
      evalFraction?: number;
      dedupe: boolean;
      json: boolean;
    };

const commonOptions = {
  url: { type: "string" },
  token: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

function common(values: { url?: string; token?: string }, env: Record<string, string | undefined>): Common {
  const url = values.url ?? env.TROUPE_URL;
  const token = values.token ?? env.TROUPE_TOKEN;
  if (!url) throw new CliError("no server URL: pass --url or set TROUPE_URL (e.g. http://troupe.internal:3000)");
  if (!/^https?:\/\/[^\s/]+/.test(url)) throw new CliError(`--url / TROUPE_URL "${url}" must be an http:// or https:// URL`);
  if (!token) throw new CliError("no API token: pass --token or set TROUPE_TOKEN (create one at /settings/tokens)");
  return { url, token };
}

function number(raw: string | undefined, flag: string, check: (n: number) => boolean, what: string): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n) || !check(n)) throw new CliError(`${flag} "${raw}": must be ${what}`);
  return n;
}

function onePositional(positionals: string[], command: string, what: string): string {
  if (positionals.length === 0) throw new CliError(`troupe ${command}: missing ${what} (see troupe --help)`);
  if (positionals.length > 1) throw new CliError(`troupe ${command}: unexpected argument "${positionals[1]}"`);
  return positionals[0]!;
}

/** `--fail-on-advisory` alone means `--fail-on-advisory=warning` (parseArgs has no optional values). */
const BARE_ADVISORY_FLAG = "--fail-on-advisory";

function advisoryFloor(raw: string | undefined): AdvisorySeverity | undefined {
  if (raw === undefined) return undefined;
  const found = ADVISORY_SEVERITIES.find((s) => s === raw);
  if (!found) throw new CliError(`--fail-on-advisory "${raw}": must be one of ${ADVISORY_SEVERITIES.join(", ")}`);
  return found;
}

export function parseCommand(argv: string[], env: Record<string, string | undefined>): Command {
  const [name, ...given] = argv;
  const rest = given.map((a) => (a === BARE_ADVISORY_FLAG ? `${BARE_ADVISORY_FLAG}=warning` : a));
  if (name === undefined || name === "--help" || name === "-h" || name === "help") return { name: "help" };
  const parse = <O extends Record<string, { type: "string" | "boolean"; multiple?: boolean; short?: string }>>(options: O) => {
    try {
      return parseArgs({ args: rest, options: { ...commonOptions, ...options }, allowPositionals: true, strict: true });
    } catch (error) {
      throw new CliError(`troupe ${name}: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
    }
  };
  switch (name) {
    case "run": {
      const { values, positionals } = parse({
        wait: { type: "boolean" },
        "fail-below": { type: "string", multiple: true },
        "fail-above": { type: "string", multiple: true },
        actor: { type: "string" },
        "metrics-out": { type: "string" },
        timeout: { type: "string" },
        "idempotency-key": { type: "string" },
        tag: { type: "string", multiple: true },
        priority: { type: "string" },
        experiment: { type: "string" },
        "fail-on-advisory": { type: "string" },
      });
      if (values.help) return { name: "help" };
      const specPath = onePositional(positionals, "run", "the spec file (troupe run spec.yaml)");
      const thresholds = [
        ...((values["fail-below"] as string[] | undefined) ?? []).map((t) => parseThreshold(t, "below")),
        ...((values["fail-above"] as string[] | undefined) ?? []).map((t) => parseThreshold(t, "above")),
      ];
      const wait = Boolean(values.wait);
      if (!wait && (thresholds.length > 0 || values["metrics-out"] || values.timeout || values["fail-on-advisory"])) {
        throw new CliError("troupe run: --fail-below, --fail-above, --fail-on-advisory, --metrics-out and --timeout need --wait");
      }
      return {
        name: "run",
        common: common(values as Common, env),
        specPath,
        wait,
        thresholds,
        actor: values.actor as string | undefined,
        metricsOut: values["metrics-out"] as string | undefined,
        timeoutSeconds: number(values.timeout as string | undefined, "--timeout", (n) => n > 0, "a positive number of seconds"),
        idempotencyKey: (values["idempotency-key"] as string | undefined) ?? env.TROUPE_IDEMPOTENCY_KEY,
        tags: (values.tag as string[] | undefined) ?? [],
        priority: number(values.priority as string | undefined, "--priority", (n) => Number.isInteger(n) && n >= 0 && n <= 100, "a whole number from 0 to 100"),
        experimentId: values.experiment as string | undefined,
        failOnAdvisory: advisoryFloor(values["fail-on-advisory"] as string | undefined),
      };
    }
    case "wait": {
      const { values, positionals } = parse({ timeout: { type: "string" }, "fail-on-advisory": { type: "string" } });
      if (values.help) return { name: "help" };
      return {
        name: "wait",
        common: common(values as Common, env),
        runId: onePositional(positionals, "wait", "the run id"),
        timeoutSeconds: number(values.timeout as string | undefined, "--timeout", (n) => n > 0, "a positive number of seconds"),
        failOnAdvisory: advisoryFloor(values["fail-on-advisory"] as string | undefined),
      };
    }
    case "runs": {
      const { values, positionals } = parse({
        status: { type: "string" },
        tag: { type: "string" },
        experiment: { type: "string" },
        limit: { type: "string" },
        json: { type: "boolean" },
      });
      if (values.help) return { name: "help" };
      if (positionals.length > 0) throw new CliError(`troupe runs: unexpected argument "${positionals[0]}"`);
      return {
        name: "runs",
        common: common(values as Common, env),
        status: values.status as string | undefined,
        tag: values.tag as string | undefined,
        experimentId: values.experiment as string | undefined,
        limit: number(values.limit as string | undefined, "--limit", (n) => Number.isInteger(n) && n >= 1 && n <= 100, "a whole number from 1 to 100"),
        json: Boolean(values.json),
      };
    }
    case "delete": {
      const { values, positionals } = parse({});
      if (values.help) return { name: "help" };
      return { name: "delete", common: common(values as Common, env), runId: onePositional(positionals, "delete", "the run id") };
    }
    case "status": {
      const { values, positionals } = parse({ json: { type: "boolean" } });
      if (values.help) return { name: "help" };
      return { name: "status", common: common(values as Common, env), runId: onePositional(positionals, "status", "the run id"), json: Boolean(values.json) };
    }
    case "metrics": {
      const { values, positionals } = parse({
        csv: { type: "boolean" },
        name: { type: "string" },
        actor: { type: "string" },
        buckets: { type: "string" },
        out: { type: "string" },
      });
      if (values.help) return { name: "help" };
      return {
        name: "metrics",
        common: common(values as Common, env),
        runId: onePositional(positionals, "metrics", "the run id"),
        csv: Boolean(values.csv),
        names: values.name as string | undefined,
        actor: values.actor as string | undefined,
        buckets: number(values.buckets as string | undefined, "--buckets", (n) => Number.isInteger(n) && n >= 1, "a whole number ≥ 1"),
        out: values.out as string | undefined,
      };
    }
    case "cancel": {
      const { values, positionals } = parse({});
      if (values.help) return { name: "help" };
      return { name: "cancel", common: common(values as Common, env), runId: onePositional(positionals, "cancel", "the run id") };
    }
    case "pause":
    case "resume":
    case "stop": {
      const { values, positionals } = parse({});
      if (values.help) return { name: "help" };
      return { name, common: common(values as Common, env), runId: onePositional(positionals, name, "the run id") };
    }
    case "collect": {
      const { values, positionals } = parse({
        name: { type: "string" },
        "min-reward": { type: "string" },
        "min-reward-for": { type: "string", multiple: true },
        actor: { type: "string", multiple: true },
        "from-step": { type: "string" },
        "eval-fraction": { type: "string" },
        "keep-duplicates": { type: "boolean" },
        json: { type: "boolean" },
      });
      if (values.help) return { name: "help" };
      const datasetName = values.name as string | undefined;
      if (!datasetName) throw new CliError("troupe collect: --name NAME is required (the new dataset's name)");
      const minReward = number(values["min-reward"] as string | undefined, "--min-reward", () => true, "a number");
      if (minReward === undefined) throw new CliError("troupe collect: --min-reward X is required (episodes at or above X are kept)");
      const minRewardByActor: Record<string, number> = {};
      for (const raw of (values["min-reward-for"] as string[] | undefined) ?? []) {
        const eq = raw.lastIndexOf("=");
        const actor = raw.slice(0, eq);
        const value = eq > 0 ? number(raw.slice(eq + 1), `--min-reward-for ${actor}`, () => true, "a number") : undefined;
        if (eq <= 0 || value === undefined) throw new CliError(`--min-reward-for "${raw}": must be ACTOR=VALUE, e.g. Bob=0.5`);
        minRewardByActor[actor] = value;
      }
      return {
        name: "collect",
        common: common(values as Common, env),
        runId: onePositional(positionals, "collect", "the run id"),
        datasetName,
        minReward,
        minRewardByActor,
        actors: (values.actor as string[] | undefined) ?? [],
        fromStep: number(values["from-step"] as string | undefined, "--from-step", (n) => Number.isInteger(n) && n >= 0, "a whole number ≥ 0"),
        evalFraction: number(values["eval-fraction"] as string | undefined, "--eval-fraction", (n) => n >= 0 && n < 1, "at least 0 and below 1"),
        dedupe: !values["keep-duplicates"],
        json: Boolean(values.json),
      };
    }
    default:
      throw new CliError(`unknown command "${name}" (commands: run, runs, status, metrics, cancel, delete, pause, resume, stop, collect; see troupe --help)`);
  }
}
