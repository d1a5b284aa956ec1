import type { EmbedderConfig } from '../../engine/memoryEngine.js';

import { EXIT, UsageError, int, print, type Command } from '../command.js';

const reembedCommand: Command = {
  options: {
    embedder: { type: 'string' },
    'base-url': { type: 'string' },
    dimensions: { type: 'string' },
    truncatable: { type: 'boolean', default: false },
  },
  args: [0, 0],
  uses: 'reads',
  async run({ engine }, _args, v, io) {
    const spec = v.embedder as string | undefined;
    if (spec === undefined)
      throw new UsageError(
        'reembed needs --embedder local or --embedder openai:<model> (with --dimensions, and --base-url for a local server)',
      );
    let embedder: EmbedderConfig;
    if (spec === 'local') embedder = { provider: 'local' };
    else if (spec.startsWith('openai:') && spec.length > 7) {
      const dimensions = int('dimensions', v.dimensions as string | undefined);
      if (dimensions === undefined) throw new UsageError('--embedder openai:<model> needs --dimensions');
      embedder = {
        provider: 'openai',
        model: spec.slice(7),
        dimensions,
        ...(typeof v['base-url'] === 'string' ? { baseURL: v['base-url'] } : {}),
        ...(v.truncatable ? { truncatable: true } : {}),
        ...(process.env.MEMCORE_EMBED_API_KEY ? { apiKey: process.env.MEMCORE_EMBED_API_KEY } : {}),
      };
    } else throw new UsageError(`--embedder must be local or openai:<model>, got "${spec}"`);
    const report = await (await engine()).reembed(embedder, { onProgress: (m) => io.isTTY && !v.json && io.err(m) });
    print(
      io,
      v.json === true,
      report,
      () => `re-embedded ${report.entries} entries with ${report.to} (was ${report.from}; ${report.embedded} texts sent to the model)`,
    );
    return EXIT.ok;
  },
};

export default reembedCommand;
