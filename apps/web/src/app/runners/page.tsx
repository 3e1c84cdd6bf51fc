import { RunnersPage } from "../../features/runners/components/RunnersPage";

export const metadata = { title: "Runners — Troupe" };

export default function RunnersRoute() {
  return <RunnersPage />;
}
