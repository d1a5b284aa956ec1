import { EXIT, num, UsageError, type Command } from '../command.js';

const feedbackCommand: Command = {
  options: {
    useful: { type: 'boolean', default: false },
    'not-useful': { type: 'boolean', default: false },
    score: { type: 'string' },
    bundle: { type: 'string' },
    note: { type: 'string' },
    task: { type: 'string' },
    report: { type: 'boolean', default: false },
  },
  args: [0, 1],
  uses: 'writes',
  async run({ engine }, [entryId], v, io) {
    const memory = await engine();
    if (v.report) {
      if (entryId !== undefined) throw new UsageError('feedback --report takes no entry id');
      const report = await memory.effectivenessReport();
      if (v.json) io.out(JSON.stringify(report, null, 2));
      else
        for (const kind of ['entries', 'sources', 'cores'] as const) {
          io.out(`${kind}:`);
          for (const r of report[kind]) io.out(`  ${r.value.toFixed(2)}  ${r.id}  (${r.signals} rating${r.signals === 1 ? '' : 's'})`);
        }
      return EXIT.ok;
    }
    const given = [v.useful === true, v['not-useful'] === true, v.score !== undefined].filter(Boolean).length;
    if (entryId === undefined || given !== 1)
      throw new UsageError('feedback needs an entry id and one of --useful, --not-useful or --score <0..1> (or --report)');
    const useful = v.useful ? true : v['not-useful'] ? false : num('score', v.score as string)!;
    const r = await memory.feedback({
      entryId,
      useful,
      ...(v.bundle !== undefined ? { bundleId: v.bundle as string } : {}),
      ...(v.note !== undefined ? { note: v.note as string } : {}),
      ...(v.task !== undefined ? { task: v.task as string } : {}),
    });
    if (v.json) io.out(JSON.stringify(r, null, 2));
    else
      io.out(
        `${r.entryId}: ${r.recorded ? 'recorded' : 'already rated from this bundle'}; effectiveness ${r.effectiveness.toFixed(2)} over ${r.signals} rating${r.signals === 1 ? '' : 's'}`,
      );
    return EXIT.ok;
  },
};

export default feedbackCommand;
