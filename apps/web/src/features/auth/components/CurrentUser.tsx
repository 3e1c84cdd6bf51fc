"use client";

import { createContext, useContext, type ReactNode } from "react";
import { actionWords, roleRefusal } from "../lib/actionWords";
import { hasRole, type Role } from "../lib/roles";
import { PROCEDURE_ROLES } from "../server/procedureRules";

export interface CurrentUser {
  id: string;
  email: string;
  name: string;
  role: Role;
}

const Context = createContext<CurrentUser | null>(null);

/** The signed-in user, read once by the root layout on the server; null on the public pages. */
export function CurrentUserProvider({ user, children }: { user: CurrentUser | null; children: ReactNode }) {
  return <Context.Provider value={user}>{children}</Context.Provider>;
}

export function useCurrentUser(): CurrentUser | null {
  return useContext(Context);
}

/**
 * Whether the signed-in user has at least `role`: for hiding what the server would refuse anyway
 * (the server decides; this only spares a person a button that cannot work).
 */
export function useHasRole(role: Role): boolean {
  const user = useCurrentUser();
  return user !== null && hasRole(user.role, role);
}

/**
 * Why the signed-in user may not call `procedure` (in words, the server's own sentence), or null when
 * they may: a button that would be refused is disabled with this as its reason, before the click.
 */
export function useRoleRefusal(procedure: string): string | null {
  const user = useCurrentUser();
  const needed = PROCEDURE_ROLES[procedure] ?? "admin";
  if (user === null || hasRole(user.role, needed)) return null;
  return roleRefusal(user.role, needed, actionWords(procedure));
}
