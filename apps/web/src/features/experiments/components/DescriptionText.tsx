import { Fragment } from "react";

/**
 * A description as its author wrote it, with `backtick` spans shown as code (the way READMEs and
 * chat tools read them) instead of literal backticks. Nothing else is interpreted: no HTML, no
 * other Markdown, so a description cannot change the page.
 */
export function DescriptionText({ text }: { text: string }) {
  const parts = text.split(/`([^`\n]+)`/g);
  return (
    <>
      {parts.map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : <Fragment key={i}>{part}</Fragment>))}
    </>
  );
}
