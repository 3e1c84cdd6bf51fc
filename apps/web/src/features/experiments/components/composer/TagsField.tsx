"use client";

import { useState } from "react";
import { formatTags, parseTags, textMatchesTags } from "../../lib/tags";

/** The tags input: keeps the typed text (so a comma survives the key press) and sets the parsed list. */
export function TagsField(props: { id: string; tags: readonly string[]; onChange(tags: string[] | undefined): void }) {
  const [text, setText] = useState(() => formatTags(props.tags));
  // The draft changed from elsewhere (spec text, import): show its tags.
  const shown = textMatchesTags(text, props.tags) ? text : formatTags(props.tags);
  return (
    <input
      id={props.id}
      type="text"
      value={shown}
      placeholder="e.g. baseline, lr-sweep"
      data-testid="compose-tags"
      onChange={(e) => {
        setText(e.target.value);
        const list = parseTags(e.target.value);
        props.onChange(list.length ? list : undefined);
      }}
    />
  );
}
