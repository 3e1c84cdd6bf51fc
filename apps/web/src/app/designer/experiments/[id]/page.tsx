import { ComposerPage } from "../../../../features/experiments/components/composer/ComposerPage";

export const metadata = { title: "Compose · Designer · Troupe" };

export default async function ComposerRoute({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <ComposerPage experimentId={id} />;
}
