"use client";

/**
 * CodeEditor: Monaco, served by us (no CDN), for every code field of the app.
 *
 *   import { CodeEditor } from "@/features/editor/CodeEditor"; // relative import in this repo
 *   <CodeEditor
 *     value={code}                       // controlled text
 *     onChange={setCode}                 // (value: string) => void, on every edit
 *     language="python"                  // any Monaco language id, or one you register in onMount
 *     markers={[{ line: 3, column: 5, message: "unknown actor", severity: "error" }]}
 *                                        // 1-based; endLine/endColumn optional (default: to the end of the word)
 *     height={320}                       // px or any CSS length; default 300
 *     aria-label="Reward function code"  // for screen readers and tests
 *     onMount={(editor, monaco) => {}}   // register languages, completions, themes, commands
 *     readOnly={false}
 *   />
 *
 * Why it is built this way: `@monaco-editor/react` fetches Monaco from a CDN by default, which
 * fails offline and in air-gapped labs. `MonacoHost` hands it the `monaco-editor` package with
 * `loader.config({ monaco })` and starts Monaco's web workers from our own bundle. Monaco touches
 * `window` on import, so it only ever loads in the browser (`ssr: false`).
 *
 * `onMount` runs after Monaco is ready and before the first paint of the value; register a custom
 * language there (`monaco.languages.register`, `setMonarchTokensProvider`,
 * `registerCompletionItemProvider`). Registrations are global to the page, so guard against doing
 * them twice (e.g. check `monaco.languages.getLanguages()`).
 */

import dynamic from "next/dynamic";
import type { CodeEditorProps } from "./types";

export type { CodeEditorMarker, CodeEditorProps, MonacoApi, MonacoEditorInstance } from "./types";

export const CodeEditor = dynamic<CodeEditorProps>(() => import("./MonacoHost").then((m) => m.MonacoHost), {
  ssr: false,
  loading: () => (
    <div className="code-editor code-editor-loading" role="status">
      Loading editor…
    </div>
  ),
});
