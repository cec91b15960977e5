/**
 * Where a V8 CPU profile (.cpuprofile, from `node --cpu-prof` or a bench's --cpu-prof DIR) spent
 * its time: the top N functions by self time, with their file:line and share of the busy time
 * (all but idle), then the same time by package: node_modules/<pkg>, porter's own sources by
 * folder (src/<folder>), Node's built-ins, and V8's own entries (garbage collector, program).
 *
 *   npx tsx bench/profile-summary.ts FILE.cpuprofile [FILE…] [--top 25] [--from µs --to µs]
 *       [--json]
 *
 * --from and --to count only the samples in that span of the machine's monotonic clock (µs,
 * V8's profile clock, process.hrtime's): bench/import-throughput.ts prints its import's span.
 *
 * porter runs from a bundle (bin/bundle.js): positions in it are mapped back to the sources
 * through the bundle's source maps, while they are still there.
 */
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  /** 0-based. */
  lineNumber: number;
  columnNumber: number;
}

interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame }[];
  startTime: number;
  endTime: number;
  samples: number[];
  /** µs since the sample before (the first: since startTime). */
  timeDeltas: number[];
}

interface Entry {
  name: string;
  /** Original file:line, relative to the working directory where it is a file. */
  where: string;
  group: string;
  selfMs: number;
}

interface ProfileSummary {
  file: string;
  totalMs: number;
  idleMs: number;
  busyMs: number;
  functions: (Entry & { percent: number })[];
  groups: { group: string; selfMs: number; percent: number }[];
}

const maps = new Map<string, SourceMap | undefined>();

/** The source map linked beside a generated file, if there is one. */
function sourceMapOf(path: string): SourceMap | undefined {
  if (!maps.has(path)) {
    let map: SourceMap | undefined;
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')));
    } catch {
      map = undefined;
    }
    maps.set(path, map);
  }
  return maps.get(path);
}

/** Where a frame's function is, in the sources when a source map says. */
function locate(frame: CallFrame): { file: string; line: number } | undefined {
  if (!frame.url) return undefined;
  if (!frame.url.startsWith('file://')) return { file: frame.url, line: frame.lineNumber + 1 };
  const path = fileURLToPath(frame.url);
  const entry = sourceMapOf(path)?.findEntry(frame.lineNumber, frame.columnNumber);
  if (entry && 'originalSource' in entry && entry.originalSource) {
    const source = entry.originalSource.startsWith('file://')
      ? fileURLToPath(entry.originalSource)
      : resolve(dirname(path), entry.originalSource);
    return { file: source, line: entry.originalLine + 1 };
  }
  return { file: path, line: frame.lineNumber + 1 };
}

/** The package a file belongs to: node_modules/<pkg>, src/<folder>, node: built-ins. */
function groupOf(frame: CallFrame, file: string | undefined): string {
  if (file === undefined) {
    // V8's own entries; else a function without a script: a V8 builtin or a native binding
    return frame.functionName.startsWith('(') ? frame.functionName : '(native: V8 and Node)';
  }
  const modules = file.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const [scope, name] = file.slice(modules + 'node_modules/'.length).split('/');
    return `node_modules/${scope?.startsWith('@') ? `${scope}/${name}` : scope}`;
  }
  if (file.startsWith('node:')) return 'node: built-ins';
  if (file.startsWith('wasm:')) return 'wasm';
  const source = /(?:^|\/)(src\/[^/]+)\//.exec(file);
  if (source) return `porter ${source[1]}`;
  if (file.includes('/.porter/build/')) return 'porter (bundle, no source position)';
  return relative(process.cwd(), file);
}

/** Counts the samples between from and to (monotonic µs). */
interface Window {
  from: number;
  to: number;
}

function summarise(file: string, profile: CpuProfile, top: number, window: Window): ProfileSummary {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  // a sample lasts until the next one, as Chrome's DevTools count it; the last until the end
  const selfUs = new Map<number, number>();
  let at = profile.startTime;
  const times = profile.timeDeltas.map((delta) => (at += delta));
  profile.samples.forEach((id, index) => {
    const time = times[index]!;
    if (time < window.from || time > window.to) return;
    const duration = (times[index + 1] ?? profile.endTime) - time;
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, duration));
  });
  const entries = new Map<string, Entry>();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const frame = frames.get(id)!;
    totalUs += us;
    if (frame.functionName === '(idle)') idleUs += us;
    const place = locate(frame);
    const where = place
      ? `${place.file.startsWith('/') ? relative(process.cwd(), place.file) : place.file}:${place.line}`
      : '';
    const name = frame.functionName || '(anonymous)';
    const key = `${name}\0${where}`;
    const entry = entries.get(key) ?? {
      name,
      where,
      group: groupOf(frame, place?.file),
      selfMs: 0,
    };
    entry.selfMs += us / 1000;
    entries.set(key, entry);
  }
  const busyMs = (totalUs - idleUs) / 1000;
  const percent = (ms: number): number => (busyMs > 0 ? (ms / busyMs) * 100 : 0);
  const busy = [...entries.values()].filter((entry) => entry.name !== '(idle)');
  const groups = new Map<string, number>();
  for (const entry of busy) groups.set(entry.group, (groups.get(entry.group) ?? 0) + entry.selfMs);
  return {
    file,
    totalMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    busyMs,
    functions: busy
      .sort((a, b) => b.selfMs - a.selfMs)
      .slice(0, top)
      .map((entry) => ({ ...entry, percent: percent(entry.selfMs) })),
    groups: [...groups]
      .sort((a, b) => b[1] - a[1])
      .map(([group, selfMs]) => ({ group, selfMs, percent: percent(selfMs) })),
  };
}

function print(summary: ProfileSummary, top: number): void {
  const s = (ms: number): string => (ms / 1000).toFixed(2);
  console.log(
    `${summary.file}: ${s(summary.totalMs)} s profiled, ${s(summary.idleMs)} s idle, ` +
      `${s(summary.busyMs)} s busy (the percentages below)`,
  );
  console.log(`\ntop ${top} functions by self time:`);
  console.log(`  ${'self ms'.padStart(8)} ${'%'.padStart(6)}  function  (file:line)  [package]`);
  for (const entry of summary.functions) {
    console.log(
      `  ${entry.selfMs.toFixed(0).padStart(8)} ${entry.percent.toFixed(1).padStart(6)}  ` +
        `${entry.name}${entry.where ? `  ${entry.where}` : ''}  [${entry.group}]`,
    );
  }
  console.log('\nby package:');
  const shown = summary.groups.slice(0, top);
  const rest = summary.groups.slice(top);
  if (rest.length > 0) {
    const selfMs = rest.reduce((sum, group) => sum + group.selfMs, 0);
    const percent = rest.reduce((sum, group) => sum + group.percent, 0);
    shown.push({ group: `${rest.length} others`, selfMs, percent });
  }
  for (const group of shown) {
    console.log(
      `  ${group.selfMs.toFixed(0).padStart(8)} ${group.percent.toFixed(1).padStart(6)}  ${group.group}`,
    );
  }
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    top: { type: 'string', default: '25' },
    from: { type: 'string', default: '0' },
    to: { type: 'string', default: String(Number.MAX_SAFE_INTEGER) },
    json: { type: 'boolean', default: false },
  },
});
const top = Number(values.top);
const window = { from: Number(values.from), to: Number(values.to) };
if (
  positionals.length === 0 ||
  !Number.isInteger(top) ||
  top < 1 ||
  !(window.from >= 0 && window.to > window.from)
) {
  console.error(
    'usage: profile-summary FILE.cpuprofile [FILE…] [--top N] [--from µs --to µs] [--json]',
  );
  process.exit(64);
}
const summaries = positionals.map((file) =>
  summarise(file, JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, top, window),
);
if (values.json) console.log(JSON.stringify(summaries));
else
  summaries.forEach((summary, index) => {
    if (index > 0) console.log('\n');
    print(summary, top);
  });
