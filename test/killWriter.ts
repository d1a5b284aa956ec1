import { spawn } from 'node:child_process';
import { scriptArgs } from './cliProcess.js';

/**
 * Runs a writer process (a .ts script of test/fixtures/, run compiled, and its arguments), hands each line it prints to `onLine`,
 * and kills it with SIGKILL once `onLine` says so; resolves when it is gone (killed, or done with
 * exit code 0), rejects with its stderr otherwise. The crash property tests' writers print a line
 * per acknowledged write.
 */
export function killWriterWhen(script: string, args: string[], onLine: (line: string) => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, scriptArgs(script, args), { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    let out = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        if (onLine(line)) child.kill('SIGKILL');
      }
    });
    child.once('exit', (code, signal) =>
      signal === 'SIGKILL' || code === 0 ? resolve() : reject(new Error(`writer exited with ${code}: ${err}`)),
    );
  });
}
