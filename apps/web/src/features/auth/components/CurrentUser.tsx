"use client";

import { createContext, useContext, type ReactNode } from "react";
import { hasRole, type Role } from "../lib/roles";

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
