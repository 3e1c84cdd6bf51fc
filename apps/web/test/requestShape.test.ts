import { describe, expect, it } from "vitest";
import { malformedSegment, MAX_HTTP_HEADER_BYTES, MAX_URL_CHARS, requestShapeProblem } from "../src/lib/requestShape";

/** What the proxy refuses before Next decodes a path (a 500 there) or a route reads a huge URL. */
describe("requestShapeProblem", () => {
  it("finds a malformed percent-escape in any path segment", () => {
    for (const bad of ["/api/v1/runs/%zz", "/api/v1/runs/%", "/api/runs/%E0%A4%A/events", "/api/v1/runs/%ED%A0%80", "/runs/a%2"]) {
      expect(malformedSegment(bad), bad).not.toBeNull();
      expect(requestShapeProblem(`http://127.0.0.1${bad}`)).toMatchObject({ status: 400, message: expect.stringMatching(/malformed percent-escape/) });
    }
    for (const good of ["/api/v1/runs/abc", "/api/v1/runs/a%20b", "/api/v1/runs/%F0%9F%98%80", "/", "/runs/a%2Fb"]) {
      expect(malformedSegment(good), good).toBeNull();
      expect(requestShapeProblem(`http://127.0.0.1${good}?q=%zz`), good).toBeNull();
    }
  });

  it("refuses a URL longer than MAX_URL_CHARS with 414, and the server's header limit leaves room to say so", () => {
    expect(requestShapeProblem(`http://127.0.0.1/api/trpc/run.list?input=${"a".repeat(MAX_URL_CHARS)}`)).toMatchObject({ status: 414 });
    expect(requestShapeProblem(`http://127.0.0.1/api/trpc/run.list?input=${"a".repeat(MAX_URL_CHARS - 100)}`)).toBeNull();
    expect(MAX_HTTP_HEADER_BYTES).toBeGreaterThan(200 * 1024);
  });
});
