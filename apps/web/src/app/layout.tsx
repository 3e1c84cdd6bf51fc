import type { Metadata } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import { TRPCReactProvider } from "../trpc/react";
import "./globals.css";

export const metadata: Metadata = {
  title: "Troupe",
  description: "Multi-agent, multi-turn RL for LLMs: design, launch and watch runs.",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <header className="topbar">
          <Link href="/" className="brand">
            Troupe
          </Link>
          <nav>
            <Link href="/">Dashboard</Link>
            <Link href="/designer">Designer</Link>
            <Link href="/runs">Runs</Link>
            <Link href="/settings/tokens">API tokens</Link>
          </nav>
        </header>
        <TRPCReactProvider>
          <main className="page">{children}</main>
        </TRPCReactProvider>
      </body>
    </html>
  );
}
