import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { deserialize, serialize } from 'node:v8';
import { crc32 } from 'node:zlib';

/** The typed arrays a snapshot holds as they are in memory, loaded back as views of the file. */
export type SnapshotArray = Int8Array | Uint8Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array;

const ARRAY_TYPES = { Int8Array, Uint8Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array } as const;
type ArrayTypeName = keyof typeof ARRAY_TYPES;

/**
 * What a structure held in memory writes of itself: its bulk as typed arrays, and the rest (ids,
 * codes, small tables) as values the structured clone algorithm carries (v8.serialize): arrays
 * of strings decode at ~30 ns a string, where objects built row by row cost ten times that.
 */
export interface SnapshotContent {
  arrays: Record<string, SnapshotArray>;
  values: Record<string, unknown>;
}

/** Which snapshot a file must be to be used: its structure, and what it was derived under. */
export interface SnapshotKey {
  /** The structure (`columns`, `keywords`, `names`). */
  kind: string;
  /**
   * What else the content depends on (the embedder, the limits of what is held, the structure's
   * own format version): a snapshot written under another is not loaded.
   */
  fingerprint: string;
}

/** A snapshot read back: the store generation it was written at, and its content. */
export interface LoadedSnapshot {
  generation: number;
  content: SnapshotContent;
  bytes: number;
}

const MAGIC = Buffer.from('MEMSNAP1');
/** Magic, header length (u32), CRC-32 of the header, the arrays and the values in file order, padding left out (u32). */
const PREAMBLE = 16;

interface Header {
  kind: string;
  fingerprint: string;
  generation: number;
  arrays: { name: string; type: ArrayTypeName; offset: number; length: number }[];
  values: { offset: number; length: number };
}

const align8 = (n: number) => Math.ceil(n / 8) * 8;

/**
 * Writes `content` to `path` as one file: a header, then each array at an 8-byte boundary, then
 * the values; checksummed (CRC-32), written to a temporary file and renamed over the old one, so
 * that a reader sees the old snapshot or the new one, never half of one. Returns its size.
 */
export async function writeSnapshot(path: string, key: SnapshotKey & { generation: number }, content: SnapshotContent): Promise<number> {
  const values = serialize(joinStringLists(content.values));
  const arrays: Header['arrays'] = [];
  let offset = 0;
  for (const [name, array] of Object.entries(content.arrays)) {
    arrays.push({ name, type: array.constructor.name as ArrayTypeName, offset, length: array.length });
    offset = align8(offset + array.byteLength);
  }
  const header: Header = {
    kind: key.kind,
    fingerprint: key.fingerprint,
    generation: key.generation,
    arrays,
    values: { offset, length: values.byteLength },
  };
  const headerBytes = Buffer.from(JSON.stringify(header));
  const bodyStart = align8(PREAMBLE + headerBytes.byteLength);
  const bytesOf = (array: SnapshotArray) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  const preamble = Buffer.alloc(PREAMBLE);
  MAGIC.copy(preamble, 0);
  preamble.writeUInt32LE(headerBytes.byteLength, 8);
  let crc = crc32(headerBytes);
  for (const array of Object.values(content.arrays)) crc = crc32(bytesOf(array), crc);
  preamble.writeUInt32LE(crc32(values, crc), 12);
  const tmp = `${path}.${process.pid}.tmp`;
  // Section by section from where they are (no copy of the whole file in memory). Not synced to
  // disk: a crash that loses blocks of a renamed file fails its checksum, and the structure is
  // rebuilt, which is all a snapshot ever costs.
  const handle = await open(tmp, 'w');
  try {
    await handle.write(preamble, 0, PREAMBLE, 0);
    await handle.write(headerBytes, 0, headerBytes.byteLength, PREAMBLE);
    for (const [i, array] of Object.values(content.arrays).entries()) {
      const bytes = bytesOf(array);
      if (bytes.byteLength > 0) await handle.write(bytes, 0, bytes.byteLength, bodyStart + arrays[i]!.offset);
    }
    await handle.write(values, 0, values.byteLength, bodyStart + offset);
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
  return bodyStart + offset + values.byteLength;
}

/**
 * The snapshot at `path` if it is one of `key`; undefined when there is none. Each array is read
 * straight into memory of its own (one read a section, no copy of the whole file), so that the
 * arrays can be kept as they are. A file that is not whole (a bad checksum, a short read, a
 * header that does not parse) or was written for another key is a `problem`: the caller rebuilds
 * from the stores and says why.
 */
export async function readSnapshot(path: string, key: SnapshotKey): Promise<LoadedSnapshot | { problem: string } | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { problem: `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
  }
  try {
    const size = (await handle.stat()).size;
    const readExactly = async (into: Uint8Array, position: number) => {
      const { bytesRead } = await handle.read(into, 0, into.byteLength, position);
      return bytesRead === into.byteLength;
    };
    const preamble = Buffer.alloc(PREAMBLE);
    if (!(await readExactly(preamble, 0)) || !preamble.subarray(0, MAGIC.length).equals(MAGIC))
      return { problem: 'is not a memcore snapshot' };
    const headerBytes = Buffer.alloc(preamble.readUInt32LE(8));
    if (headerBytes.byteLength > size || !(await readExactly(headerBytes, PREAMBLE))) return { problem: 'is cut short' };
    let header: Header;
    try {
      header = JSON.parse(headerBytes.toString('utf8')) as Header;
    } catch {
      return { problem: 'has a header that does not parse' };
    }
    if (header.kind !== key.kind) return { problem: `holds ${header.kind}, not ${key.kind}` };
    if (header.fingerprint !== key.fingerprint) return { problem: `was written for ${header.fingerprint}, not ${key.fingerprint}` };
    const bodyStart = align8(PREAMBLE + headerBytes.byteLength);
    const sections: { name: string; array: SnapshotArray | Buffer; position: number }[] = [];
    for (const { name, type, offset, length } of header.arrays) {
      const Type = ARRAY_TYPES[type];
      if (!Type) return { problem: `holds an array of unknown type ${type}` };
      sections.push({ name, array: new Type(length), position: bodyStart + offset });
    }
    const values = Buffer.alloc(header.values.length);
    sections.push({ name: '', array: values, position: bodyStart + header.values.offset });
    if (bodyStart + header.values.offset + values.byteLength !== size) return { problem: 'is cut short' };
    // Read at once: the thread pool copies several sections out of the page cache in parallel.
    const bytesOf = (array: SnapshotArray | Buffer) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    const whole = await Promise.all(sections.map(({ array, position }) => readExactly(bytesOf(array), position)));
    if (whole.includes(false)) return { problem: 'is cut short' };
    let crc = crc32(headerBytes);
    for (const { array } of sections) crc = crc32(bytesOf(array), crc);
    if (crc !== preamble.readUInt32LE(12)) return { problem: 'is damaged (its checksum does not match)' };
    const arrays = Object.fromEntries(sections.slice(0, -1).map(({ name, array }) => [name, array as SnapshotArray]));
    return {
      generation: header.generation,
      content: { arrays, values: splitStringLists(deserialize(values) as Record<string, unknown>) },
      bytes: size,
    };
  } finally {
    await handle.close();
  }
}

/** The store generation a snapshot file was written at, from its header alone; undefined when there is no readable one. */
export async function snapshotGeneration(path: string): Promise<number | undefined> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const preamble = Buffer.alloc(PREAMBLE);
    await handle.read(preamble, 0, PREAMBLE, 0);
    if (!preamble.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
    const header = Buffer.alloc(preamble.readUInt32LE(8));
    await handle.read(header, 0, header.byteLength, PREAMBLE);
    const { generation } = JSON.parse(header.toString('utf8')) as Header;
    return Number.isInteger(generation) ? generation : undefined;
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/**
 * Long lists of strings (ids, terms) travel joined: V8 deserialises one string and a split makes
 * the list ~4x faster than it deserialises a list of 100K strings (2.6 against 9.8 ms), and a
 * fresh process reads five or six such lists before its first answer. Top-level values only.
 */
const JOINED = '__memcoreJoinedStrings';
const SEPARATOR = '\u0000';
const JOIN_FROM = 1024;

function joinStringLists(values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    const list = value as unknown[];
    const joinable =
      Array.isArray(list) && list.length >= JOIN_FROM && list.every((v) => v === null || (typeof v === 'string' && !v.includes(SEPARATOR)));
    if (!joinable) {
      out[key] = value;
      continue;
    }
    const nulls: number[] = [];
    list.forEach((v, i) => v === null && nulls.push(i));
    out[key] = { [JOINED]: list.map((v) => v ?? '').join(SEPARATOR), nulls };
  }
  return out;
}

function splitStringLists(values: Record<string, unknown>): Record<string, unknown> {
  for (const [key, value] of Object.entries(values)) {
    const joined = value as { [JOINED]?: string; nulls?: number[] } | null;
    if (joined === null || typeof joined !== 'object' || typeof joined[JOINED] !== 'string') continue;
    const list: (string | null)[] = joined[JOINED].split(SEPARATOR);
    for (const i of joined.nulls ?? []) list[i] = null;
    values[key] = list;
  }
  return values;
}
