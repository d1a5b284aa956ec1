import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Write-intent journal that keeps LanceDB and Kuzu consistent: an intent is written before
 * either store is touched and removed after both are, so a crash in between is replayed on the
 * next open. Every intent must be idempotent to replay.
 */
export class Journal<Intent> {
  private counter = 0;

  constructor(private readonly dir: string) {}

  async begin(intent: Intent): Promise<string> {
    await mkdir(this.dir, { recursive: true });
    const name = `${Date.now().toString().padStart(15, '0')}-${process.pid}-${this.counter++}.json`;
    const tmp = join(this.dir, `${name}.tmp`);
    await writeFile(tmp, JSON.stringify(intent));
    await rename(tmp, join(this.dir, name));
    return name;
  }

  async done(name: string): Promise<void> {
    await rm(join(this.dir, name), { force: true });
  }

  /** Unfinished intents, oldest first. Half-written ones (.tmp) never reached a store and are dropped. */
  async pending(): Promise<{ name: string; intent: Intent }[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    const out: { name: string; intent: Intent }[] = [];
    for (const name of names.sort()) {
      if (name.endsWith('.tmp')) {
        await rm(join(this.dir, name), { force: true });
        continue;
      }
      if (!name.endsWith('.json')) continue;
      out.push({ name, intent: JSON.parse(await readFile(join(this.dir, name), 'utf8')) as Intent });
    }
    return out;
  }
}
