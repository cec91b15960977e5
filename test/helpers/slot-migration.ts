/**
 * A Cluster slot moved from its master to another as `redis-cli --cluster reshard` moves it, but
 * at the test's pace: `CLUSTER SETSLOT … IMPORTING/MIGRATING`, then `MIGRATE` key by key, then
 * `CLUSTER SETSLOT … NODE` on every master. While it moves, commands whose keys are split between
 * the two masters are answered `TRYAGAIN`, and keys already moved `ASK`.
 */
import { command } from './redis-node.js';

export interface SlotMove {
  slot: number;
  /** The master that held the slot, and the one it moves to. */
  source: number;
  destination: number;
  /** Moves up to `count` of the keys still on the source; returns how many it moved. */
  moveKeys(count: number): Promise<number>;
  /** `TRYAGAIN` answers the two masters gave so far (INFO errorstats). */
  tryAgains(): Promise<number>;
  /** Moves the remaining keys and gives the slot to the destination on every master. */
  finish(): Promise<void>;
}

/** The master serving the slot now, as the first port sees it. */
async function ownerOf(ports: readonly number[], slot: number): Promise<number> {
  const ranges = (await command(ports[0]!, 'CLUSTER', 'SLOTS')) as [
    number,
    number,
    [string, number],
  ][];
  const range = ranges.find(([first, last]) => first <= slot && slot <= last);
  if (!range) throw new Error(`no master serves slot ${slot}`);
  return Number(range[2][1]);
}

/** The slot Redis Cluster hashes the key to. */
export async function slotOf(port: number, key: string): Promise<number> {
  return Number(await command(port, 'CLUSTER', 'KEYSLOT', key));
}

/** Puts the slot in migration from its master to another of `ports` (all masters). */
export async function beginSlotMove(ports: readonly number[], slot: number): Promise<SlotMove> {
  const source = await ownerOf(ports, slot);
  const destination = ports.find((port) => port !== source)!;
  const sourceId = String(await command(source, 'CLUSTER', 'MYID'));
  const destinationId = String(await command(destination, 'CLUSTER', 'MYID'));
  await command(destination, 'CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', sourceId);
  await command(source, 'CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', destinationId);
  const moveKeys = async (count: number): Promise<number> => {
    const keys = (await command(
      source,
      'CLUSTER',
      'GETKEYSINSLOT',
      String(slot),
      String(count),
    )) as string[];
    for (const key of keys) {
      await command(source, 'MIGRATE', '127.0.0.1', String(destination), key, '0', '5000');
    }
    return keys.length;
  };
  const tryAgains = async (): Promise<number> => {
    let sum = 0;
    for (const port of [source, destination]) {
      const info = String(await command(port, 'INFO', 'errorstats'));
      sum += Number(/errorstat_TRYAGAIN:count=(\d+)/.exec(info)?.[1] ?? 0);
    }
    return sum;
  };
  return {
    slot,
    source,
    destination,
    moveKeys,
    tryAgains,
    finish: async () => {
      while ((await moveKeys(100)) > 0);
      for (const port of [
        destination,
        source,
        ...ports.filter((p) => p !== source && p !== destination),
      ]) {
        await command(port, 'CLUSTER', 'SETSLOT', String(slot), 'NODE', destinationId);
      }
    },
  };
}
