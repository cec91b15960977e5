/**
 * Spreadsheet formula injection guard (OWASP "CSV Injection"). A cell that starts with `=`, `+`,
 * `-`, `@`, tab or carriage return gets a leading single quote, so a spreadsheet shows it as
 * text instead of running it. Plain negative numbers such as `-5` are quoted too, as OWASP
 * advises for every leading `-`: `-1+2` and `-5` cannot be told apart safely by a prefix rule.
 *
 * A cell that already starts with quotes before such a character (`'=x`) gets one more, so
 * restoreFormulaCell gives back exactly what formulaSafe was given, whatever the text.
 */
const TRIGGERS = new Set(['=', '+', '-', '@', '\t', '\r']);

/** Whether the cell is quotes (possibly none) followed by a trigger character. */
function startsWithQuotedTrigger(cell: string, minQuotes: number): boolean {
  let index = 0;
  while (index < cell.length && cell[index] === "'") index++;
  return index >= minQuotes && index < cell.length && TRIGGERS.has(cell[index]);
}

/** The cell as text no spreadsheet runs as a formula. */
export function formulaSafe(cell: string): string {
  return cell.length > 0 && startsWithQuotedTrigger(cell, 0) ? `'${cell}` : cell;
}

/**
 * Undoes formulaSafe for a cell read back from a porter report that is uploaded again, so the
 * quote never reaches the admin server. Only a quote before quotes and a trigger is removed.
 */
export function restoreFormulaCell(cell: string): string {
  return cell.length > 1 && startsWithQuotedTrigger(cell, 1) ? cell.slice(1) : cell;
}
