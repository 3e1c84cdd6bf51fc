import Link from "next/link";
import type { CurrentUser } from "./CurrentUser";

/** The top bar's right end: who is signed in, with which role, and Sign out (a form post: no script needed). */
export function UserMenu({ user }: { user: CurrentUser }) {
  return (
    <div className="user-menu">
      {user.role === "admin" ? <Link href="/settings/users">Users</Link> : null}
      <span className="muted small" data-testid="current-user">
        {user.email} · <span data-testid="current-role">{user.role}</span>
      </span>
      <form method="post" action="/api/auth/sign-out">
        <button type="submit" className="link-button" data-testid="sign-out">
          Sign out
        </button>
      </form>
    </div>
  );
}
