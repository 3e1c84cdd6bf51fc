import { z } from "zod";
import { RunSpec } from "./runSpec";
import { RunEvent } from "./events";
import { RuntimeControlCommand } from "./control";
import { renderRunnerRequirements } from "./runners";
import { renderAlgorithms } from "./algorithms";

/** File name → JSON text of every exported schema. Deterministic, so drift is a byte diff. */
export function renderSchemas(): Record<string, string> {
  const render = (schema: z.ZodType, id: string, title: string) =>
    JSON.stringify(
      { $id: id, title, ...z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) },
      null,
      2,
    ) + "\n";
  return {
    "runspec.v1.schema.json": render(RunSpec, "https://troupe.dev/schema/runspec.v1.json", "Troupe RunSpec v1"),
    "events.v1.schema.json": render(RunEvent, "https://troupe.dev/schema/events.v1.json", "Troupe run event v1"),
    "runtime-control.v1.schema.json": render(
      RuntimeControlCommand,
      "https://troupe.dev/schema/runtime-control.v1.json",
      "Troupe runtime control command v1",
    ),
    "runner-requirements.v1.json": renderRunnerRequirements(),
    "algorithms.v1.json": renderAlgorithms(),
  };
}
