import { authenticateToken, type TokenRecord } from "../../tokens/server/tokens";
import type { Db } from "../../../server/db";
import { ApiError } from "./problem";

/**
 * `Authorization: Bearer <token>`. Runs before a handler reads its body or any data, so a request
 * without a valid token gets 401 and nothing is read or written (apart from the token lookup).
 */
export async function requireToken(db: Db, request: Request): Promise<TokenRecord> {
  const header = request.headers.get("authorization");
  if (!header) throw ApiError.unauthorized("missing Authorization header: send `Authorization: Bearer <token>` (create a token at /settings/tokens)");
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw ApiError.unauthorized("the Authorization header must be `Bearer <token>`");
  const token = await authenticateToken(db, match[1]!);
  if (!token) throw ApiError.unauthorized("the API token is invalid or revoked");
  return token;
}
