"use client";

import Editor, { type OnMount } from "@monaco-editor/react";
import { useEffect, useRef } from "react";
import { configureMonaco } from "./monacoSetup";
import type { CodeEditorProps, MonacoApi, MonacoEditorInstance } from "./types";

const monaco = configureMonaco();

const SEVERITY = {
  error: monaco.MarkerSeverity.Error,
  warning: monaco.MarkerSeverity.Warning,
  info: monaco.MarkerSeverity.Info,
} as const;

const MARKER_OWNER = "troupe";

/** The browser-only half of CodeEditor (see CodeEditor.tsx for the API). */
export function MonacoHost({ value, onChange, language = "plaintext", markers, height = 300, readOnly, onMount, ...rest }: CodeEditorProps) {
  const editorRef = useRef<MonacoEditorInstance | null>(null);
  const ariaLabel = rest["aria-label"];

  const handleMount: OnMount = (editor, api) => {
    editorRef.current = editor;
    onMount?.(editor, api as MonacoApi);
    applyMarkers(editor, markers);
  };

  useEffect(() => {
    if (editorRef.current) applyMarkers(editorRef.current, markers);
  }, [markers]);

  // `nokey`: React Flow (the round-spec graph on the same page) listens for Space (pan) and
  // Delete on the document and ignores only inputs, textareas and contenteditable elements.
  // Chromium's Monaco focuses a native EditContext <div>, which is none of those, so the
  // graph cancelled every space typed in an editor. React Flow skips targets inside `.nokey`.
  return (
    <div className="code-editor nokey" data-language={language}>
      <Editor
        height={height}
        language={language}
        value={value}
        onChange={(v) => onChange?.(v ?? "")}
        onMount={handleMount}
        theme="vs"
        options={{
          ariaLabel,
          readOnly,
          minimap: { enabled: false },
          scrollBeyondLastLine: false,
          fontSize: 13,
          tabSize: 4,
          automaticLayout: true,
        }}
      />
      <div className="code-editor-hint" aria-hidden="true">
        Tab indents. To leave the editor with Tab, press Ctrl+M first (Ctrl+Shift+M on a Mac).
      </div>
    </div>
  );
}

function applyMarkers(editor: MonacoEditorInstance, markers: CodeEditorProps["markers"]): void {
  const model = editor.getModel();
  if (!model) return;
  monaco.editor.setModelMarkers(
    model,
    MARKER_OWNER,
    (markers ?? []).map((m) => {
      const line = Math.min(Math.max(1, m.line), model.getLineCount());
      const word = model.getWordAtPosition({ lineNumber: line, column: m.column });
      return {
        startLineNumber: line,
        startColumn: m.column,
        endLineNumber: m.endLine ?? line,
        endColumn: m.endColumn ?? (word ? word.endColumn : Math.max(m.column + 1, model.getLineMaxColumn(line))),
        message: m.message,
        severity: SEVERITY[m.severity ?? "error"],
      };
    }),
  );
}
