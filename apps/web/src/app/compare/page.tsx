import { ComparePage } from "../../features/compare/components/ComparePage";

export default async function CompareRoute({ searchParams }: { searchParams: Promise<{ ids?: string | string[] }> }) {
  const { ids } = await searchParams;
  const list = (Array.isArray(ids) ? ids.join(",") : (ids ?? "")).split(",").map((s) => s.trim()).filter(Boolean);
  return <ComparePage ids={[...new Set(list)]} />;
}
