import { EXIT, INCLUDE_SECRET, UsageError, int, print, relationList, sensitivityOf, type Command } from '../command.js';

const traverseCommand: Command = {
  options: { depth: { type: 'string' }, relations: { type: 'string' }, direction: { type: 'string' }, ...INCLUDE_SECRET },
  args: [1, 1],
  uses: 'reads',
  async run({ engine }, [id], v, io) {
    const direction = v.direction as string | undefined;
    if (direction !== undefined && !['outgoing', 'incoming', 'both'].includes(direction))
      throw new UsageError(`--direction must be outgoing, incoming or both, got "${direction}"`);
    const hits = await (
      await engine()
    ).traverse(id!, {
      ...(v.depth !== undefined ? { depth: int('depth', v.depth as string) } : {}),
      ...(relationList(v.relations) ? { relationTypes: relationList(v.relations) } : {}),
      ...(direction ? { direction: direction as 'outgoing' | 'incoming' | 'both' } : {}),
      ...sensitivityOf(v),
    });
    print(io, v.json === true, hits, () =>
      hits.length === 0
        ? `nothing reachable from ${id}`
        : hits
            .map(
              (h) =>
                `${h.hops} hop${h.hops === 1 ? ' ' : 's'}  [${h.entry.entryType}] ${h.entry.title} (${h.entry.id})\n      ${h.path.map((p) => `${p.from} -${p.type}-> ${p.to}`).join(', ')}`,
            )
            .join('\n'),
    );
    return EXIT.ok;
  },
};

export default traverseCommand;
