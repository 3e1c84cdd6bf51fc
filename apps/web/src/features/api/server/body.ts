import { ApiError } from "./problem";

/**
 * Reading request bodies with a hard size limit: the declared Content-Length is checked first, and
 * the stream is counted as it arrives, so an oversized or lying upload is cut off at the limit (413)
 * before it is held in memory or parsed.
 */

export function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MiB` : `${Math.round(bytes / 1024)} KiB`;
}

function tooLarge(maxBytes: number): ApiError {
  // The rest of the body is never read, so the connection cannot carry another request: close it.
  return new ApiError(413, "tooLarge", `the request body is larger than the limit of ${formatBytes(maxBytes)} (${maxBytes} bytes)`, undefined, {
    connection: "close",
  });
}

export async function readBodyBytes(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw ApiError.validation([{ path: "(root)", message: "the body is not valid UTF-8 text" }], "invalid body");
  }
}

/** The media type of a Content-Type header, lower-cased, without parameters (`application/json`). */
export function mediaType(request: Request): string | null {
  const header = request.headers.get("content-type");
  if (!header) return null;
  return header.split(";")[0]!.trim().toLowerCase() || null;
}
