/** Results: import state and per-record results in Redis, and the reports written from them. */
export {
  ImportStore,
  type CreateImportInit,
  type ImportStoreOptions,
  type ReadResultsOptions,
} from './import-store.js';
export type { ImportProgress } from './import-reader.js';
export {
  parseImportEvent,
  waitForImport,
  type ImportEvent,
  type WaitForImportOptions,
} from './import-events.js';
export { importEventsChannel, importIndexKey, importKeys, type ImportKeys } from './import-keys.js';
export { IMPORT_ID_PATTERN, isValidImportId, newImportId } from './import-id.js';
export { formulaSafe, restoreFormulaCell } from './formula-safe.js';
export {
  REPORT_COLUMNS,
  REPORT_COLUMN_PREFIX,
  cellText,
  csvReportLayout,
  writeCsvReport,
  type CsvReportLayout,
  type CsvReportOptions,
} from './report-csv.js';
export { writeJsonReport, type JsonReportOptions } from './report-json.js';
export { failedFirst, type ResultReader } from './report-order.js';
