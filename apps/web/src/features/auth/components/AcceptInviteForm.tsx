import Link from "next/link";
import { PASSWORD_MIN_LENGTH } from "../server/password";
import type { Role } from "../lib/roles";
import { ROLE_DESCRIPTIONS } from "../lib/roles";

const MESSAGES: Record<string, string> = {
  invalid: `Choose a password of at least ${PASSWORD_MIN_LENGTH} characters.`,
  expired: "This invitation link is invalid, used or expired: ask an administrator for a new one.",
  unavailable: "The database is unreachable; try again in a moment.",
  internal: "Something went wrong; the server log has the details.",
};

/** An invited person sets their password (the link is used up) and is signed in. */
export function AcceptInviteForm({ secret, invite, error }: { secret: string; invite: { email: string; name: string; role: Role } | null; error: string | null }) {
  if (!invite) {
    return (
      <div className="panel auth-card" data-testid="invite-invalid">
        <h1>Invitation</h1>
        <p>{MESSAGES.expired}</p>
        <p>
          <Link href="/sign-in">Sign in</Link>
        </p>
      </div>
    );
  }
  return (
    <div className="panel auth-card">
      <h1>Welcome to Troupe</h1>
      <p>
        You are invited as <strong>{invite.email}</strong> with the role <strong data-testid="invite-role">{invite.role}</strong> (
        {ROLE_DESCRIPTIONS[invite.role]}).
      </p>
      <form method="post" action="/api/auth/accept-invite" className="form" data-testid="invite-form">
        <input type="hidden" name="secret" value={secret} />
        <input type="text" name="email" value={invite.email} autoComplete="username" readOnly hidden />
        <div className="field">
          <label htmlFor="invite-password">Choose a password (at least {PASSWORD_MIN_LENGTH} characters)</label>
          <input id="invite-password" name="password" type="password" autoComplete="new-password" minLength={PASSWORD_MIN_LENGTH} required data-testid="invite-password" />
        </div>
        {error ? (
          <div className="form-error" role="alert">
            {MESSAGES[error] ?? MESSAGES.invalid}
          </div>
        ) : null}
        <div className="card-actions">
          <button type="submit" data-testid="invite-submit">
            Set password and sign in
          </button>
        </div>
      </form>
    </div>
  );
}
