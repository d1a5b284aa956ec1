/**
 * `memcore forget <id>`: takes an entry out of answers. With --reason it is superseded by a
 * retraction that keeps the reason; with --delete it is removed. In team mode both are files:
 * the retraction's file is written, or the entry's file removed (docs/team.md).
 */
import { EXIT, UsageError, type Command } from '../command.js';

export const forgetCommand: Command = {
  options: { reason: { type: 'string' }, delete: { type: 'boolean', default: false } },
  args: [1, 1],
  uses: 'writes',
  async run({ engine }, [id], v, io) {
    if (v.delete && v.reason !== undefined) throw new UsageError('forget takes --reason (supersede) or --delete, not both');
    if (!v.delete && typeof v.reason !== 'string') throw new UsageError('forget needs --reason "<why it no longer holds>" or --delete');
    const memory = await engine();
    const r = await memory.forget(id!, v.delete ? { mode: 'delete' } : { reason: v.reason as string });
    if (v.json) io.out(JSON.stringify(r, null, 2));
    else io.out(r.mode === 'delete' ? `deleted ${r.id}` : `retired ${r.id}; the reason is kept in ${r.retractionId}`);
    return EXIT.ok;
  },
};
