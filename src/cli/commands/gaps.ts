import { EXIT, date, type Command } from '../command.js';

const gapsCommand: Command = {
  options: { since: { type: 'string' } },
  args: [0, 0],
  uses: 'reads',
  async run({ engine }, _, v, io) {
    const since = date('since', v.since as string | undefined);
    const groups = await (await engine()).gaps(since ? { since } : {});
    if (v.json) io.out(JSON.stringify(groups, null, 2));
    else if (groups.length === 0) io.out('no unanswered tasks logged');
    else {
      io.out(
        `${groups.length} gap${groups.length === 1 ? '' : 's'}: tasks memory could not answer, similar ones together, most asked first`,
      );
      for (const g of groups) {
        io.out(`${String(g.count).padStart(4)}×  ${g.task.replace(/\s+/g, ' ').slice(0, 120)}  (last ${g.lastAt.slice(0, 10)})`);
        for (const other of [...new Set(g.tasks.map((t) => t.task))].filter((t) => t !== g.task).slice(0, 3))
          io.out(`         also: ${other.replace(/\s+/g, ' ').slice(0, 110)}`);
      }
    }
    return EXIT.ok;
  },
};

export default gapsCommand;
