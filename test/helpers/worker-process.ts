/** A real `porter worker` process for crash and shutdown tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

export interface WorkerProcess {
  child: ChildProcess;
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<number | string>;
  output(): string;
}

export function spawnWorker(env: Record<string, string>, args: string[] = []): WorkerProcess {
  const child = spawn('node', ['bin/porter.js', 'worker', ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string);
  return { child, exited, output: () => output };
}
