import { describe, expect, it } from "vitest";
import { namedFieldPaths } from "../src/features/runs/lib/namedFieldPaths";

/** A run's failure names fields by their item's name (`actors[Carol]`), not by index (`actors.2`). */
const spec = {
  actors: [{ name: "Alice" }, { name: "Bob" }, { name: "Carol" }],
  datasets: [{ name: "letters" }],
  rewards: [{ name: "match" }],
  environments: [{ name: "talk" }],
};

describe("namedFieldPaths", () => {
  it("replaces list indexes by the names the spec gives them", () => {
    expect(namedFieldPaths("spec field `actors.2.model.path`: not found", spec)).toBe("spec field `actors[Carol].model.path`: not found");
    expect(namedFieldPaths("environments.0.rewards.0.reward and datasets.0", spec)).toBe("environments[talk].rewards.0.reward and datasets[letters]");
  });

  it("leaves an index the spec does not have, and text that only looks similar", () => {
    expect(namedFieldPaths("actors.7.model", spec)).toBe("actors.7.model");
    expect(namedFieldPaths("factors.1 and actors.x", spec)).toBe("factors.1 and actors.x");
    expect(namedFieldPaths("actors.1", null)).toBe("actors.1");
  });
});
