// CSV (RFC 4180) lines, shared by the QR exports and the CSV form of every list (lib/list-csv.ts).
// Text that a spreadsheet would run as a formula (=, +, -, @ at the start) gets a leading
// apostrophe: user agents, referers and names come from people outside the operator's control.
const FORMULA_START = /^[=+\-@\t\r]/;

/** One field: null empty, numbers as JSON writes them, booleans true/false, text quoted when needed. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  let text = typeof value === "number" ? JSON.stringify(value) : String(value);
  if (typeof value === "string" && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(values: unknown[]): string {
  return values.map(csvCell).join(",") + "\r\n";
}
