import { z } from "zod";

export const TokenName = z.string().trim().min(1, "is required").max(100, "must be at most 100 characters");

export const TokenCreateInput = z.object({ name: TokenName }).strict();
export const TokenIdInput = z.object({ id: z.string().min(1) }).strict();

export const TokenOut = z.object({
  id: z.string(),
  name: z.string(),
  /** The user the token acts as; it has that user's role. */
  owner: z.object({ id: z.string(), email: z.string() }),
  /** The token's first characters, e.g. `troupe_AbCdEfGh`, to tell tokens apart. */
  prefix: z.string(),
  createdAt: z.date(),
  lastUsedAt: z.date().nullable(),
  revokedAt: z.date().nullable(),
});
export type TokenOut = z.infer<typeof TokenOut>;

/** The secret appears here once, at creation; it is never stored nor shown again. */
export const TokenCreateOutput = z.object({ token: z.string(), record: TokenOut });
export const TokenListOutput = z.object({ items: z.array(TokenOut) });
