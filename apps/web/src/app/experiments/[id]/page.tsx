import { ExperimentPage } from "../../../features/experiments/components/ExperimentPage";

export default async function ExperimentRoute({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <ExperimentPage experimentId={id} />;
}
