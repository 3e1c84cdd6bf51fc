import type { Role } from "../lib/roles";

/**
 * The least role each tRPC procedure needs, by its path. Deny by default: a procedure missing here
 * is refused to everyone (`server/api/trpc.ts`), and `test/auth.procedures.int.test.ts` walks the
 * router and fails naming it, so a new procedure cannot ship without a rule.
 *
 * Reads are `viewer`; what designs, launches, controls runs or runs user code is `editor`; users
 * and runners are `admin`. Everyone manages their own API tokens; admins see and revoke everyone's.
 */
export const PROCEDURE_ROLES: Readonly<Record<string, Role>> = {
  // who am I (every signed-in user)
  "auth.me": "viewer",

  "dataset.list": "viewer",
  "dataset.get": "viewer",
  "dataset.preview": "viewer",
  "dataset.upload": "editor",
  "dataset.createReference": "editor",
  "dataset.update": "editor",
  "dataset.delete": "editor",

  "part.list": "viewer",
  "part.get": "viewer",
  "part.create": "editor",
  "part.update": "editor",
  "part.duplicate": "editor",
  "part.delete": "editor",

  "experiment.list": "viewer",
  "experiment.byId": "viewer",
  "experiment.create": "editor",
  "experiment.save": "editor",
  "experiment.fromRun": "editor",
  "experiment.importSpec": "editor",
  "experiment.launch": "editor",

  // runs user code on a runner
  "reward.test": "editor",

  "run.list": "viewer",
  "run.byId": "viewer",
  "run.checkpoints": "viewer",
  "run.metrics": "viewer",
  "run.metricNames": "viewer",
  "run.evalResults": "viewer",
  "run.memory": "viewer",
  "run.logs": "viewer",
  "run.table": "viewer",
  "run.memoryPeaks": "viewer",
  "run.offloads": "viewer",
  "run.transcripts": "viewer",
  "run.episodeSteps": "viewer",
  "advisory.ofRun": "viewer",
  "advisory.summaries": "viewer",
  "timeline.ofRun": "viewer",
  "ratings.ofRun": "viewer",
  "run.episodes": "viewer",
  "run.cancel": "editor",
  // removes an ended run's rows for good
  "run.delete": "editor",
  "run.control": "editor",
  "run.resumeFromCheckpoint": "editor",
  "run.rerun": "editor",
  // stores a dataset from a run's episodes
  "run.collect": "editor",

  // runner hosts, their GPUs and what they can run (read-only)
  "runner.list": "viewer",
  "runner.support": "viewer",
  "runner.whyWaiting": "viewer",

  // a token carries its owner's role, so a viewer's token can only read
  "token.list": "viewer",
  "token.create": "viewer",
  "token.revoke": "viewer",

  "user.list": "admin",
  "user.invite": "admin",
  "user.reinvite": "admin",
  "user.setRole": "admin",
  "user.setDisabled": "admin",
};
