import { randomBytes } from "node:crypto";

export const uniqueId = (label: string) => `${label}-${randomBytes(5).toString("hex")}`;
