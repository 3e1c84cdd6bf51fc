import { stringify } from "yaml";

/** The two text forms a spec is shown and exported in: what `npx troupe run` and POST /api/v1/runs accept. */
export type SpecFormat = "yaml" | "json";

export function specText(spec: unknown, format: SpecFormat): string {
  return format === "yaml" ? stringify(spec) : JSON.stringify(spec, null, 2);
}

/** A file name from a spec's name: letters, digits, `_ . -` only (the fallback when nothing is left). */
export function specFileName(name: unknown, format: SpecFormat, fallback = "spec"): string {
  const base =
    String(name ?? fallback)
      .replace(/[^A-Za-z0-9_.-]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 60) || fallback;
  return `${base}.${format}`;
}

/** Saves text as a file in the browser. */
export function downloadSpec(fileName: string, text: string, format: SpecFormat) {
  const url = URL.createObjectURL(new Blob([text], { type: format === "yaml" ? "application/yaml" : "application/json" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = fileName;
  a.click();
  URL.revokeObjectURL(url);
}
