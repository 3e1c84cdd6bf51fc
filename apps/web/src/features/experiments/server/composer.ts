import { TRPCError } from "@trpc/server";
import { RunSpec } from "@troupe/contracts";
import type { Prisma } from "@troupe/db";
import type { z } from "zod";
import type { Db } from "../../../server/db";
import { badRequest } from "../../../server/api/trpc";
import { ApiError } from "../../api/server/problem";
import { parseJson, parseYaml } from "../../api/server/specBody";
import type { ImportedSpec, SpecTextFormat } from "./composerSchemas";

/**
 * The composer's storage: an experiment holds its RunSpec as last saved, valid or not (a draft
 * is saved as the user leaves it; the composer and a launch validate it). Names follow the spec.
 */

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function nameOf(spec: unknown, fallback: string): string {
  const name = isObject(spec) && typeof spec.name === "string" ? spec.name.trim() : "";
  return (name || fallback).slice(0, 200);
}

function descriptionOf(spec: unknown): string {
  return isObject(spec) && typeof spec.description === "string" ? spec.description.slice(0, 10_000) : "";
}

export async function createExperiment(db: Db, spec: Record<string, unknown>): Promise<{ id: string }> {
  return db.experiment.create({
    data: { name: nameOf(spec, "Untitled experiment"), description: descriptionOf(spec), spec: spec as Prisma.InputJsonObject },
    select: { id: true },
  });
}

export async function saveExperiment(db: Db, id: string, spec: Record<string, unknown>): Promise<{ id: string; updatedAt: Date }> {
  const existing = await db.experiment.findUnique({ where: { id }, select: { name: true } });
  if (!existing) throw new TRPCError({ code: "NOT_FOUND", message: `experiment ${id} not found` });
  return db.experiment.update({
    where: { id },
    data: { name: nameOf(spec, existing.name), description: descriptionOf(spec), spec: spec as Prisma.InputJsonObject },
    select: { id: true, updatedAt: true },
  });
}

/**
 * "Clone an earlier run's spec and change one thing": a new experiment holding the run's frozen
 * spec (every default filled in, so nothing the run did is hidden), named after the run.
 */
export async function experimentFromRun(db: Db, runId: string): Promise<{ id: string }> {
  const run = await db.run.findUnique({ where: { id: runId }, select: { spec: true, name: true } });
  if (!run) throw new TRPCError({ code: "NOT_FOUND", message: `run ${runId} not found` });
  const spec = isObject(run.spec) ? { ...run.spec } : {};
  spec.name = `${run.name} (from run ${runId.slice(-6)})`.slice(0, 200);
  return createExperiment(db, spec);
}

/**
 * Parse a spec typed or uploaded as YAML or JSON, with the REST API's parser (same messages, same
 * line/column). A syntax error is a BAD_REQUEST at its line and column; a document that parses
 * comes back with its RunSpec issues located on its lines, so the user can fix them in the composer.
 */
export function importSpecText(text: string, format: SpecTextFormat): ImportedSpec {
  if (text.trim() === "") throw badRequest([{ path: "(root)", message: "the text is empty" }], "cannot import");
  let parsed;
  try {
    parsed = format === "yaml" ? parseYaml(text) : parseJson(text);
  } catch (error) {
    if (error instanceof ApiError && error.errors) throw badRequest(error.errors.map(located), "cannot import");
    throw error;
  }
  if (!isObject(parsed.value)) {
    throw badRequest([{ path: "(root)", message: "a RunSpec is a mapping (an object), not a list or a single value" }], "cannot import");
  }
  const result = RunSpec.safeParse(parsed.value);
  const issues = result.success ? [] : parsed.issues(result.error as z.ZodError);
  return { spec: parsed.value, issues };
}

/** tRPC field issues carry only path and message: keep the position in the message too. */
function located(issue: { path: string; message: string; line?: number; column?: number }) {
  const where = issue.line ? `line ${issue.line}${issue.column ? `, column ${issue.column}` : ""}: ` : "";
  return { path: issue.path, message: `${where}${issue.message}` };
}
