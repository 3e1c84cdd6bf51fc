import { formatPath, RunSpec } from "@troupe/contracts";
import { launchIssuesOf } from "../../runs/lib/launchCheck";

/**
 * Live validation of a draft RunSpec for the composer: every problem tied to a field path, the
 * same dotted paths the server reports (`actors.0.training.learningRate`), so one lookup puts an
 * error next to its input and a list entry can jump to it.
 */
export interface SpecIssue {
  path: string;
  message: string;
  /** The composer section the field lives in. */
  section: "general" | "actors" | "datasets" | "rewards" | "environments" | "algorithm" | "trainer";
  /** For a round spec: where in its text. */
  line?: number;
  column?: number;
}

const SECTIONS = new Set(["actors", "datasets", "rewards", "environments", "algorithm", "trainer"]);

export function sectionOf(path: string): SpecIssue["section"] {
  const head = path.split(".")[0]!;
  return SECTIONS.has(head) ? (head as SpecIssue["section"]) : "general";
}

/** DOM id of the input for a field path; the composer gives every input one. */
export function fieldDomId(path: string): string {
  return `field-${path.replace(/[^A-Za-z0-9_.-]/g, "_")}`;
}

/**
 * The ids to try for a path, most specific first: a missing field (`actors.0.api`) has no input of
 * its own, so the nearest parent that has one is used.
 */
export function fieldDomCandidates(path: string): string[] {
  const parts = path.split(".");
  const out: string[] = [];
  for (let n = parts.length; n >= 1; n--) out.push(fieldDomId(parts.slice(0, n).join(".")));
  return out;
}

export function validateDraft(draft: unknown): { spec: RunSpec | null; issues: SpecIssue[] } {
  const parsed = RunSpec.safeParse(draft);
  const issues: SpecIssue[] = parsed.success
    ? []
    : parsed.error.issues.map((i) => {
        const path = formatPath(i.path);
        return { path, message: i.message, section: sectionOf(path) };
      });
  // What zod cannot see (round specs, reward code): the launch's own check, so the composer never
  // calls valid a spec that the launch would refuse.
  if (parsed.success) {
    for (const i of launchIssuesOf(parsed.data)) issues.push({ ...i, section: sectionOf(i.path) });
  }
  return { spec: parsed.success && issues.length === 0 ? parsed.data : null, issues };
}

/** Issues grouped by exact path, for showing the first next to each input. */
export function issuesByPath(issues: readonly SpecIssue[]): Map<string, SpecIssue[]> {
  const map = new Map<string, SpecIssue[]>();
  for (const issue of issues) map.set(issue.path, [...(map.get(issue.path) ?? []), issue]);
  return map;
}
