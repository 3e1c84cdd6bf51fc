import { TokensPage } from "../../../features/tokens/components/TokensPage";

export const metadata = { title: "API tokens — Troupe" };

export default function TokensRoute() {
  return <TokensPage />;
}
