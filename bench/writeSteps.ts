/**
 * Timers around each store call a write makes (bench/writes.ts --steps): every async method of
 * the stores' classes is wrapped, and its time summed while `on` is set. Times are inclusive (a
 * call's time holds the calls it makes), so the rows overlap; they say where a write waits.
 */
import { EmbeddingCacheTable } from '../src/store/lance/embeddingCacheTable.js';
import { EntriesTable } from '../src/store/lance/entriesTable.js';
import { CypherGraphDriver } from '../src/store/graph/cypherGraphDriver.js';
import { ResidentGraph } from '../src/store/graph/residentGraph.js';
import { Journal } from '../src/store/journal/journal.js';
import { Residents } from '../src/store/resident/residents.js';
import { Stores } from '../src/store/stores.js';

export interface StepTimes {
  on: boolean;
  /** Summed ms and calls per `Class.method`. */
  readonly steps: Map<string, { ms: number; calls: number }>;
}

export function timeSteps(): StepTimes {
  const times: StepTimes = { on: false, steps: new Map() };
  const classes: [string, { prototype: object }][] = [
    ['Stores', Stores],
    ['Journal', Journal],
    ['EntriesTable', EntriesTable],
    ['EmbeddingCacheTable', EmbeddingCacheTable],
    ['ResidentGraph', ResidentGraph],
    ['CypherGraphDriver', CypherGraphDriver],
    ['Residents', Residents],
  ];
  for (const [name, cls] of classes) {
    const proto = cls.prototype as Record<string, unknown>;
    for (const method of Object.getOwnPropertyNames(proto)) {
      const d = Object.getOwnPropertyDescriptor(proto, method);
      if (method === 'constructor' || !d || typeof d.value !== 'function') continue;
      const original = d.value as (...args: unknown[]) => unknown;
      proto[method] = function (this: unknown, ...args: unknown[]) {
        if (!times.on) return original.apply(this, args);
        // The graph's statements without parameters (BEGIN, COMMIT) are told apart.
        const label = `${name}.${method}${method === 'exec' && typeof args[0] === 'string' ? ` ${args[0].split(' ')[0]}` : ''}`;
        const started = performance.now();
        const add = () => {
          const s = times.steps.get(label) ?? { ms: 0, calls: 0 };
          s.ms += performance.now() - started;
          s.calls++;
          times.steps.set(label, s);
        };
        const out = original.apply(this, args);
        if (out instanceof Promise) return out.finally(add);
        add();
        return out;
      };
    }
  }
  return times;
}

/** The steps as a table, ms per write, the largest first (rows under 0.2 ms a write left out). */
export function stepTable(times: StepTimes, writes: number): string {
  const rows = [...times.steps]
    .map(([label, s]) => ({ label, perWrite: s.ms / writes, calls: s.calls / writes }))
    .filter((r) => r.perWrite >= 0.2)
    .sort((a, b) => b.perWrite - a.perWrite);
  return [
    '| step (inclusive) | ms per write | calls per write |',
    '|---|---:|---:|',
    ...rows.map((r) => `| ${r.label} | ${r.perWrite.toFixed(1)} | ${r.calls.toFixed(1)} |`),
  ].join('\n');
}
