import { handleSignOut } from "../../../../features/auth/server/authRoutes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = (request: Request) => handleSignOut(request);
