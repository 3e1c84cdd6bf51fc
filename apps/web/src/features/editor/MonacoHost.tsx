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

  // The editor owns its text while it has focus. A `value` prop is an echo of what it emitted
  // (possibly a stale one: on a busy page a render can arrive after the next key press, and
  // writing that older text back dropped the keys typed since); only a value it never emitted
  // (another part loaded, the graph rewrote the round spec, Discard) replaces the text.
  const emitted = useRef(new Set<string>());
  const latestValue = useRef(value);
  latestValue.current = value;
  const handleChange = (v: string | undefined) => {
    const text = v ?? "";
    if (emitted.current.size > 500) emitted.current.clear();
    emitted.current.add(text);
    onChange?.(text);
  };

  const handleMount: OnMount = (editor, api) => {
    editorRef.current = editor;
    // Monaco loads asynchronously: the value may have moved on since the editor was created.
    if (editor.getValue() !== latestValue.current) editor.setValue(latestValue.current);
    onMount?.(editor, api as MonacoApi);
    applyMarkers(editor, markers);
    editor.onDidBlurEditorText(() => emitted.current.clear());
  };

  useEffect(() => {
    if (editorRef.current) applyMarkers(editorRef.current, markers);
  }, [markers]);

  useEffect(() => {
    const editor = editorRef.current;
    if (!editor || value === editor.getValue() || emitted.current.has(value)) return;
    emitted.current.clear();
    // As one undoable edit, like the library does for a controlled value.
    const model = editor.getModel();
    if (!model) return;
    editor.executeEdits("troupe-value", [{ range: model.getFullModelRange(), text: value, forceMoveMarkers: true }]);
    editor.pushUndoStop();
  }, [value]);

  // `nokey`: React Flow (the round-spec graph on the same page) listens for Space (pan) and
  // Delete on the document and ignores only inputs, textareas and contenteditable elements.
  // Chromium's Monaco focuses a native EditContext <div>, which is none of those, so the
  // graph cancelled every space typed in an editor. React Flow skips targets inside `.nokey`.
  return (
    <div className="code-editor nokey" data-language={language}>
      <Editor
        height={height}
        language={language}
        defaultValue={value}
        onChange={handleChange}
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
