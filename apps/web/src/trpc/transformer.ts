import superjson from "superjson";

/**
 * superjson, made safe for keys people choose. superjson refuses any object key named
 * `constructor`, `prototype` or `__proto__` (its prototype-pollution guard) and throws: one dataset
 * with a column named `constructor` turned every dataset list into a 500 and blanked the page for
 * everyone. Here such keys travel escaped (`~~constructor`; a key already starting with `~~` gets
 * one more `~~`, so the mapping is one-to-one) and are restored as plain own properties on arrival
 * (`Object.fromEntries`, which never touches a prototype).
 *
 * Used by the tRPC server and client and by the query cache's (de)hydration, so both ends agree.
 */

const ESCAPE = "~~";
const RESERVED = new Set(["constructor", "prototype", "__proto__"]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Copy-on-write: unchanged subtrees (the usual case) are returned as they are. */
function mapKeys(value: unknown, rename: (key: string) => string): unknown {
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      if (typeof item !== "object" || item === null) continue;
      const mapped = mapKeys(item, rename);
      if (mapped !== item) (copy ??= value.slice())[i] = mapped;
    }
    return copy ?? value;
  }
  if (!isPlainObject(value)) return value; // Dates, Maps, Sets, …: superjson's business
  let changed = false;
  const entries = Object.entries(value).map(([key, item]) => {
    const newKey = rename(key);
    const newItem = typeof item === "object" && item !== null ? mapKeys(item, rename) : item;
    if (newKey !== key || newItem !== item) changed = true;
    return [newKey, newItem] as const;
  });
  return changed ? Object.fromEntries(entries) : value;
}

const escapeKey = (key: string) => (RESERVED.has(key) || key.startsWith(ESCAPE) ? ESCAPE + key : key);
const unescapeKey = (key: string) => (key.startsWith(ESCAPE) ? key.slice(ESCAPE.length) : key);

export function escapeReservedKeys(value: unknown): unknown {
  return mapKeys(value, escapeKey);
}

export function unescapeReservedKeys(value: unknown): unknown {
  return mapKeys(value, unescapeKey);
}

type Serialized = ReturnType<typeof superjson.serialize>;

export const transformer = {
  serialize: (value: unknown): Serialized => superjson.serialize(escapeReservedKeys(value)),
  deserialize: <T = unknown>(payload: Serialized): T => unescapeReservedKeys(superjson.deserialize(payload)) as T,
};
