/**
 * `.ci/readme-check`: every command the README gives, run verbatim as a newcomer would.
 *
 * The checkout is cloned (`git clone`, so what is committed is what is checked) into a temp
 * folder; the README's ```sh blocks run there in order, each with bash -e, and fail the check on
 * any non-zero exit, naming the block and the line. A block after `<!-- readme-check: in project -->`
 * runs in a fresh project instead: a small git repository of its own (a README, a decision record,
 * a TypeScript file; main and a branch with one more commit), as "run in your own repository" means. A block after
 * `<!-- readme-check: skip (why) -->` is not run, and the reason is printed. Every agent config
 * (```json with `mcpServers`) of the README and docs/agents.md is exercised exactly as written:
 * the MCP SDK client spawns its command from the project and calls `build_task_context`.
 *
 * `npm link` and any other global install go to a temp npm prefix whose bin is put first on PATH,
 * so the machine's global folder is not touched. The clone gets a hard-linked copy of the
 * checkout's node_modules (which .ci/run has just installed with `npm ci` from the same lockfile)
 * unless `--fresh-install` is given: then the README's `npm install` fetches everything itself.
 *
 * Usage: .ci/readme-check [--list] [--fresh-install] [--keep]
 *        .ci/readme-check --mcp-config '<json>' --in <dir>   (one agent config, as .ci/pack-check uses it)
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DOCS = ['README.md', 'docs/agents.md'];
const BLOCK_SECONDS = 600;
const MCP_SECONDS = 120;

export interface Block {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  text: string;
  /** From the marker comment right above the fence. */
  where: 'clone' | 'project';
  skip?: string;
}

const MARKER = /^<!--\s*readme-check:\s*(.*?)\s*-->$/;

/** The fenced blocks of a markdown file, each with the marker above it; a marker the checker does not know is an error. */
export function blocksOf(file: string, markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`${file}:${i + 1}: a code block that is never closed`);
    let above = i - 1;
    while (above >= 0 && lines[above]!.trim() === '') above--;
    const marker = above >= 0 ? MARKER.exec(lines[above]!.trim()) : null;
    const block: Block = { file, line: i + 1, lang: open[1]!, text: lines.slice(i + 1, end).join('\n'), where: 'clone' };
    if (marker) {
      const m = marker[1]!;
      const skip = /^skip\s*\((.+)\)$/.exec(m);
      if (skip) block.skip = skip[1]!;
      else if (m === 'in project') block.where = 'project';
      else throw new Error(`${file}:${above + 1}: unknown readme-check marker "${m}"; use "skip (why)" or "in project"`);
    }
    blocks.push(block);
    i = end;
  }
  return blocks;
}

interface McpServerConfig {
  command: string;
  args?: string[];
  env?: Record<string, string>;
}

/** The agent configs of a ```json block: `{ "mcpServers": { name: { command, args, env } } }`. */
function mcpConfigs(block: Block): [string, McpServerConfig][] {
  let value: unknown;
  try {
    value = JSON.parse(block.text);
  } catch (e) {
    throw new Error(`${block.file}:${block.line}: the JSON block does not parse: ${(e as Error).message}`);
  }
  const servers = (value as { mcpServers?: Record<string, McpServerConfig> }).mcpServers;
  return servers ? Object.entries(servers) : [];
}

/**
 * Every `npx memcore` of README.md and docs/*.md, as `file:line`: memcore is not published, so
 * npx would fetch and run whatever a registry holds under that name (without asking, off a TTY).
 */
export function npxMemcore(files: [name: string, text: string][]): string[] {
  return files.flatMap(([name, text]) =>
    text.split('\n').flatMap((line, i) => (/\bnpx\s+(?:-\S+\s+)*memcore\b/.test(line) ? [`${name}:${i + 1}: ${line.trim()}`] : [])),
  );
}

/** A small repository of someone's own, where "in your repository" blocks run. */
function makeProject(dir: string): void {
  const files: Record<string, string> = {
    'README.md':
      '# Orders service\n\nAn HTTP service that takes and stores orders.\n\n## Storage\n\nOrders are rows of the `orders` table; `saveOrder` in src/orders.ts writes one.\n',
    'docs/adr/0001-use-postgres.md':
      '# ADR 1: Store orders in Postgres\n\n## Status\n\nAccepted\n\n## Decision\n\nOrders live in Postgres, one row an order, written in one transaction with their lines.\n',
    'src/orders.ts':
      'export interface Order {\n  id: string;\n  total: number;\n}\n\nexport function saveOrder(order: Order): string {\n  return `insert ${order.id}`;\n}\n',
  };
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  const git = (...args: string[]) => {
    const r = spawnSync('git', ['-c', 'user.name=readme-check', '-c', 'user.email=check@example.invalid', ...args], { cwd: dir });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')} in ${dir}: ${r.stderr.toString()}`);
  };
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'orders service');
  // Work on a branch, as "the lessons for this branch" (context --diff main..HEAD) assumes.
  git('checkout', '-q', '-b', 'refunds');
  writeFileSync(
    join(dir, 'src/orders.ts'),
    `${files['src/orders.ts']}\nexport function refundOrder(order: Order): string {\n  return \`refund \${order.id}\`;\n}\n`,
  );
  git('commit', '-q', '-am', 'refunds');
}

/** Runs one sh block with bash -e; on failure, the README line of the command that failed. */
function runShell(block: Block, cwd: string, env: NodeJS.ProcessEnv): Promise<{ ok: true } | { ok: false; why: string; output: string }> {
  // Line 1 is this header, so the block's line n is the script's line n + 1.
  const header = `set -eE -o pipefail; trap 'echo "$LINENO	$BASH_COMMAND" > "$READMECHECK_FAILED"' ERR`;
  const failedFile = join(tmpdir(), `readme-check-failed-${process.pid}-${block.line}`);
  rmSync(failedFile, { force: true });
  return new Promise((done) => {
    const child = spawn('bash', ['-c', `${header}\n${block.text}\n`], {
      cwd,
      env: { ...env, READMECHECK_FAILED: failedFile },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    const keep = (d: Buffer) => {
      output += d.toString();
      process.stdout.write(d.toString().replace(/^(?=.)/gm, '  | '));
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, BLOCK_SECONDS * 1000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return done({ ok: true });
      if (signal)
        return done({
          ok: false,
          output,
          why: `did not finish within ${BLOCK_SECONDS} s (a server that runs until stopped? mark the block <!-- readme-check: skip (why) -->)`,
        });
      const failed = existsSync(failedFile) ? readFileSync(failedFile, 'utf8').trim() : '';
      rmSync(failedFile, { force: true });
      const [lineNo, command] = failed.split('\t');
      const at = lineNo ? `${block.file}:${block.line + Number(lineNo) - 1}` : `${block.file}:${block.line}`;
      done({ ok: false, output, why: `${at}: \`${command ?? block.text.split('\n')[0]}\` exited ${code}` });
    });
  });
}

/** Spawns the configured command as an agent would, from the project, and asks it for a task's context. */
async function runMcpConfig(name: string, config: McpServerConfig, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  if (/^(npx|pnpx|bunx|pnpm|yarn)$/.test(config.command))
    throw new Error(`"${name}" runs ${config.command}, which fetches a package by that name from a registry: memcore is not published`);
  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args ?? [],
    cwd,
    env: { ...(env as Record<string, string>), ...config.env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'readme-check', version: '1.0.0' });
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`no answer within ${MCP_SECONDS} s; its stderr: ${stderr.trim()}`)), MCP_SECONDS * 1000).unref(),
  );
  try {
    const work = (async () => {
      await client.connect(transport);
      const tools = (await client.listTools()).tools.map((t) => t.name);
      if (!tools.includes('build_task_context')) throw new Error(`no build_task_context among its tools (${tools.join(', ')})`);
      const result = await client.callTool({ name: 'build_task_context', arguments: { task: 'change how orders are stored' } });
      const text = (result.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('\n');
      if (result.isError) throw new Error(`build_task_context answered an error: ${text}`);
      if (!text.includes('<memory')) throw new Error(`build_task_context answered no <memory> block: ${text.slice(0, 300)}`);
      return text;
    })();
    return await Promise.race([work, timeout]);
  } catch (e) {
    throw new Error(`${(e as Error).message}${stderr ? `\n  its stderr: ${stderr.trim().split('\n').slice(-5).join('\n  ')}` : ''}`);
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** Stops a server a block left running (`memcore ui` starts one in the background). */
function stopServer(folder: string): void {
  try {
    const { pid } = JSON.parse(readFileSync(join(folder, '.memcore', 'server.json'), 'utf8')) as { pid: number };
    process.kill(pid, 'SIGTERM');
    console.log(`stopped the server a block started in ${folder} (pid ${pid})`);
  } catch {
    // none runs
  }
}

/** `--mcp-config '<json>' --in <dir>`: exercises one agent config (an mcpServers object) from a folder. */
async function checkOneConfig(json: string, dir: string): Promise<number> {
  const block: Block = { file: '--mcp-config', line: 1, lang: 'json', text: json, where: 'project' };
  const configs = mcpConfigs(block);
  if (configs.length === 0) throw new Error('--mcp-config takes { "mcpServers": { name: { command, args } } }');
  for (const [name, config] of configs) {
    const text = await runMcpConfig(name, config, resolve(dir), process.env);
    console.log(`${name}: ${config.command} ${(config.args ?? []).join(' ')} → build_task_context: ${text.split('\n')[0]}`);
  }
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const config = argv.indexOf('--mcp-config');
  if (config >= 0) {
    const dir = argv.indexOf('--in');
    if (argv[config + 1] === undefined || dir < 0 || argv[dir + 1] === undefined) {
      console.error("readme-check: usage: .ci/readme-check --mcp-config '<json>' --in <dir>");
      return 2;
    }
    return checkOneConfig(argv[config + 1]!, argv[dir + 1]!).catch((e: Error) => {
      console.error(`readme-check: ${e.message}`);
      return 1;
    });
  }
  const list = argv.includes('--list');
  const fresh = argv.includes('--fresh-install');
  const keep = argv.includes('--keep');
  const unknown = argv.filter((a) => !['--list', '--fresh-install', '--keep'].includes(a));
  if (unknown.length > 0) {
    console.error(`readme-check: unknown argument ${unknown[0]}; usage: .ci/readme-check [--list] [--fresh-install] [--keep]`);
    return 2;
  }
  const work = mkdtempSync(join(tmpdir(), 'memcore-readme-check-'));
  const clone = join(work, 'memcore');
  const project = join(work, 'project');
  const prefix = join(work, 'npm-global');
  const started = Date.now();
  const seconds = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;
  const cloned = spawnSync('git', ['clone', '-q', repo, clone], { stdio: 'inherit' });
  if (cloned.status !== 0) return 1;
  const docs = [
    'README.md',
    ...readdirSync(join(clone, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const fetching = npxMemcore(docs.map((f) => [f, readFileSync(join(clone, f), 'utf8')]));
  if (fetching.length > 0) {
    console.log(
      `readme-check FAILED: \`npx memcore\` would fetch a package of that name from a registry; write \`memcore\` (after the README's install) or \`npm run memcore --\` (in the clone):`,
    );
    for (const line of fetching) console.log(`  ${line}`);
    rmSync(work, { recursive: true, force: true });
    return 1;
  }
  const blocks = DOCS.flatMap((f) => blocksOf(f, readFileSync(join(clone, f), 'utf8'))).filter(
    (b) => b.lang === 'sh' || (b.lang === 'json' && mcpConfigs(b).length > 0),
  );
  if (list) {
    for (const b of blocks)
      console.log(`${b.file}:${b.line} ${b.lang} ${b.skip ? `skip (${b.skip})` : `in ${b.lang === 'json' ? 'project' : b.where}`}`);
    rmSync(work, { recursive: true, force: true });
    return 0;
  }
  if (!fresh && existsSync(join(repo, 'node_modules')))
    spawnSync('cp', ['-al', join(repo, 'node_modules'), join(clone, 'node_modules')], { stdio: 'inherit' });
  mkdirSync(project);
  makeProject(project);
  mkdirSync(prefix);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    npm_config_prefix: prefix,
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    // An npx that would install a package refuses instead: nothing is fetched by name behind a block's back.
    npm_config_yes: 'false',
    PATH: [join(prefix, 'bin'), process.env.PATH].join(delimiter),
  };
  // Whatever the shell that runs .ci/run was given (npm run sets these), a block starts as a newcomer's shell does.
  for (const name of Object.keys(env)) if (name.startsWith('npm_') && !name.startsWith('npm_config_')) delete env[name];
  delete env.MEMCORE_DB;

  const failures: string[] = [];
  let ran = 0;
  try {
    for (const block of blocks) {
      const place = block.lang === 'json' || block.where === 'project' ? 'a fresh project' : 'the clone';
      const title = `${block.file}:${block.line} (${block.lang}, in ${place})`;
      if (block.skip) {
        console.log(`-- ${title}: skipped: ${block.skip}`);
        continue;
      }
      console.log(`== ${title} [${seconds()}]`);
      ran++;
      if (block.lang === 'sh') {
        const r = await runShell(block, block.where === 'clone' ? clone : project, env);
        if (!r.ok) {
          failures.push(r.why);
          console.log(`FAILED ${r.why}`);
          break; // later blocks build on this one
        }
        continue;
      }
      // An agent config is used in the agent's repository: always the project, never the clone.
      for (const [name, config] of mcpConfigs(block)) {
        try {
          const text = await runMcpConfig(name, config, project, env);
          console.log(`  | ${name}: ${config.command} ${(config.args ?? []).join(' ')} → build_task_context: ${text.split('\n')[0]}`);
        } catch (e) {
          const why = `${block.file}:${block.line}: the agent config "${name}" (${config.command} ${(config.args ?? []).join(' ')}): ${(e as Error).message}`;
          failures.push(why);
          console.log(`FAILED ${why}`);
        }
      }
    }
  } finally {
    stopServer(clone);
    stopServer(project);
    if (keep || failures.length > 0) console.log(`the clone and the project are kept in ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
  const skipped = blocks.filter((b) => b.skip).length;
  if (failures.length > 0) {
    console.log(`readme-check FAILED after ${seconds()}:\n${failures.map((f) => `  ${f}`).join('\n')}`);
    return 1;
  }
  console.log(`readme-check ok: ${ran} blocks run, ${skipped} skipped, in ${seconds()}`);
  return 0;
}

// Run when executed (.ci/readme-check), not when a test imports the parsing.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  process.exitCode = await main(process.argv.slice(2));
