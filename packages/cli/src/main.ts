import { parseCommand, USAGE } from "./args";
import { ApiClient } from "./client";
import { cancelCommand, collectCommand, controlCommand, deleteCommand, metricsCommand, runCommand, runsCommand, statusCommand, waitCommand, type Io } from "./commands";
import { CliError, EXIT } from "./exitCodes";

export { EXIT } from "./exitCodes";

const processIo: Io = {
  out: (text) => void process.stdout.write(text),
  err: (line) => void process.stderr.write(`${line}\n`),
};

/** Runs one `troupe` invocation and returns its exit code (never throws). */
export async function main(argv: string[], env: Record<string, string | undefined>, io: Io = processIo): Promise<number> {
  try {
    const command = parseCommand(argv, env);
    if (command.name === "help") {
      io.out(`${USAGE}\n`);
      return EXIT.ok;
    }
    const client = new ApiClient(command.common.url, command.common.token);
    switch (command.name) {
      case "run":
        return await runCommand(command, client, io);
      case "runs":
        return await runsCommand(command, client, io);
      case "wait":
        return await waitCommand(command, client, io);
      case "status":
        return await statusCommand(command, client, io);
      case "delete":
        return await deleteCommand(command, client, io);
      case "metrics":
        return await metricsCommand(command, client, io);
      case "cancel":
        return await cancelCommand(command, client, io);
      case "pause":
      case "resume":
      case "stop":
        return await controlCommand(command, client, io);
      case "collect":
        return await collectCommand(command, client, io);
    }
  } catch (error) {
    if (error instanceof CliError) {
      io.err(`troupe: error: ${error.message}`);
      for (const line of error.details) io.err(`  ${line}`);
      return error.code;
    }
    io.err(`troupe: error: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT.usage;
  }
}
