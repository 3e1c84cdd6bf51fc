"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

/** The designer's sections; each is a route so a tab can be bookmarked and opened in a new window. */
export const DESIGNER_TABS = [
  { href: "/designer/actors", label: "Actors" },
  { href: "/designer/datasets", label: "Datasets" },
  { href: "/designer/rewards", label: "Rewards" },
  { href: "/designer/environments", label: "Environments" },
  { href: "/designer/experiments", label: "Experiments" },
] as const;

export function DesignerTabs() {
  const pathname = usePathname();
  return (
    <nav className="designer-tabs" aria-label="Designer sections">
      {DESIGNER_TABS.map((tab) => {
        const active = pathname === tab.href || pathname.startsWith(`${tab.href}/`);
        return (
          <Link key={tab.href} href={tab.href} aria-current={active ? "page" : undefined} className={active ? "active" : undefined}>
            {tab.label}
          </Link>
        );
      })}
    </nav>
  );
}
