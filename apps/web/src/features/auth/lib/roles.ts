/**
 * Who may do what. Each role includes the ones before it:
 * - viewer: watch (runs, charts, transcripts, designs, datasets);
 * - editor: design, launch, control runs, test rewards, own API tokens;
 * - admin: users, everyone's tokens, runners.
 * Shared by the server (checks) and the browser (what to show); the server is the one that decides.
 */
export const ROLES = ["viewer", "editor", "admin"] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { viewer: 0, editor: 1, admin: 2 };

export function hasRole(role: Role, atLeast: Role): boolean {
  return RANK[role] >= RANK[atLeast];
}

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}

export const ROLE_DESCRIPTIONS: Record<Role, string> = {
  viewer: "watch runs, charts and designs",
  editor: "design, launch and control runs, test rewards",
  admin: "also invite users, set roles, manage every token",
};
