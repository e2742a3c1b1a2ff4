import path from 'node:path';
import { Command, CommanderError } from 'commander';
import type { CaptionStyle, CreateJobRequest } from '@captionfarm/sdk';
import {
  EditRequestSchema,
  FILLER_MODES,
  HookTitleSchema,
  issuesToDetails,
  PROFANITY_MODES,
  ReplacementsSchema,
  SILENCE_PACES,
  VocabularySchema,
  type Replacement,
} from '@captionfarm/contracts';
import { CliError, UsageError } from '../output.ts';
import { defineFraming, framingFiles, framingRequest, type FramingFiles, type FramingOptions } from './burn-framing.ts';
import { configureTree, usageText } from '@captionfarm/process/command-line';

// burn's command line: its definition (read by `captionfarm --help` without loading the SDK) and the
// checks that turn it into a plan. The run itself is in burn.ts.

/** `captionfarm burn`'s arguments, options and help. */
export function defineBurn(cmd: Command): Command {
  const burn = cmd
    .summary('caption a local file or https URL and download the result')
    .description(
      [
        'Caption a local video file (uploaded first) or an https:// URL with a template, and save the result.',
        'Shows upload, phase, render percent and download progress with ETAs (plain lines when stdout is not a terminal). ' +
          'Ctrl-C cancels the job; its reserved minutes are refunded.',
        // One code per line: commander wraps each line of a description on its own.
        'Exit codes: 0 saved;\n1 the job failed (failureCode and failureReason printed) or the API refused;\n' +
          '2 usage error (also a request the API rejects as invalid);\n130 cancelled with Ctrl-C.',
        'Uses CAPTIONFARM_API_KEY and CAPTIONFARM_URL (default http://127.0.0.1:8080).',
      ].join('\n\n'),
    )
    .usage('INPUT --template ID [options]')
    .argument('[INPUT...]', 'a local video file (uploaded first) or an https:// URL')
    .option('-t, --template <id>', 'caption template (captionfarm templates list)')
    .option('--format <format>', "output container, mp4 or webm; mov only with --overlay (default: from -o's extension, else mp4, or mov with --overlay)")
    .option('--quality <quality>', 'encoding quality, low, medium or high (default high; minutes are the same)')
    .option('--resolution <WxH>', "output size, e.g. 1080x1920 (default: the source's, within your plan)")
    .option('--language <xx>', 'spoken language, 2 letters (default: detected)')
    .option('--webhook-url <url>', 'also notify this public https URL when the job ends')
    .option('-o, --output <file>', "where to save the video (default: INPUT's name + .captioned.FORMAT)")
    .option('--srt <file>', 'also save the captions as SubRip subtitles')
    .option('--vtt <file>', 'also save the captions as WebVTT subtitles')
    .option(
      '--style <file|json>',
      'per-job style over the template: a JSON file, or inline JSON such as ' +
        `'{"fill":"#FFFFFF","position":{"y":0.8},"emoji":"auto","keywords":["launch"]}' ` +
        '(any template field; captionfarm templates show ID lists them)',
    )
    .option('--font <file|id>', 'render with your own font: a .ttf, .otf or .woff2 file (uploaded and checked first) or the id of a font you uploaded')
    .option('--overlay', 'render only the captions on transparent frames, for your editor: mov (ProRes 4444) or webm (VP9 with alpha)')
    .option(
      '--vocabulary <terms|file>',
      'names, brands and jargon the speech recognizer should expect: comma-separated, e.g. "Captionfarm,Kubernetes", ' +
        "or a file with one term per line (up to 100, each up to 50 characters); replaces the template's",
    )
    .option(
      '--replacements <file|json>',
      'fix recognized words: a JSON file, or inline JSON such as \'[{"from":"caption farm","to":"Captionfarm"},{"from":"um","to":""}]\' ' +
        "(whole words, case-insensitive; up to 200); replaces the template's; not applied to --transcript-in",
    )
    .option(
      '--transcript-in <file>',
      'burn these words instead of recognizing speech: JSON {"words":[{"text","start","end"}],"language"?} in seconds, ' +
        'e.g. from captionfarm jobs transcript ID > words.json, with a word fixed',
    )
    .option('--silences <pace>', 'cut pauses: off, natural (over 0.8 s shortened to 0.3 s), fast (over 0.4 s to 0.15 s) or extra-fast (over 0.2 s to 0.08 s)')
    .option('--fillers <mode>', 'cut fillers: off, safe (um, uh, immediate repeats) or aggressive (also "like", "you know")')
    .option('--zoom', 'punch in (1.06-1.15x, eased) while emphasised words are spoken; the captions are never zoomed')
    .option('--hook <text>', 'a headline over the first seconds (up to 120 characters)')
    .option('--hook-seconds <n>', 'how long the --hook headline shows, 0.5 to 10 (default 3)')
    .option('--profanity <mode>', "off, mask (f*** in the captions and subtitles) or bleep (masked, and a tone over the word's audio)")
    .option(
      '--keep <ranges>',
      'your own cut: the source seconds to keep, e.g. 0-4.2,5.1-12 (ascending; captionfarm jobs edit ID prints those of a finished job, to fix a cut and burn again); ' +
        'replaces --silences and --fillers',
    );
  return defineFraming(burn);
}

/** What commander parsed for burn (option names in camelCase). */
export interface BurnOptions extends FramingOptions {
  template?: string;
  format?: string;
  quality?: string;
  resolution?: string;
  language?: string;
  webhookUrl?: string;
  output?: string;
  srt?: string;
  vtt?: string;
  transcriptIn?: string;
  style?: string;
  font?: string;
  overlay?: boolean;
  vocabulary?: string;
  replacements?: string;
  silences?: string;
  fillers?: string;
  zoom?: boolean;
  hook?: string;
  hookSeconds?: string;
  profanity?: string;
  keep?: string;
}

export interface BurnPlan {
  input: { kind: 'file'; path: string } | { kind: 'url'; url: string };
  output: string;
  request: Omit<CreateJobRequest, 'uploadId' | 'videoUrl'>;
  /** Where to also save the subtitles. */
  subtitles: { srt?: string; vtt?: string };
  /** A words JSON file to burn instead of recognized speech. */
  transcriptIn?: string;
  /** A JSON file holding the per-job style (inline JSON is already in request.style). */
  styleIn?: string;
  /** A font to upload (file) or an uploaded font's id, set as style.font.fontId. */
  font?: { kind: 'file'; path: string } | { kind: 'id'; id: string };
  /** --vocabulary as given: the terms of `path` when it names a file, else comma-separated terms (burn.ts reads it). */
  vocabularyIn?: { value: string; path: string };
  /** A JSON file holding the replacements (inline JSON is already in request.replacements). */
  replacementsIn?: string;
  /** Issue 43, with --outputs or a poster: where each rendition (the first is `output`) and the poster are saved. */
  files?: FramingFiles;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const OUTPUT_EXTENSIONS = ['mp4', 'webm', 'mov'];

/** The file name a URL's path ends with, without extension; null when it has none usable. */
function urlStem(url: URL): string | null {
  const last = url.pathname.split('/').filter(Boolean).pop();
  if (!last) return null;
  let name: string;
  try {
    name = decodeURIComponent(last);
  } catch {
    name = last;
  }
  const stem = name.replace(/\.[^.]*$/, '').replace(/[^\w.-]+/g, '_');
  return stem && stem !== '.' && stem !== '..' ? stem : null;
}

/** Parsed arguments -> what to do, or a UsageError (exit 2). */
export function burnPlan(positionals: string[], values: BurnOptions, cwd: string): BurnPlan {
  if (positionals.length !== 1)
    throw new UsageError(positionals.length === 0 ? 'INPUT is required: a video file or an https:// URL' : `one INPUT only (got ${positionals.length})`);
  if (!values.template) throw new UsageError('--template is required (captionfarm templates list shows the ids)');
  const raw = positionals[0]!;

  let input: BurnPlan['input'];
  let stem: string;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new UsageError(`"${raw}" is not a valid URL`);
    }
    if (url.protocol !== 'https:') throw new UsageError(`only https:// URLs can be captioned (the service fetches public HTTPS URLs); got ${url.protocol}//`);
    input = { kind: 'url', url: url.href };
    stem = urlStem(url) ?? 'captionfarm-output';
  } else {
    input = { kind: 'file', path: path.resolve(cwd, raw) };
    stem = path.basename(raw).replace(/\.[^.]*$/, '') || 'captionfarm-output';
  }

  const outExt = values.output ? path.extname(values.output).slice(1).toLowerCase() : '';
  const overlay = values.overlay === true;
  const format = values.format ?? (OUTPUT_EXTENSIONS.includes(outExt) ? outExt : overlay ? 'mov' : 'mp4');
  if (format !== 'mp4' && format !== 'webm' && format !== 'mov') throw new UsageError(`--format must be mp4, webm or mov, not "${format}"`);
  if (format === 'mov' && !overlay) throw new UsageError('mov is only an overlay output (ProRes 4444 with alpha): add --overlay, or use mp4 or webm');
  if (overlay && format === 'mp4') throw new UsageError('mp4 has no alpha channel: an overlay is mov (ProRes 4444) or webm (VP9 with alpha)');
  if (values.format && OUTPUT_EXTENSIONS.includes(outExt) && outExt !== format) throw new UsageError(`-o ${values.output} does not match --format ${format}`);
  const request: BurnPlan['request'] = { templateId: values.template, format };
  if (overlay) request.overlay = true;
  let styleIn: string | undefined;
  if (values.style !== undefined) {
    if (values.style.trimStart().startsWith('{')) {
      let style: unknown;
      try {
        style = JSON.parse(values.style);
      } catch (err) {
        throw new UsageError(`--style is not valid JSON: ${(err as Error).message}`);
      }
      // Any JSON object: the service validates its fields (400 with the path of each problem).
      request.style = style as CaptionStyle;
    } else {
      styleIn = path.resolve(cwd, values.style);
    }
  }
  let replacementsIn: string | undefined;
  if (values.replacements !== undefined) {
    if (values.replacements.trimStart().startsWith('[')) {
      let replacements: unknown;
      try {
        replacements = JSON.parse(values.replacements);
      } catch (err) {
        throw new UsageError(`--replacements is not valid JSON: ${(err as Error).message}`);
      }
      request.replacements = checkReplacements(replacements, '--replacements');
    } else {
      replacementsIn = path.resolve(cwd, values.replacements);
    }
  }
  if (values.quality !== undefined) {
    if (values.quality !== 'low' && values.quality !== 'medium' && values.quality !== 'high') {
      throw new UsageError(`--quality must be low, medium or high, not "${values.quality}"`);
    }
    request.quality = values.quality;
  }
  if (values.resolution !== undefined) {
    const m = /^(\d{1,5})x(\d{1,5})$/i.exec(values.resolution);
    if (!m || Number(m[1]) === 0 || Number(m[2]) === 0)
      throw new UsageError(`--resolution must look like 1080x1920 (width x height in pixels), not "${values.resolution}"`);
    request.resolution = { width: Number(m[1]), height: Number(m[2]) };
  }
  if (values.language !== undefined) {
    if (!/^[a-z]{2}$/i.test(values.language)) throw new UsageError(`--language must be a 2-letter code such as en or de, not "${values.language}"`);
    request.language = values.language.toLowerCase();
  }
  if (values.webhookUrl !== undefined) request.webhookUrl = values.webhookUrl;
  Object.assign(request, shortsRequest(values, overlay));
  Object.assign(request, framingRequest(values, request));

  // With --outputs, the first rendition is saved as -o: its format names the default file.
  const firstFormat = request.outputs?.[0]?.format ?? format;
  if (values.output && OUTPUT_EXTENSIONS.includes(outExt) && outExt !== firstFormat)
    throw new UsageError(`-o ${values.output} does not match the first rendition's format ${firstFormat} (--outputs)`);
  const output = path.resolve(cwd, values.output ?? `${stem}.captioned.${firstFormat}`);
  if (input.kind === 'file' && output === input.path) throw new UsageError('-o must not be the input file');
  const files = framingFiles(output, request);
  const subtitles: BurnPlan['subtitles'] = {};
  for (const kind of ['srt', 'vtt'] as const) {
    const file = values[kind];
    if (file === undefined) continue;
    subtitles[kind] = path.resolve(cwd, file);
    if (subtitles[kind] === output || (input.kind === 'file' && subtitles[kind] === input.path))
      throw new UsageError(`--${kind} must not be the video's input or output file`);
  }
  if (subtitles.srt && subtitles.srt === subtitles.vtt) throw new UsageError('--srt and --vtt must be different files');
  const plan: BurnPlan = { input, output, request, subtitles };
  if (files) plan.files = checkFiles(files, [input.kind === 'file' ? input.path : undefined, subtitles.srt, subtitles.vtt]);
  if (values.transcriptIn !== undefined) plan.transcriptIn = path.resolve(cwd, values.transcriptIn);
  if (styleIn !== undefined) plan.styleIn = styleIn;
  if (replacementsIn !== undefined) plan.replacementsIn = replacementsIn;
  if (values.vocabulary !== undefined) plan.vocabularyIn = { value: values.vocabulary, path: path.resolve(cwd, values.vocabulary) };
  if (values.font !== undefined)
    plan.font = UUID_RE.test(values.font) ? { kind: 'id', id: values.font.toLowerCase() } : { kind: 'file', path: path.resolve(cwd, values.font) };
  return plan;
}

/** The renditions' and poster's files: none the input, a subtitle file, or another's. */
function checkFiles(files: FramingFiles, taken: (string | undefined)[]): FramingFiles {
  const all = [...files.renditions.slice(1), ...(files.poster ? [files.poster] : [])];
  const seen = new Set<string | undefined>([files.renditions[0], ...taken]);
  for (const file of all) {
    if (seen.has(file)) throw new UsageError(`${path.basename(file)} would be written twice, or over the input or a subtitle file: choose another -o`);
    seen.add(file);
  }
  return files;
}

const oneOf = (flag: string, value: string, allowed: readonly string[]) => {
  if (!allowed.includes(value)) throw new UsageError(`${flag} must be ${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}, not "${value}"`);
  return value;
};

/** "0-4.2,5.1-12" -> [{ start: 0, end: 4.2 }, { start: 5.1, end: 12 }]; the order is checked by the schema. */
function parseKeepRanges(value: string): { start: number; end: number }[] {
  return value.split(',').map((part) => {
    const m = /^\s*(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)\s*$/.exec(part);
    if (!m) throw new UsageError(`--keep takes source seconds as START-END ranges separated by commas, e.g. 0-4.2,5.1-12; "${part}" is not one`);
    return { start: Number(m[1]), end: Number(m[2]) };
  });
}

/**
 * The shorts options of issue 42 (--silences, --fillers, --zoom, --keep, --hook, --hook-seconds,
 * --profanity) as request fields, checked as the service checks them: only the fields given.
 */
function shortsRequest(values: BurnOptions, overlay: boolean): Pick<BurnPlan['request'], 'edit' | 'hookTitle' | 'profanity'> {
  const out: Pick<BurnPlan['request'], 'edit' | 'hookTitle' | 'profanity'> = {};
  const edit: NonNullable<BurnPlan['request']['edit']> = {};
  if (values.silences !== undefined) edit.silences = oneOf('--silences', values.silences, SILENCE_PACES) as typeof edit.silences;
  if (values.fillers !== undefined) edit.fillers = oneOf('--fillers', values.fillers, FILLER_MODES) as typeof edit.fillers;
  if (values.zoom) edit.zoom = 'emphasis';
  if (values.keep !== undefined) {
    if ((edit.silences ?? 'off') !== 'off' || (edit.fillers ?? 'off') !== 'off')
      throw new UsageError('--keep gives the cut itself: drop --silences and --fillers (or set them to off)');
    edit.keep = parseKeepRanges(values.keep);
  }
  if (Object.keys(edit).length > 0) {
    if (overlay)
      throw new UsageError('--overlay lays the captions over the untouched source: it cannot cut or zoom (drop --silences, --fillers, --zoom and --keep)');
    const parsed = EditRequestSchema.safeParse(edit);
    if (!parsed.success)
      throw new UsageError(`--keep is not a valid cut:${problems(parsed.error.issues, (p) => p.replace(/^keep\.(\d+)/, (_, i) => `range ${Number(i) + 1}`))}`);
    out.edit = edit;
  }
  if (values.hookSeconds !== undefined && values.hook === undefined) throw new UsageError('--hook-seconds needs --hook "the headline"');
  if (values.hook !== undefined) {
    const hook: NonNullable<BurnPlan['request']['hookTitle']> = { text: values.hook };
    if (values.hookSeconds !== undefined) {
      if (!/^\d+(\.\d+)?$/.test(values.hookSeconds.trim())) throw new UsageError(`--hook-seconds must be a number of seconds, not "${values.hookSeconds}"`);
      hook.seconds = Number(values.hookSeconds);
    }
    const parsed = HookTitleSchema.safeParse(hook);
    if (!parsed.success)
      throw new UsageError(
        `--hook is not a valid hook title:${problems(parsed.error.issues, (p) => (p === 'text' ? '--hook' : p === 'seconds' ? '--hook-seconds' : p))}`,
      );
    out.hookTitle = hook;
  }
  if (values.profanity !== undefined) {
    out.profanity = oneOf('--profanity', values.profanity, PROFANITY_MODES) as NonNullable<typeof out.profanity>;
    if (overlay && out.profanity === 'bleep') throw new UsageError('an --overlay has no audio to bleep: use --profanity mask');
  }
  return out;
}

/**
 * burn's argv (after `burn`) -> what to do, parsed by the same definition as the CLI; `null` for
 * --help. Errors are CliErrors with exit 2 and the usage.
 */
export function parseBurnArgs(argv: string[], cwd: string = process.cwd()): BurnPlan | null {
  const cmd = defineBurn(new Command('captionfarm').command('burn'));
  configureTree(cmd, { writeOut: () => {}, writeErr: () => {} });
  try {
    cmd.parse(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return null;
      throw new CliError(`${err.message.replace(/^error: /, '')}\n\n${usageText(cmd)}`, 2);
    }
    throw err;
  }
  try {
    return burnPlan(cmd.args, cmd.opts<BurnOptions>(), cwd);
  } catch (err) {
    if (err instanceof UsageError) throw new CliError(`${err.message}\n\n${usageText(cmd)}`, 2);
    throw err;
  }
}

/** What --replacements holds, checked as the service does (each problem with its path), before anything is uploaded. */
export function checkReplacements(value: unknown, what: string): Replacement[] {
  const parsed = ReplacementsSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new UsageError(`${what} is not a valid list of {"from","to"} replacements:${problems(parsed.error.issues)}`);
}

/**
 * The terms of --vocabulary: one a line when `text` is a file's (blank lines skipped), else
 * comma-separated; checked as the service does.
 */
export function vocabularyTerms(text: string, what: string, fromFile: boolean): string[] {
  const terms = text.split(fromFile ? /\r?\n/ : ',').filter((t) => t.trim() !== '');
  const parsed = VocabularySchema.safeParse(terms);
  if (parsed.success) return parsed.data;
  throw new UsageError(`${what} is not a valid vocabulary:${problems(parsed.error.issues)}`);
}

function problems(issues: Parameters<typeof issuesToDetails>[0], name: (path: string) => string = (p) => p.replace(/^(\d+)/, '[$1]')): string {
  const details = issuesToDetails(issues);
  const lines = details
    .slice(0, 10)
    .map((d) => `\n  ${d.path === '' ? '(list)' : name(d.path)}: ${d.message}`)
    .join('');
  return `${lines}${details.length > 10 ? `\n  ... and ${details.length - 10} more` : ''}`;
}
