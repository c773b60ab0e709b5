// CSV (RFC 4180) lines. Text that a spreadsheet would run as a formula (=, +, -, @ at the start)
// gets a leading apostrophe: user agents and referers come from anonymous visitors.
const FORMULA_START = /^[=+\-@\t\r]/;

function cell(value: unknown): string {
  if (value === null || value === undefined) return "";
  let text = String(value);
  if (typeof value === "string" && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(values: unknown[]): string {
  return values.map(cell).join(",") + "\r\n";
}
