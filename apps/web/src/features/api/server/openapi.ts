import { z } from "zod";
import {
  ApiEpisode,
  ApiEpisodePage,
  ApiFieldIssue,
  ApiHealth,
  ApiLaunchBody,
  ApiLaunchEnvelope,
  ApiMetrics,
  ApiMetricSeries,
  ApiProblem,
  ApiRun,
  ApiRunCancel,
  ApiRunControl,
  ApiRunDelete,
  ApiRunList,
  ApiRunWait,
  ApiRunWithSpec,
  RunSpec,
} from "@troupe/contracts";
import { operations, type OperationDef, type ResponseDef } from "./operations";
import { PROBLEM_CONTENT_TYPE } from "./problem";
import { DatasetOut } from "./schemas";

/**
 * The OpenAPI 3.1 document, generated from the route registry (`operations.ts`) and the zod schemas
 * the handlers parse with (`z.toJSONSchema`). Request schemas are rendered as a caller writes them
 * (defaults optional), response schemas as the server sends them.
 */

export const API_VERSION = "1.0.0";
const ref = (id: string) => `#/components/schemas/${id}`;

type Registry = z.core.$ZodRegistry<{ id: string }>;

function registry(entries: [z.ZodType, string][]): Registry {
  const r = z.registry<{ id: string }>();
  for (const [schema, id] of entries) r.add(schema, { id });
  return r;
}

const inputs = registry([
  [RunSpec, "RunSpec"],
  [ApiLaunchEnvelope, "LaunchRequest"],
  [ApiLaunchBody, "LaunchBody"],
]);
const outputs = registry([
  [ApiFieldIssue, "FieldIssue"],
  [ApiProblem, "Problem"],
  [ApiRun, "Run"],
  [ApiRunWithSpec, "RunWithSpec"],
  [ApiRunList, "RunList"],
  [ApiRunWait, "RunWait"],
  [ApiRunCancel, "RunCancel"],
  [ApiRunControl, "RunControl"],
  [ApiRunDelete, "RunDeleted"],
  [ApiMetricSeries, "MetricSeries"],
  [ApiMetrics, "RunMetrics"],
  [ApiEpisode, "Episode"],
  [ApiEpisodePage, "EpisodePage"],
  [DatasetOut, "Dataset"],
  [ApiHealth, "Health"],
]);

type Json = Record<string, unknown>;

/** Components without the per-schema `$schema`/`$id` zod adds (the document's dialect applies). */
function components(reg: Registry, io: "input" | "output"): Record<string, Json> {
  const { schemas } = z.toJSONSchema(reg, { uri: ref, io, unrepresentable: "any" }) as { schemas: Record<string, Json> };
  return Object.fromEntries(
    Object.entries(schemas).map(([id, { $schema: _s, $id: _i, ...rest }]) => [id, rest]),
  );
}

function schemaOf(schema: z.ZodType, reg: Registry, io: "input" | "output"): Json {
  const id = reg.get(schema)?.id;
  if (id) return { $ref: ref(id) };
  const { $schema: _s, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Json;
  return rest;
}

function parameters(schema: z.ZodType | undefined, location: "path" | "query"): Json[] {
  if (!schema) return [];
  const shape = (schema as z.ZodObject).shape as Record<string, z.ZodType>;
  return Object.entries(shape).map(([name, field]) => {
    const json = schemaOf(field, inputs, "input");
    const { description, ...rest } = json;
    return {
      name,
      in: location,
      required: location === "path" || !field.safeParse(undefined).success,
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

const problem = (description: string) => ({
  description,
  content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: ref("Problem") } } },
});

function response(def: ResponseDef): Json {
  if (!def.schema && !def.rawSchema) return problem(def.description);
  const content: Json = {};
  if (def.schema) content[def.contentType ?? "application/json"] = { schema: schemaOf(def.schema, outputs, "output") };
  else if (def.rawSchema) content[def.contentType ?? "text/plain"] = { schema: def.rawSchema };
  for (const [type, schema] of Object.entries(def.alternatives ?? {})) content[type] = { schema };
  return { description: def.description, ...(def.headers ? { headers: def.headers } : {}), content };
}

function operation(def: OperationDef): Json {
  const responses: Record<string, Json> = {};
  for (const [status, r] of Object.entries(def.responses)) responses[status] = response(r);
  if (def.query || def.pathParams || def.body) responses["400"] ??= problem("Invalid parameters or body; `errors` names every field");
  if (def.auth) responses["401"] ??= problem("Missing, invalid or revoked API token; nothing was read or written");
  if (def.auth) responses["403"] ??= problem(`The token's user has a role below ${def.auth}; nothing was read or written`);
  responses["503"] ??= problem("Postgres or Redis is unreachable; retry after the `Retry-After` seconds");
  if (def.pathParams) responses["404"] ??= problem("No such run");
  if (def.body) responses["413"] ??= problem(`The body is larger than ${def.body.maxBytes} bytes`);
  responses["500"] ??= problem("Internal error (details are in the server log, never in the response)");
  return {
    operationId: def.operationId,
    tags: [def.tag],
    summary: def.summary,
    description: def.description,
    ...(def.auth ? {} : { security: [] }),
    parameters: [
      ...parameters(def.pathParams, "path"),
      ...parameters(def.query, "query"),
      ...(def.headers ?? []).map((h) => ({ name: h.name, in: "header", required: false, description: h.description, schema: h.schema })),
    ],
    ...(def.body
      ? {
          requestBody: {
            required: true,
            description: `${def.body.description} (at most ${def.body.maxBytes} bytes)`,
            content: Object.fromEntries(
              Object.entries(def.body.content).map(([type, c]) => [
                type,
                {
                  schema: c.schema ? schemaOf(c.schema, inputs, "input") : (c.rawSchema ?? { type: "string" }),
                  ...(c.example !== undefined ? { example: c.example } : {}),
                },
              ]),
            ),
          },
        }
      : {}),
    responses,
  };
}

let cached: Json | undefined;

export function openApiDocument(): Json {
  if (cached) return cached;
  const paths: Record<string, Record<string, Json>> = {};
  for (const def of Object.values(operations) as OperationDef[]) {
    (paths[def.path] ??= {})[def.method] = operation(def);
  }
  cached = {
    openapi: "3.1.0",
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    info: {
      title: "Troupe REST API",
      version: API_VERSION,
      description:
        "Launch, wait for, judge and fetch runs from CI. Authenticate with `Authorization: Bearer <token>` " +
        "(tokens are created at /settings/tokens). Errors are `application/problem+json` (RFC 9457).",
    },
    servers: [{ url: "/api/v1" }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: "runs", description: "Launch, list, wait for, cancel runs; metrics and episodes" },
      { name: "datasets", description: "Dataset uploads" },
      { name: "system", description: "Health" },
    ],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "An API token: `troupe_…`" } },
      schemas: { ...components(inputs, "input"), ...components(outputs, "output") },
    },
  };
  return cached;
}
