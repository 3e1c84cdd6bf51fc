import { EnvironmentsPage } from "../../../features/designer/components/EnvironmentsPage";

export const metadata = { title: "Environments · Designer · Troupe" };

export default function EnvironmentsRoute() {
  return <EnvironmentsPage />;
}
