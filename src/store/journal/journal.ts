import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { MemcoreError } from '../../model/errors.js';
import { parseStoreFile } from '../storeFiles.js';

/** First bytes of an intent file with binary vectors (`.journal`). */
const MAGIC = 'MCJ1';
/** Float32Array's own byte order is the file's: its bytes are copied whole. */
const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * Write-intent journal that keeps LanceDB and Kuzu consistent: an intent is written before
 * either store is touched and removed after both are, so a crash in between is replayed on the
 * next open. Every intent must be idempotent to replay.
 *
 * An intent is JSON; the vectors it carries travel beside it as raw float32 `blobs`, which the
 * intent refers to by index. JSON of the vectors, even as base64 strings, was ~15% of the time of
 * ingesting 100K entries (encoding, then escaping ~15 MB of string a batch of 5,000). A
 * `.journal` file is: "MCJ1", the JSON's byte length and the blob count (uint32 LE), each blob's
 * length in floats (uint32 LE), the JSON, zero padding to a multiple of 4 bytes, the blobs' floats
 * (LE). Plain `.json` intents (no blobs), which earlier versions wrote, are still replayed.
 */
export class Journal<Intent> {
  private counter = 0;

  constructor(private readonly dir: string) {}

  /**
   * Journals an intent, durably: the file's data and then the folder's entry for it are synced to
   * disk before this returns, so a write acknowledged after it survives a power cut, not only a
   * killed process. Returns its name, or throws a STORE error when the folder cannot take it
   * (nothing was written then).
   */
  async begin(intent: Intent, blobs: readonly Float32Array[] = []): Promise<string> {
    const name = `${Date.now().toString().padStart(15, '0')}-${process.pid}-${this.counter++}.journal`;
    const tmp = join(this.dir, `${name}.tmp`);
    try {
      await mkdir(this.dir, { recursive: true });
      const file = await open(tmp, 'w');
      try {
        await file.writeFile(encodeIntent(JSON.stringify(intent), blobs));
        await file.datasync();
      } finally {
        await file.close();
      }
      await rename(tmp, join(this.dir, name));
      await syncFolder(this.dir);
    } catch (e) {
      await rm(tmp, { force: true }).catch(() => undefined);
      throw journalFailure(this.dir, 'cannot write the intent of this write, so nothing was written', e);
    }
    return name;
  }

  async done(name: string): Promise<void> {
    try {
      await rm(join(this.dir, name), { force: true });
    } catch (e) {
      throw journalFailure(this.dir, `cannot remove ${name} after the write; the next open replays it, which is safe`, e);
    }
  }

  /** Unfinished intents, oldest first. Half-written ones (.tmp) never reached a store and are dropped. */
  async pending(): Promise<{ name: string; intent: Intent; blobs: Float32Array[] }[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    const out: { name: string; intent: Intent; blobs: Float32Array[] }[] = [];
    for (const name of names.sort()) {
      if (name.endsWith('.tmp')) {
        await rm(join(this.dir, name), { force: true });
        continue;
      }
      const path = join(this.dir, name);
      if (name.endsWith('.json'))
        out.push({ name, intent: parseStoreFile<Intent>('intent', path, await readFile(path, 'utf8')), blobs: [] });
      else if (name.endsWith('.journal')) {
        const { json, blobs } = decodeIntent(await readFile(path), name);
        out.push({ name, intent: parseStoreFile<Intent>('intent', path, json), blobs });
      }
    }
    return out;
  }
}

/** Makes a rename in `dir` durable (where the platform lets a folder be opened and synced). */
async function syncFolder(dir: string): Promise<void> {
  let folder;
  try {
    folder = await open(dir, 'r');
  } catch {
    return; // Windows cannot open a folder: its renames are as durable as it makes them
  }
  try {
    await folder.sync().catch(() => undefined);
  } finally {
    await folder.close();
  }
}

function journalFailure(dir: string, what: string, e: unknown): MemcoreError {
  const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  return new MemcoreError(`${dir}: the journal ${what} (${code}); check that the folder is writable and the disk has room`, 'STORE');
}

function encodeIntent(json: string, blobs: readonly Float32Array[]): Buffer {
  const jsonBytes = Buffer.byteLength(json);
  const headerBytes = 12 + 4 * blobs.length;
  const dataAt = Math.ceil((headerBytes + jsonBytes) / 4) * 4;
  const out = Buffer.alloc(dataAt + 4 * blobs.reduce((sum, b) => sum + b.length, 0));
  out.write(MAGIC, 0, 'latin1');
  out.writeUInt32LE(jsonBytes, 4);
  out.writeUInt32LE(blobs.length, 8);
  blobs.forEach((b, i) => out.writeUInt32LE(b.length, 12 + 4 * i));
  out.write(json, headerBytes, 'utf8');
  let at = dataAt;
  for (const b of blobs) {
    if (LITTLE_ENDIAN) Buffer.from(b.buffer, b.byteOffset, b.byteLength).copy(out, at);
    else b.forEach((x, i) => out.writeFloatLE(x, at + 4 * i));
    at += b.byteLength;
  }
  return out;
}

function decodeIntent(bytes: Buffer, name: string): { json: string; blobs: Float32Array[] } {
  const broken = () =>
    new MemcoreError(
      `journal intent ${name} is damaged; moving it out of the journal folder opens the database without it (the write it held may then be partly applied: ingest its source again)`,
      'STORE',
    );
  if (bytes.length < 12 || bytes.toString('latin1', 0, 4) !== MAGIC) throw broken();
  const jsonBytes = bytes.readUInt32LE(4);
  const count = bytes.readUInt32LE(8);
  const headerBytes = 12 + 4 * count;
  if (headerBytes + jsonBytes > bytes.length) throw broken();
  const lengths = Array.from({ length: count }, (_, i) => bytes.readUInt32LE(12 + 4 * i));
  let at = Math.ceil((headerBytes + jsonBytes) / 4) * 4;
  if (at + 4 * lengths.reduce((sum, n) => sum + n, 0) !== bytes.length) throw broken();
  const blobs = lengths.map((n) => {
    const blob = LITTLE_ENDIAN
      ? new Float32Array(bytes.buffer.slice(bytes.byteOffset + at, bytes.byteOffset + at + 4 * n))
      : Float32Array.from({ length: n }, (_, i) => bytes.readFloatLE(at + 4 * i));
    at += 4 * n;
    return blob;
  });
  return { json: bytes.toString('utf8', headerBytes, headerBytes + jsonBytes), blobs };
}
