import { fieldIssues, type FieldIssue } from "@troupe/contracts";
import { Prisma } from "@troupe/db";
import { TRPCError } from "@trpc/server";
import type { Db } from "../../../server/db";
import { badRequest, FieldValidationError } from "../../../server/api/trpc";
import { rewardCodeIssues, roundSpecIssues } from "../../runs/lib/launchCheck";
import { PART_SPEC_SCHEMAS, type PartKind, type PartOut } from "./partSchemas";

/** Storage of designer parts. Every write validates the fragment with its kind's contracts schema. */

type PartRow = {
  id: string;
  kind: PartKind;
  name: string;
  description: string;
  spec: unknown;
  createdAt: Date;
  updatedAt: Date;
};

function toOut(row: PartRow): PartOut {
  return { ...row, spec: row.spec as Record<string, unknown> };
}

const KIND_LABEL: Record<PartKind, string> = { actor: "an actor", reward: "a reward", environment: "an environment" };

/** The fragment's name, or a BAD_REQUEST naming each invalid field as `spec.<path>`. */
export function validatePartSpec(kind: PartKind, spec: Record<string, unknown>): string {
  const parsed = PART_SPEC_SCHEMAS[kind].safeParse(spec);
  if (!parsed.success) {
    const issues = fieldIssues(parsed.error).map((i) => ({ ...i, path: i.path === "(root)" ? "spec" : `spec.${i.path}` }));
    throw badRequest(issues, `invalid ${kind}`);
  }
  // What the launch would refuse is refused here too, so a saved part is one that can run.
  const deeper =
    kind === "environment"
      ? roundSpecIssues(parsed.data as Parameters<typeof roundSpecIssues>[0])
      : kind === "reward"
        ? rewardCodeIssues(parsed.data as Parameters<typeof rewardCodeIssues>[0])
        : [];
  if (deeper.length > 0) throw badRequest(deeper.map((i) => ({ path: `spec.${i.path}`, message: i.message })), `invalid ${kind}`);
  return parsed.data.name;
}

function nameTaken(kind: PartKind, name: string): TRPCError {
  const issue: FieldIssue = { path: "spec.name", message: `${KIND_LABEL[kind]} named "${name}" already exists` };
  return new TRPCError({ code: "CONFLICT", message: `spec.name: ${issue.message}`, cause: new FieldValidationError([issue]) });
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002";
}

function notFound(id: string): TRPCError {
  return new TRPCError({ code: "NOT_FOUND", message: `part ${id} not found` });
}

export async function listParts(db: Db, kind: PartKind): Promise<PartOut[]> {
  const rows = await db.designPart.findMany({ where: { kind }, orderBy: [{ name: "asc" }] });
  return rows.map(toOut);
}

export async function getPart(db: Db, id: string): Promise<PartOut> {
  const row = await db.designPart.findUnique({ where: { id } });
  if (!row) throw notFound(id);
  return toOut(row);
}

export async function createPart(
  db: Db,
  args: { kind: PartKind; spec: Record<string, unknown>; description: string },
): Promise<PartOut> {
  const name = validatePartSpec(args.kind, args.spec);
  try {
    const row = await db.designPart.create({
      data: { kind: args.kind, name, spec: args.spec as Prisma.InputJsonObject, description: args.description },
    });
    return toOut(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(args.kind, name);
    throw error;
  }
}

export async function updatePart(
  db: Db,
  args: { id: string; spec: Record<string, unknown>; description?: string },
): Promise<PartOut> {
  const existing = await db.designPart.findUnique({ where: { id: args.id }, select: { kind: true } });
  if (!existing) throw notFound(args.id);
  const name = validatePartSpec(existing.kind, args.spec);
  try {
    const row = await db.designPart.update({
      where: { id: args.id },
      data: {
        name,
        spec: args.spec as Prisma.InputJsonObject,
        ...(args.description !== undefined ? { description: args.description } : {}),
      },
    });
    return toOut(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(existing.kind, name);
    throw error;
  }
}

/** A free name for a copy: `name_copy`, `name_copy2`, … (kept a valid Identifier of at most 64 chars). */
async function copyName(db: Db, kind: PartKind, name: string): Promise<string> {
  const taken = new Set(
    (await db.designPart.findMany({ where: { kind, name: { startsWith: name.slice(0, 55) } }, select: { name: true } })).map(
      (r) => r.name,
    ),
  );
  for (let n = 1; ; n++) {
    const suffix = n === 1 ? "_copy" : `_copy${n}`;
    const candidate = name.slice(0, 64 - suffix.length) + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}

export async function duplicatePart(db: Db, args: { id: string; name?: string }): Promise<PartOut> {
  const source = await db.designPart.findUnique({ where: { id: args.id } });
  if (!source) throw notFound(args.id);
  const name = args.name ?? (await copyName(db, source.kind, source.name));
  const spec = { ...(source.spec as Record<string, unknown>), name };
  return createPart(db, { kind: source.kind, spec, description: source.description });
}

export async function deletePart(db: Db, id: string): Promise<{ id: string; deleted: true }> {
  const { count } = await db.designPart.deleteMany({ where: { id } });
  if (count === 0) throw notFound(id);
  return { id, deleted: true };
}
