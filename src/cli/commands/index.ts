import { EXIT, int, print, type Command } from '../command.js';

const indexCommand: Command = {
  options: { 'ann-min-rows': { type: 'string' } },
  args: [0, 0],
  uses: 'reads',
  async run({ engine }, _args, v, io) {
    const r = await (
      await engine()
    ).index({
      ...(v['ann-min-rows'] !== undefined ? { annMinRows: int('ann-min-rows', v['ann-min-rows'] as string) } : {}),
      onProgress: (m) => io.isTTY && !v.json && io.err(m),
    });
    print(io, v.json === true, r, () =>
      r.rows === 0
        ? 'the database is empty: nothing to index'
        : `${r.rows} entries: scalar indexes on ${r.scalar.join(', ')}, ${r.ann ? 'ANN index on vector_small' : 'no ANN index (exact scan is faster at this size)'}; small vectors by ${r.projection}` +
          (r.snapshots.length > 0
            ? `\nsnapshots written: ${r.snapshots.map((s) => `${s.structure} (${(s.bytes / 1024 / 1024).toFixed(1)} MB)`).join(', ')}`
            : '\nsnapshots already current'),
    );
    return EXIT.ok;
  },
};

export default indexCommand;
