/**
 * Numbers as a person reads them in a terminal: four significant digits (0.1235, 12.35, 1.5e-7), not the
 * 17 digits of a float's full text (0.12345678901234567).
 */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  return String(Number(value.toPrecision(4)));
}
