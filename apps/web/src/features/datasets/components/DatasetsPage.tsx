"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../../../trpc/react";
import { PartsList } from "../../designer/components/PartsList";
import { DatasetDetail } from "./DatasetDetail";
import { DatasetUploadForm } from "./DatasetUploadForm";

/** /designer/datasets: datasets on the left; a new one or the selected one's columns and rows on the right. */
export function DatasetsPage() {
  const trpc = useTRPC();
  const list = useQuery(trpc.dataset.list.queryOptions());
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const items = (list.data?.items ?? []).map((d) => ({
    id: d.id,
    name: d.name,
    sub: d.kind === "upload" ? `${d.format} · ${d.rowCount} rows` : d.kind === "huggingface" ? `hub · ${String(d.location?.id)}` : `runner file · ${d.format}`,
  }));
  return (
    <div className="parts-layout">
      <PartsList
        title="Datasets"
        items={items}
        selectedId={selectedId}
        onSelect={setSelectedId}
        onNew={() => setSelectedId(null)}
        newLabel="New dataset"
        loading={list.isLoading}
        empty="No datasets yet: upload a JSONL, CSV or Parquet file."
        testId="datasets-list"
      />
      {selectedId ? (
        <DatasetDetail key={selectedId} id={selectedId} onDeleted={() => setSelectedId(null)} />
      ) : (
        <DatasetUploadForm
          onCreated={async (id) => {
            await list.refetch();
            setSelectedId(id);
          }}
        />
      )}
    </div>
  );
}
