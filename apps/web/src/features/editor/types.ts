import type * as Monaco from "monaco-editor";

export type MonacoApi = typeof Monaco;
export type MonacoEditorInstance = Monaco.editor.IStandaloneCodeEditor;

/** A problem to underline in the text (1-based line and column, as parsers report them). */
export interface CodeEditorMarker {
  line: number;
  column: number;
  endLine?: number;
  endColumn?: number;
  message: string;
  severity?: "error" | "warning" | "info";
}

export interface CodeEditorProps {
  value: string;
  onChange?: (value: string) => void;
  language?: string;
  markers?: CodeEditorMarker[];
  height?: number | string;
  "aria-label"?: string;
  readOnly?: boolean;
  onMount?: (editor: MonacoEditorInstance, monaco: MonacoApi) => void;
}
