import type { Metadata } from "next";
import { headers } from "next/headers";
import Link from "next/link";
import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { CurrentUserProvider } from "../features/auth/components/CurrentUser";
import { UserMenu } from "../features/auth/components/UserMenu";
import { isPublicPage } from "../features/auth/lib/requestGuard";
import { currentRequestAuth } from "../server/api/context";
import { dependencyDown } from "../server/dependencyErrors";
import { TRPCReactProvider } from "../trpc/react";
import "./globals.css";
import "../features/auth/components/auth.css";

export const metadata: Metadata = {
  title: "Troupe",
  description: "Multi-agent, multi-turn RL for LLMs: design, launch and watch runs.",
};

/**
 * Every page but sign-in and invitations needs a signed-in user: checked here against the database
 * (the proxy only looked for a cookie). Pages that read data on the server check again themselves,
 * as Next renders a layout and its page in parallel.
 */
export default async function RootLayout({ children }: { children: ReactNode }) {
  const pathname = (await headers()).get("x-troupe-pathname") ?? "";
  const isPublic = isPublicPage(pathname);
  let user = null;
  let unavailable: string | null = null;
  if (!isPublic) {
    try {
      user = (await currentRequestAuth())?.user ?? null;
    } catch (error) {
      const down = dependencyDown(error);
      if (!down) throw error;
      unavailable = `${down} is unreachable, so your session cannot be checked. Try again in a moment.`;
    }
    if (!user && !unavailable) redirect(`/sign-in?next=${encodeURIComponent(pathname || "/")}`);
  }
  return (
    <html lang="en">
      <body>
        <header className="topbar">
          <Link href="/" className="brand">
            Troupe
          </Link>
          {user ? (
            <>
              <nav>
                <Link href="/">Dashboard</Link>
                <Link href="/designer">Designer</Link>
                <Link href="/runs">Runs</Link>
                <Link href="/runners">Runners</Link>
                <Link href="/settings/tokens">API tokens</Link>
              </nav>
              <UserMenu user={user} />
            </>
          ) : null}
        </header>
        <CurrentUserProvider user={user}>
          <TRPCReactProvider>
            <main className="page">{unavailable ? <p className="error" role="alert">{unavailable}</p> : children}</main>
          </TRPCReactProvider>
        </CurrentUserProvider>
      </body>
    </html>
  );
}
