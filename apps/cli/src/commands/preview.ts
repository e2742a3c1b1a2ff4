import { writeFile } from 'node:fs/promises';
import { getBuiltinTemplate, parseTemplate } from '@captionfarm/captions';
import { renderTemplatePreview, sampleWords } from '@captionfarm/control-plane';
import { probeMedia, renderPreviewFrame } from '@captionfarm/renderer';
import { createTranscriber } from '@captionfarm/transcriber';
import { runToEnd } from '@captionfarm/process';
import { ffmpegPaths } from '@captionfarm/process/tools';
import { readFile } from 'node:fs/promises';
import { defaultWhisperModel } from '@captionfarm/agent';
import { CliError, UsageError } from '../output.ts';

/** `captionfarm preview`: one frame of a template, on a video's frame or a neutral background. */
export async function previewCommand(values: {
  template?: string;
  video?: string;
  at: string;
  text?: string;
  size?: string;
  model?: string;
  output?: string;
}): Promise<void> {
  if (!values.template || !values.output) throw new UsageError('--template and -o are required');
  const template = values.template.endsWith('.json') ? parseTemplate(JSON.parse(await readFile(values.template, 'utf8'))) : getBuiltinTemplate(values.template);
  if (!template)
    throw new UsageError(`unknown template "${values.template}" (captionfarm templates list shows them; a custom one can be given as a .json file)`);
  const at = Number(values.at);
  if (!Number.isFinite(at) || at < 0) throw new UsageError('--at must be a number of seconds');

  let png: Buffer;
  if (values.video) {
    const info = await probeMedia(values.video).catch((err: unknown) => {
      throw new CliError(`cannot read ${values.video}: ${(err as Error).message.split('\n')[0]}`);
    });
    const { stdout } = await runToEnd(ffmpegPaths().ffmpeg, {
      args: ['-v', 'error', '-ss', String(at), '-i', values.video, '-frames:v', '1', '-f', 'image2pipe', '-vcodec', 'png', '-'],
      encoding: 'buffer',
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
    png = await renderPreviewFrame({ words, template, width: info.width, height: info.height, t: at, background: stdout });
  } else {
    const [w, h] = (values.size ?? '1080x1920').split('x').map(Number);
    if (!w || !h) throw new UsageError('--size must look like 1080x1920');
    png = await renderTemplatePreview({ template, text: values.text ?? 'Your captions will look exactly like this', width: w, height: h, at });
  }
  await writeFile(values.output, png);
  process.stderr.write(`wrote ${values.output}\n`);
}
