/**
 * What a process of a bench cost: CPU time (user + system, every thread) and peak resident
 * memory (VmHWM), read from /proc. A child whose /proc entry is gone once it ended (a producer)
 * reports its own figures at exit through EXIT_HOOK.
 */
import { execSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Clock ticks per second of utime and stime in /proc/<pid>/stat (USER_HZ: 100 on Linux). */
export const CLOCK_TICKS = ((): number => {
  try {
    const ticks = Number(execSync('getconf CLK_TCK', { encoding: 'utf8' }).trim());
    return ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
})();

/** utime + stime in clock ticks, from the text of /proc/<pid>/stat. */
function ticksOf(stat: string): number {
  // the fields after the command name, which is in parentheses and may hold either: the state is
  // field 3, utime field 14, stime field 15
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU seconds a running process has used so far; undefined when there is none (gone, inline). */
export async function cpuSeconds(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  try {
    return ticksOf(await readFile(`/proc/${pid}/stat`, 'utf8')) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/**
 * Loaded into every child with `node --import`: on exit the child writes its VmHWM (kB) and its
 * CPU time (clock ticks) to $BENCH_EXIT_DIR/<pid>, so a process that has ended still reports
 * both. The exit event comes after the child's last work and before a --cpu-prof profile is
 * written, which is not counted.
 */
export const EXIT_HOOK = `data:text/javascript,${encodeURIComponent(
  "import{readFileSync,writeFileSync}from'node:fs';const d=process.env.BENCH_EXIT_DIR;" +
    "if(d)process.on('exit',()=>{try{const m=/VmHWM:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status','utf8'));" +
    "const s=readFileSync('/proc/self/stat','utf8');const f=s.slice(s.lastIndexOf(')')+2).split(' ');" +
    'writeFileSync(d+"/"+process.pid,JSON.stringify({hwmKb:m?Number(m[1]):0,cpuTicks:Number(f[11])+Number(f[12])}))}catch{}});',
)}`;

/** What a child wrote at exit through EXIT_HOOK into `dir`; undefined before it exited. */
export async function exitReport(
  dir: string,
  pid: number | undefined,
): Promise<{ peakMiB: number; cpuSeconds: number } | undefined> {
  if (pid === undefined) return undefined;
  try {
    const { hwmKb, cpuTicks } = JSON.parse(await readFile(join(dir, String(pid)), 'utf8')) as {
      hwmKb: number;
      cpuTicks: number;
    };
    return { peakMiB: hwmKb / 1024, cpuSeconds: cpuTicks / CLOCK_TICKS };
  } catch {
    return undefined;
  }
}

/** Peak resident memory (VmHWM) in MiB: live from /proc, else from its exit report; 0 if neither. */
export async function peakMiB(dir: string, pid: number | undefined): Promise<number> {
  if (pid === undefined) return 0;
  try {
    const kB = /VmHWM:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1];
    if (kB) return Number(kB) / 1024;
  } catch {
    // gone: its exit report says
  }
  return (await exitReport(dir, pid))?.peakMiB ?? 0;
}
