/**
 * A small stand-in for Active Directory, only for what slapd cannot do: ranged attribute reads
 * (`member;range=0-1499`, then `member;range=1500-*` …). It answers binds (any password but
 * `wrong`), and searches by base: the people container gives every user (sAMAccountName and a
 * binary objectGUID), the groups container every group, and a base search one entry, with its
 * `member` cut into ranges of RANGE_SIZE as AD's MaxValRange does. Filters are not evaluated.
 * Written on ldapts's own BER reader and writer; it is no LDAP server beyond that.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { BerReader, BerWriter } from 'ldapts';

export const AD_BASE = 'dc=corp,dc=example';
export const AD_PEOPLE = `ou=people,${AD_BASE}`;
export const AD_GROUPS = `ou=groups,${AD_BASE}`;
export const RANGE_SIZE = 1500;

interface StandInEntry {
  dn: string;
  attributes: Record<string, Array<string | Buffer>>;
}

export interface AdStandIn {
  url: string;
  users: StandInEntry[];
  groups: StandInEntry[];
  close(): Promise<void>;
}

const lower = (text: string): string => text.toLowerCase();

function rangedAttributes(
  entry: StandInEntry,
  wanted: readonly string[],
): Record<string, Array<string | Buffer>> {
  const out: Record<string, Array<string | Buffer>> = {};
  const all = wanted.length === 0;
  for (const [name, values] of Object.entries(entry.attributes)) {
    const ask = wanted.find((one) => lower(one.split(';')[0]!) === lower(name));
    if (!all && ask === undefined) continue;
    const range = ask === undefined ? undefined : /;range=(\d+)-/i.exec(ask);
    if (name !== 'member' || (values.length <= RANGE_SIZE && range === null)) {
      out[name] = values;
      continue;
    }
    const start = range ? Number(range[1]) : 0;
    const last = Math.min(start + RANGE_SIZE, values.length) - 1;
    const end = last === values.length - 1 ? '*' : String(last);
    out[`${name};range=${start}-${end}`] = values.slice(start, last + 1);
  }
  return out;
}

function message(messageId: number, write: (writer: BerWriter) => void): Buffer {
  const writer = new BerWriter();
  writer.startSequence();
  writer.writeInt(messageId);
  write(writer);
  writer.endSequence();
  return writer.buffer;
}

function result(messageId: number, tag: number, status: number): Buffer {
  return message(messageId, (writer) => {
    writer.startSequence(tag);
    writer.writeEnumeration(status);
    writer.writeString('');
    writer.writeString('');
    writer.endSequence();
  });
}

function entryMessage(
  messageId: number,
  dn: string,
  attributes: Record<string, Array<string | Buffer>>,
): Buffer {
  return message(messageId, (writer) => {
    writer.startSequence(0x64);
    writer.writeString(dn);
    writer.startSequence();
    for (const [name, values] of Object.entries(attributes)) {
      writer.startSequence();
      writer.writeString(name);
      writer.startSequence(0x31);
      for (const value of values) {
        if (typeof value === 'string') writer.writeString(value);
        else writer.writeBuffer(value, 0x04);
      }
      writer.endSequence();
      writer.endSequence();
    }
    writer.endSequence();
    writer.endSequence();
  });
}

/** Starts the stand-in with `users` users and one group `big` holding all of them. */
export async function startAdStandIn(users: number): Promise<AdStandIn> {
  const people: StandInEntry[] = Array.from({ length: users }, (_, index) => ({
    dn: `cn=user${index},${AD_PEOPLE}`,
    attributes: {
      sAMAccountName: [`user${index}`],
      objectGUID: [randomBytes(16)],
      whenChanged: ['20260101000000.0Z'],
    },
  }));
  const groups: StandInEntry[] = [
    {
      dn: `cn=big,${AD_GROUPS}`,
      attributes: {
        cn: ['big'],
        objectGUID: [randomBytes(16)],
        member: people.map((person) => person.dn),
      },
    },
  ];
  const byDn = new Map([...people, ...groups].map((entry) => [lower(entry.dn), entry]));

  const answer = (socket: Socket, reader: BerReader): void => {
    reader.readSequence();
    const messageId = reader.readInt() ?? 0;
    const operation = reader.peek();
    if (operation === 0x42) {
      socket.end();
      return;
    }
    if (operation === 0x60) {
      reader.readSequence(0x60);
      reader.readInt();
      reader.readString();
      const password = reader.readString(0x80) ?? '';
      socket.write(result(messageId, 0x61, password === 'wrong' ? 49 : 0));
      return;
    }
    if (operation !== 0x63) {
      socket.write(result(messageId, 0x65, 53));
      return;
    }
    reader.readSequence(0x63);
    const base = lower(reader.readString() ?? '');
    const scope = reader.readEnumeration();
    reader.readEnumeration();
    reader.readInt();
    reader.readInt();
    reader.readBoolean();
    reader.readString(reader.peek() ?? 0, true); // the filter, not evaluated
    const wanted: string[] = [];
    reader.readSequence();
    const end = reader.offset + reader.length;
    while (reader.offset < end) wanted.push(reader.readString() ?? '');
    const found =
      scope === 0
        ? [byDn.get(base)].filter((entry): entry is StandInEntry => entry !== undefined)
        : base === lower(AD_PEOPLE)
          ? people
          : base === lower(AD_GROUPS)
            ? groups
            : [];
    for (const entry of found) {
      socket.write(entryMessage(messageId, entry.dn, rangedAttributes(entry, wanted)));
    }
    socket.write(result(messageId, 0x65, 0));
  };

  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const reader = new BerReader(pending);
        if (reader.readSequence() === null) return;
        const size = reader.offset + reader.length;
        if (pending.length < size) return;
        answer(socket, new BerReader(pending.subarray(0, size)));
        pending = pending.subarray(size);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `ldap://127.0.0.1:${port}`,
    users: people,
    groups,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
