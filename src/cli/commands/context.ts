import { resolve } from 'node:path';
import { resolveConfig } from '../../config/config.js';
import { formatContext, type ContextStyle } from '../../format/formatContext.js';
import { type ContextBundle } from '../../model/types.js';

import { CONTEXT_OPTIONS, EXIT, UsageError, contextOptions, int, type Command } from '../command.js';

const contextCommand: Command = {
  options: {
    ...CONTEXT_OPTIONS,
    'no-code': { type: 'boolean', default: false },
    llm: { type: 'boolean', default: false },
    'max-select': { type: 'string' },
    format: { type: 'string' },
    diff: { type: 'boolean', default: false },
    staged: { type: 'boolean', default: false },
    repo: { type: 'string' },
  },
  args: [0, 1],
  uses: 'reads',
  async run({ engine, cwd }, [task], v, io) {
    const style = (v.format as string | undefined) ?? (v.json ? 'json' : 'text');
    if (!['text', 'prompt', 'markdown', 'json'].includes(style))
      throw new UsageError(`--format must be text, prompt, markdown or json, got "${style}"`);
    const maxSelect = v['max-select'] !== undefined ? int('max-select', v['max-select'] as string) : undefined;
    const llmFilter = v.llm ? (maxSelect !== undefined ? { maxSelect } : true) : undefined;
    const options = { ...contextOptions(v), ...(v['no-code'] ? { includeCode: false } : {}), ...(llmFilter ? { llmFilter } : {}) };
    const fromDiff = v.diff === true || v.staged === true;
    if (!fromDiff && task === undefined)
      throw new UsageError('context needs a task in quotes, or --diff [<range>] / --staged for the context of a change');
    if (!fromDiff && v.repo !== undefined) throw new UsageError('--repo goes with --diff or --staged');
    let bundle: ContextBundle;
    if (fromDiff) {
      const repo = resolve(cwd, (v.repo as string | undefined) ?? (resolveConfig({ cwd }).values.repo as string | undefined) ?? '.');
      const diff = await (
        await engine()
      ).contextForDiff({ repo, ...(task !== undefined ? { range: task } : {}), ...(v.staged ? { staged: true } : {}) }, options);
      if (style === 'text')
        for (const c of diff.changes)
          io.out(
            `Changed: ${c.change} ${c.oldPath ? `${c.oldPath} → ` : ''}${c.path}${c.symbols.length > 0 ? ` (${c.symbols.join(', ')})` : ''}`,
          );
      bundle = diff;
    } else bundle = await (await engine()).buildTaskContext(task!, options);
    const text = formatContext(bundle, { style: style as ContextStyle });
    if (text === '') io.err('no relevant memory for this task (the prompt block is empty)');
    else io.out(text);
    // The text view lists the notes itself; the others are for a prompt or a program.
    if (bundle.degraded && style !== 'text') for (const note of bundle.notes) io.err(`note: ${note}`);
    return EXIT.ok;
  },
};

export default contextCommand;
