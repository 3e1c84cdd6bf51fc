/**
 * Links into a run's Transcripts tab with its filters set: the query string carries them (`tstep`,
 * `tgroup`, `tactor`, `tenv`, `tfrom`, `tto`), the tab reads them once when it opens. Pure, so the
 * advisories panel (links) and the transcript browser (reading) agree by construction.
 */

export interface TranscriptLinkFilters {
  step?: number;
  group?: number;
  actor?: string;
  environment?: string;
  /** A step range (inclusive), e.g. the window an advisory looked at. */
  fromStep?: number;
  toStep?: number;
}

const NUMERIC = { tstep: "step", tgroup: "group", tfrom: "fromStep", tto: "toStep" } as const;
const TEXT = { tactor: "actor", tenv: "environment" } as const;

export function transcriptsHref(runId: string, filters: TranscriptLinkFilters): string {
  const params = new URLSearchParams({ tab: "transcripts" });
  for (const [key, field] of Object.entries(NUMERIC)) {
    const v = filters[field];
    if (v !== undefined) params.set(key, String(v));
  }
  for (const [key, field] of Object.entries(TEXT)) {
    const v = filters[field];
    if (v !== undefined && v !== "") params.set(key, v);
  }
  return `/runs/${encodeURIComponent(runId)}?${params.toString()}`;
}

/** The filters a link set; anything malformed is left out. */
export function transcriptFiltersFromQuery(params: URLSearchParams): TranscriptLinkFilters {
  const out: TranscriptLinkFilters = {};
  for (const [key, field] of Object.entries(NUMERIC)) {
    const raw = params.get(key);
    const n = Number(raw);
    if (raw !== null && raw.trim() !== "" && Number.isInteger(n) && n >= 0) out[field] = n;
  }
  for (const [key, field] of Object.entries(TEXT)) {
    const raw = params.get(key);
    if (raw) out[field] = raw.slice(0, 64);
  }
  if (out.fromStep !== undefined && out.toStep !== undefined && out.toStep < out.fromStep) {
    delete out.fromStep;
    delete out.toStep;
  }
  return out;
}
