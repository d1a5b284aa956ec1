/**
 * `memcore remember`: one entry from the command line. In team mode it is written as a file of the
 * memory folder (docs/team.md), to commit with the change it is about; a secret one to the
 * git-ignored local folder.
 */
import { relative, sep } from 'node:path';
import { CONFIDENCE_LEVELS, ENTRY_EDGE_TYPES, SENSITIVITY_LEVELS, type Confidence, type Sensitivity } from '../../model/types.js';
import type { RememberInput } from '../../engine/remember.js';
import { EXIT, UsageError, type Command } from '../command.js';

/** `--link TYPE:ID`, e.g. `DEPENDS_ON:auth-revocation-store`. */
function linksOf(values: string[]): Pick<RememberInput, 'related' | 'dependsOn' | 'supersedes'> {
  const out = { related: [] as string[], dependsOn: [] as string[], supersedes: [] as string[] };
  for (const v of values) {
    const colon = v.indexOf(':');
    const type = v.slice(0, colon);
    if (colon < 0 || !(ENTRY_EDGE_TYPES as readonly string[]).includes(type) || colon === v.length - 1)
      throw new UsageError(`--link must be TYPE:ID with TYPE one of ${ENTRY_EDGE_TYPES.join(', ')}, got "${v}"`);
    const to = v.slice(colon + 1);
    (type === 'RELATED' ? out.related : type === 'DEPENDS_ON' ? out.dependsOn : out.supersedes).push(to);
  }
  return {
    ...(out.related.length ? { related: out.related } : {}),
    ...(out.dependsOn.length ? { dependsOn: out.dependsOn } : {}),
    ...(out.supersedes.length ? { supersedes: out.supersedes } : {}),
  };
}

export const rememberCommand: Command = {
  options: {
    title: { type: 'string' },
    content: { type: 'string' },
    core: { type: 'string' },
    type: { type: 'string' },
    id: { type: 'string' },
    tag: { type: 'string', multiple: true },
    importance: { type: 'string' },
    confidence: { type: 'string' },
    sensitivity: { type: 'string' },
    pinned: { type: 'boolean', default: false },
    link: { type: 'string', multiple: true },
  },
  args: [0, 0],
  uses: 'writes',
  async run({ engine }, _args, v, io) {
    if (typeof v.title !== 'string' || typeof v.content !== 'string') throw new UsageError('remember needs --title and --content');
    const importance = v.importance === undefined ? undefined : Number(v.importance);
    if (importance !== undefined && !(Number.isInteger(importance) && importance >= 1 && importance <= 10))
      throw new UsageError(`--importance must be an integer from 1 to 10, got "${String(v.importance)}"`);
    if (v.confidence !== undefined && !(CONFIDENCE_LEVELS as readonly string[]).includes(v.confidence as string))
      throw new UsageError(`--confidence must be one of ${CONFIDENCE_LEVELS.join(', ')}`);
    if (v.sensitivity !== undefined && !(SENSITIVITY_LEVELS as readonly string[]).includes(v.sensitivity as string))
      throw new UsageError(`--sensitivity must be one of ${SENSITIVITY_LEVELS.join(', ')}`);
    const memory = await engine();
    const r = await memory.remember({
      title: v.title,
      content: v.content,
      source: 'cli',
      ...(v.core !== undefined ? { core: v.core as string } : {}),
      ...(v.type !== undefined ? { type: v.type as string } : {}),
      ...(v.id !== undefined ? { id: v.id as string } : {}),
      ...(v.tag !== undefined ? { tags: v.tag as string[] } : {}),
      ...(importance !== undefined ? { importance } : {}),
      ...(v.confidence !== undefined ? { confidence: v.confidence as Confidence } : {}),
      ...(v.sensitivity !== undefined ? { sensitivity: v.sensitivity as Sensitivity } : {}),
      ...(v.pinned ? { pinned: true } : {}),
      ...linksOf((v.link as string[] | undefined) ?? []),
    });
    const folder = await memory.memoryFolder();
    const { entryFilePath } = await import('../../team/teamPaths.js');
    const written = folder && entryFilePath(folder, (v.core as string | undefined) ?? 'default', r.id, v.sensitivity === 'secret');
    const file = written && relative(folder.root, written).split(sep).join('/');
    if (v.json) io.out(JSON.stringify({ ...r, ...(file ? { file } : {}) }, null, 2));
    else
      io.out(
        `${r.created ? 'remembered' : 'updated'} ${r.id}${file ? ` in ${file}` : ''}` +
          (r.links.length ? `; links: ${r.links.map((l) => `${l.from} -${l.type}-> ${l.to}`).join(', ')}` : ''),
      );
    return EXIT.ok;
  },
};
