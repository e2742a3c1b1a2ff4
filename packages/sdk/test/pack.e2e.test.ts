import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess, runToEnd } from '@captionfarm/process';
import { makeTestClip, startHarness, type Harness } from '../../../apps/control-plane/test/harness.ts';

// The SDK as its users get it: built (tsup: one ESM file and one .d.ts), packed with `npm pack`,
// installed into a fresh project outside the repository, type-checked with tsc against the packed
// .d.ts and run with plain node (no tsx) against a real control plane.

/** A tool run to its end through the process module, in `cwd`; rejects on a non-zero exit. */
const run = (binary: string, args: string[], o: { cwd: string }) => runToEnd(binary, { args, cwd: o.cwd });
const sdkDir = path.resolve(import.meta.dirname, '..');
const repo = path.resolve(sdkDir, '../..');
const tsc = path.join(repo, 'node_modules/typescript/bin/tsc');

const EXAMPLE = `import {
  createClient,
  isApiError,
  isTerminal,
  type CaptionStyle,
  type EditRequest,
  type Job,
  type JobOutputs,
  type OutputRequest,
  type TemplateSummary,
} from '@captionfarm/sdk';

const [baseUrl, apiKey, video] = process.argv.slice(2) as [string, string, string];
const cf = createClient({ baseUrl, apiKey });

const templates: TemplateSummary[] = await cf.listTemplates();
const upload = await cf.uploadFile(video);
const style: CaptionStyle = { font: { size: 8, weight: 700 }, text: { case: 'upper' }, active: { color: '#FF0000' }, emoji: 'auto', keywords: ['launch'] };
const edit: EditRequest = { silences: 'fast', zoom: 'emphasis' };
const job: Job = await cf.createJob({ uploadId: upload.uploadId, templateId: 'karaoke', quality: 'low', style, edit, profanity: 'mask' });
const effective = await cf.getJobStyle(job.id);
// The effective template is typed: these compile only if the .d.ts carries the template schema.
const size: number = effective.style.font.size;
const textCase: 'none' | 'upper' | 'lower' = effective.style.text.case;
const cancelled = await cf.cancelJob(job.id);
const waited = await cf.waitForJob(job.id, { poll: { initialDelayMs: 50, maxDelayMs: 200 } });
const listed: string[] = [];
for await (const j of cf.listJobs()) listed.push(j.id);
let missing = '';
try {
  await cf.getJob('00000000-0000-4000-8000-000000000000');
} catch (err) {
  if (isApiError(err, 'not_found')) missing = err.code;
}
let noEdit = '';
try {
  await cf.getJobEdit(job.id);
} catch (err) {
  if (isApiError(err, 'edit_not_available')) noEdit = err.code;
}
const words: string[] = await cf.setProfanityWords(['frak']);
// Issue 43: the framing fields typed, and GET .../outputs of the queued job.
const outputs: OutputRequest[] = [{ resolution: { width: 1080, height: 1920 } }, { resolution: { width: 1920, height: 1080 }, format: 'webm', reframe: 'center' }];
const framed = await cf.createJob({
  videoUrl: 'https://cdn.example.com/talk.mp4',
  templateId: 'karaoke',
  reframe: 'subject',
  safeArea: 'tiktok',
  placement: 'auto',
  outputs,
  poster: { at: 1 },
  subtitles: 'both',
});
const renditions: JobOutputs = await cf.getJobOutputs(framed.id);
await cf.cancelJob(framed.id);
console.log(JSON.stringify({
  templates: templates.map((t) => t.id),
  uploadId: upload.uploadId,
  job: { id: job.id, status: job.status },
  style: { size, textCase, emoji: effective.style.emoji, override: effective.override },
  cancelled: cancelled.status,
  waited: { status: waited.status, terminal: isTerminal(waited) },
  listed,
  missing,
  noEdit,
  words: [...words, ...(await cf.getProfanityWords())],
  renditions: { formats: renditions.outputs.map((o) => o.format), safeArea: renditions.safeArea, poster: renditions.poster },
}));
`;

// Calls the .d.ts must refuse: the template id is a string, quality a closed set, and a style has
// the template schema's fields and unions (a misspelt field, a value outside a closed set).
const WRONG = `import { createClient } from '@captionfarm/sdk';
const cf = createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k' });
await cf.createJob({ videoUrl: 'https://x.example/a.mp4', templateId: 42, quality: 'ultra' });
await cf.createJob({ videoUrl: 'https://x.example/a.mp4', templateId: 'karaoke', style: { emoji: 'yes' } });
await cf.createJob({ videoUrl: 'https://x.example/a.mp4', templateId: 'karaoke', style: { font: { famly: 'Inter' } } });
await cf.previewTemplate('karaoke', { style: { text: { case: 'title' } } });
await cf.createJob({ videoUrl: 'https://x.example/a.mp4', templateId: 'karaoke', edit: { silences: 'slow' } });
await cf.createJob({ videoUrl: 'https://x.example/a.mp4', templateId: 'karaoke', safeArea: 'snapchat', outputs: [{ format: 'mov' }] });
`;

let h: Harness;
let project: string;
let packed: { filename: string; size: number; files: { path: string }[] };

beforeAll(async () => {
  project = await mkdtemp(path.join(tmpdir(), 'cf-sdk-pack-'));
  const [harness] = await Promise.all([
    startHarness(),
    (async () => {
      await run('npm', ['run', '-s', 'build'], { cwd: sdkDir });
      const out = await run('npm', ['pack', '--json', '--pack-destination', project], { cwd: path.join(sdkDir, 'dist') });
      packed = (JSON.parse(out.stdout) as (typeof packed)[])[0]!;
      // A project of its own, outside the repository: nothing resolves from the workspace.
      await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'sdk-user', private: true, type: 'module' }));
      // --prefer-offline: zod and @types/node come from the npm cache setup filled.
      await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', path.join(project, packed.filename), '@types/node@^20'], { cwd: project });
      await writeFile(
        path.join(project, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2023',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            skipLibCheck: false,
            types: ['node'],
            outDir: 'out',
          },
          files: ['example.ts'],
        }),
      );
      await writeFile(path.join(project, 'example.ts'), EXAMPLE);
      await mkdir(path.join(project, 'wrong'));
      await writeFile(path.join(project, 'wrong/wrong.ts'), WRONG);
    })(),
  ]);
  h = harness;
}, 600_000);

afterAll(async () => {
  await h?.close();
  await rm(project, { recursive: true, force: true });
});

describe('the packed SDK in a plain Node project', () => {
  it('holds only the built files: one ESM bundle, its .d.ts, package.json, README', () => {
    expect(packed.files.map((f) => f.path).sort()).toEqual(['README.md', 'index.d.ts', 'index.js', 'package.json']);
    expect(packed.size).toBeGreaterThan(5_000);
  });

  it('type-checks a typed example against the packed .d.ts, and refuses a wrong call or style', async () => {
    await run('node', [tsc, '-p', project], { cwd: project });
    // Its errors are on stdout, whatever the exit code.
    const wrong = (
      await runProcess('node', {
        args: [
          tsc,
          '--noEmit',
          '--strict',
          '--module',
          'NodeNext',
          '--moduleResolution',
          'NodeNext',
          '--target',
          'ES2023',
          '--types',
          'node',
          'wrong/wrong.ts',
        ],
        cwd: project,
      }).done
    ).stdout;
    expect(wrong).toMatch(/wrong\.ts\(3,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/);
    expect(wrong).toMatch(/wrong\.ts\(3,\d+\): error TS2322: Type '"ultra"' is not assignable to type '"high" \| "low" \| "medium"/);
    // (tsc prints a union's members in no fixed order)
    expect(wrong).toMatch(/wrong\.ts\(4,\d+\): error TS2322: Type '"yes"' is not assignable to type '"(off|auto)" \| "(off|auto)" \| undefined'/);
    expect(wrong).toMatch(
      /wrong\.ts\(5,\d+\): error TS2561: Object literal may only specify known properties, but 'famly' does not exist .*Did you mean to write 'family'\?/,
    );
    expect(wrong).toMatch(
      /wrong\.ts\(6,\d+\): error TS2322: Type '"title"' is not assignable to type '"(none|upper|lower)" \| "(none|upper|lower)" \| "(none|upper|lower)" \| undefined'/,
    );
    expect(wrong).toMatch(/wrong\.ts\(7,\d+\): error TS2322: Type '"slow"' is not assignable to type '"(off|natural|fast|extra-fast)" \|/);
    expect(wrong).toMatch(/wrong\.ts\(8,\d+\): error TS2322: Type '"snapchat"' is not assignable to type '"(none|tiktok|reels|shorts)" \|/);
    expect(wrong).toMatch(/wrong\.ts\(8,\d+\): error TS2322: Type '"mov"' is not assignable to type '"(mp4|webm)" \|/);
  }, 600_000); // two tsc runs: minutes on a loaded 2-core machine

  it('runs with node (no tsx) against a real control plane: templates, upload, job, cancel, wait, list, typed errors, edit, profane words, framed job outputs', async () => {
    const { key } = await h.account('pro');
    const video = path.join(project, 'clip.mp4');
    await makeTestClip(video, { seconds: 1 });
    const { stdout } = await run('node', [path.join(project, 'out/example.js'), h.url, key, video], { cwd: project });
    const out = JSON.parse(stdout) as {
      templates: string[];
      job: { id: string; status: string };
      style: { size: number; textCase: string; emoji: string; override: unknown };
      cancelled: string;
      waited: { status: string; terminal: boolean };
      listed: string[];
      missing: string;
      noEdit: string;
      words: string[];
      renditions: { formats: string[]; safeArea: string; poster: unknown };
    };
    expect(out.templates).toContain('karaoke');
    expect(out.job.status).toBe('queued');
    expect(out.style).toEqual({
      size: 8,
      textCase: 'upper',
      emoji: 'auto',
      override: { font: { size: 8, weight: 700 }, text: { case: 'upper' }, active: { color: '#FF0000' }, emoji: 'auto', keywords: ['launch'] },
    });
    expect(out.cancelled).toBe('cancelled');
    expect(out.waited).toEqual({ status: 'cancelled', terminal: true });
    expect(out.listed).toEqual([out.job.id]);
    expect(out.missing).toBe('not_found');
    expect(out.noEdit).toBe('edit_not_available');
    expect(out.words).toEqual(['frak', 'frak']);
    expect(out.renditions).toEqual({ formats: ['mp4', 'webm'], safeArea: 'tiktok', poster: null });
  });
});
