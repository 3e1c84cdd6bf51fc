import { z } from "zod";

/**
 * Commands to a running runtime process, one JSON object per line on its control channel
 * (`python -m troupe run ... --control-fd N` from the runner, or `--control-file PATH` by hand).
 * They act at a step boundary: `pause` waits after the current step (status `paused`), `resume`
 * continues (status `running`), `stop_after_step` finishes the current step, writes a checkpoint
 * and ends with status `stopped`. The runtime validates each line against the exported JSON Schema.
 */
export const RUNTIME_CONTROL_COMMANDS = ["pause", "resume", "stop_after_step"] as const;
export const RuntimeControlCommandName = z.enum(RUNTIME_CONTROL_COMMANDS);
export type RuntimeControlCommandName = z.infer<typeof RuntimeControlCommandName>;

export const RuntimeControlCommand = z.object({ command: RuntimeControlCommandName }).strict();
export type RuntimeControlCommand = z.infer<typeof RuntimeControlCommand>;
