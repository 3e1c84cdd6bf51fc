import { DatasetsPage } from "../../../features/datasets/components/DatasetsPage";

export const metadata = { title: "Datasets · Designer · Troupe" };

export default function DatasetsRoute() {
  return <DatasetsPage />;
}
