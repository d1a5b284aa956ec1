import { randomUUID } from 'node:crypto';
import { invalidInput, MemcoreError } from '../model/errors.js';
import { checkId } from '../model/ids.js';
import { checkOptionNames } from '../model/options.js';
import type { Stores } from '../store/stores.js';
import type { FeedbackSignal } from './effectiveness.js';
import type { GapLog } from './gapLog.js';
import type { FeedbackInput } from '../engine/engineOptions.js';

/** Characters of a rated task kept with the rating. */
const RATED_TASK_CHARS = 500;

/**
 * MemoryEngine.feedback: checks the rating, writes it through the journal unless the same entry
 * was already rated from the same bundle, and tells the gap log. Returns the entry's
 * effectiveness after it.
 */
export async function recordFeedback(
  stores: Stores,
  gapLog: GapLog,
  input: FeedbackInput,
): Promise<{ entryId: string; recorded: boolean; effectiveness: number; signals: number }> {
  checkOptionNames('feedback', input, ['entryId', 'useful', 'bundleId', 'note', 'task']);
  checkId('feedback: entryId', input.entryId);
  const useful = input.useful === true ? 1 : input.useful === false ? 0 : input.useful;
  if (typeof useful !== 'number' || !(useful >= 0 && useful <= 1))
    throw invalidInput(`feedback: useful must be true, false or a number from 0 to 1, got ${JSON.stringify(input.useful)}`);
  if (input.bundleId !== undefined && (typeof input.bundleId !== 'string' || !/^b_[0-9a-f]{16}$/.test(input.bundleId)))
    throw invalidInput(`feedback: bundleId must be a bundle's id (b_ and 16 hex digits), got ${JSON.stringify(input.bundleId)}`);
  if (input.note !== undefined && (typeof input.note !== 'string' || input.note.length > 2_000))
    throw invalidInput('feedback: note must be a string of at most 2,000 characters');
  if (input.task !== undefined && (typeof input.task !== 'string' || input.task.trim() === '' || input.task.length > 2_000))
    throw invalidInput('feedback: task must be a non-empty string of at most 2,000 characters');
  // The task rated for: as given, else the bundle's when this process handed it out.
  const task = input.task ?? (input.bundleId ? gapLog.taskOf(input.bundleId) : undefined);
  const [entry] = await stores.table.read({ ids: [input.entryId] });
  if (!entry) throw new MemcoreError(`feedback: no entry with id ${JSON.stringify(input.entryId)}`, 'NOT_FOUND');
  const key = input.bundleId ? `${input.bundleId}\u0000${input.entryId}` : `${randomUUID()}`;
  const effectiveness = await stores.effectiveness();
  const recorded = !effectiveness.keys.has(key);
  if (recorded) {
    const signal: FeedbackSignal = {
      key,
      at: new Date().toISOString(),
      entryId: entry.entry.id,
      coreId: entry.entry.coreId,
      source: entry.entry.source,
      bundleId: input.bundleId ?? null,
      useful,
      ...(input.note !== undefined ? { note: input.note } : {}),
      ...(task !== undefined ? { task: task.slice(0, RATED_TASK_CHARS) } : {}),
    };
    await stores.apply({ op: 'feedback', signals: [signal] });
    if (input.bundleId) await gapLog.rated(input.bundleId, entry.entry.id, useful);
  }
  const now = (await stores.effectiveness()).of(entry.entry.id)!;
  return { entryId: entry.entry.id, recorded, effectiveness: now.value, signals: now.signals };
}
