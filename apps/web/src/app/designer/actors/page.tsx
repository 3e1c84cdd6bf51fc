import { ActorsPage } from "../../../features/designer/components/actors/ActorsPage";

export const metadata = { title: "Actors · Designer · Troupe" };

export default function ActorsRoute() {
  return <ActorsPage />;
}
