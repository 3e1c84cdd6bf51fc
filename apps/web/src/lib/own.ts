/**
 * `record[key]` for maps keyed by user data (dataset columns, row fields): only the record's own
 * value, so a column named `constructor` or `__proto__` never reads Object.prototype's members
 * (which React cannot render: one such column used to blank the Datasets page).
 */
export function own<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
