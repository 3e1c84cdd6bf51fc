import { handleLiveStream } from "../../../../../features/live/server/liveStream";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Live events of one run as Server-Sent Events (features/live/server/liveStream.ts says what it holds to). */
export function GET(request: Request, { params }: { params: Promise<{ id: string }> }) {
  return handleLiveStream(request, params);
}
