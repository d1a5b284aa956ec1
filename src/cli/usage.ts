/** The help text of the command line: the whole of it (`memcore --help`) and one command's part. */
export const USAGE = `memcore — project memory for AI agents (LanceDB + Kuzu)

Usage: memcore <command> [options]

Commands:
  ingest <file>...          upsert memory files (.json, .jsonl, .yaml); all or nothing per file
                            --auto-link: link entries that mention titles, aliases, code symbols or paths
                            --sync: make the store match each file: what the file held before and no
                            longer does is removed (expired if other entries depend on it)
                            --repo <dir> (default config repo): fingerprint code locations from the
                            text they point at there, so check tells moved from drifted code
  import <path>...          import markdown (files, or folders walked with .gitignore): a heading section
                            per entry; ADR folders give decisions, CLAUDE.md/AGENTS.md/.cursor/rules give
                            conventions; re-import updates and removes to match (--core, --type,
                            --no-conventions, --no-auto-link); exit 3 when a document was skipped;
                            leaves out templates, test fixtures, vendored/build folders and
                            changelogs, and says so (--exclude <glob>, repeatable; --changelogs)
  import-code <repo> --codebase <id>  code locations for every function, class, method, interface, type
                            and enum of the code files (TS/JS, Python, Go, Rust, Java, C#, C, C++, Ruby,
                            PHP, Bash; walked with .gitignore), imports as IMPORTS links, with
                            lines, kind and a fingerprint; unchanged files are skipped by hash; entries
                            that name a symbol or path are linked to it (--no-auto-link)
  check                     every code location against the repository (--repo, default config repo or
                            the working directory; --codebase): fresh, moved, drifted or orphaned, with
                            the entries that reference each; --fix re-anchors moved ones;
                            --fail-on moved|drifted|orphaned exits 7 when any is found (for CI)
                            in team mode also every memory file: front matter, ids, links (docs/team.md);
                            exit 7 when a file is skipped
  init --team               start team memory in this git repository: memory/ with a README, .gitignore
                            lines for .memcore/ and memory.local/ (secrets); prints what to commit; idempotent
  remember --title <t> --content <c>  store one entry (--core, --type, --id, --tag, --importance,
                            --confidence, --sensitivity, --pinned, --link TYPE:ID); in team mode a file
                            under memory/<core>/ to commit (a secret one under memory.local/)
  forget <id>               retire an entry: --reason "<why>" (superseded by a retraction) or --delete
  diff [<range>]            team memory added, changed, superseded and removed: A..B, A...B, A (against
                            the working tree) or none (the working tree against HEAD)
  context "<task>"          the context an agent needs before the task (full pipeline)
  context --diff [<range>]  the context for a change: git diff of the working tree, of a range
                            (main..HEAD, HEAD~3) or of the index (--staged) in --repo (default config
                            repo or the working directory); entries on the changed code come first
  search "<query>"          search entries (--mode hybrid | semantic | matryoshka | keyword | find | context)
  find "<query>"            search seeds expanded through the graph, scored (no code)
  traverse <id>             entries reachable from an entry (--depth, --relations, --direction)
  code-refs                 entries that reference code (--file, --symbol, --codebase)
  related-to-code <file> "<query>"  entries referencing a file, ranked by the query
  golden-path <id>          a golden path with its ordered steps
  golden-paths <concept>... golden paths about any of the concepts
  list                      entries in effect (--core, --type, --tag, --as-of, --limit, --offset)
  show <id>                 an entry with its links, code references and what supersedes it
  export                    the memory as a memory file: --format yaml (default) | jsonl | json, --core,
                            --include-secret, --out <file> (default stdout); memcore ingest reads it back
  export --to-files [<dir>] every entry and golden path as a file of a team memory folder (default
                            memory/ at the git root; secrets to <dir>.local/): docs/team.md
  backup <dest>             a consistent copy of the folder, with checksums (writes wait, reads go on)
  restore <src>             check a backup and put it in place of --db (--force to replace a non-empty folder)
  doctor                    check the folder part by part; --repair rebuilds what can be derived
                            (exit 0 healthy, 6 not; while served, the server checks its open stores
                            and what it holds in memory; --repair needs the server stopped)
  migrate --graph <g>       move the folder's graph to ladybug (LadybugDB) or kuzu (Kuzu): copied, read
                            back and compared, then swapped in; the old graph stays until then
  reembed --embedder <e>    move the folder to another model: local, or openai:<model> with --dimensions
                            (--base-url, --truncatable); built beside it, resumable, swapped in at the end
  core-memory <core>        a core's most important entries as a <memory> block (--max-tokens, default 2000)
  delete <id>...            remove entries (and their edges)
  index                     build indexes and refit the small-vector projection
  feedback <id> --useful | --not-useful | --score <0..1>  rate an entry (--bundle <id>: once per bundle;
                            --note; --task: what it was rated for, default the bundle's); it moves the
                            entry's rank most for tasks like it. --report: every rated entry, source and core
  gaps                      tasks memory could not answer (empty or low-confidence bundles), similar ones
                            grouped: the lessons nobody has written yet (--since <date>, --json)
  stats                     what the database holds
  config                    the effective configuration and where each setting came from
  eval <file|dataset>       retrieval quality: an eval file, or 2wiki | hotpotqa | locomo | scifact
                            | code-localization (--git-dir hono=<clone> …: findCode on real history)
  serve                     own the folder: keep it warm, serve MCP over HTTP and every CLI call and agent
                            (--port, default 7077; --host, default 127.0.0.1; --allow-remote; --no-http)
  mcp                       MCP over stdio for an agent's config; relays to the folder's server, or becomes it
  ui                        print an address of the memory page that signs a browser in (once, within
                            10 minutes); starts a server in the background if none owns the folder
                            (--port, default 7077 as serve, a free one when that is taken; its log goes
                            to <db>/server.log); prints the MCP address too

While a server owns the folder (serve, or a first mcp), every other command runs through it.

Common options:
  --db <dir>                database folder (default MEMCORE_DB, a config file's db, or ./.memcore)
  --json                    machine-readable output on stdout
  -h, --help                help for a command

Filters (context, search):
  --core <id>               only this memory core (repeatable)
  --type <entry_type>       only this entry type (repeatable)
  --tag <tag>               entries with this tag (repeatable)
  --min-confidence <level>  low | medium | high
  --threshold <similarity>  minimum cosine similarity, -1..1
  --as-of <date>            answer as the memory stood at an ISO date (entries in effect then)
  --min-importance <1..10>  at least this importance
  --created-after <date>    entries created at or after an ISO date
  --created-before <date>   entries created before an ISO date
  --include-secret          secret entries too (left out of every read by default; also list, show,
                            traverse, code-refs, related-to-code)

context and find options:
  --depth <n>               graph hops from the seeds (default 2, 0 = none)
  --relations <types>       comma list of RELATED,DEPENDS_ON,SUPERSEDES (default RELATED,DEPENDS_ON)
  --max-entries <n>         default 12
  --max-tokens <n>          token budget for entry text
  --project-core <id>       core always searched besides --core
  --seeds <n>               hits that seed the graph expansion (default 4)
  --candidates <n>          stage-1 over-retrieval (default 100)
  --diversity <0..1>        MMR diversity (default 0)
  --graph-ranking <r>       pagerank (default) or proximity: how graph evidence counts
  --no-keyword              vectors only
  --no-mentions             do not seed from entries whose title or alias the task names
  --no-code                 leave out code references and golden paths (context)
  --llm                     let the configured LLM keep what matters (context; falls back to top-N)
  --max-select <n>          entries the LLM keeps at most (default 10)
  --format <style>          text (default), prompt (<memory> block), markdown or json (context)

search options:
  --mode <preset>           hybrid (default), semantic, matryoshka, keyword, find or context (docs/api.md),
                            or code: the imported code for the text (findCode; --codebase <id>, --no-entries)
  --limit <n>               default 10
  --candidates <n>          stage-1 candidates (default: matryoshka measured on the store, 600-10000; hybrid 100)
  --fusion <weighted|rrf>   hybrid fusion (default weighted, vector 0.3 : keyword 1)
  --mentions                hybrid: also fuse in entries whose title or alias the query names

eval options:
  --strategies <list>       vector,matryoshka,keyword,hybrid,graph,graph-ppr,context (default all)
  --k <list>                cut-offs, e.g. 2,5,8,10 (default: the dataset's published ones, else 2,5,8,10,25,50)
  --data <dir>              dataset folder (default ../shared/eval-data/<dataset>)
  --split <name>            scifact qrels split (default train)
  --auto-link / --no-auto-link   mention links at ingest (default on for 2wiki and hotpotqa)
  --limit-queries <n>       the first n queries only (smoke runs)
  --out <file>              also write the JSON report there
  --report <file.html>      also write an HTML report (one offline file): recall and all-gold@k curves
                            per strategy, every metric, and each strategy's misses (at the k nearest 10
                            unless --misses says)
  --save-eval-file <file>   write the eval file an adapter built
  --keep-db <dir>           ingest into this folder and keep it; a re-run embeds only what changed
  --score-combination <c>   the context strategy's scoreCombination: sum (default) or product
  --misses <k>              list each strategy's queries whose gold is not all in the top k, with the gold ranks
  --git-dir <name>=<clone>  code-localization: a clone of each repository to measure (repeatable)
  --no-docs                 code-localization: import the code only, not the repository's markdown
  --simulate-feedback       rate the context bundles of half of each core's queries (gold useful, the rest
                            not), then score the other half with and without the ratings (ratings stay in
                            --keep-db: use a copy)
  --peers                   also score LanceDB (flat vector, FTS, RRF hybrid) and Orama (hybrid, vector,
                            full-text) on the same entries and vectors (needs a clone's devDependencies)

traverse options: --depth <n> (default 2), --relations <types>, --direction outgoing|incoming|both
index options: --ann-min-rows <n> (ANN index on vector_small from this many entries; default 50000)

Exit codes: 0 ok, 1 failure, 2 bad command line, 3 invalid input, 4 not found (also a read of a folder
with no memory), 5 database/model mismatch, 6 store failure (damaged, missing, full or read-only),
7 check found code references as stale as --fail-on.
`;

/**
 * `memcore <command> --help`: the command's lines of USAGE, the option sections that name it, the
 * common options and the exit codes.
 */
export function commandHelp(name: string): string {
  const blocks = USAGE.trimEnd().split('\n\n');
  const commands = blocks
    .find((b) => b.startsWith('Commands:'))!
    .split('\n')
    .slice(1);
  const own: string[] = [];
  for (const [i, line] of commands.entries()) {
    if (!line.startsWith(`  ${name} `) && line !== `  ${name}`) continue;
    own.push(line);
    for (const more of commands.slice(i + 1))
      if (/^ {20,}/.test(more)) own.push(more);
      else break;
  }
  const mentions = (header: string) => new RegExp(`(^|[ (,])${name}([ ,):]|$)`).test(header.split(':')[0]!);
  const sections = blocks
    .flatMap((b) =>
      b.split('\n').reduce<string[][]>((acc, line) => (/^\S/.test(line) ? acc.push([line]) : acc.at(-1)!.push(line), acc), []),
    )
    .filter((lines) => !lines[0]!.startsWith('Commands:') && !lines[0]!.startsWith('Usage:') && mentions(lines[0]!));
  return [
    `Usage: memcore ${name} [options]`,
    '',
    ...own,
    '',
    ...sections.map((l) => l.join('\n') + '\n'),
    blocks.find((b) => b.startsWith('Common options:'))!,
    '',
    blocks.find((b) => b.startsWith('Exit codes:'))!,
  ].join('\n');
}
