import { codeSpan, entryText } from '../../format/formatBundle.js';
import { MemcoreError } from '../../model/errors.js';

import { EXIT, INCLUDE_SECRET, print, sensitivityOf, type Command } from '../command.js';

const showCommand: Command = {
  options: INCLUDE_SECRET,
  args: [1, 1],
  uses: 'reads',
  async run({ engine }, [id], v, io) {
    const details = await (await engine()).entryDetails(id!, sensitivityOf(v));
    if (!details) throw new MemcoreError(`no entry with id "${id}"`, 'NOT_FOUND');
    const { entry } = details;
    print(io, v.json === true, details, () =>
      [
        entryText(entry),
        '',
        `confidence ${entry.confidence}, importance ${entry.importance}, sensitivity ${entry.sensitivity}${entry.pinned ? ', pinned' : ''}${entry.tags.length ? `, tags ${entry.tags.join(', ')}` : ''}`,
        `created ${entry.createdAt.toISOString()}, updated ${entry.updatedAt.toISOString()}${entry.validTo ? `, valid until ${entry.validTo.toISOString()}` : ''}${entry.source ? `, source ${entry.source}` : ''}`,
        ...(details.supersededBy ? [`superseded by ${details.supersededBy}`] : []),
        ...(details.links.length ? ['links:', ...details.links.map((l) => `  ${l.from} -${l.type}-> ${l.to}`)] : ['no links']),
        ...details.code.map((c) => `code: ${codeSpan(c.code)} (relevance ${c.relevance})`),
        ...details.goldenPaths.map((p) => `golden path: ${p.name} [${p.id}]`),
      ].join('\n'),
    );
    return EXIT.ok;
  },
};

export default showCommand;
