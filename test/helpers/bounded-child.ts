/**
 * Runs a script in a child process and waits for its answer with a deadline: for work that, when
 * it goes wrong, keeps a thread busy for minutes (a quadratic reader, a runaway expression),
 * which no timer in the test's own thread could interrupt. The child is killed at the deadline.
 */
import { spawn } from 'node:child_process';

export interface BoundedAnswer {
  /** Whether the child ended (exit 0) before the deadline. */
  finished: boolean;
  stdout: string;
  stderr: string;
}

/** Runs `node --import tsx script ...args`; the deadline is generous: it tells "ends" from "never". */
export async function runBounded(
  script: string,
  args: readonly string[],
  deadlineMs: number,
): Promise<BoundedAnswer> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let timer: NodeJS.Timeout | undefined;
  const code = await new Promise<number | null>((resolve) => {
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(null);
    }, deadlineMs);
    child.on('exit', (exitCode) => resolve(exitCode));
  });
  clearTimeout(timer);
  return { finished: code === 0, stdout, stderr };
}
