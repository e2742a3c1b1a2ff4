import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { parseArgs, promisify } from 'node:util';
import { getBuiltinTemplate, parseTemplate } from '@captionfarm/captions';
import { renderTemplatePreview, sampleWords } from '@captionfarm/control-plane';
import { probeMedia, renderPreviewFrame } from '@captionfarm/renderer';
import { createTranscriber } from '@captionfarm/transcriber';
import { readFile } from 'node:fs/promises';
import { defaultWhisperModel } from './agent.ts';
import { CliError } from '../output.ts';

export const PREVIEW_USAGE = `captionfarm preview --template ID|FILE.json --video FILE --at SECONDS -o frame.png [--text "..."] [--model M]
captionfarm preview --template ID -o frame.png [--text "..."] [--size 1080x1920]

Renders one frame with the template's captions, so a template can be judged before a job. With
--video, the frame at --at is taken from the video and its speech is transcribed (or --text is
laid out around --at); without it, a neutral background is used.`;

const run = promisify(execFile);

export async function previewCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      template: { type: 'string' },
      video: { type: 'string' },
      at: { type: 'string', default: '2' },
      text: { type: 'string' },
      size: { type: 'string' },
      model: { type: 'string' },
      output: { type: 'string', short: 'o' },
    },
    strict: true,
  });
  if (!values.template || !values.output) throw new CliError(`--template and -o are required\n\n${PREVIEW_USAGE}`, 2);
  const template = values.template.endsWith('.json')
    ? parseTemplate(JSON.parse(await readFile(values.template, 'utf8')))
    : getBuiltinTemplate(values.template);
  if (!template) throw new CliError(`unknown template "${values.template}" (captionfarm templates list shows them; a custom one can be given as a .json file)`, 2);
  const at = Number(values.at);
  if (!Number.isFinite(at) || at < 0) throw new CliError('--at must be a number of seconds', 2);

  let png: Buffer;
  if (values.video) {
    const info = await probeMedia(values.video).catch((err: unknown) => {
      throw new CliError(`cannot read ${values.video}: ${(err as Error).message.split('\n')[0]}`);
    });
    const { stdout } = await run(process.env.FFMPEG_PATH ?? 'ffmpeg', ['-v', 'error', '-ss', String(at), '-i', values.video, '-frames:v', '1', '-f', 'image2pipe', '-vcodec', 'png', '-'], {
      encoding: 'buffer',
      maxBuffer: 256 << 20,
    });
    let words;
    if (values.text) words = sampleWords(values.text, at);
    else {
      const transcriber = createTranscriber({ model: values.model ?? defaultWhisperModel() });
      try {
        words = (await transcriber.transcribe({ audioPath: values.video })).words;
      } finally {
        await transcriber.close();
      }
    }
    png = await renderPreviewFrame({ words, template, width: info.width, height: info.height, t: at, background: stdout as Buffer });
  } else {
    const [w, h] = (values.size ?? '1080x1920').split('x').map(Number);
    if (!w || !h) throw new CliError('--size must look like 1080x1920', 2);
    png = await renderTemplatePreview({ template, text: values.text ?? 'Your captions will look exactly like this', width: w, height: h, at });
  }
  await writeFile(values.output, png);
  process.stderr.write(`wrote ${values.output}\n`);
}
