import { RunEvent } from "@troupe/contracts";

/**
 * Every event crossing into or out of the store goes through the contracts schema, so a
 * malformed event is refused with the index and field at fault instead of being stored.
 */
export function parseEvents(events: readonly unknown[], where: string): RunEvent[] {
  return events.map((raw, index) => {
    const result = RunEvent.safeParse(raw);
    if (result.success) return result.data;
    const problems = result.error.issues
      .map((i) => `${i.path.length ? i.path.join(".") : "(event)"}: ${i.message}`)
      .join("; ");
    throw new Error(`${where}: event ${index} is not a valid RunEvent: ${problems}`);
  });
}
