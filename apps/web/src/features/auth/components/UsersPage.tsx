"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { formatRelative } from "../../../lib/format";
import { errorMessage, fieldIssuesOf } from "../../../trpc/errors";
import { useTRPC } from "../../../trpc/react";
import { ROLE_DESCRIPTIONS, ROLES, type Role } from "../lib/roles";
import { useCurrentUser } from "./CurrentUser";
import { useHydrated } from "../../../lib/useHydrated";
import { refetchAfterWrite } from "../../../trpc/refetch";

/**
 * Administrators: invite a person with a role (the link is shown once), change roles, disable and
 * enable users. Test ids: invite-email, invite-role, invite-create, invite-link, user-row,
 * user-role-select, user-disable.
 */
export function UsersPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const me = useCurrentUser();
  const [email, setEmail] = useState("");
  const [name, setName] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const [link, setLink] = useState<{ email: string; url: string } | null>(null);
  const list = useQuery(trpc.user.list.queryOptions());
  const refresh = () => refetchAfterWrite(queryClient, { queryKey: trpc.user.list.queryKey() });
  const showLink = ({ user, invitePath }: { user: { email: string }; invitePath: string }) =>
    setLink({ email: user.email, url: new URL(invitePath, window.location.origin).toString() });

  const invite = useMutation(
    trpc.user.invite.mutationOptions({
      onSuccess: async (result) => {
        showLink(result);
        setEmail("");
        setName("");
        await refresh();
      },
    }),
  );
  const reinvite = useMutation(trpc.user.reinvite.mutationOptions({ onSuccess: async (r) => (showLink(r), refresh()) }));
  const setUserRole = useMutation(trpc.user.setRole.mutationOptions({ onSuccess: refresh }));
  const setDisabled = useMutation(trpc.user.setDisabled.mutationOptions({ onSuccess: refresh }));
  const issues = fieldIssuesOf(invite.error);
  const emailError = issues.find((i) => i.path === "email")?.message;
  const inviteError = invite.error && !emailError ? errorMessage(invite.error) : null;
  const rowError = setUserRole.error ?? setDisabled.error ?? reinvite.error;

  const hydrated = useHydrated();

  function submit(e: FormEvent) {
    e.preventDefault();
    setLink(null);
    invite.mutate({ email, name, role });
  }

  return (
    <div>
      <div className="section">
        <h1>Users</h1>
        <p className="muted">
          Roles: {ROLES.map((r) => `${r} (${ROLE_DESCRIPTIONS[r]})`).join("; ")}. An invited person opens the link, chooses a password and is signed in.
        </p>
      </div>

      <form className="panel form section" onSubmit={submit} noValidate>
        <div className="form-row">
          <div className="field">
            <label htmlFor="invite-email">Email</label>
            <input id="invite-email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} data-testid="invite-email" />
            {emailError && <span className="field-error">Email {emailError}</span>}
          </div>
          <div className="field">
            <label htmlFor="invite-name">Name (optional)</label>
            <input id="invite-name" value={name} maxLength={100} onChange={(e) => setName(e.target.value)} data-testid="invite-name" />
          </div>
          <div className="field">
            <label htmlFor="invite-role">Role</label>
            <select id="invite-role" value={role} onChange={(e) => setRole(e.target.value as Role)} data-testid="invite-role">
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </div>
        </div>
        {inviteError && (
          <div className="form-error" role="alert">
            {inviteError}
          </div>
        )}
        <div className="card-actions">
          {/* Disabled until hydrated: a click before React owns the form would submit it natively (a page reload that loses the email). */}
          <button type="submit" disabled={!hydrated || invite.isPending} data-testid="invite-create">
            {invite.isPending ? "Inviting…" : "Invite"}
          </button>
        </div>
      </form>

      {link && (
        <div className="panel section" role="status">
          <h2>Invitation for {link.email}</h2>
          <p>Send this link to them; it is shown only now and works once, for 7 days.</p>
          <p className="invite-link" data-testid="invite-link">
            {link.url}
          </p>
          <button type="button" className="secondary" onClick={() => void navigator.clipboard?.writeText(link.url)}>
            Copy
          </button>
        </div>
      )}

      <div className="panel section">
        <h2>People</h2>
        {list.isLoading && <p className="muted">Loading…</p>}
        {list.error && <p className="form-error">{errorMessage(list.error)}</p>}
        {rowError && (
          <p className="form-error" role="alert">
            {errorMessage(rowError)}
          </p>
        )}
        {list.data && (
          <table className="table">
            <thead>
              <tr>
                <th>Email</th>
                <th>Name</th>
                <th>Role</th>
                <th>State</th>
                <th>Added</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((u) => (
                <tr key={u.id} data-testid="user-row" data-user-email={u.email}>
                  <td>{u.email}</td>
                  <td>{u.name}</td>
                  <td>
                    <select
                      value={u.role}
                      disabled={setUserRole.isPending}
                      onChange={(e) => setUserRole.mutate({ id: u.id, role: e.target.value as Role })}
                      aria-label={`Role of ${u.email}`}
                      data-testid="user-role-select"
                    >
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td data-testid="user-state">{u.state}</td>
                  <td title={u.createdAt.toISOString()}>{formatRelative(u.createdAt, Date.now())}</td>
                  <td>
                    {u.state === "invited" && (
                      <button type="button" className="secondary" disabled={reinvite.isPending} onClick={() => reinvite.mutate({ id: u.id })}>
                        New link
                      </button>
                    )}{" "}
                    {u.id !== me?.id && (
                      <button
                        type="button"
                        className={u.state === "disabled" ? "secondary" : "danger"}
                        disabled={setDisabled.isPending}
                        onClick={() => setDisabled.mutate({ id: u.id, disabled: u.state !== "disabled" })}
                        data-testid="user-disable"
                      >
                        {u.state === "disabled" ? "Enable" : "Disable"}
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
