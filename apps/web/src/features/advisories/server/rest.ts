import { ApiAdvisoryList } from "@troupe/contracts";
import { apiRoute, jsonResponse } from "../../api/server/handler";
import { operations } from "../../api/server/operations";
import { requireApiRun } from "../../api/server/runs";
import { listAdvisories, worstOf } from "./advisories";

/** `GET /api/v1/runs/{id}/advisories`: the REST face of the run page's advisories panel. */
export const listRunAdvisories = apiRoute(operations.runAdvisories, async ({ ctx, params, query }) => {
  await requireApiRun(ctx.db, params.id);
  const items = await listAdvisories(ctx.db, params.id, query);
  return jsonResponse(ApiAdvisoryList, { items: items.map((a) => ({ ...a, ts: a.ts.toISOString() })), worst: worstOf(items) });
});
