/** Every command of the CLI, in the order `memcore --help` lists them. */
import type { Command } from './command.js';
import backupCommand from './commands/backup.js';
import checkCommand from './commands/check.js';
import codeRefsCommand from './commands/code-refs.js';
import configCommand from './commands/config.js';
import contextCommand from './commands/context.js';
import coreMemoryCommand from './commands/core-memory.js';
import deleteCommand from './commands/delete.js';
import { diffCommand } from './commands/diff.js';
import doctorCommand from './commands/doctor.js';
import evalCommand from './commands/eval.js';
import exportCommand from './commands/export.js';
import feedbackCommand from './commands/feedback.js';
import findCommand from './commands/find.js';
import { forgetCommand } from './commands/forget.js';
import gapsCommand from './commands/gaps.js';
import goldenPathCommand from './commands/golden-path.js';
import goldenPathsCommand from './commands/golden-paths.js';
import importCodeCommand from './commands/import-code.js';
import importCommand from './commands/import.js';
import indexCommand from './commands/index.js';
import initCommand from './commands/init.js';
import ingestCommand from './commands/ingest.js';
import listCommand from './commands/list.js';
import mcpCommand from './commands/mcp.js';
import migrateCommand from './commands/migrate.js';
import reembedCommand from './commands/reembed.js';
import { rememberCommand } from './commands/remember.js';
import relatedToCodeCommand from './commands/related-to-code.js';
import restoreCommand from './commands/restore.js';
import searchCommand from './commands/search.js';
import serveCommand from './commands/serve.js';
import showCommand from './commands/show.js';
import statsCommand from './commands/stats.js';
import traverseCommand from './commands/traverse.js';
import uiCommand from './commands/ui.js';

export const COMMANDS: Record<string, Command> = {
  ingest: ingestCommand,
  import: importCommand,
  'import-code': importCodeCommand,
  check: checkCommand,
  context: contextCommand,
  eval: evalCommand,
  config: configCommand,
  find: findCommand,
  search: searchCommand,
  traverse: traverseCommand,
  'related-to-code': relatedToCodeCommand,
  'golden-paths': goldenPathsCommand,
  index: indexCommand,
  'code-refs': codeRefsCommand,
  'golden-path': goldenPathCommand,
  delete: deleteCommand,
  init: initCommand,
  remember: rememberCommand,
  forget: forgetCommand,
  diff: diffCommand,
  feedback: feedbackCommand,
  gaps: gapsCommand,
  stats: statsCommand,
  list: listCommand,
  show: showCommand,
  export: exportCommand,
  backup: backupCommand,
  restore: restoreCommand,
  doctor: doctorCommand,
  reembed: reembedCommand,
  'core-memory': coreMemoryCommand,
  serve: serveCommand,
  ui: uiCommand,
  mcp: mcpCommand,
  migrate: migrateCommand,
};
