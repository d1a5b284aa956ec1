import { appendFile, readFile, rename, writeFile } from 'node:fs/promises';

/**
 * What one write changed, by generation: the ids it wrote and removed, or `all` when it moved every
 * entry (a refit of the projection re-derives every small vector).
 */
export interface ChangeRecord {
  generation: number;
  upserted?: string[];
  deleted?: string[];
  all?: true;
}

/** The net change from one generation to a later one: ids to read again and ids gone. */
export interface NetChange {
  upserted: string[];
  deleted: string[];
}

/**
 * Appends a write's change to the log (one JSON line). The log is an aid, not a record: a line a
 * crash loses leaves a gap in the generations, and whoever needs that stretch rebuilds.
 */
export async function appendChange(path: string, change: ChangeRecord): Promise<void> {
  await appendFile(path, `${JSON.stringify(change)}\n`);
}

/**
 * The net change from generation `from` to `to`, when the log holds every generation between and
 * none of them moved everything; undefined otherwise (rebuild then).
 */
export async function changesBetween(path: string, from: number, to: number): Promise<NetChange | undefined> {
  if (to <= from) return to === from ? { upserted: [], deleted: [] } : undefined;
  const records = await readChanges(path);
  const byGeneration = new Map(records.filter((r) => r.generation > from && r.generation <= to).map((r) => [r.generation, r]));
  const upserted = new Set<string>();
  const deleted = new Set<string>();
  for (let g = from + 1; g <= to; g++) {
    const record = byGeneration.get(g);
    if (!record || record.all) return undefined;
    for (const id of record.deleted ?? []) {
      upserted.delete(id);
      deleted.add(id);
    }
    for (const id of record.upserted ?? []) {
      deleted.delete(id);
      upserted.add(id);
    }
  }
  return { upserted: [...upserted], deleted: [...deleted] };
}

/** Drops the lines of generations at most `through`, which no snapshot needs any more. */
export async function forgetChangesThrough(path: string, through: number): Promise<void> {
  const kept = (await readChanges(path)).filter((r) => r.generation > through);
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, kept.map((r) => `${JSON.stringify(r)}\n`).join(''));
  await rename(tmp, path);
}

/** The log's records; a line that does not parse (one cut short by a crash) counts as absent. */
async function readChanges(path: string): Promise<ChangeRecord[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return text.split('\n').flatMap((line) => {
    try {
      const record = JSON.parse(line) as ChangeRecord;
      return Number.isInteger(record.generation) ? [record] : [];
    } catch {
      return [];
    }
  });
}
