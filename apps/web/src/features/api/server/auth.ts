import type { Db } from "../../../server/db";
import { hasRole, type Role } from "../../auth/lib/roles";
import { bearerOf, type RequestAuth } from "../../auth/server/requestAuth";
import { authenticateToken } from "../../tokens/server/tokens";
import { ApiError } from "./problem";

/**
 * `Authorization: Bearer <token>`, acting as the token's owner with their role. Runs before a
 * handler reads its body or any data, so a request without a valid token gets 401 (and one whose
 * owner's role is below `role` gets 403) with nothing read or written apart from the token lookup.
 */
export async function requireToken(db: Db, request: Request, role: Role): Promise<RequestAuth & { tokenId: string }> {
  const bearer = bearerOf(request);
  if (bearer.kind === "none") throw ApiError.unauthorized("missing Authorization header: send `Authorization: Bearer <token>` (create a token at /settings/tokens)");
  if (bearer.kind === "malformed") throw ApiError.unauthorized("the Authorization header must be `Bearer <token>`");
  const found = await authenticateToken(db, bearer.token);
  if (!found) throw ApiError.unauthorized("the API token is invalid or revoked (or its user is disabled)");
  if (!hasRole(found.user.role, role)) {
    throw ApiError.forbidden(`this needs the ${role} role; the token's user (${found.user.email}) is ${found.user.role}`);
  }
  return { user: found.user, via: "token", tokenId: found.record.id };
}
