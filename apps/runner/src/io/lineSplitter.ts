import { StringDecoder } from "node:string_decoder";
import type { Readable } from "node:stream";

/**
 * Splits a byte stream into lines. UTF-8 characters split across chunks are decoded whole, a
 * trailing "\r" is dropped, and a line longer than `maxLineChars` is cut (the rest of it up to
 * the next newline is skipped) so a runaway writer cannot exhaust memory.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder("utf8");
  private pending = "";
  private overflowing = false;

  constructor(
    private readonly onLine: (line: string, truncated: boolean) => void,
    private readonly maxLineChars = 1 << 20,
  ) {}

  write(chunk: Buffer | string): void {
    this.consume(typeof chunk === "string" ? chunk : this.decoder.write(chunk));
  }

  /** Emits what is left after the last newline (a final line without one). */
  end(): void {
    this.consume(this.decoder.end());
    if (this.pending.length > 0 || this.overflowing) this.emit(this.pending);
    this.pending = "";
    this.overflowing = false;
  }

  private consume(text: string): void {
    let start = 0;
    for (let nl = text.indexOf("\n", start); nl >= 0; nl = text.indexOf("\n", start)) {
      this.append(text.slice(start, nl));
      this.emit(this.pending);
      this.pending = "";
      this.overflowing = false;
      start = nl + 1;
    }
    this.append(text.slice(start));
  }

  private append(piece: string): void {
    if (this.overflowing) return;
    this.pending += piece;
    if (this.pending.length > this.maxLineChars) {
      this.pending = this.pending.slice(0, this.maxLineChars);
      this.overflowing = true;
    }
  }

  private emit(line: string): void {
    this.onLine(line.endsWith("\r") ? line.slice(0, -1) : line, this.overflowing);
  }
}

/** Feeds a readable stream into a splitter; resolves when the stream has ended or closed. */
export function splitLines(
  stream: Readable,
  onLine: (line: string, truncated: boolean) => void,
  maxLineChars?: number,
): Promise<void> {
  const splitter = new LineSplitter(onLine, maxLineChars);
  return new Promise((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      splitter.end();
      resolve();
    };
    stream.on("data", (chunk: Buffer) => splitter.write(chunk));
    stream.on("end", finish);
    stream.on("close", finish);
    // A read error on a child's pipe ends its output; what was read so far still counts.
    stream.on("error", finish);
  });
}
