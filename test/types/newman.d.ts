/** The part of newman's API the reference-collection test uses (newman ships no types). */
declare module 'newman' {
  interface NewmanRunFailure {
    source?: { name?: string };
    error: { name: string; message: string };
  }
  interface NewmanRunSummary {
    run: {
      failures: NewmanRunFailure[];
      stats: {
        requests: { total: number; failed: number };
        assertions: { total: number; failed: number };
      };
    };
  }
  interface NewmanRunOptions {
    collection: unknown;
    envVar?: Array<{ key: string; value: string }>;
    reporters?: string[];
  }
  const newman: {
    run(
      options: NewmanRunOptions,
      callback: (error: Error | null, summary: NewmanRunSummary) => void,
    ): void;
  };
  export type { NewmanRunSummary };
  export default newman;
}
