import type { SearchHit } from '../../engine/memoryEngine.js';
import { describeReason } from '../../format/formatBundle.js';
import { presetOptions } from '../../recipe/presets.js';
import { PRESET_NAMES, type PresetName } from '../../recipe/searchRecipe.js';

import { EXIT, filterOptions, FILTERS, FilterValues, int, listLine, print, UsageError, type Command } from '../command.js';

const searchCommand: Command = {
  options: {
    ...FILTERS,
    limit: { type: 'string' },
    mode: { type: 'string', default: 'hybrid' },
    candidates: { type: 'string' },
    fusion: { type: 'string' },
    mentions: { type: 'boolean' },
    codebase: { type: 'string', multiple: true },
    'no-entries': { type: 'boolean', default: false },
  },
  args: [1, 1],
  uses: 'reads',
  async run({ engine }, [query], v, io) {
    if (v.mode === 'code') {
      const { CODE_SEARCH_FLAGS, searchCode } = await import('./searchCode.js');
      const other = Object.keys(v).find((k) => !CODE_SEARCH_FLAGS.includes(k) && v[k] !== undefined && v[k] !== false);
      if (other) throw new UsageError(`--${other} does not apply to --mode code`);
      const r = await searchCode(await engine(), query!, {
        ...(v.limit !== undefined ? { limit: int('limit', v.limit as string)! } : {}),
        ...(v.codebase ? { codebases: v.codebase as string[] } : {}),
        entries: v['no-entries'] !== true,
        includeSecret: v['include-secret'] === true,
      });
      print(io, v.json === true, r.hits, r.text);
      return EXIT.ok;
    }
    const mode = v.mode as PresetName;
    if (v.codebase || v['no-entries']) throw new UsageError(`--${v.codebase ? 'codebase' : 'no-entries'} applies to --mode code only`);
    if (!PRESET_NAMES.includes(mode)) throw new UsageError(`--mode must be one of ${PRESET_NAMES.join(', ')}, got "${String(v.mode)}"`);
    const accepts = presetOptions(mode);
    const given = {
      ...(v.candidates !== undefined ? { candidates: int('candidates', v.candidates as string) } : {}),
      ...(v.fusion !== undefined ? { fusion: v.fusion as 'rrf' | 'weighted' } : {}),
      ...(v.mentions ? { mentions: true } : {}),
    };
    for (const option of Object.keys(given))
      if (!accepts.includes(option)) throw new UsageError(`--${option} does not apply to --mode ${mode}`);
    if (v.fusion !== undefined && v.fusion !== 'rrf' && v.fusion !== 'weighted')
      throw new UsageError(`--fusion must be rrf or weighted, got "${String(v.fusion)}"`);
    const limit = v.limit !== undefined ? int('limit', v.limit as string) : undefined;
    const overrides = {
      ...filterOptions(v as FilterValues),
      ...given,
      ...(limit !== undefined ? (accepts.includes('limit') ? { limit } : { maxEntries: limit }) : {}),
    };
    const memory = await engine();
    let hits: SearchHit[];
    let result: unknown;
    if (mode === 'matryoshka') {
      // Its JSON keeps the stage-1 count and the small-vector length.
      const r = await memory.matryoshkaSearch(query!, overrides);
      hits = r.hits;
      result = r;
      if (!v.json) io.err(`stage 1: ${r.stage1Candidates} candidates on ${r.smallDimensions}-d vectors`);
    } else {
      const r = await memory.search(query!, { recipe: mode, overrides });
      for (const note of r.notes) io.err(`note: ${note}`);
      result = hits = r;
    }
    print(io, v.json === true, result, () =>
      hits.length === 0
        ? 'no matching entries'
        : hits.map((h, i) => `${listLine(i, h.score, h.entry)}  ← ${h.why.map(describeReason).join('; ')}`).join('\n'),
    );
    return EXIT.ok;
  },
};

export default searchCommand;
