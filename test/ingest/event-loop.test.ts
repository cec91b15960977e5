/**
 * Ingest shares its process with an HTTP server (the producer API answers /healthz while it
 * reads an upload), so parsing must give the event loop a turn every few milliseconds, even
 * when the whole upload arrives as one in-memory chunk. Before ingest was sliced, one chunk was
 * parsed in one go and the loop stood still for seconds.
 *
 * What is asserted is the CPU time the process spent between two turns of the loop: ingest's
 * own work only, the same on an idle machine and a busy one (but for a garbage collection, whose
 * helper threads count too: so no single stretch is held to the bound, only most of them, and
 * none may hold a quarter of the work). The loop's wall-clock delay
 * (monitorEventLoopDelay) is printed beside it: it also counts the time the operating system gave
 * the cores to other processes, so it is a figure (bench/ingest-parse.ts), not an assertion.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { ingest, type InputFormat } from '../../src/ingest/index.js';

const ROWS = 60_000;
/** Nearly every stretch of ingest's work between two turns of the loop is shorter. */
const MAX_CPU_STRETCH_MS = 50;

function upload(format: InputFormat): Buffer {
  const lines: string[] = [];
  if (format === 'csv') lines.push('username,firstName,lastName,email,dept');
  for (let index = 0; index < ROWS; index++) {
    const cells = [`user${index}`, `First${index}`, `Last${index}`, `u${index}@example.com`, 'R&D'];
    if (format === 'csv') {
      lines.push(cells.join(','));
    } else {
      const [username, firstName, lastName, email, dept] = cells;
      lines.push(JSON.stringify({ username, firstName, lastName, email, dept }));
    }
  }
  const text = format === 'json' ? `[${lines.join(',\n')}]` : `${lines.join('\n')}\n`;
  return Buffer.from(text);
}

/** The CPU time (ms) the process used between each two turns of the event loop. */
function watchCpuBetweenTurns(): { stop(): number[] } {
  let last = process.cpuUsage();
  const stretches: number[] = [];
  let running = true;
  const tick = (): void => {
    const used = process.cpuUsage(last);
    stretches.push((used.user + used.system) / 1000);
    last = process.cpuUsage();
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    stop() {
      running = false;
      return stretches;
    },
  };
}

describe('ingest keeps the event loop responsive', () => {
  it.each(['csv', 'json', 'ndjson'] as const)(
    'while reading a %s upload given as one chunk',
    async (format) => {
      const bytes = upload(format);
      const delay = monitorEventLoopDelay({ resolution: 5 });
      delay.enable();
      const cpu = watchCpuBetweenTurns();
      let count = 0;
      try {
        const run = ingest(bytes, { resource: 'users', mode: 'upsert', format });
        for await (const item of run.items) if (item.kind === 'record') count++;
      } finally {
        delay.disable();
      }
      const stretches = cpu.stop().sort((a, b) => a - b);
      expect(count).toBe(ROWS);
      const total = stretches.reduce((sum, ms) => sum + ms, 0);
      const longestCpuMs = stretches.at(-1)!;
      const p95 = stretches[Math.floor(0.95 * (stretches.length - 1))]!;
      // the work is spread over many turns: no one stretch holds a good part of it (unsliced,
      // one held all of it), and nearly every stretch is short. A single long one may be a
      // garbage collection, whose helper threads' CPU the process's count includes.
      expect(longestCpuMs, 'longest CPU stretch against all of it (ms)').toBeLessThan(total / 4);
      expect(p95, '95th percentile of the CPU time between two turns (ms)').toBeLessThan(
        MAX_CPU_STRETCH_MS,
      );
      console.log(
        `${format}: ${stretches.length} turns, CPU ${total.toFixed(0)} ms, p95 stretch ${p95.toFixed(1)} ms, longest ${longestCpuMs.toFixed(1)} ms, longest loop delay ${(delay.max / 1e6).toFixed(1)} ms`,
      );
    },
  );
});
