import { RewardsPage } from "../../../features/rewards/components/RewardsPage";

export const metadata = { title: "Rewards · Designer · Troupe" };

export default function RewardsRoute() {
  return <RewardsPage />;
}
