import { ExperimentsIndex } from "../../../features/experiments/components/composer/ExperimentsIndex";

export const metadata = { title: "Experiments · Designer · Troupe" };

export default function ExperimentsRoute() {
  return <ExperimentsIndex />;
}
