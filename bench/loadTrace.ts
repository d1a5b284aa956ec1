/**
 * Where a served `remember` spends its time (bench:load --trace). Loaded into the `memcore serve`
 * process with `--import`; MEMCORE_LOAD_TRACE names the JSON file it writes when the process exits.
 * It wraps, as bench/writeSteps.ts does, the methods a write goes through and records each call's
 * start and end (epoch ms, so the client's times line up), each remember's call and answer, each
 * group's open and commit, the event loop's stalls and every garbage collection. bench/load.ts
 * joins them per write (traceTable).
 */
import { writeFileSync } from 'node:fs';
import { ServerResponse } from 'node:http';
import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { LocalModelPool } from '../src/embed/localModelPool.js';
import { MemoryEngine } from '../src/engine/memoryEngine.js';
import { ResidentGraph } from '../src/store/graph/residentGraph.js';
import { Journal } from '../src/store/journal/journal.js';
import { EmbeddingCacheTable } from '../src/store/lance/embeddingCacheTable.js';
import { EntriesTable } from '../src/store/lance/entriesTable.js';
import { Residents } from '../src/store/resident/residents.js';
import { Stores } from '../src/store/stores.js';
import { WriteGroup } from '../src/store/writeGroup.js';

/** Epoch ms with the sub-ms part: comparable across the bench's processes. */
const now = () => performance.timeOrigin + performance.now();

export interface LoadTrace {
  remembers: { title: string; start: number; end: number }[];
  /** When the server wrote each remember's answer to its HTTP response, by entry id. */
  answered: { id: string; at: number }[];
  /** When the MCP server handed each remember's answer to its transport, by entry id. */
  sent: { id: string; at: number }[];
  groups: { open: number; offers: number[]; commitStart?: number; commitEnd?: number }[];
  /** Calls of the wrapped methods made while a write was in flight. */
  calls: { label: string; start: number; end: number }[];
  gc: { start: number; ms: number }[];
  /** The event loop's stalls over 20 ms (a timer that fired late by that much): when, and how late. */
  stalls: { at: number; ms: number }[];
  loopDelayMs: { p50: number; p99: number; max: number };
}

const out = process.env.MEMCORE_LOAD_TRACE;
if (out) {
  const trace: LoadTrace = {
    remembers: [],
    answered: [],
    sent: [],
    groups: [],
    calls: [],
    gc: [],
    stalls: [],
    loopDelayMs: { p50: 0, p99: 0, max: 0 },
  };
  let inFlight = 0;

  const wrap = (name: string, proto: object, methods: string[], around?: (method: string, args: unknown[]) => () => void) => {
    const p = proto as Record<string, unknown>;
    for (const method of methods) {
      const original = p[method] as (...args: unknown[]) => unknown;
      if (typeof original !== 'function') throw new Error(`loadTrace: ${name}.${method} is not a method`);
      p[method] = function (this: unknown, ...args: unknown[]) {
        const after = around?.(method, args);
        if (inFlight === 0 && !after) return original.apply(this, args);
        const start = now();
        const done = () => {
          after?.();
          if (trace.calls.length < 500_000) trace.calls.push({ label: `${name}.${method}`, start, end: now() });
        };
        const result = original.apply(this, args);
        if (result instanceof Promise) return result.finally(done);
        done();
        return result;
      };
    }
  };

  wrap('MemoryEngine', MemoryEngine.prototype, ['remember'], (_m, args) => {
    inFlight++;
    const r = { title: String((args[0] as { title?: unknown })?.title), start: now(), end: 0 };
    trace.remembers.push(r);
    return () => {
      inFlight--;
      r.end = now();
    };
  });
  const stores = Stores.prototype as unknown as Record<string, unknown>;
  const openGroup = stores.openGroup as (this: Stores) => WriteGroup<never>;
  stores.openGroup = function (this: Stores) {
    trace.groups.push({ open: now(), offers: [] });
    return openGroup.call(this);
  };
  const offer = WriteGroup.prototype.offer;
  WriteGroup.prototype.offer = function (this: WriteGroup<never>, ...args: Parameters<typeof offer>) {
    trace.groups.at(-1)?.offers.push(now());
    return offer.apply(this, args);
  };
  const commitGroup = stores.commitGroup as (this: Stores, g: unknown) => Promise<void>;
  stores.commitGroup = async function (this: Stores, g: unknown) {
    const group = trace.groups.at(-1);
    if (group) group.commitStart = now();
    try {
      return await commitGroup.call(this, g);
    } finally {
      if (group) group.commitEnd = now();
    }
  };
  wrap('Stores', Stores.prototype, ['apply', 'bumpGeneration', 'applyToStores']);
  wrap('Journal', Journal.prototype, ['begin', 'done']);
  wrap('EntriesTable', EntriesTable.prototype, ['upsert', 'read']);
  wrap('EmbeddingCacheTable', EmbeddingCacheTable.prototype, ['get', 'put']);
  wrap('ResidentGraph', ResidentGraph.prototype, ['write', 'existingIds']);
  wrap('Residents', Residents.prototype, ['logChange', 'writeSnapshots']);
  wrap('LocalModelPool', LocalModelPool.prototype, ['embed']);

  // A remember's answer names its entry ("Remembered <id>", src/server/tools.ts).
  const ANSWER = /(?:Remembered|Updated) ([^\s;"\\]+)/;
  for (const method of ['write', 'end'] as const) {
    const original = ServerResponse.prototype[method] as (...args: unknown[]) => unknown;
    (ServerResponse.prototype as unknown as Record<string, unknown>)[method] = function (this: ServerResponse, ...args: unknown[]) {
      const chunk = args[0];
      if (typeof chunk === 'string' || chunk instanceof Uint8Array) {
        const id = ANSWER.exec(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString())?.[1];
        if (id) trace.answered.push({ id, at: now() });
      }
      return original.apply(this, args);
    };
  }

  const send = WebStandardStreamableHTTPServerTransport.prototype.send;
  WebStandardStreamableHTTPServerTransport.prototype.send = function (this: WebStandardStreamableHTTPServerTransport, ...args) {
    const text = (args[0] as { result?: { content?: { text?: unknown }[] } }).result?.content?.[0]?.text;
    const id = typeof text === 'string' ? ANSWER.exec(text)?.[1] : undefined;
    if (id) trace.sent.push({ id, at: now() });
    return send.apply(this, args);
  };

  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) trace.gc.push({ start: performance.timeOrigin + e.startTime, ms: e.duration });
  }).observe({ entryTypes: ['gc'] });
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let last = now();
  setInterval(() => {
    const t = now();
    if (t - last - 5 > 20) trace.stalls.push({ at: last, ms: t - last - 5 });
    last = t;
  }, 5).unref();

  process.on('exit', () => {
    trace.loopDelayMs = {
      p50: delay.percentile(50) / 1e6,
      p99: delay.percentile(99) / 1e6,
      max: delay.max / 1e6,
    };
    writeFileSync(out, JSON.stringify(trace));
  });
}

/** A client's remember: its title and when it was sent and answered (epoch ms). */
export interface ClientWrite {
  title: string;
  /** The entry id the server answered with. */
  id?: string;
  start: number;
  end: number;
}

/**
 * A write's phases: the request in (HTTP, MCP, checks); queued behind the group before its own;
 * its group's preparation (every member's, in turn), of which model calls and the embedding
 * cache; the group's one journaled commit, of which the journal record (written and fsynced), the
 * LanceDB append and the graph write (those two side by side), and the generation, the journal's
 * removal and the change log; its links read back; its answer's way to the MCP transport, then
 * to the HTTP response, then to the client (whose one thread serves every client of the bench);
 * garbage collection and the longest event-loop stall while the call was open.
 */
const PHASES = [
  'client → server',
  'gate (group before)',
  'prepare (group)',
  '  embed, cache',
  'commit (group)',
  '  journal begin',
  '  lance upsert',
  '  graph write',
  '  generation, done, log',
  'after commit',
  'answer to the transport',
  'answer written',
  'server → client',
  'gc in the call',
  'longest stall',
] as const;

/** Per write, where its time went: p50/p99 of each phase, and the slowest writes one by one. */
export function traceTable(trace: LoadTrace, writes: ClientWrite[]): string {
  const served = new Map(trace.remembers.map((r) => [r.title, r]));
  const answered = new Map(trace.answered.map((a) => [a.id, a.at]));
  const sent = new Map(trace.sent.map((a) => [a.id, a.at]));
  /** The time within [from, to] that calls of `label` covered (calls side by side counted once). */
  const sum = (label: string | string[], from: number, to: number) => {
    let covered = 0;
    let reached = from;
    const spans = trace.calls
      .filter((c) => (Array.isArray(label) ? label.includes(c.label) : c.label === label) && c.end > from && c.start < to)
      .map((c) => [Math.max(c.start, from), Math.min(c.end, to)] as const)
      .sort((x, y) => x[0] - y[0]);
    for (const [start, end] of spans) {
      if (end > reached) covered += end - Math.max(start, reached);
      reached = Math.max(reached, end);
    }
    return covered;
  };
  const rows = writes.flatMap((w) => {
    const r = served.get(w.title);
    const g = r && trace.groups.find((g) => g.open >= r.start && g.commitStart !== undefined && g.commitEnd !== undefined);
    if (!r || !g) return [];
    const cs = g.commitStart!;
    const ce = Math.min(g.commitEnd!, r.end);
    const phases = [
      r.start - w.start,
      g.open - r.start,
      cs - g.open,
      sum(['LocalModelPool.embed', 'EmbeddingCacheTable.get', 'EmbeddingCacheTable.put'], g.open, cs),
      ce - cs,
      sum('Journal.begin', cs, ce),
      sum('EntriesTable.upsert', cs, ce),
      sum('ResidentGraph.write', cs, ce),
      sum(['Stores.bumpGeneration', 'Journal.done', 'Residents.logChange'], cs, ce),
      r.end - ce,
      (sent.get(w.id ?? '') ?? r.end) - r.end,
      (answered.get(w.id ?? '') ?? r.end) - (sent.get(w.id ?? '') ?? r.end),
      w.end - (answered.get(w.id ?? '') ?? r.end),
      trace.gc.filter((x) => x.start >= w.start && x.start < w.end).reduce((n, x) => n + x.ms, 0),
      Math.max(0, ...trace.stalls.filter((x) => x.at >= w.start && x.at < w.end).map((x) => x.ms)),
    ];
    return [{ w, ms: w.end - w.start, size: g.offers.length, phases }];
  });
  if (rows.length === 0) return 'no write could be traced';
  const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
  const slow = [...rows].sort((a, b) => b.ms - a.ms).slice(0, 5);
  const t0 = Math.min(...writes.map((w) => w.start));
  const f = (x: number) => x.toFixed(0);
  return [
    `${rows.length} of ${writes.length} writes traced; group size p50 ${pct(
      rows.map((r) => r.size),
      50,
    )}, max ${Math.max(...rows.map((r) => r.size))}; event loop delay p50 ${trace.loopDelayMs.p50.toFixed(1)} / p99 ${trace.loopDelayMs.p99.toFixed(1)} / max ${trace.loopDelayMs.max.toFixed(0)} ms; gc ${trace.gc.length} pauses, ${f(trace.gc.reduce((n, x) => n + x.ms, 0))} ms`,
    '',
    `| phase (ms) | p50 | p99 | ${slow.map((s) => `${f(s.ms)} ms at ${((s.w.start - t0) / 1000).toFixed(1)} s`).join(' | ')} |`,
    `|---|---:|---:|${slow.map(() => '---:').join('|')}|`,
    `| whole call | ${f(
      pct(
        rows.map((r) => r.ms),
        50,
      ),
    )} | ${f(
      pct(
        rows.map((r) => r.ms),
        99,
      ),
    )} | ${slow.map((s) => f(s.ms)).join(' | ')} |`,
    ...PHASES.map(
      (name, i) =>
        `| ${name} | ${f(
          pct(
            rows.map((r) => r.phases[i]!),
            50,
          ),
        )} | ${f(
          pct(
            rows.map((r) => r.phases[i]!),
            99,
          ),
        )} | ${slow.map((s) => f(s.phases[i]!)).join(' | ')} |`,
    ),
    `| group size | | | ${slow.map((s) => s.size).join(' | ')} |`,
  ].join('\n');
}
