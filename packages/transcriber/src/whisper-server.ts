/**
 * The one wrapper for whisper.cpp's `whisper-server` (started through runProcess, like every child):
 * a child process that loads the model once and transcribes WAV files posted to it over loopback HTTP. A crash or a bad model kills
 * the child, never us: the caller gets a TranscriptionError with the end of its stderr.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { TranscriptionError } from './errors.ts';
import { runProcess } from '@captionfarm/process';

export interface WhisperServerConfig {
  /** Directory with the `whisper-server` binary. */
  binDir: string;
  /** Path of a ggml model file. */
  model: string;
  threads: number;
  /** DTW alignment-heads preset (e.g. 'base'); DTW needs flash attention off in the decoder (patch 0003 keeps it in the encoder). */
  dtw?: string | undefined;
  /** How long model loading may take before we give up. */
  readyTimeoutMs?: number;
  /** The child's environment. */
  env?: NodeJS.ProcessEnv;
}

/** Command-line args of whisper-server (pure). */
export function whisperServerArgs(cfg: { model: string; threads: number; port: number; dtw?: string | undefined }): string[] {
  const args = ['--model', cfg.model, '--threads', String(cfg.threads), '--host', '127.0.0.1', '--port', String(cfg.port)];
  if (cfg.dtw) args.push('--dtw', cfg.dtw, '--no-flash-attn');
  return args;
}

export interface InferenceParams {
  /** A whisper language code, or 'auto' to detect. */
  language: string;
  /** 1 = greedy decoding (best_of candidates at temperature > 0); > 1 = beam search. */
  beamSize: number;
  bestOf: number;
  noSpeechThreshold: number;
  /**
   * Temperature fallback step: a window whose decoding fails the entropy or log-probability
   * threshold is decoded again at +0.2, +0.4... up to 1.0 (sampling). 0: no fallback.
   */
  temperatureInc: number;
  /** Only detect the language (no transcription) and report its probability. */
  detectLanguage?: boolean;
  /**
   * CPU threads for this request (our patch 0004; the server keeps it for the next request, so
   * every request sends it).
   */
  threads: number;
  /** Text the decoder is given as what came before (whisper's initial prompt): names and terms to expect. */
  prompt?: string | undefined;
}

/**
 * whisper.cpp's decoder-failure thresholds, sent on every request (the server's defaults today,
 * named here so that a server default changing does not change our decoding): a window fails, and
 * falls back to the next temperature, when its average token entropy is below 2.4 (whisper.cpp's
 * stand-in for openai/whisper's compression ratio of 2.4: repetitive output has low entropy) or
 * its average log-probability is below -1.
 */
const ENTROPY_THRESHOLD = 2.4;
const LOGPROB_THRESHOLD = -1;

/**
 * The multipart fields of one /inference request (pure). The server keeps every field it was
 * given for the next request, so every request sets all the fields it depends on.
 */
export function inferenceFields(p: InferenceParams): Record<string, string> {
  return {
    response_format: 'verbose_json',
    language: p.language,
    translate: 'false',
    detect_language: String(p.detectLanguage ?? false),
    // The default (false) re-runs the encoder after the transcription to list language
    // probabilities: +1 encoder pass, only worth it when we detect the language.
    no_language_probabilities: String(!p.detectLanguage),
    token_timestamps: 'true',
    no_timestamps: 'false',
    split_on_word: 'false',
    max_len: '0',
    offset_t: '0',
    duration: '0',
    prompt: p.prompt ?? '',
    temperature: '0',
    temperature_inc: String(p.temperatureInc),
    entropy_thold: String(ENTROPY_THRESHOLD),
    logprob_thold: String(LOGPROB_THRESHOLD),
    beam_size: String(p.beamSize > 1 ? p.beamSize : -1),
    best_of: String(p.bestOf),
    no_speech_thold: String(p.noSpeechThreshold),
    suppress_non_speech: 'true',
    vad: 'false',
    threads: String(p.threads),
  };
}

/** A free loopback port. Raced by other processes in theory; start() retries on bind failure. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

function get(port: number, path: string, timeoutMs: number): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

export interface WhisperServer {
  readonly port: number;
  /** False once the child has exited (crashed or closed). */
  readonly alive: boolean;
  /**
   * CPU seconds the child has used so far (Linux /proc; null elsewhere). Unlike wall time it
   * does not grow when other work shares the cores, so time budgets are counted in it.
   */
  cpuSeconds(): number | null;
  /** The end of the child's stderr (whisper.cpp's log: one "processing ..." line per request, with its threads). */
  stderrTail(): string;
  /** POSTs a 16 kHz mono WAV; resolves with the parsed JSON answer. */
  infer(wavPath: string, fields: Record<string, string>, signal?: AbortSignal): Promise<unknown>;
  close(): Promise<void>;
}

const STDERR_KEEP = 8000;

/** utime + stime of a process from /proc/PID/stat, in seconds (USER_HZ is 100 on Linux). */
function processCpuSeconds(pid: number | undefined): number | null {
  if (pid === undefined || process.platform !== 'linux') return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

const tail = (s: string, n = 1500) => (s.length > n ? `...${s.slice(-n)}` : s).trim();

/** Starts whisper-server and resolves once the model is loaded and the port answers. */
export async function startWhisperServer(cfg: WhisperServerConfig): Promise<WhisperServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(cfg, await freePort());
    } catch (err) {
      if (attempt < 3 && err instanceof PortTakenError) continue;
      throw err;
    }
  }
}

class PortTakenError extends Error {}

async function startOnce(cfg: WhisperServerConfig, port: number): Promise<WhisperServer> {
  const binary = join(cfg.binDir, 'whisper-server');
  const child = runProcess(binary, { args: whisperServerArgs({ ...cfg, port }), stdout: 'ignore', env: cfg.env, stderrTailChars: STDERR_KEEP });
  let exit: { code: number | null; signal: NodeJS.Signals | null; error?: Error } | null = null;
  const exited = child.done.then(
    (r) => {
      exit = { code: r.exitCode, signal: r.exitSignal };
    },
    (error: Error) => {
      exit = { code: null, signal: null, error };
    },
  );
  const stderr = () => child.stderrTail();
  const describeExit = () => {
    const e = exit!;
    if (e.error) return `could not start ${binary}: ${e.error.message}`;
    return `whisper.cpp exited (${e.signal ? `signal ${e.signal}` : `code ${e.code}`}): ${tail(stderr()) || 'no output'}`;
  };

  // Model loading happens before the port is bound, so the first answer means "loaded".
  const deadline = Date.now() + (cfg.readyTimeoutMs ?? 120_000);
  while ((await get(port, '/health', 1000)) !== 200) {
    if (exit) {
      if (/couldn't bind to server socket/.test(stderr())) throw new PortTakenError(stderr());
      throw new TranscriptionError('transcription-failed', `whisper.cpp could not load model ${cfg.model}: ${describeExit()}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new TranscriptionError(
        'transcription-failed',
        `whisper.cpp did not load ${cfg.model} within ${cfg.readyTimeoutMs ?? 120_000} ms: ${tail(stderr())}`,
      );
    }
    await delay(50);
  }

  const infer = async (wavPath: string, fields: Record<string, string>, signal?: AbortSignal): Promise<unknown> => {
    if (exit) throw new TranscriptionError('transcription-failed', describeExit());
    const boundary = `captionfarm-${randomUUID()}`;
    const head = Buffer.from(
      Object.entries(fields)
        .map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
        .join('') + `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="audio.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
    );
    const end = Buffer.from(`\r\n--${boundary}--\r\n`);
    const size = (await stat(wavPath)).size;
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      // node:http rather than fetch: fetch gives up after 300 s without response headers, and a
      // long file on a CPU takes longer than that. The caller's signal bounds the wait instead.
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/inference',
          method: 'POST',
          signal,
          headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + size + end.length },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (d: string) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.write(head);
      const file = createReadStream(wavPath);
      file.on('error', (err) => req.destroy(err));
      file.on('end', () => req.end(end));
      file.pipe(req, { end: false });
    }).catch(async (err: unknown) => {
      if (signal?.aborted) throw signal.reason;
      // A reset connection usually means the child died: wait briefly for its exit status.
      await Promise.race([exited, delay(500)]);
      if (exit) throw new TranscriptionError('transcription-failed', `whisper.cpp crashed: ${describeExit()}`, { cause: err });
      throw new TranscriptionError('transcription-failed', `whisper.cpp request failed: ${(err as Error).message}`, { cause: err });
    });
    if (status !== 200) {
      throw new TranscriptionError('transcription-failed', `whisper.cpp answered HTTP ${status}: ${body.replace(/\s+/g, ' ').trim().slice(0, 500)}`);
    }
    try {
      return JSON.parse(body) as unknown;
    } catch (err) {
      throw new TranscriptionError('transcription-failed', `whisper.cpp answered invalid JSON: ${tail(body, 200)}`, { cause: err });
    }
  };

  const close = async () => {
    if (exit) return;
    child.kill('SIGTERM'); // whisper-server stops its HTTP loop and frees the model
    const killer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(killer);
  };

  return {
    port,
    cpuSeconds: () => processCpuSeconds(child.pid),
    stderrTail: stderr,
    get alive() {
      return exit === null;
    },
    infer,
    close,
  };
}
