"use client";

import { useEffect, useMemo } from "react";
import { CodeEditor, type MonacoApi } from "../../editor/CodeEditor";
import { renderTemplate } from "../lib/templatePreview";

export const TEMPLATE_LANGUAGE_ID = "troupe-jinja";

/**
 * Field names offered by completion. Monaco's providers are global to the page while the fields
 * belong to the environment being edited, so the editor that mounts or updates last sets them.
 */
let completionFields: string[] = [];

function registerTemplateLanguage(monaco: MonacoApi): void {
  if (monaco.languages.getLanguages().some((l) => l.id === TEMPLATE_LANGUAGE_ID)) return;
  monaco.languages.register({ id: TEMPLATE_LANGUAGE_ID });
  monaco.languages.setMonarchTokensProvider(TEMPLATE_LANGUAGE_ID, {
    tokenizer: {
      root: [
        [/\{\{/, { token: "delimiter.bracket", next: "@expr" }],
        [/\{%/, { token: "delimiter.bracket", next: "@expr" }],
        [/\{#.*?#\}/, "comment"],
        [/[^{]+/, ""],
        [/\{/, ""],
      ],
      expr: [
        [/\}\}|%\}/, { token: "delimiter.bracket", next: "@pop" }],
        [/\b(if|else|elif|endif|for|in|endfor|and|or|not|set)\b/, "keyword"],
        [/"[^"]*"|'[^']*'/, "string"],
        [/\d+/, "number"],
        [/[A-Za-z_]\w*/, "variable"],
        [/./, ""],
      ],
    },
  });
  monaco.languages.registerCompletionItemProvider(TEMPLATE_LANGUAGE_ID, {
    triggerCharacters: ["{", " "],
    provideCompletionItems(model, position) {
      const before = model.getLineContent(position.lineNumber).slice(0, position.column - 1);
      // Offer fields inside `{{ … }}` or `{% … %}` only, so prose is not interrupted.
      const open = Math.max(before.lastIndexOf("{{"), before.lastIndexOf("{%"));
      const close = Math.max(before.lastIndexOf("}}"), before.lastIndexOf("%}"));
      if (open < 0 || close > open) return { suggestions: [] };
      const word = model.getWordUntilPosition(position);
      const range = { startLineNumber: position.lineNumber, endLineNumber: position.lineNumber, startColumn: word.startColumn, endColumn: word.endColumn };
      return {
        suggestions: completionFields.map((f) => ({
          label: f,
          kind: monaco.languages.CompletionItemKind.Field,
          insertText: f,
          detail: "dataset field",
          range,
        })),
      };
    },
  });
}

/** A Jinja template over dataset fields, with field completion and the text it renders to on a sample row. */
export function TemplateEditor(props: {
  value: string;
  onChange(v: string): void;
  fields: string[];
  sampleRow: Record<string, unknown> | null;
  label: string;
}) {
  const { fields } = props;
  useEffect(() => {
    completionFields = fields;
  }, [fields]);
  const rendered = useMemo(
    () => (props.sampleRow && props.value ? renderTemplate(props.value, props.sampleRow) : null),
    [props.value, props.sampleRow],
  );
  return (
    <div className="template-editor">
      <CodeEditor
        value={props.value}
        onChange={props.onChange}
        language={TEMPLATE_LANGUAGE_ID}
        height={90}
        aria-label={props.label}
        onMount={(editor, monaco) => {
          registerTemplateLanguage(monaco);
          completionFields = fields;
          editor.updateOptions({ wordWrap: "on", lineNumbers: "off", quickSuggestions: { other: true, strings: true, comments: false } });
        }}
      />
      {rendered && (
        <div className={rendered.ok ? "template-preview" : "template-preview error"} data-testid="template-preview">
          <span className="muted small">{rendered.ok ? "Renders on the sample row as:" : "Does not render:"}</span>
          <pre>{rendered.ok ? rendered.text : rendered.error}</pre>
        </div>
      )}
    </div>
  );
}
