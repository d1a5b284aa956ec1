/**
 * Writes in team mode go to files first: `remember` writes the entry's file (a secret one to the
 * git-ignored local folder), `forget` writes a retraction's file or removes the entry's file,
 * `link` adds to the `links` of the entry's file; each file is written whole (temp + rename), then
 * the index follows it (TeamFolder.sync). So what an agent learns shows up in `git status`.
 */
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { parseDocument } from 'yaml';
import type { Embedder } from '../embed/embedder.js';
import { MemcoreError, invalidInput } from '../model/errors.js';
import { deriveEntryId, validateMemoryDocument, type RelationRecord } from '../model/memoryFile.js';
import type { Relation } from '../model/types.js';
import { resolveSensitivity } from '../recipe/searchOptions.js';
import type { Stores } from '../store/stores.js';
import { entryLinks } from '../engine/entryDetails.js';
import {
  DEFAULT_CORE,
  rememberDocument,
  retractionDocument,
  withEntryId,
  type RememberInput,
  type RememberResult,
} from '../engine/remember.js';
import { namedLinks } from '../engine/visibility.js';
import { entryFileText } from './entryFile.js';
import { writeFileAtomic, type TeamFolder } from './teamFolder.js';
import { entryFilePath } from './teamPaths.js';

const entryFile = (team: TeamFolder, core: string, id: string, secret: boolean) => entryFilePath(team.paths, core, id, secret);

/** The local folder ignores itself (a `.gitignore` of `*`), so nothing in it is ever committed, from any clone. */
async function ensureLocalIgnored(team: TeamFolder): Promise<void> {
  const ignore = join(team.paths.localDir, '.gitignore');
  if (!existsSync(ignore)) await writeFileAtomic(ignore, '# memcore: secret entries stay on this machine\n*\n');
}

/**
 * Writes files (text, or null to remove one), then brings the index up to them. When the index
 * cannot take one of them (a link to an unknown entry, say), every file is put back as it was and
 * the error names the file and line: a refused write leaves nothing behind.
 */
async function writeThenSync(
  team: TeamFolder,
  stores: Stores,
  embedder: Embedder,
  changes: { file: string; text: string | null }[],
): Promise<void> {
  const before = await Promise.all(changes.map(async (c) => (existsSync(c.file) ? readFile(c.file, 'utf8') : null)));
  const put = async (file: string, text: string | null) => (text === null ? rm(file, { force: true }) : writeFileAtomic(file, text));
  for (const c of changes) await put(c.file, c.text);
  const rels = new Set(changes.map((c) => relative(team.paths.root, c.file).split(sep).join('/')));
  let failure: Error | undefined;
  try {
    const problem = (await team.sync(stores, embedder)).problems.find((p) => rels.has(p.file));
    if (problem) failure = invalidInput(`${problem.file}${problem.line !== null ? `:${problem.line}` : ''}: ${problem.message}`);
  } catch (e) {
    failure = e as Error;
  }
  if (!failure) return;
  for (const [i, c] of changes.entries()) await put(c.file, before[i]!);
  await team.sync(stores, embedder);
  throw failure;
}

/** `remember` in team mode: the entry's file, then the index. The input is checked as `remember` checks it. */
export async function rememberToFile(team: TeamFolder, stores: Stores, embedder: Embedder, input: RememberInput): Promise<RememberResult> {
  const core = typeof input.core === 'string' ? input.core : DEFAULT_CORE;
  const id = input.id ?? deriveEntryId(core, String(input.title));
  // Validated as a memory file, as every remember is: a bad field is refused before any file is written.
  const { document } = validateMemoryDocument('remember', withEntryId(rememberDocument(input), id));
  const entry = document.entries[0]!;
  const secret = entry.sensitivity === 'secret';
  const file = entryFile(team, entry.coreId, id, secret);
  const elsewhere = entryFile(team, entry.coreId, id, !secret);
  const [old] = (await stores.table.read({ ids: [id] })).map((s) => s.entry);
  // What the entry's file held stays: links are added to, its creation date kept.
  const previous = existsSync(file) ? await readFile(file, 'utf8') : existsSync(elsewhere) ? await readFile(elsewhere, 'utf8') : '';
  const keptLinks = previous ? linksIn(previous) : [];
  const links = unique([
    ...keptLinks,
    ...document.relations.filter((r) => r.type !== 'REFERENCES_CODE').map((r) => ({ type: r.type, to: r.to, weight: r.weight })),
  ]);
  const code = document.codeLocations.map((c) => ({
    ...c,
    relevance: document.relations.find((r) => r.type === 'REFERENCES_CODE' && r.to === c.id)?.relevance ?? 1,
  }));
  const createdAt = entry.createdAt ?? old?.createdAt ?? new Date();
  if (secret) await ensureLocalIgnored(team);
  await writeThenSync(team, stores, embedder, [
    { file, text: entryFileText({ ...entry, createdAt }, links, code) },
    ...(existsSync(elsewhere) ? [{ file: elsewhere, text: null }] : []),
  ]);
  const { links: edges } = await namedLinks(stores, id, await entryLinks(stores.graph, id), resolveSensitivity(undefined));
  return { id, created: old === undefined, links: edges };
}

/** The `links` of an entry file's front matter, as written. */
function linksIn(text: string): Pick<Relation, 'type' | 'to' | 'weight'>[] {
  const end = text.indexOf('\n---', 3);
  if (!text.startsWith('---') || end < 0) return [];
  const fm = parseDocument(text.slice(4, end)).toJS() as { links?: Pick<Relation, 'type' | 'to' | 'weight'>[] } | null;
  return Array.isArray(fm?.links) ? fm.links : [];
}

function unique<T extends { type: string; to: string }>(links: T[]): T[] {
  return [...new Map(links.map((l) => [`${l.type}\u0000${l.to}`, l])).values()];
}

/** The file that holds entry `id`, if a file of the folder does. */
function fileOfEntry(team: TeamFolder, core: string, id: string): string | undefined {
  return [entryFile(team, core, id, false), entryFile(team, core, id, true)].find((f) => existsSync(f));
}

/** `forget` in team mode: a retraction's file that supersedes the entry, or the entry's file removed. */
export async function forgetInFiles(
  team: TeamFolder,
  stores: Stores,
  embedder: Embedder,
  id: string,
  mode: 'supersede' | 'delete',
  reason: string | undefined,
): Promise<{ id: string; mode: 'supersede' | 'delete'; retractionId?: string } | undefined> {
  const [old] = (await stores.table.read({ ids: [id] })).map((s) => s.entry);
  if (!old) throw new MemcoreError(`no entry with id "${id}"`, 'NOT_FOUND');
  const file = fileOfEntry(team, old.coreId, id);
  if (mode === 'delete') {
    // An entry no file holds (ingested from elsewhere) is deleted from the index as before.
    if (!file) return undefined;
    await writeThenSync(team, stores, embedder, [{ file, text: null }]);
    return { id, mode };
  }
  const doc = retractionDocument(old, reason!);
  const retraction = doc.entries![0]!;
  const retractionId = deriveEntryId(old.coreId, retraction.title);
  const { document } = validateMemoryDocument('forget', { ...doc, entries: [{ ...retraction, id: retractionId }] });
  const secret = old.sensitivity === 'secret';
  if (secret) await ensureLocalIgnored(team);
  const target = entryFile(team, old.coreId, retractionId, secret);
  const text = entryFileText({ ...document.entries[0]!, createdAt: new Date() }, [{ type: 'SUPERSEDES', to: id }]);
  await writeThenSync(team, stores, embedder, [{ file: target, text }]);
  return { id, mode, retractionId };
}

/**
 * `link` in team mode: relations from entries that files hold are added to those files' `links`
 * (comments and the rest of the front matter kept); the others are returned for the index.
 */
export async function linkInFiles(
  team: TeamFolder,
  stores: Stores,
  embedder: Embedder,
  relations: RelationRecord[],
): Promise<RelationRecord[]> {
  const rest: RelationRecord[] = [];
  const edits = new Map<string, RelationRecord[]>();
  for (const r of relations) {
    const [from] =
      r.type === 'RELATED' || r.type === 'DEPENDS_ON' || r.type === 'SUPERSEDES' || r.type === 'IMPLEMENTS'
        ? (await stores.table.read({ ids: [r.from] })).map((s) => s.entry)
        : [];
    const file = from ? fileOfEntry(team, from.coreId, from.id) : undefined;
    if (!file || Object.keys(r).some((k) => !['type', 'from', 'to', 'weight'].includes(k))) rest.push(r);
    else edits.set(file, [...(edits.get(file) ?? []), r]);
  }
  const changes: { file: string; text: string }[] = [];
  for (const [file, added] of edits) {
    const text = await readFile(file, 'utf8');
    const end = text.indexOf('\n---', 3);
    const fm = parseDocument(text.slice(4, end + 1));
    const have = new Set(linksIn(text).map((l) => `${l.type}\u0000${l.to}`));
    for (const r of added) {
      if (have.has(`${r.type}\u0000${r.to}`)) continue;
      const link = { type: r.type, to: r.to, ...(r.weight !== undefined ? { weight: r.weight } : {}) };
      if (fm.has('links')) fm.addIn(['links'], fm.createNode(link));
      else fm.set('links', fm.createNode([link]));
    }
    changes.push({ file, text: `---\n${fm.toString({ lineWidth: 0 })}${text.slice(end + 1)}` });
  }
  if (changes.length > 0) await writeThenSync(team, stores, embedder, changes);
  return rest;
}
