import { RunSpec } from "@troupe/contracts";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { renderApiDocs } from "../src/features/api/server/docsPage";
import { openApiDocument } from "../src/features/api/server/openapi";
import { checkLaunch } from "../src/features/runs/lib/launchCheck";

/** /api/v1/docs and the OpenAPI document show a complete RunSpec to start from, in JSON and YAML, that a launch accepts. */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe("POST /runs example body", () => {
  const doc = openApiDocument() as Json;
  const content = doc.paths["/runs"].post.requestBody.content as Json;

  it("is a RunSpec that passes the launch check, in both media types", () => {
    const fromJson = content["application/json"].example;
    const fromYaml = parseYaml(content["application/yaml"].example as string);
    expect(fromYaml).toEqual(fromJson);
    expect(RunSpec.safeParse(fromJson).success).toBe(true);
    expect(checkLaunch(fromJson).issues).toEqual([]);
    expect(fromJson.environments[0].roundSpec).toBe("alice -> bob") // the relay demo (#31): only Alice sees the secret;
  });

  it("is on the reference page, ready to copy", () => {
    const html = renderApiDocs(doc);
    const section = html.slice(html.indexOf('id="op-createRun"'));
    expect(section.slice(0, section.indexOf("</section>"))).toMatch(/<summary>Example <code>application\/json<\/code><\/summary><pre>\{\n  &quot;specVersion&quot;: 1/);
  });
});
