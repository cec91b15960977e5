/**
 * What an import cost in CPU: microseconds (user + system) per record of each process, porter's
 * processes together (producer, workers, Redis) and their ratio to the server they feed.
 */

/** CPU seconds of each process over one import; undefined where it could not be read. */
export interface ImportCpu {
  producer: number;
  workers: (number | undefined)[];
  redis: number | undefined;
  sandbox: number | undefined;
}

/** Microseconds per record; null where it could not be read. */
export interface ImportCost {
  producer: number;
  workers: (number | null)[];
  redis: number | null;
  /** Producer, workers and Redis together; null when one of them could not be read. */
  porter: number | null;
  sandbox: number | null;
  /** porter ÷ sandbox. */
  porterToSandbox: number | null;
}

export function importCost(cpu: ImportCpu, rows: number): ImportCost {
  const per = (seconds: number | undefined): number | null =>
    seconds === undefined ? null : (seconds * 1e6) / rows;
  const workers = cpu.workers.map(per);
  const redis = per(cpu.redis);
  const parts = [per(cpu.producer), ...workers, redis];
  const porter = parts.some((part) => part === null)
    ? null
    : parts.reduce<number>((sum, part) => sum + part!, 0);
  const sandbox = per(cpu.sandbox);
  return {
    producer: per(cpu.producer)!,
    workers,
    redis,
    porter,
    sandbox,
    porterToSandbox: porter !== null && sandbox ? porter / sandbox : null,
  };
}

/** The cost as a table of lines: process, µs per record. */
export function costLines(
  cost: ImportCost,
  labels: { redis: string; sandbox: string; producer?: string },
): string[] {
  const rows: [string, string][] = [
    [labels.producer ?? 'producer (porter import, its whole life)', us(cost.producer)],
  ];
  cost.workers.forEach((value, n) => rows.push([`worker ${n + 1}`, us(value)]));
  rows.push([labels.redis, us(cost.redis)]);
  rows.push(['porter in all (producer + workers + Redis)', us(cost.porter)]);
  rows.push([labels.sandbox, us(cost.sandbox)]);
  const ratio = cost.porterToSandbox;
  rows.push(['porter ÷ sandbox', ratio === null ? 'n/a' : `${ratio.toFixed(2)} ×`]);
  const width = Math.max(...rows.map(([name]) => name.length));
  return rows.map(([name, value]) => `${name.padEnd(width)}  ${value.padStart(9)}`);
}

function us(value: number | null): string {
  return value === null ? 'n/a' : `${value.toFixed(1)} µs`;
}
