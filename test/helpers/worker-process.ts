/** A real `porter worker` process for crash and shutdown tests, and for benches. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

export interface WorkerProcess {
  child: ChildProcess;
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<number | string>;
  output(): string;
  /** The lines it wrote so far (stdout and stderr), each with the time it came. */
  lines(): readonly { at: number; text: string }[];
}

export function spawnWorker(env: Record<string, string>, args: string[] = []): WorkerProcess {
  const child = spawn('node', ['bin/porter.js', 'worker', ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const lines: { at: number; text: string }[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream?.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      output += text;
      const parts = (partial + text).split('\n');
      partial = parts.pop() ?? '';
      const at = Date.now();
      for (const line of parts) if (line) lines.push({ at, text: line });
    });
  }
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string);
  return { child, exited, output: () => output, lines: () => lines };
}
