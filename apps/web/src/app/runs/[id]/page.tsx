import { RunPage } from "../../../features/runs/components/RunPage";

export default async function RunRoute({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <RunPage runId={id} />;
}
