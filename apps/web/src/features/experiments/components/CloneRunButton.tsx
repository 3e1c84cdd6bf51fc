"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { errorMessage } from "../../../trpc/errors";
import { useTRPC } from "../../../trpc/react";
import { useRoleRefusal } from "../../auth/components/CurrentUser";

/** "Change one thing": a new experiment holding this run's frozen spec, opened in the composer. */
export function CloneRunButton({ runId }: { runId: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const clone = useMutation(trpc.experiment.fromRun.mutationOptions({ onSuccess: ({ id }) => router.push(`/designer/experiments/${id}`) }));
  const refused = useRoleRefusal("experiment.fromRun");
  return (
    <>
      <button
        type="button"
        className="secondary"
        onClick={() => clone.mutate({ runId })}
        disabled={clone.isPending || refused !== null}
        data-testid="run-clone-spec"
        title={refused ?? "A new experiment with this run's frozen spec, opened in the composer to change before launching"}
      >
        {clone.isPending ? "Cloning…" : "Clone spec & edit"}
      </button>
      {clone.error && (
        <div className="field-error" role="alert">
          {errorMessage(clone.error)}
        </div>
      )}
    </>
  );
}
