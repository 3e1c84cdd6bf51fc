import { loader } from "@monaco-editor/react";
import * as monaco from "monaco-editor";

/**
 * Monaco from our own bundle: workers started from files the app serves, and the React wrapper
 * told to use this instance instead of fetching one from a CDN. Imported only in the browser.
 */
type WorkerFactory = () => Worker;

const WORKERS: Record<string, WorkerFactory> = {
  json: () => new Worker(new URL("monaco-editor/language/json/json.worker.js", import.meta.url), { type: "module" }),
  editor: () => new Worker(new URL("monaco-editor/editor/editor.worker.js", import.meta.url), { type: "module" }),
};

let configured = false;

export function configureMonaco(): typeof monaco {
  if (!configured) {
    (globalThis as { MonacoEnvironment?: unknown }).MonacoEnvironment = {
      // Languages without a worker of their own (Python, YAML, our round-spec language) use the
      // editor worker; TypeScript/CSS/HTML workers are not shipped since no field of ours needs them.
      getWorker: (_workerId: string, label: string) => (WORKERS[label] ?? WORKERS.editor!)(),
    };
    loader.config({ monaco });
    configured = true;
  }
  return monaco;
}
