import path from 'node:path';
import { execa } from 'execa';
import { BIN } from './cli-process.ts';

/**
 * A pseudo-terminal driver in python3's pty module (node-pty needs a native build): the command
 * runs as the session leader of a new pty (100x30), everything it prints is copied to our stdout,
 * and bytes written to our stdin go to the pty master, so "\x03" is a real Ctrl-C: the terminal
 * line discipline turns it into SIGINT for the foreground process group. Exit status passes
 * through (128 + signal for a signal).
 */
const PTY_DRIVER = `
import os, pty, sys, select, fcntl, termios, struct
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 30, 100, 0, 0))
stdin_open = True
while True:
    r, _, _ = select.select([fd] + ([0] if stdin_open else []), [], [])
    if fd in r:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b''
        if not data:
            break
        os.write(1, data)
    if stdin_open and 0 in r:
        d = os.read(0, 1024)
        if d:
            os.write(fd, d)
        else:
            stdin_open = False
_, st = os.waitpid(pid, 0)
code = os.waitstatus_to_exitcode(st)
sys.exit(code if code >= 0 else 128 - code)
`;

export interface PtyRun {
  /** Everything printed so far, raw (escape sequences and \\r included). */
  raw(): string;
  /** What a person would read: escape sequences removed, each \\r-redraw kept as its own line. */
  text(): string;
  /** Resolves with text() once `pattern` appears in it; rejects after `ms` or if the process exits first. */
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpMatchArray>;
  /** Types into the terminal ("\\x03" is Ctrl-C). */
  type(s: string): void;
  exit: Promise<number>;
  kill(): void;
}

function stripAnsi(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r\n?/g, '\n');
}

const ROOT = path.resolve(import.meta.dirname, '../../..');

/**
 * The CLI in a pseudo-terminal. `viaNpm` runs it exactly as the README does,
 * `npm run -s captionfarm -- ...` from the repository root (npm and tsx in between).
 */
export function cliInPty(args: string[], env: Record<string, string>, cwd?: string, opts: { viaNpm?: boolean } = {}): PtyRun {
  const command = opts.viaNpm ? ['npm', 'run', '-s', 'captionfarm', '--', ...args] : [process.execPath, BIN, ...args];
  // execa itself, not the process module: the test types into this child's stdin while it runs.
  const child = execa('python3', ['-c', PTY_DRIVER, ...command], {
    env: { ...process.env, ...env },
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'inherit',
    buffer: false,
    reject: false,
    cwd: opts.viaNpm ? ROOT : (cwd ?? process.cwd()),
  });
  let out = '';
  const waiters = new Set<() => void>();
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => {
    out += d;
    for (const w of waiters) w();
  });
  const exit = child.then((r) => r.exitCode ?? -1);
  let exited = false;
  void exit.then(() => {
    exited = true;
    for (const w of waiters) w();
  });
  const run: PtyRun = {
    raw: () => out,
    text: () => stripAnsi(out),
    waitFor(pattern, ms = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = run.text().match(pattern);
          if (m) {
            done();
            resolve(m);
          } else if (exited) {
            done();
            reject(new Error(`the CLI exited before printing ${pattern}; it printed:\n${run.text()}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out waiting for ${pattern}; the CLI printed:\n${run.text()}`));
        }, ms);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    type(s) {
      child.stdin.write(s);
    },
    exit,
    kill() {
      child.kill('SIGKILL');
    },
  };
  return run;
}

export const JOB_ID = /job ([0-9a-f-]{36}):/;
