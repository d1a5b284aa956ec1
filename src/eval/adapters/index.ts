/**
 * Builders of eval files from the upstream layouts in ../shared/eval-data (see its README): each
 * reads a folder of the same layout, so any dataset in that shape can be used with --data.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { invalidInput } from '../../model/errors.js';
import type { EvalFile, EvalQuery } from '../evalFile.js';

export interface AdapterOptions {
  /** Folder with the dataset; default ../shared/eval-data/<name> beside the repository. */
  data?: string;
  /** SciFact qrels split. Default train. */
  split?: string;
}

export interface Adapter {
  build(options: AdapterOptions): Promise<EvalFile>;
  /** Whether ingest should auto-link (mention links are what multi-hop sets need). */
  autoLink: boolean;
  /** Published numbers to print beside ours, from the eval-data README. */
  reference: string[];
  /** k values the published numbers use. */
  ks: number[];
}

export const DEFAULT_DATA_ROOT = fileURLToPath(new URL('../../../../shared/eval-data/', import.meta.url));

async function readJson(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8'));
  } catch (e) {
    throw invalidInput(
      `${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : `cannot be read (${(e as Error).message})`}`,
    );
  }
}

function dataDir(name: string, options: AdapterOptions): string {
  const dir = resolve(options.data ?? join(DEFAULT_DATA_ROOT, name));
  if (!existsSync(dir)) throw invalidInput(`no ${name} data at ${dir}; pass --data <dir>`);
  return dir;
}

/**
 * Titles are the ids of passage corpora; a repeated title gets a numbered id so none is lost. A
 * Wikipedia disambiguator ("William Duncan (actor)") is left off in an alias, since text and
 * questions name the subject without it.
 */
function passageEntries(core: string, passages: { title: string; text: string }[]) {
  const seen = new Map<string, number>();
  return passages.map((p) => {
    const n = (seen.get(p.title) ?? 0) + 1;
    seen.set(p.title, n);
    const plain = p.title.replace(/\s*\([^()]*\)\s*$/u, '');
    return {
      id: n === 1 ? p.title : `${p.title} (${n})`,
      core_id: core,
      title: p.title,
      content: p.text || p.title,
      entry_type: 'fact',
      ...(plain !== p.title && plain !== '' ? { aliases: [plain] } : {}),
    };
  });
}

/** Reads a Python-literal list such as "[['Alû', 3], [\"O'Brien\", 0]]" (HotpotQA stores some fields so). */
export function parsePythonList(text: string): unknown {
  let i = 0;
  const ws = () => {
    while (/\s/.test(text[i] ?? '')) i++;
  };
  const value = (): unknown => {
    ws();
    const ch = text[i];
    if (ch === '[') {
      i++;
      const out: unknown[] = [];
      ws();
      if (text[i] === ']') return (i++, out);
      for (;;) {
        out.push(value());
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return (i++, out);
        else throw new Error(`unexpected ${JSON.stringify(text[i])} at ${i}`);
      }
    }
    if (ch === "'" || ch === '"') {
      i++;
      let s = '';
      while (text[i] !== ch) {
        if (i >= text.length) throw new Error('unterminated string');
        if (text[i] === '\\') {
          const next = text[++i]!;
          s += ({ n: '\n', t: '\t', r: '\r' } as Record<string, string>)[next] ?? next;
        } else s += text[i];
        i++;
      }
      i++;
      return s;
    }
    const m = /^-?\d+(\.\d+)?/.exec(text.slice(i));
    if (!m) throw new Error(`unexpected ${JSON.stringify(ch)} at ${i}`);
    i += m[0].length;
    return Number(m[0]);
  };
  return value();
}

const twoWiki: Adapter = {
  autoLink: true,
  ks: [2, 5, 8, 10],
  reference: [
    "2Wiki all-gold@8, fast-graphrag benchmark (their corpus: only the questions' passages, easier than these 6,119):",
    'vector DB + text-embedding-3-small 0.42 (0.49 on the 51 dev questions), LightRAG 0.45, GraphRAG 0.73, fast-graphrag 0.93 (0.94 on the 51); all built their graph with an LLM.',
  ],
  async build(options) {
    const dir = dataDir('2wiki', options);
    const corpus = (await readJson(join(dir, 'corpus.json'))) as { title: string; text: string }[];
    const files = (await readdir(dir)).filter((f) => /^questions.*\.json$/.test(f)).sort();
    if (files.length === 0) throw invalidInput(`${dir}: no questions*.json`);
    const queries: EvalQuery[] = [];
    for (const f of files) {
      const qs = (await readJson(join(dir, f))) as { question: string; gold_titles: string[] }[];
      qs.forEach((q, i) => queries.push({ id: `${f}#${i}`, text: q.question, gold: q.gold_titles }));
    }
    return { name: '2wiki', entries: passageEntries('2wiki', corpus), queries };
  },
};

const hotpotqa: Adapter = {
  autoLink: true,
  ks: [2, 5, 8],
  reference: ['HotpotQA: plain BM25 all-gold@8 ≈ 0.64 on these 100 questions (issue brief).'],
  async build(options) {
    const dir = dataDir('hotpotqa', options);
    const files = await readdir(dir);
    const corpusFile = files.find((f) => /corpus.*\.json$/.test(f));
    const questionFile = files.find((f) => f.endsWith('.json') && !/corpus/.test(f));
    if (!corpusFile || !questionFile) throw invalidInput(`${dir}: needs a *corpus*.json and a questions .json`);
    const corpus = (await readJson(join(dir, corpusFile))) as Record<string, string[]> | { title: string; text: string }[];
    const passages = Array.isArray(corpus)
      ? corpus
      : Object.entries(corpus).map(([title, sentences]) => ({ title, text: sentences.join('').trim() }));
    const qs = (await readJson(join(dir, questionFile))) as { _id?: string; question: string; supporting_facts: unknown; type?: string }[];
    const queries = qs.map((q, i): EvalQuery => {
      const facts = (typeof q.supporting_facts === 'string' ? parsePythonList(q.supporting_facts) : q.supporting_facts) as [
        string,
        number,
      ][];
      return {
        id: q._id ?? String(i),
        text: q.question,
        gold: [...new Set(facts.map((f) => f[0]))],
        ...(q.type ? { category: q.type } : {}),
      };
    });
    return { name: 'hotpotqa', entries: passageEntries('hotpotqa', passages), queries };
  },
};

/** "1:56 pm on 8 May, 2023" → ISO date-time. */
export function parseLocomoDate(text: string): string | undefined {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})/i.exec(text);
  if (!m) return undefined;
  const months = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
  const month = months.indexOf(m[5]!.toLowerCase());
  if (month < 0) return undefined;
  const hour = (Number(m[1]) % 12) + (m[3]!.toLowerCase() === 'pm' ? 12 : 0);
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]))).toISOString();
}

/** Evidence ids, some malformed upstream ('D8:6; D9:17'), as clean dia_ids. */
export function normaliseEvidence(evidence: unknown[]): string[] {
  return [...new Set(evidence.flatMap((e) => String(e).match(/D\d+:\d+/g) ?? []))];
}

const locomo: Adapter = {
  autoLink: false,
  ks: [5, 10, 25, 50],
  reference: [
    'LoCoMo paper (Maharana et al. 2024, Table 3), DRAGON retriever over dialog turns, all categories: R@5 58.8, R@10 67.5, R@25 79.9, R@50 84.8.',
  ],
  async build(options) {
    const dir = dataDir('locomo', options);
    const samples: {
      sample_id: string;
      conversation: Record<string, unknown>;
      qa: { question: string; evidence?: unknown[]; category?: number }[];
    }[] = [];
    for (const f of (await readdir(dir)).filter((f) => f.endsWith('.json')).sort()) {
      const data = await readJson(join(dir, f));
      if (Array.isArray(data) && data.every((d) => d && typeof d === 'object' && 'conversation' in d))
        samples.push(...(data as typeof samples));
    }
    if (samples.length === 0) throw invalidInput(`${dir}: no .json file holds a list of conversations`);
    const entries: Record<string, unknown>[] = [];
    const relations: Record<string, unknown>[] = [];
    const queries: EvalQuery[] = [];
    for (const s of samples) {
      const core = s.sample_id;
      const id = (dia: string) => `${core}/${dia}`;
      const sessions = Object.keys(s.conversation)
        .filter((k) => /^session_\d+$/.test(k))
        .sort((a, b) => Number(a.split('_')[1]) - Number(b.split('_')[1]));
      const known = new Set<string>();
      for (const key of sessions) {
        const when = String(s.conversation[`${key}_date_time`] ?? '');
        const turns = s.conversation[key] as { speaker: string; dia_id: string; text: string; blip_caption?: string }[];
        turns.forEach((t, i) => {
          known.add(t.dia_id);
          const photo = t.blip_caption ? ` [shares a photo: ${t.blip_caption}]` : '';
          entries.push({
            id: id(t.dia_id),
            core_id: core,
            title: `${t.speaker}, ${when}`,
            content: `${t.speaker}: ${t.text}${photo}`,
            entry_type: 'dialog-turn',
            source: `${core} ${key}`,
            ...(parseLocomoDate(when) ? { created_at: parseLocomoDate(when) } : {}),
          });
          if (i > 0) relations.push({ type: 'RELATED', from: id(turns[i - 1]!.dia_id), to: id(t.dia_id), weight: 1, kind: 'next-turn' });
        });
      }
      s.qa.forEach((q, i) => {
        const gold = normaliseEvidence(q.evidence ?? [])
          .filter((d) => known.has(d))
          .map(id);
        queries.push({
          id: `${core}#${i}`,
          text: q.question,
          cores: [core],
          gold,
          ...(q.category !== undefined ? { category: q.category } : {}),
        });
      });
    }
    return { name: 'locomo', entries, relations, queries };
  },
};

const scifact: Adapter = {
  autoLink: false,
  ks: [10, 100],
  reference: ['SciFact nDCG@10, BEIR paper (Thakur et al. 2021): BM25 0.665 (test split).'],
  async build(options) {
    const dir = dataDir('scifact', options);
    const split = options.split ?? 'train';
    const lines = async (f: string) =>
      (
        await readFile(join(dir, f), 'utf8').catch(() => {
          throw invalidInput(`${join(dir, f)}: not found`);
        })
      )
        .split('\n')
        .filter((l) => l.trim());
    const corpus = (await lines('corpus.jsonl')).map((l) => JSON.parse(l) as { _id: string; title: string; text: string });
    const texts = new Map(
      (await lines('queries.jsonl')).map((l) => JSON.parse(l) as { _id: string; text: string }).map((q) => [q._id, q.text]),
    );
    const qrels = new Map<string, string[]>();
    for (const l of (await lines(join('qrels', `${split}.tsv`))).slice(1)) {
      const [q, doc, score] = l.split('\t');
      if (q && doc && Number(score) > 0) qrels.set(q, [...(qrels.get(q) ?? []), doc]);
    }
    const queries = [...qrels].filter(([q]) => texts.has(q)).map(([q, gold]) => ({ id: q, text: texts.get(q)!, gold }));
    return {
      name: `scifact-${split}`,
      entries: corpus.map((d) => ({
        id: d._id,
        core_id: 'scifact',
        title: d.title || d._id,
        content: d.text || d.title,
        entry_type: 'abstract',
      })),
      queries,
    };
  },
};

export const ADAPTERS: Record<string, Adapter> = { '2wiki': twoWiki, hotpotqa, locomo, scifact };
