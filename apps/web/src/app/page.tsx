import { ExperimentList } from "../features/experiments/components/ExperimentList";
import { RunsTable } from "../features/runs/components/RunsTable";

export default function DashboardPage() {
  return (
    <>
      <section className="section">
        <div className="section-head">
          <h1>Experiments</h1>
          <span className="muted small">Launch a run of an experiment; it is queued for the next free runner.</span>
        </div>
        <ExperimentList />
      </section>
      <section className="section">
        <div className="section-head">
          <h2>Recent runs</h2>
        </div>
        <RunsTable />
      </section>
    </>
  );
}
