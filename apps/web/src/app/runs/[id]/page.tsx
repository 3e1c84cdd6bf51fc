import { Suspense } from "react";
import { RunPage } from "../../../features/runs/components/RunPage";

export default async function RunRoute({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  // RunPage reads its view (tab, zoom, chart options) from the query string.
  return (
    <Suspense fallback={<p className="muted">Loading run…</p>}>
      <RunPage runId={id} />
    </Suspense>
  );
}
