import { Suspense } from "react";
import { RunsExplorer } from "../../features/runs/components/RunsExplorer";

export default function RunsRoute() {
  return (
    <>
      <div className="section-head">
        <h1>Runs</h1>
        <span className="muted small">Filter, sort and search; select 2–10 runs to compare them.</span>
      </div>
      <Suspense fallback={<p className="muted">Loading runs…</p>}>
        <RunsExplorer />
      </Suspense>
    </>
  );
}
