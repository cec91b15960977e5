/**
 * The ids of the work a span belongs to, as span attributes. They travel as OpenTelemetry
 * baggage: every span started under them, in this process or in one a queued job reaches, gets
 * them as attributes (src/observability/tracing-sdk.ts).
 */
export const WORK_ATTRIBUTES = {
  importId: 'porter.import.id',
  exportId: 'porter.export.id',
  migrationId: 'porter.migration.id',
  target: 'porter.target',
} as const;

export type WorkIds = Partial<Record<keyof typeof WORK_ATTRIBUTES, string>>;

/** The attribute names of the ids, in a fixed order. */
export const WORK_ATTRIBUTE_NAMES: readonly string[] = Object.values(WORK_ATTRIBUTES);

/** The ids given, as attribute name and value. */
export function workEntries(ids: WorkIds): [string, string][] {
  const entries: [string, string][] = [];
  for (const [key, name] of Object.entries(WORK_ATTRIBUTES)) {
    const value = ids[key as keyof WorkIds];
    if (value !== undefined && value !== '') entries.push([name, value]);
  }
  return entries;
}
