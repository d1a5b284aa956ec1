import { EXIT, FILTERS, FilterValues, INCLUDE_SECRET, filterOptions, int, print, type Command } from '../command.js';

const listCommand: Command = {
  options: {
    core: FILTERS.core,
    type: FILTERS.type,
    tag: FILTERS.tag,
    'as-of': FILTERS['as-of'],
    ...INCLUDE_SECRET,
    limit: { type: 'string' },
    offset: { type: 'string' },
  },
  args: [0, 0],
  uses: 'reads',
  async run({ engine }, _args, v, io) {
    const entries = await (
      await engine()
    ).listEntries({
      ...filterOptions(v as FilterValues),
      ...(v.limit !== undefined ? { limit: int('limit', v.limit as string) } : {}),
      ...(v.offset !== undefined ? { offset: int('offset', v.offset as string) } : {}),
    });
    print(io, v.json === true, entries, () =>
      entries.length === 0 ? 'no entries' : entries.map((e) => `[${e.entryType}] ${e.title}  (${e.coreId}, id ${e.id})`).join('\n'),
    );
    return EXIT.ok;
  },
};

export default listCommand;
