/**
 * Converts Silero VAD's 16 kHz weights as the `silero-vad` PyPI wheel ships them
 * (`silero_vad/data/silero_vad_16k.safetensors`, float32) into whisper.cpp's ggml VAD format,
 * byte for byte what whisper.cpp's models/convert-silero-vad-to-ggml.py writes from the same
 * weights (it needs torch; this needs nothing): header, then encoder convs, LSTM, final conv,
 * STFT basis. Conv weights become float16, the rest stays float32.
 */
import { readFile } from 'node:fs/promises';
import { f32BufferToF16 } from './float16.ts';
import { GGML_MAGIC, int32s, lengthPrefixed, tensorRecord, writeFileAtomic } from './ggml-file.ts';

interface SafeTensor {
  dtype: string;
  shape: number[];
  data: Buffer;
}

/** Parses a safetensors file: u64 header length, JSON header, raw little-endian data. */
export function parseSafetensors(buf: Buffer): Map<string, SafeTensor> {
  if (buf.length < 8) throw new Error('not a safetensors file: too short');
  const headerLength = Number(buf.readBigUInt64LE(0));
  if (8 + headerLength > buf.length) throw new Error('not a safetensors file: header past the end');
  const header = JSON.parse(buf.toString('utf8', 8, 8 + headerLength)) as Record<string, unknown>;
  const base = 8 + headerLength;
  const out = new Map<string, SafeTensor>();
  for (const [name, value] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const t = value as { dtype: string; shape: number[]; data_offsets: [number, number] };
    const [from, to] = t.data_offsets;
    if (base + to > buf.length || from > to) throw new Error(`safetensors: ${name} lies outside the file`);
    out.set(name, { dtype: t.dtype, shape: t.shape, data: buf.subarray(base + from, base + to) });
  }
  return out;
}

// Silero VAD v5/v6 16 kHz architecture, as whisper.cpp's loader reads it.
const WINDOW = 512;
const CONTEXT = 64;
const ENCODER = [
  { in: 129, out: 128, kernel: 3 },
  { in: 128, out: 64, kernel: 3 },
  { in: 64, out: 64, kernel: 3 },
  { in: 64, out: 128, kernel: 3 },
];
const LSTM = 128;

/** Converts in memory; `version` ('6.2.3') is recorded in the header as the model version. */
export function convertSileroToGgml(safetensors: Buffer, version: string): Buffer[] {
  const tensors = parseSafetensors(safetensors);
  const get = (name: string, shape: number[]) => {
    const t = tensors.get(name);
    if (!t) throw new Error(`Silero VAD weights lack ${name}`);
    if (t.dtype !== 'F32') throw new Error(`${name} is ${t.dtype}, expected F32`);
    if (t.shape.join('x') !== shape.join('x')) throw new Error(`${name} has shape ${t.shape.join('x')}, expected ${shape.join('x')}`);
    return t.data;
  };
  const [major, minor, patch] = version.split('.').map(Number);
  if ([major, minor, patch].some((v) => v === undefined || !Number.isInteger(v))) throw new Error(`version must be X.Y.Z, got ${version}`);
  const chunks: Buffer[] = [
    int32s(GGML_MAGIC),
    ...lengthPrefixed('silero-16k'),
    int32s(major!, minor!, patch!, WINDOW, CONTEXT, ENCODER.length),
    ...ENCODER.map((e) => int32s(e.in, e.out, e.kernel)),
    int32s(LSTM, LSTM, LSTM, 1),
  ];
  ENCODER.forEach((e, i) => {
    chunks.push(
      ...tensorRecord(
        `_model.encoder.${i}.reparam_conv.weight`,
        [e.out, e.in, e.kernel],
        1,
        f32BufferToF16(get(`conv${i + 1}.weight`, [e.out, e.in, e.kernel])),
      ),
    );
    chunks.push(...tensorRecord(`_model.encoder.${i}.reparam_conv.bias`, [e.out], 0, get(`conv${i + 1}.bias`, [e.out])));
  });
  chunks.push(...tensorRecord('_model.decoder.rnn.weight_ih', [4 * LSTM, LSTM], 0, get('lstm_cell.weight_ih', [4 * LSTM, LSTM])));
  chunks.push(...tensorRecord('_model.decoder.rnn.weight_hh', [4 * LSTM, LSTM], 0, get('lstm_cell.weight_hh', [4 * LSTM, LSTM])));
  chunks.push(...tensorRecord('_model.decoder.rnn.bias_ih', [4 * LSTM], 0, get('lstm_cell.bias_ih', [4 * LSTM])));
  chunks.push(...tensorRecord('_model.decoder.rnn.bias_hh', [4 * LSTM], 0, get('lstm_cell.bias_hh', [4 * LSTM])));
  // The .py squeezes [1, 128, 1] to [128] and the [1] bias to a 0-d tensor; so do we.
  chunks.push(...tensorRecord('_model.decoder.decoder.2.weight', [LSTM], 1, f32BufferToF16(get('final_conv.weight', [1, LSTM, 1]))));
  chunks.push(...tensorRecord('_model.decoder.decoder.2.bias', [], 0, get('final_conv.bias', [1])));
  chunks.push(...tensorRecord('_model.stft.forward_basis_buffer', [258, 1, 256], 1, f32BufferToF16(get('stft_conv.weight', [258, 1, 256]))));
  return chunks;
}

export async function convertSileroFileToGgml(opts: { safetensorsPath: string; version: string; outPath: string }): Promise<{ sha1: string; bytes: number }> {
  return writeFileAtomic(opts.outPath, convertSileroToGgml(await readFile(opts.safetensorsPath), opts.version));
}
