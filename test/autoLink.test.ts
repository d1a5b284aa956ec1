import { describe, expect, it } from 'vitest';
import { AhoCorasick, findLinks, outermost } from '../src/ingest/autoLink.js';
import { NameIndex } from '../src/store/resident/nameIndex.js';
import { openMemory } from '../src/index.js';
import { tempDir, wordHashEmbedder } from './helpers.js';

const e = (id: string, title: string, content: string, aliases: string[] = []) => ({ id, title, aliases, content });

describe('Aho–Corasick', () => {
  it('finds every occurrence of every pattern, overlapping ones included', () => {
    const ac = new AhoCorasick(['he', 'she', 'his', 'hers']);
    const hits = [...ac.search([...'ushers'])].map((h) => `${ac.patterns[h.pattern]}@${h.end}`);
    expect(hits.sort()).toEqual(['he@4', 'hers@6', 'she@4']);
  });
});

describe('outermost', () => {
  it('drops spans inside a longer span and keeps overlapping and equal ones', () => {
    const span = (start: number, end: number, tag = '') => ({ start, end, tag });
    const kept = outermost([span(2, 4), span(0, 3), span(1, 2), span(0, 2), span(5, 7, 'a'), span(5, 7, 'b'), span(6, 7)]);
    expect(kept.map((s) => `${s.start}-${s.end}${s.tag}`).sort()).toEqual(['0-3', '2-4', '5-7a', '5-7b']);
    expect(outermost([])).toEqual([]);
  });
});

describe('findLinks', () => {
  const corpus = [
    e('kafka', 'Kafka consumer offsets', 'Commit offsets after processing.'),
    e('dlq', 'Dead letter queue', 'Poison messages go to the dead letter queue; see Kafka consumer offsets.', ['DLQ']),
    e('alert', 'Alerting', 'Page the owner when the DLQ grows. The dead-letter queue is not the same as a DLQueue.'),
    e('short', 'API', 'Everything mentions the api and APIs.'),
    e('code', 'Refresh handler', 'refreshTokens() in src/auth/refresh.ts does it; also refresh.ts.bak is unrelated.'),
  ];
  const code = [
    {
      id: 'c1',
      codebaseId: 'x',
      filePath: 'src/auth/refresh.ts',
      symbol: 'refreshTokens',
      startLine: 1,
      endLine: 9,
      language: 'ts',
      kind: null,
      fingerprint: null,
      revision: null,
    },
  ];

  it('links mentions of titles and aliases at word boundaries, with case rules', () => {
    const links = findLinks(corpus, code, new Set(corpus.map((c) => c.id)));
    const related = links.filter((l) => l.type === 'RELATED').map((l) => `${l.from}->${l.to}`);
    // dlq mentions the Kafka title (case-folded); alert mentions the alias DLQ (exact, word-bounded; not in "DLQueue")
    expect(related).toEqual(['alert->dlq', 'dlq->kafka']);
    expect(links.find((l) => l.type === 'RELATED')).toMatchObject({ weight: 0.6, kind: 'mention' });
  });

  it('links code symbols and paths, exactly', () => {
    const refs = findLinks(corpus, code, new Set(['code'])).filter((l) => l.type === 'REFERENCES_CODE');
    expect(refs).toEqual([{ type: 'REFERENCES_CODE', from: 'code', to: 'c1', relevance: 0.5 }]);
    // the symbol alone is enough, and only in its own case
    const bySymbol = (text: string) => findLinks([e('s', 'Some title', text)], code, new Set(['s'])).length;
    expect(bySymbol('call refreshTokens first')).toBe(1);
    expect(bySymbol('call refreshtokens first')).toBe(0);
    expect(bySymbol('call refreshTokensLater first')).toBe(0);
  });

  it('skips short titles and titles too common to mean a link', () => {
    const many = Array.from({ length: 30 }, (_, i) => e(`m${i}`, `Note ${i}`, 'We use Postgres here.'));
    const links = findLinks([...many, e('pg', 'Postgres', 'The database.')], [], new Set(['pg', ...many.map((m) => m.id)]), {
      maxMentionShare: 0.1,
    });
    expect(links).toEqual([]); // mentioned by 30 of 31 entries
    const few = findLinks([...many.slice(0, 2), e('pg', 'Postgres', 'The database.')], [], new Set(['pg']));
    expect(few.map((l) => `${l.from}->${l.to}`)).toEqual(['m0->pg', 'm1->pg']);
  });

  it('counts a name only where it is not part of a longer name', () => {
    const people = [
      e('murry', 'John Middleton Murry', 'An English writer.'),
      e('architect', 'John Middleton (architect)', 'A Victorian architect.', ['John Middleton']),
      e('mansfield', 'Katherine Mansfield', 'She married John Middleton Murry in 1918.'),
      e('letters', 'Letters', 'John Middleton drew the church; John Middleton Murry reviewed it.'),
    ];
    const related = findLinks(people, [], new Set(people.map((p) => p.id))).map((l) => `${l.from}->${l.to}`);
    // "John Middleton" inside "John Middleton Murry" is Murry, not the architect; on its own it is the architect
    expect(related).toEqual(['letters->architect', 'letters->murry', 'mansfield->murry']);
  });

  it('only returns links that touch the entries being written', () => {
    expect(findLinks(corpus, code, new Set(['kafka'])).map((l) => `${l.from}->${l.to}`)).toEqual(['dlq->kafka']);
  });

  it('finds, for a few entries written into many, exactly the links a scan of every entry finds', () => {
    // Most texts are skipped unread (ASCII, none of the words that matter); the others are scanned:
    // non-ASCII ones, names inside longer names, acronyms, a path and a symbol, names used by many.
    let seed = 7;
    const rand = (n: number) => {
      // mulberry32: the low bits of a plain LCG repeat too soon for `% n`
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) % n;
    };
    const first = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'straße', 'été', 'kafka', 'postgres', 'ledger'];
    const title = (i: number) =>
      i % 17 === 0 ? 'DLQ' : i % 13 === 0 ? `${first[i % 10]} ${first[(i + 3) % 10]} group` : `${first[i % 10]} ${first[(i + 3) % 10]}`;
    const extras = ['src/auth/refresh.ts', 'refreshTokens()', 'dlq', 'DLQ', 'Alpha Delta', 'été', 'group'];
    for (let round = 0; round < 20; round++) {
      const many = Array.from({ length: 200 }, (_, i) => {
        const words = Array.from({ length: 12 }, () => {
          const r = rand(40);
          return r === 0 ? title(rand(200)) : r === 1 ? extras[rand(extras.length)]! : `w${rand(500)}`;
        });
        return e(`e${i}`, title(i), words.join(' ') + '.');
      });
      const focus = new Set(Array.from({ length: 5 }, () => `e${rand(200)}`));
      const all = findLinks(many, code, new Set(many.map((m) => m.id)));
      const touching = all.filter((l) => focus.has(l.from) || (l.type === 'RELATED' && focus.has(l.to)));
      expect(findLinks(many, code, focus)).toEqual(touching);
    }
  });
});

describe('ingest with autoLink', () => {
  it('writes mention edges both ways across ingests, idempotently', async () => {
    const m = await openMemory({ path: await tempDir(), embedder: wordHashEmbedder(), env: {} });
    try {
      const first = await m.ingestDocument(
        { core_id: 'c', entries: [corpusEntry('kafka', 'Kafka consumer offsets', 'Commit after processing.')] },
        { autoLink: true },
      );
      expect(first.autoLinks).toBe(0);
      const second = await m.ingestDocument(
        { core_id: 'c', entries: [corpusEntry('dlq', 'Dead letter queue', 'Failed Kafka consumer offsets commits end here.')] },
        { autoLink: true, source: 'second' },
      );
      expect(second.autoLinks).toBe(1);
      expect((await m.traverse('kafka', { depth: 1 })).map((h) => [h.entry.id, h.path])).toEqual([
        ['dlq', [{ type: 'RELATED', from: 'dlq', to: 'kafka' }]],
      ]);
      const again = await m.ingestDocument(
        { core_id: 'c', entries: [corpusEntry('dlq', 'Dead letter queue', 'Failed Kafka consumer offsets commits end here.')] },
        { autoLink: true, source: 'second' },
      );
      expect(again.changed).toBe(false);
      expect((await m.stats()).relations.RELATED).toBe(1);
    } finally {
      await m.close();
    }
  });
});

describe('entries named in the task', () => {
  it('matches titles and aliases by whole words, longest first, with the auto-link case rules', () => {
    const index = new NameIndex([
      { id: 'dlq', title: 'Dead letter queue', aliases: ['DLQ'] },
      { id: 'kafka', title: 'Kafka consumer offsets', aliases: [] },
      { id: 'api', title: 'API', aliases: [] },
      { id: 'duncan', title: 'William Duncan (actor)', aliases: ['William Duncan'] },
    ]);
    const ids = (task: string) => index.match(task).map((m) => `${m.id}:${m.mention}`);
    expect(ids('Why does the dead-letter queue fill when KAFKA consumer offsets lag?')).toEqual([
      'dlq:dead letter queue',
      'kafka:KAFKA consumer offsets',
    ]); // both three words: by id
    expect(ids('drain the DLQ')).toEqual(['dlq:DLQ']);
    expect(ids('drain the dlq, or the DLQueue')).toEqual([]); // short names match in their own case, whole words only
    expect(ids('Which film did William Duncan direct?')).toEqual(['duncan:William Duncan']);
    expect(ids('the api')).toEqual([]); // "API" is an acronym: exact only
  });

  it('lets a longer name hide the names inside it, unless the longer one does not count', () => {
    const index = new NameIndex([
      { id: 'murry', title: 'John Middleton Murry', aliases: [] },
      { id: 'architect', title: 'John Middleton (architect)', aliases: ['John Middleton'] },
      { id: 'heart', title: 'Heart (1987 film)', aliases: ['Heart'] },
      { id: 'doreon', title: 'The Heart of Doreon', aliases: [] },
    ]);
    const ids = (task: string, counts?: (id: string) => boolean) => index.match(task, counts).map((m) => m.id);
    expect(ids("Why did John Middleton Murry's wife die?")).toEqual(['murry']);
    expect(ids('Did John Middleton know John Middleton Murry?')).toEqual(['murry', 'architect']);
    expect(ids('Who directed The Heart Of Doreon?')).toEqual(['doreon']);
    // an entry the filter hides cannot hide another: the shorter name stands
    expect(ids('Who directed The Heart Of Doreon?', (id) => id !== 'doreon')).toEqual(['heart']);
  });

  it('seeds buildTaskContext with them, says so, and obeys the filters', async () => {
    const m = await openMemory({ path: await tempDir(), embedder: wordHashEmbedder(), env: {} });
    try {
      await m.ingestDocument({
        entries: [
          { id: 'zebra', core_id: 'ops', title: 'Zebra cluster', content: 'Runs the nightly batch jobs.' },
          { id: 'other', core_id: 'ops', title: 'Backups', content: 'Snapshots every hour.' },
          { id: 'hidden', core_id: 'private', title: 'Giraffe vault', content: 'Holds keys.' },
        ],
      });
      const bundle = await m.buildTaskContext('restart the zebra cluster after the outage', { threshold: 0.99, keyword: false });
      expect(bundle.entries.map((e) => e.entry.id)).toEqual(['zebra']);
      expect(bundle.entries[0]!.why).toContainEqual({ kind: 'mention', rank: 1, mention: 'zebra cluster' });
      expect((await m.buildTaskContext('restart the zebra cluster', { threshold: 0.99, keyword: false, mentions: false })).entries).toEqual(
        [],
      );
      expect((await m.buildTaskContext('open the giraffe vault', { threshold: 0.99, keyword: false, cores: ['ops'] })).entries).toEqual([]);
      expect((await m.hybridSearch('open the giraffe vault', { threshold: 0.99, mentions: true })).map((h) => h.entry.id)).toEqual([
        'hidden',
      ]);
      // a write moves the generation, so a new title is matched at once
      await m.upsert([{ id: 'okapi', core_id: 'ops', title: 'Okapi runbook', content: 'Steps.' }]);
      expect(
        (await m.buildTaskContext('follow the okapi runbook', { threshold: 0.99, keyword: false })).entries.map((e) => e.entry.id),
      ).toEqual(['okapi']);
    } finally {
      await m.close();
    }
  });
});

function corpusEntry(id: string, title: string, content: string) {
  return { id, title, content };
}
