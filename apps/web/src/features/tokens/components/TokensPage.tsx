"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { formatRelative } from "../../../lib/format";
import { errorMessage, fieldIssuesOf } from "../../../trpc/errors";
import { useTRPC } from "../../../trpc/react";
import { refetchAfterWrite } from "../../../trpc/refetch";

/**
 * API tokens for CI: create one (its secret is shown once, here, and never again), see when each was
 * last used, revoke it. Test ids: token-name, token-create, token-secret, token-row, token-revoke.
 */
export function TokensPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const list = useQuery(trpc.token.list.queryOptions());
  const refresh = () => refetchAfterWrite(queryClient, { queryKey: trpc.token.list.queryKey() });

  const create = useMutation(
    trpc.token.create.mutationOptions({
      onSuccess: async ({ token, record }) => {
        setCreated({ name: record.name, token });
        setName("");
        await refresh();
      },
    }),
  );
  const revoke = useMutation(trpc.token.revoke.mutationOptions({ onSuccess: refresh }));

  const nameError = fieldIssuesOf(create.error).find((i) => i.path === "name")?.message;
  const createError = create.error && !nameError ? errorMessage(create.error) : null;

  function submit(e: FormEvent) {
    e.preventDefault();
    setCreated(null);
    create.mutate({ name });
  }

  return (
    <div>
      <div className="section">
        <h1>API tokens</h1>
        <p className="muted">
          Tokens let CI call the REST API (<a href="/api/v1/docs">reference</a>) and the <code>troupe</code> CLI:{" "}
          <code>Authorization: Bearer &lt;token&gt;</code>, or <code>TROUPE_TOKEN</code> for the CLI. Only a hash is stored. A token acts as you, with
          your role: a viewer&apos;s token can only read. Administrators see and revoke everyone&apos;s tokens.
        </p>
      </div>

      <form className="panel form section" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor="token-name">Name (what uses it, e.g. “GitHub Actions: nightly eval”)</label>
          <input
            id="token-name"
            value={name}
            maxLength={100}
            onChange={(e) => setName(e.target.value)}
            aria-invalid={nameError ? true : undefined}
            data-testid="token-name"
          />
          {nameError && <span className="field-error">Name {nameError}</span>}
        </div>
        {createError && (
          <div className="form-error" role="alert">
            {createError}
          </div>
        )}
        <div className="card-actions">
          <button type="submit" disabled={create.isPending} data-testid="token-create">
            {create.isPending ? "Creating…" : "Create token"}
          </button>
        </div>
      </form>

      {created && (
        <div className="panel section" role="status" data-testid="token-created">
          <h2>Token “{created.name}” created</h2>
          <p>Copy it now: it is shown only this once and cannot be recovered.</p>
          <pre data-testid="token-secret" style={{ wordBreak: "break-all", whiteSpace: "pre-wrap", background: "#eef1f5", padding: "0.5rem 0.75rem", borderRadius: 6 }}>{created.token}</pre>
          <button type="button" className="secondary" onClick={() => void navigator.clipboard?.writeText(created.token)}>
            Copy
          </button>{" "}
          <button type="button" className="secondary" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}

      <div className="panel section">
        <h2>Tokens</h2>
        {list.isLoading && <p className="muted">Loading…</p>}
        {list.error && <p className="form-error">{errorMessage(list.error)}</p>}
        {list.data && list.data.items.length === 0 && <p className="empty">No tokens yet.</p>}
        {list.data && list.data.items.length > 0 && (
          <table className="table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Owner</th>
                <th>Token</th>
                <th>Created</th>
                <th>Last used</th>
                <th>Status</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((t) => (
                <tr key={t.id} data-testid="token-row" data-token-id={t.id}>
                  <td>{t.name}</td>
                  <td data-testid="token-owner">{t.owner.email}</td>
                  <td>
                    <code>{t.prefix}…</code>
                  </td>
                  <td title={t.createdAt.toISOString()}>{formatRelative(t.createdAt, Date.now())}</td>
                  <td data-testid="token-last-used" title={t.lastUsedAt?.toISOString() ?? ""}>
                    {t.lastUsedAt ? formatRelative(t.lastUsedAt, Date.now()) : "never"}
                  </td>
                  <td data-testid="token-status">{t.revokedAt ? "revoked" : "active"}</td>
                  <td>
                    {!t.revokedAt && (
                      <button
                        type="button"
                        className="danger"
                        disabled={revoke.isPending}
                        onClick={() => {
                          if (window.confirm(`Revoke “${t.name}”? Anything using it stops working at once.`)) revoke.mutate({ id: t.id });
                        }}
                        data-testid="token-revoke"
                      >
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </div>
  );
}
