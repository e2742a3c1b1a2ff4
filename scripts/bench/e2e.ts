/**
 * bench:e2e — the wall time of one whole job (upload -> ingest -> transcribe -> render -> upload ->
 * succeeded, as the client learns it from the job's signed webhook) for a 60 s 1080x1920 30 fps clip
 * through the real control plane and an in-process agent (the embedded default's path), against
 * the baseline measured in the same run on the same inputs: ffmpeg audio extraction + whisper.cpp's
 * own whisper-cli + a plain ffmpeg re-encode with the same encoder settings. Prints the ratio (ours /
 * baseline), and where each side's CPU went: the baseline's tools; the job's whisper-server, ffmpeg
 * and other tools, and this Node process (client, control plane, store and agent in one, as in the
 * embedded default).
 *
 *   npm run bench:e2e [-- --runs 3]   (baseline and whole job alternate in each run; per-run ratios, median and range)
 *   npm run bench:e2e -- --slots [--seconds 30]   two jobs on one agent: one after the other (1 slot)
 *                                                 against both at once (2 slots, the 2-core default)
 *   npm run bench:e2e -- --overlap [--one-core-each]   the whole job with overlapped stages on against
 *                                                 off (alternating); --one-core-each gives whisper one
 *                                                 thread and x264 one, a stand-in on a CPU-only machine
 *                                                 for recognition and encoding on different hardware
 *   npm run bench:e2e -- --edit   the whole job with edit {silences: fast, zoom: emphasis} against the
 *                                                 same job without (alternating): the wall ratio, and the
 *                                                 difference stage by stage (issue 42); --pause 1.5 puts
 *                                                 that much silence after each reading, for fast to cut
 *   npm run bench:e2e -- --outputs   one job with 3 outputs (1080x1920 subject, 1920x1080, 1080x1080) and a
 *                                                 poster against 3 separate jobs, one per rendition (the
 *                                                 1080x1920 one with the poster), on a 1920x1080 clip of a
 *                                                 face (issue 43): CPU-s of everything and wall, alternating
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { runToEnd } from '@captionfarm/process';
import { wavArgs, whisperCliArgs } from './baseline.ts';
import { childCpuSeconds, liveChildCpuSeconds } from './cpu.ts';
import { parseArgs } from 'node:util';
import { detectHardware, planHardware, testClipArgs } from '@captionfarm/agent';
import { whisperBinDir } from '@captionfarm/process/tools';
import { audioEncoderArgs, muxerArgs, videoEncoderArgs } from '../../packages/renderer/src/encoder-args.ts';
import { verifyWebhook } from '@captionfarm/sdk';
import { JOB_STAGES, jobStageSeconds, parseMetrics, startFarm, submitUpload, terminal, testModelPath, type Farm } from '../../agent/test/e2e-harness.ts';
import { makeClip, type ShotSpec } from '../../packages/framing/test/clips.ts';
import { startReceiver } from '../../packages/net/test/helpers/receiver.ts';

/** A tool run to its end through the process module (execa, setpriv prefix); rejects on a non-zero exit. */
const run = (binary: string, args: string[]) => runToEnd(binary, { args });
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '60' },
    slots: { type: 'boolean', default: false },
    overlap: { type: 'boolean', default: false },
    'one-core-each': { type: 'boolean', default: false },
    edit: { type: 'boolean', default: false },
    /** Seconds of silence after each reading of en.wav (a clip with pauses for the edit to cut; default none). */
    pause: { type: 'string', default: '0' },
    outputs: { type: 'boolean', default: false },
  },
});
const runs = Number(values.runs);
const seconds = Number(values.seconds);
const shared = path.resolve(import.meta.dirname, '../../../shared/media');

async function time<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const v = await fn();
  return [(performance.now() - t0) / 1000, v];
}

/**
 * The bench's API client on `farm`: an account, and `submit`, which uploads `bytes`, creates the
 * job with a webhookUrl and gives the job record its signed webhook delivers when the job ends
 * (verified with the account's secret), as a client of the spec learns of it. It does not poll:
 * the client, control plane and agent share this process and the machine's cores, and the
 * harness's poll every 100 ms (ten times the SDK's waitForJob rate) cost the measured job about
 * 1.2 CPU-s (README, Performance, session 21) that a client on its own machine does not.
 */
async function benchClient(farm: Farm, bytes: Buffer) {
  const receiver = await startReceiver(farm.certs, (_req, res) => res.writeHead(204).end());
  const { api, accountId } = await farm.account('pro', 'bench');
  const { secret } = (await farm.admin('GET', `/admin/v1/accounts/${accountId}/webhook-secret`)).body as { secret: string };
  let jobs = 0;
  return {
    api,
    /** Resolves once the job is created; `ended` is its record from the webhook (rejects after `timeoutMs`). */
    async submit(
      timeoutMs: number,
      extra: Record<string, unknown> = {},
    ): Promise<{ ended: Promise<{ id: string; status: string; failureReason: string | null }> }> {
      const hook = `/job-${++jobs}`;
      await submitUpload(api, bytes, { language: 'en', templateId: 'karaoke', webhookUrl: `https://127.0.0.1:${receiver.port}${hook}`, ...extra });
      const deadline = Date.now() + timeoutMs;
      // The receiver keeps every request, so the delivery is found even if it came before this wait.
      const ended = (async () => {
        let got = receiver.requests.find((r) => r.url === hook);
        while (!got) {
          await receiver.waitForRequests(receiver.requests.length + 1, deadline - Date.now());
          got = receiver.requests.find((r) => r.url === hook);
        }
        const { job } = verifyWebhook({ body: got.body, headers: got.headers as Record<string, string>, secret });
        if (!terminal(job)) throw new Error(`the webhook carried a job still ${job.status}`);
        return job;
      })();
      ended.catch(() => undefined); // awaited by the caller; a rejection before that is not unhandled
      return { ended };
    },
    close: () => receiver.close(),
  };
}
type BenchClient = Awaited<ReturnType<typeof benchClient>>;

/** A fresh farm with one agent started with `agent` and a bench client for `bytes`; the client's receiver and the farm are closed whatever `fn` does. */
async function withBenchFarm<T>(bytes: Buffer, agent: Parameters<Farm['startAgent']>[0], fn: (farm: Farm, client: BenchClient) => Promise<T>): Promise<T> {
  const farm = await startFarm();
  let client: BenchClient | undefined;
  try {
    await farm.startAgent(agent);
    client = await benchClient(farm, bytes);
    return await fn(farm, client);
  } finally {
    await client?.close();
    await farm.close();
  }
}

const dir = await mkdtemp(path.join(tmpdir(), 'cf-bench-e2e-'));
try {
  // A 60 s portrait clip with real speech: the shared espeak reading, looped, under testsrc2.
  const clip = path.join(dir, 'clip.mp4');
  // With --pause, each reading is followed by that much silence (a talking head that stops to think).
  const pause = Number(values.pause);
  if (!(pause >= 0 && pause <= 30)) throw new Error('--pause is seconds of silence, 0 to 30');
  const reading = pause > 0 ? path.join(dir, 'reading.wav') : path.join(shared, 'en.wav');
  if (pause > 0) await run('ffmpeg', ['-v', 'error', '-y', '-i', path.join(shared, 'en.wav'), '-af', `apad=pad_dur=${pause}`, reading]);
  const audio = ['-stream_loop', '-1', '-i', reading];
  await run('ffmpeg', testClipArgs({ seconds, audio, output: clip, preset: 'veryfast', crf: 20 }));
  const bytes = await readFile(clip);
  // The words the clip says: en.txt's, once per reading of en.wav (looped to `seconds`).
  const referenceWords = (await readFile(path.join(shared, 'en.txt'), 'utf8')).trim().split(/\s+/).length;
  const readingSeconds = Number((await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', reading])).stdout);
  const expectedWords = Math.floor((referenceWords * seconds) / readingSeconds);
  let captioned = 0;
  const model = testModelPath();
  const bin = whisperBinDir();
  // The job runs as the embedded default plans it for this machine (CPU whisper: overlapped stages,
  // whisper on fewer threads beside the render, x264 on every core).
  const plan = planHardware(await detectHardware(), { cudaWhisper: false, nvenc: false });
  const besideRender = plan.whisperThreadsBesideRender ? { whisperThreadsBesideRender: plan.whisperThreadsBesideRender } : {};
  const planned = { threads: plan.whisperThreads, x264Threads: plan.x264Threads, overlap: plan.overlap, ...besideRender };

  if (values.slots) {
    // Same two jobs, same agent settings but the slot count; x264 on every core and overlapped stages as the hardware plan does.
    const cores = availableParallelism();
    const total = (slots: number) =>
      withBenchFarm(bytes, { concurrency: slots, ...planned }, async (_farm, client) => {
        const [t] = await time(async () => {
          const created = [await client.submit(3_600_000), await client.submit(3_600_000)];
          for (const c of created) {
            const job = await c.ended;
            if (job.status !== 'succeeded') throw new Error(`bench job ended ${job.status}: ${job.failureReason}`);
          }
        });
        return t;
      });
    const rows: [number, number][] = [];
    const loads: number[] = [];
    for (let i = 0; i < runs; i++) {
      loads.push(loadavg()[0]!);
      // Alternate which goes first, so a change in the machine's load does not always favour one side.
      let one: number;
      let two: number;
      if (i % 2 === 0) {
        one = await total(1);
        two = await total(2);
      } else {
        two = await total(2);
        one = await total(1);
      }
      loads.push(loadavg()[0]!);
      rows.push([one, two]);
      console.log(`run ${i + 1}: two jobs, 1 slot ${one.toFixed(1)} s; 2 slots ${two.toFixed(1)} s; ratio ${(two / one).toFixed(3)}`);
    }
    const ratios = rows.map(([a, b]) => b / a).sort((x, y) => x - y);
    console.log(
      `\nbench:e2e --slots  two ${seconds} s 1080x1920 jobs on one agent (${cores} cores): 2 slots / 1 slot total wall = ` +
        `${ratios[Math.floor(ratios.length / 2)]!.toFixed(3)} median, range ${ratios[0]!.toFixed(3)}-${ratios.at(-1)!.toFixed(3)} over ${runs} runs ` +
        `(<= 1 means at once is no slower); load average ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
    );
    await rm(dir, { recursive: true, force: true });
    process.exit(0);
  }
  if (values.overlap) {
    const split = values['one-core-each'];
    // On, both on every core: whisper drops to the hardware plan's threads beside the render (half: 1 of 2).
    const job = (overlap: boolean) =>
      withBenchFarm(bytes, { overlap, ...(split ? { threads: 1, x264Threads: 1 } : besideRender) }, async (farm, client) => {
        const [t, job] = await time(async () => (await client.submit(1_800_000)).ended);
        if (job.status !== 'succeeded') throw new Error(`bench job ended ${job.status}: ${job.failureReason}`);
        return { t, stages: await jobStageSeconds(farm) };
      });
    const ratios: number[] = [];
    for (let i = 0; i < runs; i++) {
      // Alternate which goes first, so a change in the machine's load does not always favour one side.
      let off: Awaited<ReturnType<typeof job>>;
      let on: Awaited<ReturnType<typeof job>>;
      if (i % 2 === 0) {
        off = await job(false);
        on = await job(true);
      } else {
        on = await job(true);
        off = await job(false);
      }
      ratios.push(on.t / off.t);
      const show = (r: typeof on) => `${r.t.toFixed(1)} s (${JOB_STAGES.map((k) => `${k} ${r.stages[k].toFixed(1)}`).join(', ')})`;
      console.log(`run ${i + 1}: overlap off ${show(off)}; on ${show(on)}; ratio ${(on.t / off.t).toFixed(3)}`);
    }
    ratios.sort((x, y) => x - y);
    console.log(
      `
bench:e2e --overlap${split ? ' --one-core-each' : ''}  ${seconds} s 1080x1920 job, ${split ? 'whisper 1 thread + x264 1 thread' : `whisper 2 threads, x264 every core`}: ` +
        `on / off = ${ratios[Math.floor(ratios.length / 2)]!.toFixed(3)} median, range ${ratios[0]!.toFixed(3)}-${ratios.at(-1)!.toFixed(3)} over ${runs} runs ` +
        `(with overlap on, "render" is what is left of it once the words are final)`,
    );
    await rm(dir, { recursive: true, force: true });
    process.exit(0);
  }
  if (values.outputs) {
    await benchOutputs(dir, planned);
    await rm(dir, { recursive: true, force: true });
    process.exit(0);
  }
  if (values.edit) {
    await benchEdit(bytes, planned);
    await rm(dir, { recursive: true, force: true });
    process.exit(0);
  }
  // whisper-cli gets the job's whisper threads, the plain re-encode x264's own thread count, as a
  // person would run it.
  console.log(
    `plan: whisper ${plan.whisperThreads} threads (${plan.whisperThreadsBesideRender} beside the render), overlapped stages ${plan.overlap ? 'on' : 'off'}`,
  );
  const baseline: number[] = [];
  const ours: number[] = [];
  const loads: number[] = [];
  const cpuRatios: number[] = [];
  for (let i = 0; i < runs; i++) {
    loads.push(loadavg()[0]!);
    // Baseline: what a person would script by hand, each of its three steps timed.
    const wav = path.join(dir, 'audio.wav');
    const cpu0 = childCpuSeconds();
    const [extract] = await time(() => run('ffmpeg', wavArgs(clip, wav)));
    const cpu1 = childCpuSeconds();
    const [whisper] = await time(() =>
      run(path.join(bin, 'whisper-cli'), whisperCliArgs({ model, wav, threads: plan.whisperThreads, outBase: path.join(dir, 'words') })),
    );
    const cpu2 = childCpuSeconds();
    const [encode] = await time(() =>
      run('ffmpeg', [
        '-y',
        '-loglevel',
        'error',
        '-i',
        clip,
        ...videoEncoderArgs({ format: 'mp4', quality: 'high', encoder: 'cpu' }),
        ...audioEncoderArgs({ format: 'mp4', sourceAudioCodec: 'aac' }),
        ...muxerArgs('mp4'),
        path.join(dir, 'plain.mp4'),
      ]),
    );
    const tb = extract + whisper + encode;
    baseline.push(tb);
    const cpu3 = childCpuSeconds();
    const baselineCpu = { total: cpu3 - cpu0, whisper: cpu2 - cpu1, encode: cpu3 - cpu2 };

    // Ours: a fresh control plane + agent each run (model load included, as for a first job).
    const { stages, jobCpu } = await withBenchFarm(bytes, planned, async (farm, client) => {
      // The job's CPU: this process's (the client, the control plane, its store and the agent all
      // run in it, as in the embedded default), the children it waited for during the job (the
      // render's ffmpeg, probes, VAD, espeak-ng) and what the agent's whisper-server spent meanwhile.
      const node0 = process.cpuUsage();
      const [children0, server0] = [childCpuSeconds(), liveChildCpuSeconds('whisper-server')];
      const [to, job] = await time(async () => (await client.submit(1_800_000)).ended);
      const node = process.cpuUsage(node0);
      const jobCpu = {
        node: (node.user + node.system) / 1e6,
        whisper: liveChildCpuSeconds('whisper-server') - server0,
        others: childCpuSeconds() - children0,
      };
      if (job.status !== 'succeeded') throw new Error(`bench job ended ${job.status}: ${job.failureReason}`);
      // A job that "succeeds" with its words dropped is no faster job: count them (whisper-cli's
      // own run above writes the same speech).
      const { words } = (await client.api('GET', `/v1/automation-jobs/${job.id}/transcript`)).body as { words: unknown[] };
      if (words.length < 0.8 * expectedWords) throw new Error(`the job captioned ${words.length} words of about ${expectedWords}`);
      captioned = words.length;
      ours.push(to);
      return { stages: await jobStageSeconds(farm), jobCpu };
    });
    console.log(
      `run ${i + 1}: baseline ${tb.toFixed(1)} s, captionfarm ${ours.at(-1)!.toFixed(1)} s, ratio ` +
        `${(ours.at(-1)! / tb).toFixed(3)}, ${captioned} words captioned (load average ${loads.at(-1)!.toFixed(1)})\n` +
        `  baseline: extract ${extract.toFixed(1)} s, whisper-cli ${whisper.toFixed(1)} s, re-encode ${encode.toFixed(1)} s; ` +
        `job stages as the agent reported them: ${JOB_STAGES.map((k) => `${k} ${stages[k].toFixed(1)} s`).join(', ')}\n` +
        `  CPU-s: baseline ${baselineCpu.total.toFixed(1)} (whisper-cli ${baselineCpu.whisper.toFixed(1)}, re-encode ${baselineCpu.encode.toFixed(1)}); ` +
        `job ${(jobCpu.node + jobCpu.whisper + jobCpu.others).toFixed(1)} (whisper-server ${jobCpu.whisper.toFixed(1)}, ` +
        `ffmpeg and other tools ${jobCpu.others.toFixed(1)}, this Node process ${jobCpu.node.toFixed(1)}: client, control plane, store and agent)`,
    );
    cpuRatios.push((jobCpu.node + jobCpu.whisper + jobCpu.others) / baselineCpu.total);
  }
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
  const b = median(baseline);
  const o = median(ours);
  console.log(`\nbench:e2e  ${seconds} s 1080x1920 30 fps clip, whisper base, libx264 veryfast CRF 20, 2 threads`);
  console.log(`  baseline (ffmpeg extract + whisper-cli + ffmpeg re-encode): ${b.toFixed(1)} s  (${(seconds / b).toFixed(2)}x realtime)`);
  console.log(`  captionfarm whole job (upload .. succeeded):                 ${o.toFixed(1)} s  (${(seconds / o).toFixed(2)}x realtime)`);
  const ratios = ours.map((x, i) => x / baseline[i]!).sort((x, y) => x - y);
  console.log(
    `  ratio captionfarm / baseline: ${(o / b).toFixed(3)} (medians); per run median ` +
      `${median(ratios).toFixed(3)}, range ${ratios[0]!.toFixed(3)}-${ratios.at(-1)!.toFixed(3)} over ` +
      `${runs} runs (goal <= 1.00)`,
  );
  const cpu = [...cpuRatios].sort((x, y) => x - y);
  console.log(`  CPU ratio (all processes, job / baseline): median ${median(cpu).toFixed(3)}, range ${cpu[0]!.toFixed(3)}-${cpu.at(-1)!.toFixed(3)}`);
  console.log(`  load average ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)} on ${availableParallelism()} cores`);
} finally {
  await rm(dir, { recursive: true, force: true });
}

/**
 * --edit (issue 42): the same job with edit {silences: fast, zoom: emphasis} against it without,
 * alternating which goes first, each on a fresh farm planned as the embedded default; and the job
 * without edit with overlapped stages off, which says how much of the difference is the overlap an
 * edited job gives up (it renders once every word is known: its cuts decide the output timeline)
 * and how much is the edit's own render (the cut graph, the per-frame zoom).
 */
async function benchEdit(bytes: Buffer, planned: NonNullable<Parameters<Farm['startAgent']>[0]>): Promise<void> {
  const EDIT = { edit: { silences: 'fast', zoom: 'emphasis' } };
  type Arm = 'plain' | 'serial' | 'edited';
  const job = (arm: Arm) =>
    withBenchFarm(bytes, arm === 'serial' ? { ...planned, overlap: false } : planned, async (farm, client) => {
      const [t, job] = await time(async () => (await client.submit(1_800_000, arm === 'edited' ? EDIT : {})).ended);
      if (job.status !== 'succeeded') throw new Error(`bench job ended ${job.status}: ${job.failureReason}`);
      const plan = arm === 'edited' ? (await client.api('GET', `/v1/automation-jobs/${job.id}/edit`)).body.plan : null;
      return {
        t,
        stages: await jobStageSeconds(farm),
        outputSeconds: plan ? (plan.outputSeconds as number) : seconds,
        zooms: plan ? (plan.zooms.length as number) : 0,
      };
    });
  type Row = Awaited<ReturnType<typeof job>>;
  const rows: Record<Arm, Row>[] = [];
  const loads: number[] = [];
  const orders: Arm[][] = [
    ['plain', 'serial', 'edited'],
    ['edited', 'serial', 'plain'],
  ];
  for (let i = 0; i < runs; i++) {
    loads.push(loadavg()[0]!);
    // Alternate the order, so a change in the machine's load does not always favour one side.
    const row = {} as Record<Arm, Row>;
    for (const arm of orders[i % 2]!) row[arm] = await job(arm);
    loads.push(loadavg()[0]!);
    rows.push(row);
    const show = (r: Row) => `${r.t.toFixed(1)} s (${JOB_STAGES.map((k) => `${k} ${r.stages[k].toFixed(1)}`).join(', ')})`;
    console.log(
      `run ${i + 1}: plain ${show(row.plain)}; plain, overlap off ${show(row.serial)}; edited ${show(row.edited)}, output ` +
        `${row.edited.outputSeconds.toFixed(1)} s with ${row.edited.zooms} zooms; edited / plain ${(row.edited.t / row.plain.t).toFixed(3)}, ` +
        `edited / plain with overlap off ${(row.edited.t / row.serial.t).toFixed(3)}`,
    );
  }
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
  const spread = (a: number[]) => {
    const s = [...a].sort((x, y) => x - y);
    return `${median(s).toFixed(3)} median, range ${s[0]!.toFixed(3)}-${s.at(-1)!.toFixed(3)}`;
  };
  console.log(
    `\nbench:e2e --edit  ${seconds} s 1080x1920 job, edit {silences: fast, zoom: emphasis} against none, over ${runs} runs ` +
      `(load average ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)} on ${availableParallelism()} cores):\n` +
      `  edited / plain: ${spread(rows.map((r) => r.edited.t / r.plain.t))}\n` +
      `  edited / plain with overlapped stages off: ${spread(rows.map((r) => r.edited.t / r.serial.t))} (the edit's own cost)\n` +
      `  plain with overlap off / plain: ${spread(rows.map((r) => r.serial.t / r.plain.t))} (the overlap an edited job gives up)`,
  );
  // Where the extra time goes: each stage's edited minus plain (overlap off) seconds, median over the runs.
  const delta = (k: (typeof JOB_STAGES)[number]) => median(rows.map((r) => r.edited.stages[k] - r.serial.stages[k]));
  console.log(
    `  stage seconds, edited - plain with overlap off (median): ${JOB_STAGES.map((k) => `${k} ${delta(k) >= 0 ? '+' : ''}${delta(k).toFixed(1)}`).join(', ')}; ` +
      `output ${median(rows.map((r) => r.edited.outputSeconds)).toFixed(1)} of ${seconds} s`,
  );
}

/**
 * The --outputs source: `seconds` of 1920x1080 at 30 fps from real photographs (bench:framing's
 * clip: the astronaut over a blurred photo, a shot change every 10 s, the face drifting within a
 * shot, a camera's grain; x264 veryfast) with en.wav looped as its voice.
 */
async function faceSource(dir: string): Promise<Buffer> {
  const places = [
    { x: 640, y: 420 },
    { x: 1300, y: 480 },
    { x: 960, y: 400 },
  ];
  const shots: ShotSpec[] = [];
  for (let i = 0; i * 10 < seconds; i++) {
    const at = places[i % places.length]!;
    const frames = Math.round(Math.min(10, seconds - i * 10) * 30);
    shots.push({ frames, background: i % 2 ? 'rocket.jpg' : 'coffee.png', face: { from: at, to: { x: at.x + 80, y: at.y + 30 } } });
  }
  const pictures = await makeClip(dir, 'faces.mp4', { width: 1920, height: 1080, fps: 30, scale: 1.40625, shots, grain: 6, preset: 'veryfast' });
  const file = path.join(dir, 'faces-voiced.mp4');
  const voice = ['-stream_loop', '-1', '-i', path.join(shared, 'en.wav'), '-map', '0:v', '-map', '1:a', '-c:v', 'copy', '-c:a', 'aac'];
  await run('ffmpeg', ['-v', 'error', '-y', '-i', pictures.file, ...voice, '-t', String(seconds), file]);
  return readFile(file);
}

/** The stage seconds of the `jobs` jobs a fresh farm ran (each job's stages summed), once all are counted on /metrics (10 s at most). */
async function stagesOf(farm: Farm, jobs: number): Promise<Record<(typeof JOB_STAGES)[number], number>> {
  const family = 'captionfarm_job_phase_duration_seconds';
  const sum = (m: Map<string, number>, what: 'sum' | 'count', stage: string) =>
    [...m].filter(([k]) => k.startsWith(`${family}_${what}{phase="${stage}",`)).reduce((a, [, v]) => a + v, 0);
  for (const end = Date.now() + 10_000; ; ) {
    const res = await fetch(`${farm.url}/metrics`, { headers: { authorization: `Bearer ${farm.cp.adminToken}` } });
    const m = parseMetrics(await res.text());
    if (sum(m, 'count', 'upload') >= jobs)
      return Object.fromEntries(JOB_STAGES.map((k) => [k, sum(m, 'sum', k)])) as Record<(typeof JOB_STAGES)[number], number>;
    if (Date.now() > end) throw new Error(`${family} counted fewer than ${jobs} jobs on ${farm.url}/metrics`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * --outputs (issue 43): one job with three renditions and a poster against the same three
 * renditions as three jobs (the poster with the 1080x1920 one), submitted together to one agent
 * (one slot: they run one after the other, whisper's model loaded once), each side on a fresh farm
 * planned as the embedded default, alternating which goes first. CPU-s of all of it: this Node
 * process (client, control plane, store, agent and the framing analysis's detector), the tools it
 * waited for (ffmpeg, ffprobe) and whisper-server; wall from the first upload to the last webhook.
 */
async function benchOutputs(dir: string, planned: NonNullable<Parameters<Farm['startAgent']>[0]>): Promise<void> {
  const bytes = await faceSource(dir);
  const RENDITIONS = [
    { resolution: { width: 1080, height: 1920 }, reframe: 'subject' },
    { resolution: { width: 1920, height: 1080 } },
    { resolution: { width: 1080, height: 1080 } },
  ];
  type Arm = 'one' | 'three';
  const bodies = (arm: Arm): Record<string, unknown>[] =>
    arm === 'one' ? [{ outputs: RENDITIONS, poster: true }] : RENDITIONS.map((r, i) => ({ ...r, ...(i === 0 ? { poster: true } : {}) }));
  const measure = (arm: Arm) =>
    withBenchFarm(bytes, planned, async (farm, client) => {
      const node0 = process.cpuUsage();
      const [children0, server0] = [childCpuSeconds(), liveChildCpuSeconds('whisper-server')];
      const [t, jobs] = await time(async () => {
        const created = [];
        for (const body of bodies(arm)) created.push(await client.submit(3_600_000, body));
        return Promise.all(created.map((c) => c.ended));
      });
      const node = process.cpuUsage(node0);
      const cpu = {
        node: (node.user + node.system) / 1e6,
        whisper: liveChildCpuSeconds('whisper-server') - server0,
        others: childCpuSeconds() - children0,
      };
      for (const job of jobs) if (job.status !== 'succeeded') throw new Error(`bench job ended ${job.status}: ${job.failureReason}`);
      // Every rendition and the poster were made: the listing of each job.
      let renditions = 0;
      let posters = 0;
      for (const job of jobs) {
        const listing = (await client.api('GET', `/v1/automation-jobs/${job.id}/outputs`)).body as { outputs: unknown[]; poster: unknown };
        renditions += listing.outputs.length;
        if (listing.poster) posters++;
      }
      if (renditions !== 3 || posters !== 1) throw new Error(`${arm}: ${renditions} renditions and ${posters} posters, not 3 and 1`);
      return { t, cpu: cpu.node + cpu.whisper + cpu.others, parts: cpu, stages: await stagesOf(farm, jobs.length) };
    });
  type Row = Awaited<ReturnType<typeof measure>>;
  const rows: Record<Arm, Row>[] = [];
  const loads: number[] = [];
  for (let i = 0; i < runs; i++) {
    loads.push(loadavg()[0]!);
    const row = {} as Record<Arm, Row>;
    for (const arm of i % 2 === 0 ? (['one', 'three'] as const) : (['three', 'one'] as const)) row[arm] = await measure(arm);
    loads.push(loadavg()[0]!);
    rows.push(row);
    const show = (r: Row) =>
      `${r.t.toFixed(1)} s, ${r.cpu.toFixed(1)} CPU-s (whisper-server ${r.parts.whisper.toFixed(1)}, ffmpeg and other tools ${r.parts.others.toFixed(1)}, ` +
      `Node ${r.parts.node.toFixed(1)}; stages ${JOB_STAGES.map((k) => `${k} ${r.stages[k].toFixed(1)}`).join(', ')})`;
    console.log(
      `run ${i + 1}: one job, 3 outputs + poster: ${show(row.one)}\n  3 jobs: ${show(row.three)}\n  one / three: CPU ${(row.one.cpu / row.three.cpu).toFixed(3)}, wall ${(row.one.t / row.three.t).toFixed(3)}`,
    );
  }
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
  const spread = (a: number[]) => {
    const s = [...a].sort((x, y) => x - y);
    return `${median(s).toFixed(3)} median, range ${s[0]!.toFixed(3)}-${s.at(-1)!.toFixed(3)}`;
  };
  console.log(
    `\nbench:e2e --outputs  ${seconds} s 1920x1080 30 fps clip of a face, 3 renditions (1080x1920 subject, 1920x1080, 1080x1080) + poster, ` +
      `over ${runs} runs (load average ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)} on ${availableParallelism()} cores):\n` +
      `  one job / three jobs, CPU-s: ${spread(rows.map((r) => r.one.cpu / r.three.cpu))}\n` +
      `  one job / three jobs, wall: ${spread(rows.map((r) => r.one.t / r.three.t))}\n` +
      `  CPU-s one job ${median(rows.map((r) => r.one.cpu)).toFixed(1)}, three jobs ${median(rows.map((r) => r.three.cpu)).toFixed(1)} (medians); ` +
      `whisper-server ${median(rows.map((r) => r.one.parts.whisper)).toFixed(1)} against ${median(rows.map((r) => r.three.parts.whisper)).toFixed(1)}`,
  );
}
