import { describe, expect, it } from "vitest";
import { withDatabase } from "../scripts/schema-engine/database";
import { MigrationAdapterFactory } from "../scripts/schema-engine/pgAdapterFactory";
import { SCHEMA_PATH } from "../scripts/schema-engine/paths";
import { createSchemaEngine, guardAgainstPanic } from "../scripts/schema-engine/wasmEngine";
import { readFileSync } from "node:fs";
import { serverUrl } from "./throwawayDatabases";

// Its own file: a panic leaves this process's engine unusable, on purpose.
describe("a schema engine panic", () => {
  it("fails the operation with the engine's message instead of hanging, and refuses later calls", async () => {
    const factory = new MigrationAdapterFactory(withDatabase(serverUrl(), "postgres"));
    try {
      const engine = await createSchemaEngine({
        schemaPath: SCHEMA_PATH,
        schemaText: readFileSync(SCHEMA_PATH, "utf8"),
        adapterFactory: factory,
      });
      await expect(guardAgainstPanic(async () => engine.debugPanic())).rejects.toThrow(
        /the schema engine crashed \(a bug to report\): .*panic/is,
      );
      await expect(guardAgainstPanic(async () => "never runs")).rejects.toThrow(/crashed earlier in this process/);
    } finally {
      await factory.close();
    }
  });
});
