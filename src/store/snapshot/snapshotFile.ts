import { closeSync, fstatSync, openSync, read, readSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { promisify } from 'node:util';
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

/**
 * The arrays a reader asked to come later (`lazy`): `read(name)` reads and checks one (rejecting
 * when it is cut short or damaged), from the file as it was when the rest was read; `release`
 * gives the file up without them. The file stays open until every one was read, or release.
 */
export interface LaterSections {
  names: readonly string[];
  read(name: string): Promise<SnapshotArray>;
  /**
   * A later section left in the file and read a range at a time (see PositionedSection), never
   * held whole; undefined when `name` is not one. The file then stays open until `release`.
   */
  positioned(name: string): PositionedSection | undefined;
  release(): void;
}

/**
 * A section read where it lies, a few elements at a time: a structure that asks a few rows of a
 * large array per query (a document's terms, a vector's residual) reads them from the page cache
 * rather than holding the array (~175 MB and ~512 MB at 1M entries). The file as it was when the
 * rest was read: a snapshot written since replaces the name, not this file.
 */
export interface PositionedSection {
  readonly length: number;
  /** Elements `from` … `from + into.length` into `into` (of the section's type), synchronously; throws when the file is cut short. */
  readInto(into: SnapshotArray, from: number): void;
  /** Checks the section against its CRC-32, a chunk at a time (nothing held): rejects when it does not match. */
  verify(): Promise<void>;
}

/** How much of a positioned section `verify` reads at a time. */
const VERIFY_CHUNK = 8 * 1024 * 1024;

/** A snapshot read back: the store generation it was written at, and its content. */
export interface LoadedSnapshot {
  generation: number;
  content: SnapshotContent & { later: LaterSections };
  bytes: number;
}

const MAGIC = Buffer.from('MEMSNAP1');
/** Magic, header length (u32), CRC-32 of the header, the arrays and the values in file order, padding left out (u32). */
const PREAMBLE = 16;

interface Header {
  kind: string;
  fingerprint: string;
  generation: number;
  /**
   * 2: each section carries its own CRC-32 and the preamble's covers the header alone, so that a
   * section can be read (and checked) later than the others. Absent: one CRC over everything.
   */
  format?: 2;
  arrays: { name: string; type: ArrayTypeName; offset: number; length: number; crc?: number }[];
  values: { offset: number; length: number; crc?: number };
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
  const bytesOf = (array: SnapshotArray) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  for (const [name, array] of Object.entries(content.arrays)) {
    arrays.push({ name, type: array.constructor.name as ArrayTypeName, offset, length: array.length, crc: crc32(bytesOf(array)) });
    offset = align8(offset + array.byteLength);
  }
  const header: Header = {
    kind: key.kind,
    fingerprint: key.fingerprint,
    generation: key.generation,
    format: 2,
    arrays,
    values: { offset, length: values.byteLength, crc: crc32(values) },
  };
  const headerBytes = Buffer.from(JSON.stringify(header));
  const bodyStart = align8(PREAMBLE + headerBytes.byteLength);
  const preamble = Buffer.alloc(PREAMBLE);
  MAGIC.copy(preamble, 0);
  preamble.writeUInt32LE(headerBytes.byteLength, 8);
  preamble.writeUInt32LE(crc32(headerBytes), 12);
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
export async function readSnapshot(
  path: string,
  key: SnapshotKey,
  opts: { lazy?: readonly string[] } = {},
): Promise<LoadedSnapshot | { problem: string } | undefined> {
  // A descriptor, not a FileHandle: one the later sections keep open is closed by `release`, or by
  // a finaliser when the structure is dropped without it (Node warns when the garbage collector
  // closes a FileHandle, and means to throw).
  let file: OpenFile;
  try {
    file = { fd: openSync(path, 'r'), closed: false };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { problem: `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
  }
  // Kept open while sections are to come later (see LaterSections).
  let keepOpen = false;
  try {
    const size = fstatSync(file.fd).size;
    const readExactly = async (into: Uint8Array, position: number) => {
      if (file.closed) throw new Error('was released');
      const bytesRead = await readAt(file.fd, into, 0, into.byteLength, position);
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
    const perSection = header.format === 2;
    if (perSection && crc32(headerBytes) !== preamble.readUInt32LE(12)) return { problem: 'is damaged (its checksum does not match)' };
    if (header.kind !== key.kind) return { problem: `holds ${header.kind}, not ${key.kind}` };
    if (header.fingerprint !== key.fingerprint) return { problem: `was written for ${header.fingerprint}, not ${key.fingerprint}` };
    const bodyStart = align8(PREAMBLE + headerBytes.byteLength);
    if (bodyStart + header.values.offset + header.values.length !== size) return { problem: 'is cut short' };
    // Only a file with a checksum per section can hand some over later (an older one is read whole).
    const isLater = (name: string) => perSection && name !== '' && (opts.lazy?.includes(name) ?? false);
    // A later section's memory is taken when it is read (a positioned one never takes it).
    const sections: { name: string; array: SnapshotArray | Buffer; make: () => SnapshotArray; position: number; crc?: number }[] = [];
    const NONE = new Uint8Array(0);
    for (const { name, type, offset, length, crc } of header.arrays) {
      const Type = ARRAY_TYPES[type];
      if (!Type) return { problem: `holds an array of unknown type ${type}` };
      const make = () => new Type(length);
      sections.push({ name, array: isLater(name) ? NONE : make(), make, position: bodyStart + offset, crc });
    }
    const values = Buffer.alloc(header.values.length);
    // (Its `make` is never called: the values are read now. A closure over them would keep them.)
    sections.push({ name: '', array: values, make: () => NONE, position: bodyStart + header.values.offset, crc: header.values.crc });
    const bytesOf = (array: SnapshotArray | Buffer) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    const now = sections.filter((s) => !isLater(s.name));
    // Read at once: the thread pool copies several sections out of the page cache in parallel.
    const whole = await Promise.all(now.map(({ array, position }) => readExactly(bytesOf(array), position)));
    if (whole.includes(false)) return { problem: 'is cut short' };
    if (perSection) {
      if (now.some((s) => crc32(bytesOf(s.array)) !== s.crc)) return { problem: 'is damaged (its checksum does not match)' };
    } else {
      let crc = crc32(headerBytes);
      for (const { array } of sections) crc = crc32(bytesOf(array), crc);
      if (crc !== preamble.readUInt32LE(12)) return { problem: 'is damaged (its checksum does not match)' };
    }
    const lazySections = new Map(sections.filter((x) => isLater(x.name)).map((x) => [x.name, x]));
    const reads = new Map<string, Promise<SnapshotArray>>();
    let released = false;
    // A positioned section reads from the file until release.
    let positionedOut = false;
    const closeWhenDone = () => {
      if (released || positionedOut || reads.size < lazySections.size) return;
      released = true;
      void Promise.allSettled(reads.values()).finally(() => closeFile(file));
    };
    const later: LaterSections = {
      names: [...lazySections.keys()],
      read(name) {
        const known = reads.get(name);
        if (known) return known;
        const s = lazySections.get(name);
        if (!s || released) return Promise.reject(new Error(s ? 'was released' : `holds no section ${name} to read later`));
        s.array = s.make();
        const read = readExactly(bytesOf(s.array), s.position).then((complete) => {
          if (!complete) throw new Error('is cut short');
          if (crc32(bytesOf(s.array)) !== s.crc) throw new Error(`is damaged (the checksum of ${s.name} does not match)`);
          return s.array as SnapshotArray;
        });
        reads.set(name, read);
        closeWhenDone();
        return read;
      },
      positioned(name) {
        const s = lazySections.get(name);
        if (!s || released) return undefined;
        positionedOut = true;
        const { BYTES_PER_ELEMENT: width, length } = sectionType(header, name);
        const byteLength = length * width;
        return {
          length,
          readInto(into, from) {
            if (released || file.closed) throw new Error('was released');
            if (from < 0 || from + into.length > length)
              throw new RangeError(`${name} holds ${length} elements, not ${from + into.length}`);
            const bytes = bytesOf(into);
            let done = 0;
            while (done < bytes.byteLength) {
              const n = readSync(file.fd, bytes, done, bytes.byteLength - done, s.position + from * width + done);
              if (n === 0) throw new Error('is cut short');
              done += n;
            }
          },
          async verify() {
            const chunk = new Uint8Array(Math.min(VERIFY_CHUNK, byteLength));
            let crc = 0;
            for (let at = 0; at < byteLength; at += chunk.byteLength) {
              const part = chunk.subarray(0, Math.min(chunk.byteLength, byteLength - at));
              if (!(await readExactly(part, s.position + at))) throw new Error('is cut short');
              crc = crc32(part, crc);
            }
            if (crc !== s.crc) throw new Error(`is damaged (the checksum of ${name} does not match)`);
          },
        };
      },
      release() {
        if (released) return;
        released = true;
        void Promise.allSettled(reads.values()).finally(() => closeFile(file));
      },
    };
    keepOpen = lazySections.size > 0;
    // On `file` itself, which every reader of a later section refers to: closed once none is left.
    if (keepOpen) OPEN_FILES.register(file, file.fd, file);
    const arrays = Object.fromEntries(now.slice(0, -1).map(({ name, array }) => [name, array as SnapshotArray]));
    return {
      generation: header.generation,
      content: { arrays, values: splitStringLists(deserialize(values) as Record<string, unknown>), later },
      bytes: size,
    };
  } finally {
    if (!keepOpen) closeFile(file);
  }
}

/** A descriptor a snapshot's later sections are read through, and whether it was closed. */
interface OpenFile {
  fd: number;
  closed: boolean;
}

const readInto = promisify(read);
const readAt = async (fd: number, into: Uint8Array, offset: number, length: number, position: number) =>
  (await readInto(fd, into, offset, length, position)).bytesRead;

function closeFile(file: OpenFile): void {
  if (file.closed) return;
  file.closed = true;
  OPEN_FILES.unregister(file);
  try {
    closeSync(file.fd);
  } catch {
    // already gone: nothing to give back
  }
}

/** Closes the descriptor of later sections whose structure was dropped without releasing them. */
const OPEN_FILES = new FinalizationRegistry<number>((fd) => {
  try {
    closeSync(fd);
  } catch {
    // already gone
  }
});

/** A section's element width and length, from the header. */
function sectionType(header: Header, name: string): { BYTES_PER_ELEMENT: number; length: number } {
  const { type, length } = header.arrays.find((a) => a.name === name)!;
  return { BYTES_PER_ELEMENT: ARRAY_TYPES[type].BYTES_PER_ELEMENT, length };
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
