import { describe, expect, it } from "vitest";
import { createDb, RunStatus } from "../src/index";

describe("createDb", () => {
  it("names DATABASE_URL when no URL is given", () => {
    expect(() => createDb("")).toThrow(/DATABASE_URL is not set/);
    expect(() => createDb("   ")).toThrow(/DATABASE_URL is not set/);
  });

  it("refuses a URL that is not PostgreSQL", () => {
    expect(() => createDb("mysql://localhost/x")).toThrow(/DATABASE_URL must be a PostgreSQL URL/);
  });

  it("builds a client without connecting (connection is lazy)", async () => {
    const db = createDb("postgresql://nobody@127.0.0.1:1/none");
    expect(typeof db.experiment.findMany).toBe("function");
    await db.$disconnect();
  });

  it("re-exports the generated enums", () => {
    expect(Object.values(RunStatus)).toEqual(["queued", "running", "paused", "succeeded", "failed", "cancelled", "stopped"]);
  });
});
