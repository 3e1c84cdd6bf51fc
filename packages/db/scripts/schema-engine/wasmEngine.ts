import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as glue from "@prisma/schema-engine-wasm/schema_engine_bg";
import type { SchemaEngine } from "@prisma/schema-engine-wasm/schema_engine_bg";
import {
  bindMigrationAwareSqlAdapterFactory,
  type SqlMigrationAwareDriverAdapterFactory,
} from "@prisma/driver-adapter-utils";

export type { SchemaEngine };

/**
 * Prisma's schema engine compiled to WebAssembly, driven without the Prisma CLI.
 *
 * Why by hand: every `prisma migrate` command downloads a native schema-engine binary first,
 * which fails offline (and then reports success without doing anything). The `prisma` package
 * ships the same engine as wasm (`build/schema_engine_bg.wasm`, the engine version its CLI
 * would download), and `@prisma/schema-engine-wasm` has the matching JS glue. The glue's entry
 * imports a `.wasm` file, which Node cannot load, so we instantiate the module ourselves.
 */
const require = createRequire(import.meta.url);

let instantiated = false;

/**
 * A Rust panic in the engine calls `PRISMA_WASM_PANIC_REGISTRY.set_message` and then traps: the
 * pending promise never settles and the instance is unusable. We keep the message, fail the
 * operation in flight with it, and refuse further calls in this process.
 */
let panicMessage: string | undefined;
const panicListeners = new Set<(message: string) => void>();

interface PanicRegistry {
  set_message(message: string): void;
}

function installPanicRegistry(): void {
  const holder = globalThis as { PRISMA_WASM_PANIC_REGISTRY?: PanicRegistry };
  const previous = holder.PRISMA_WASM_PANIC_REGISTRY; // Prisma's own wasm modules may share it
  holder.PRISMA_WASM_PANIC_REGISTRY = {
    set_message(message: string) {
      panicMessage = message;
      for (const listener of panicListeners) listener(message);
      previous?.set_message(message);
    },
  };
}

/** Runs one engine operation; rejects with the engine's panic message if it panics meanwhile. */
export async function guardAgainstPanic<T>(operation: () => Promise<T>): Promise<T> {
  if (panicMessage !== undefined) {
    throw new Error(`the schema engine crashed earlier in this process and cannot be used again: ${panicMessage}`);
  }
  let listener: ((message: string) => void) | undefined;
  const panicked = new Promise<never>((_, reject) => {
    listener = (message) => reject(new Error(`the schema engine crashed (a bug to report): ${message}`));
    panicListeners.add(listener);
  });
  try {
    return await Promise.race([operation(), panicked]);
  } catch (error) {
    // A synchronous panic rejects the operation with a bare "unreachable"; say what happened.
    if (panicMessage !== undefined && !(error instanceof Error && error.message.includes(panicMessage))) {
      throw new Error(`the schema engine crashed (a bug to report): ${panicMessage}`, { cause: error });
    }
    throw error;
  } finally {
    if (listener) panicListeners.delete(listener);
  }
}

function instantiateOnce(): void {
  if (instantiated) return;
  installPanicRegistry();
  const prismaPackageJson = require.resolve("prisma/package.json");
  const wasmPath = prismaPackageJson.replace(/package\.json$/, "build/schema_engine_bg.wasm");
  const wasmModule = new WebAssembly.Module(readFileSync(wasmPath));
  // The wasm imports every glue function from the module name the bundler would have used.
  const instance = new WebAssembly.Instance(wasmModule, {
    "./schema_engine_bg.js": glue as unknown as WebAssembly.ModuleImports,
  });
  glue.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();
  instantiated = true;
}

/** True once the engine panicked in this process (the instance must not be touched again). */
export function schemaEngineCrashed(): boolean {
  return panicMessage !== undefined;
}

/** The engine's version (a prisma-engines commit hash); proves the wasm loads. */
export function schemaEngineVersion(): string {
  instantiateOnce();
  return glue.version();
}

/** One engine log record (the engine writes JSON lines through the callback). */
interface EngineLogRecord {
  level?: string;
  fields?: { message?: string };
}

function makeLogger(verbose: boolean): (line: string) => void {
  return (line: string) => {
    let record: EngineLogRecord;
    try {
      record = JSON.parse(line) as EngineLogRecord;
    } catch {
      if (verbose) process.stderr.write(`[schema-engine] ${line}\n`);
      return;
    }
    const level = record.level ?? "INFO";
    if (verbose || level === "WARN" || level === "ERROR") {
      process.stderr.write(`[schema-engine ${level}] ${record.fields?.message ?? line}\n`);
    }
  };
}

export interface CreateEngineOptions {
  /** Path (for messages) and text of schema.prisma. */
  schemaPath: string;
  schemaText: string;
  adapterFactory: SqlMigrationAwareDriverAdapterFactory;
  /** Print every engine log line to stderr (set TROUPE_MIGRATE_VERBOSE=1). */
  verbose?: boolean;
}

export async function createSchemaEngine(options: CreateEngineOptions): Promise<SchemaEngine> {
  instantiateOnce();
  return glue.SchemaEngine.new(
    { datamodels: [[options.schemaPath, options.schemaText]] },
    makeLogger(options.verbose ?? process.env.TROUPE_MIGRATE_VERBOSE === "1"),
    // The engine expects the error-capturing wrapper Prisma's own tooling puts around adapters.
    bindMigrationAwareSqlAdapterFactory(options.adapterFactory),
  );
}
