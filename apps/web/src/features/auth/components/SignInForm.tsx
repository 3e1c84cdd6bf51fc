/**
 * Email and password, posted as a form to /api/auth/sign-in (works without JavaScript); the route
 * answers with a redirect to `next` and the session cookie, or back here with `error`.
 */
const MESSAGES: Record<string, string> = {
  credentials: "Wrong email or password.",
  invalid: "Enter your email and password.",
  unavailable: "The database is unreachable; try again in a moment.",
  throttled: "Too many sign-in attempts; wait a few minutes and try again.",
  busy: "Too many sign-ins are being checked right now; try again in a moment.",
  internal: "Something went wrong; the server log has the details.",
};

export function SignInForm({ next, error }: { next: string; error: string | null }) {
  return (
    <div className="panel auth-card">
      <h1>Sign in to Troupe</h1>
      <form method="post" action="/api/auth/sign-in" className="form" data-testid="sign-in-form">
        <input type="hidden" name="next" value={next} />
        <div className="field">
          <label htmlFor="sign-in-email">Email</label>
          <input id="sign-in-email" name="email" type="email" autoComplete="username" required autoFocus data-testid="sign-in-email" />
        </div>
        <div className="field">
          <label htmlFor="sign-in-password">Password</label>
          <input id="sign-in-password" name="password" type="password" autoComplete="current-password" required data-testid="sign-in-password" />
        </div>
        {error ? (
          <div className="form-error" role="alert" data-testid="sign-in-error">
            {MESSAGES[error] ?? MESSAGES.invalid}
          </div>
        ) : null}
        <div className="card-actions">
          <button type="submit" data-testid="sign-in-submit">
            Sign in
          </button>
        </div>
      </form>
      <p className="muted small">
        No account? An administrator invites you. The first administrator&apos;s password was printed once when Troupe first started
        (or set with <code>TROUPE_ADMIN_PASSWORD</code>).
      </p>
    </div>
  );
}
