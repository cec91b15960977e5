/**
 * Ingest shares its process with an HTTP server (the producer API answers /healthz while it
 * reads an upload), so parsing must give the event loop a turn every few milliseconds, even
 * when the whole upload arrives as one in-memory chunk. Before ingest was sliced, one chunk was
 * parsed in one go and the loop stood still for seconds.
 *
 * What is asserted is the CPU time the process spent between two turns of the loop: ingest's
 * own work only, the same on an idle machine and a busy one. The loop's wall-clock delay
 * (monitorEventLoopDelay) is printed beside it: it also counts the time the operating system gave
 * the cores to other processes, so it is a figure (bench/ingest-parse.ts), not an assertion.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { ingest, type InputFormat } from '../../src/ingest/index.js';

const ROWS = 60_000;
/** Ingest's own longest stretch between two turns of the loop. */
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

/** The most CPU time (ms) the process used between two turns of the event loop. */
function watchCpuBetweenTurns(): { stop(): number } {
  let last = process.cpuUsage();
  let longest = 0;
  let running = true;
  const tick = (): void => {
    const used = process.cpuUsage(last);
    longest = Math.max(longest, (used.user + used.system) / 1000);
    last = process.cpuUsage();
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    stop() {
      running = false;
      return longest;
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
      const longestCpuMs = cpu.stop();
      expect(count).toBe(ROWS);
      expect(longestCpuMs, 'most CPU time between two turns (ms)').toBeLessThan(MAX_CPU_STRETCH_MS);
      console.log(
        `${format}: longest CPU stretch ${longestCpuMs.toFixed(1)} ms, longest loop delay ${(delay.max / 1e6).toFixed(1)} ms`,
      );
    },
  );
});
