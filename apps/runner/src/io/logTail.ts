/** The last `capacity` log lines of a run, kept in memory for the failure panel (Run.logTail). */
export class LogTail {
  private readonly lines: string[] = [];

  constructor(private readonly capacity = 50) {}

  push(line: string): void {
    this.lines.push(line);
    if (this.lines.length > this.capacity) this.lines.shift();
  }

  /** The last `n` lines (all kept ones by default), newline-joined. */
  text(n = this.capacity): string {
    return this.lines.slice(-n).join("\n");
  }
}
