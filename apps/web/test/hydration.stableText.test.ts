import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { stableDateTime, useHydrated } from "../src/lib/useHydrated";

/**
 * Run pages threw React error #418: the server printed times in its own zone and clock, the browser in
 * its own. Browser-dependent text waits for useHydrated(); until then both sides print stableDateTime.
 */
describe("text that the server and the browser print alike", () => {
  it("the server render (and so the hydration pass) sees useHydrated() false", () => {
    function Probe() {
      return createElement("span", null, useHydrated() ? "browser" : "server");
    }
    expect(renderToString(createElement(Probe))).toBe("<span>server</span>");
  });

  it("stableDateTime does not depend on the time zone or locale", () => {
    const date = new Date(Date.UTC(2026, 10, 28, 7, 5, 59));
    expect(stableDateTime(date)).toBe("2026-11-28 07:05 UTC");
    const before = process.env.TZ;
    process.env.TZ = "Pacific/Auckland";
    try {
      expect(stableDateTime(date)).toBe("2026-11-28 07:05 UTC");
    } finally {
      process.env.TZ = before;
    }
  });
});
