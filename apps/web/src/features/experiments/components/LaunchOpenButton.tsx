"use client";

import { useRoleRefusal } from "../../auth/components/CurrentUser";

/** Opens the launch form; disabled for someone who may not launch, with the reason in words beside it. */
export function LaunchOpenButton({ onOpen, label }: { onOpen(): void; label: string }) {
  const refused = useRoleRefusal("experiment.launch");
  return (
    <>
      <button type="button" onClick={onOpen} disabled={refused !== null} title={refused ?? undefined} data-testid="launch-open">
        {label}
      </button>
      {refused && (
        <span className="hint muted small" data-testid="launch-refused">
          {refused}
        </span>
      )}
    </>
  );
}
