/**
 * Group commit, the engine's side: the writes queued together (AccessGate.grouped) are prepared
 * one after another, in the order they came, each against the committed stores, and their upserts
 * committed as one (Stores.openGroup, WriteGroup). A write that fails while others of its group
 * came first may have failed for want of theirs (an entry one of them creates), so it and every
 * write after it run again as the next group; the first write of a group fails for good. A write
 * that is not an upsert a group can merge (a delete, feedback, a sync) commits alone.
 */
import type { QueuedWrite } from './accessGate.js';
import type { Stores } from '../store/stores.js';

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export async function runInGroups(stores: () => Stores, writes: readonly QueuedWrite[]): Promise<void> {
  let rest = writes;
  while (rest.length > 0) {
    const s = stores();
    const group = s.openGroup();
    const answers: Promise<void>[] = [];
    let next = 0;
    for (; next < rest.length; next++) {
      const write = rest[next]!;
      const offered = group.nextOffer();
      let outcome: Outcome | undefined;
      const settled = write.work().then(
        (value) => void (outcome = { ok: true, value }),
        (error: unknown) => void (outcome = { ok: false, error }),
      );
      const how = await Promise.race([offered, settled.then(() => 'settled' as const)]);
      if (how === 'settled') {
        if (!outcome!.ok && next > 0) break; // again, first of the next group
        answer(write, outcome!);
        continue;
      }
      answers.push(settled.then(() => answer(write, outcome!)));
      if (how === 'alone') {
        // Committed by itself, at once: what comes after it waits until it is done.
        await settled;
        next++;
        break;
      }
    }
    await s.commitGroup(group);
    await Promise.all(answers);
    rest = rest.slice(next);
  }
}

function answer(write: QueuedWrite, outcome: Outcome): void {
  if (outcome.ok) write.resolve(outcome.value);
  else write.reject(outcome.error);
}
