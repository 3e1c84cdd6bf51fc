/**
 * Editor support for Monaco, as plain data: no import of monaco-editor here (the web app
 * owns that dependency). Register with
 *   monaco.languages.register({ id: ROUND_SPEC_LANGUAGE_ID });
 *   monaco.languages.setMonarchTokensProvider(ROUND_SPEC_LANGUAGE_ID, roundSpecMonarch);
 *   monaco.languages.setLanguageConfiguration(ROUND_SPEC_LANGUAGE_ID, roundSpecLanguageConfiguration);
 *   monaco.editor.setModelMarkers(model, "troupe-dsl", errorsToMarkers(errors, model.getValue()));
 */
import type { DslError } from "./errors";

export const ROUND_SPEC_LANGUAGE_ID = "troupe-round-spec";

/** A Monarch grammar (monaco.languages.IMonarchLanguage). Token names map onto the default themes. */
export const roundSpecMonarch = {
  defaultToken: "invalid",
  tokenPostfix: ".roundspec",
  brackets: [{ open: "(", close: ")", token: "delimiter.parenthesis" }],
  tokenizer: {
    root: [
      [/#.*$/, "comment"],
      [/[ \t\r\n\f\v\u00a0\ufeff]+/, "white"],
      [/->/, "operator.sequence"],
      [/\//, "operator.choice"],
      [/&/, "operator.parallel"],
      // `*` followed by a count repeats; anywhere else it is "any actor".
      [/\*(?=[ \t]*(?:-?\d|\())/, "operator.repeat"],
      [/\*/, "keyword.any"],
      [/\.\./, "operator.range"],
      [/:/, "operator.weight"],
      [/-?\d+(?:\.\d+)?/, "number"],
      [/[A-Za-z_](?:[A-Za-z0-9_.]|-(?!>))*/, "identifier"],
      [/[()]/, "@brackets"],
    ],
  },
} as const;

/** monaco.languages.LanguageConfiguration: `#` comments, bracket matching and auto-closing for parentheses. */
export const roundSpecLanguageConfiguration = {
  comments: { lineComment: "#" },
  brackets: [["(", ")"]] as [string, string][],
  autoClosingPairs: [{ open: "(", close: ")" }],
  surroundingPairs: [{ open: "(", close: ")" }],
};

/** Structurally a monaco.editor.IMarkerData. */
export interface MonacoMarker {
  severity: number;
  message: string;
  startLineNumber: number;
  startColumn: number;
  endLineNumber: number;
  endColumn: number;
  code: string;
  source: string;
}

/** monaco.MarkerSeverity.Error */
export const MARKER_SEVERITY_ERROR = 8;

/**
 * Markers for errors. Our columns count code points; Monaco counts UTF-16 units, so with
 * the source text the columns are converted (they differ only after astral characters).
 * An empty span (an error at the very end) is widened to the character before it so it shows.
 */
export function errorsToMarkers(errors: readonly DslError[], source?: string): MonacoMarker[] {
  const lines = source === undefined ? undefined : source.split("\n");
  const column = (line: number, codePointColumn: number): number => {
    const text = lines?.[line - 1];
    if (text === undefined) return codePointColumn;
    return Array.from(text).slice(0, codePointColumn - 1).join("").length + 1;
  };
  return errors.map((error) => {
    const { start, end } = error.span;
    let startColumn = column(start.line, start.column);
    let endColumn = column(end.line, end.column);
    if (start.line === end.line && endColumn <= startColumn) {
      if (startColumn > 1) startColumn -= 1;
      else endColumn = startColumn + 1;
      endColumn = Math.max(endColumn, startColumn + 1);
    }
    return {
      severity: MARKER_SEVERITY_ERROR,
      message: error.message,
      startLineNumber: start.line,
      startColumn,
      endLineNumber: end.line,
      endColumn,
      code: error.kind,
      source: "troupe-dsl",
    };
  });
}
