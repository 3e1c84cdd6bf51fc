import type { Role } from "./roles";

/**
 * What each guarded tRPC procedure does, in a person's words, so a refusal reads "Viewers cannot delete
 * runs: ask an editor or admin" instead of "run.delete needs the editor role". Shared by the server's
 * refusal (server/api/trpc.ts) and the browser's disabled buttons (the same sentence before the click).
 * A procedure missing here falls back to its name split into words.
 */
export const ACTION_WORDS: Readonly<Record<string, string>> = {
  "dataset.upload": "upload datasets",
  "dataset.createReference": "add datasets",
  "dataset.update": "change datasets",
  "dataset.delete": "delete datasets",
  "part.create": "create library parts",
  "part.update": "change library parts",
  "part.duplicate": "duplicate library parts",
  "part.delete": "delete library parts",
  "experiment.create": "create experiments",
  "experiment.save": "save experiments",
  "experiment.fromRun": "clone a run's spec into an experiment",
  "experiment.importSpec": "import specs",
  "experiment.launch": "launch runs",
  "reward.test": "test rewards (they run code on a runner)",
  "run.cancel": "cancel runs",
  "run.delete": "delete runs",
  "run.control": "pause, resume or checkpoint runs",
  "run.resumeFromCheckpoint": "resume runs from a checkpoint",
  "run.rerun": "re-run runs",
  "run.collect": "collect datasets from runs",
  "user.list": "see the users",
  "user.invite": "invite users",
  "user.reinvite": "re-invite users",
  "user.setRole": "change roles",
  "user.setDisabled": "disable users",
};

const PLURAL: Record<Role, string> = { viewer: "Viewers", editor: "Editors", admin: "Admins" };
const ASK: Record<Role, string> = { viewer: "anyone signed in", editor: "an editor or admin", admin: "an admin" };

export function actionWords(procedure: string): string {
  return ACTION_WORDS[procedure] ?? procedure.replace(/\./g, " ").replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}

/** "Viewers cannot delete runs: ask an editor or admin". */
export function roleRefusal(role: Role, needed: Role, action: string): string {
  return `${PLURAL[role]} cannot ${action}: ask ${ASK[needed]}`;
}
