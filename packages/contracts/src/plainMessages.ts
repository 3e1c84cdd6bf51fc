import { z } from "zod";

/**
 * Validation messages in words, for every schema in the app (zod's global error map; a message a
 * schema sets itself still wins). zod's defaults ("Too small: expected array to have >=1 items",
 * "Invalid input: expected string, received undefined") read like a stack trace beside a form
 * field; the field's name is already beside the message, so these say only what is wrong.
 */
type Issue = Parameters<NonNullable<NonNullable<Parameters<typeof z.config>[0]>["customError"]>>[0];

const TYPE_WORDS: Record<string, string> = {
  string: "text",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  array: "a list",
  object: "a group of fields",
  bigint: "a whole number",
  date: "a date",
};

function count(n: number | bigint, one: string, many = `${one}s`): string {
  return `${n} ${Number(n) === 1 ? one : many}`;
}

export function plainMessage(issue: Issue): string | undefined {
  const i = issue as Issue & Record<string, unknown>;
  switch (issue.code) {
    case "invalid_type": {
      if (i.input === undefined) return "is required";
      return `must be ${TYPE_WORDS[String(i.expected)] ?? String(i.expected)}`;
    }
    case "too_small": {
      const min = i.minimum as number | bigint;
      const inclusive = i.inclusive !== false;
      if (i.origin === "array" || i.origin === "set") return Number(min) === 1 ? "add at least one" : `needs at least ${count(min, "item")}`;
      if (i.origin === "string") return Number(min) === 1 ? "must not be empty" : `must be at least ${count(min, "character")} long`;
      return `must be ${inclusive ? "at least" : "more than"} ${min}`;
    }
    case "too_big": {
      const max = i.maximum as number | bigint;
      const inclusive = i.inclusive !== false;
      if (i.origin === "array" || i.origin === "set") return `may have at most ${count(max, "item")}`;
      if (i.origin === "string") return `may be at most ${count(max, "character")} long`;
      return `must be ${inclusive ? "at most" : "less than"} ${max}`;
    }
    case "invalid_value": {
      const values = (i.values as unknown[]) ?? [];
      return values.length === 1 ? `must be ${JSON.stringify(values[0])}` : `must be one of ${values.map((v) => JSON.stringify(v)).join(", ")}`;
    }
    case "unrecognized_keys": {
      const keys = (i.keys as string[]) ?? [];
      return `${keys.length === 1 ? "is not a known field" : "are not known fields"}: ${keys.join(", ")}`;
    }
    case "invalid_format":
      return i.format === "regex" ? "has characters or a shape that is not allowed" : `must be a valid ${String(i.format)}`;
    case "not_multiple_of":
      return `must be a multiple of ${String(i.divisor)}`;
    case "invalid_union":
      return i.discriminator ? `has an unknown ${String(i.discriminator)}` : "does not match any of the allowed forms";
    default:
      return undefined; // zod's own message
  }
}

z.config({ customError: plainMessage });
