import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { convertCt2ToGgml, ggmlVocabulary, melFilters, parseCt2Model } from '../src/ct2-to-ggml.ts';
import { f16BufferToF32, f32BufferToF16, floatToHalf, halfToFloat } from '../src/float16.ts';
import { convertSileroToGgml, parseSafetensors } from '../src/silero-to-ggml.ts';

const SHARED_MODELS = new URL('../../../../shared/models/', import.meta.url);

/** Reads back a ggml file's tensor records after `offset`. */
function readTensors(buf: Buffer, offset: number) {
  const out: Array<{ name: string; ne: number[]; ftype: number; data: Buffer }> = [];
  let o = offset;
  while (o < buf.length) {
    const nDims = buf.readInt32LE(o);
    const nameLength = buf.readInt32LE(o + 4);
    const ftype = buf.readInt32LE(o + 8);
    o += 12;
    const ne: number[] = [];
    for (let i = 0; i < nDims; i++, o += 4) ne.push(buf.readInt32LE(o));
    const name = buf.toString('utf8', o, o + nameLength);
    o += nameLength;
    const bytes = ne.reduce((a, b) => a * b, 1) * (ftype === 0 ? 4 : 2);
    out.push({ name, ne, ftype, data: buf.subarray(o, o + bytes) });
    o += bytes;
  }
  expect(o).toBe(buf.length);
  return out;
}

describe('float16', () => {
  it('round-trips every finite half value exactly', () => {
    for (let h = 0; h < 0x10000; h++) {
      if ((h & 0x7c00) === 0x7c00) continue; // inf / NaN
      expect(floatToHalf(halfToFloat(h))).toBe(h === 0x8000 ? 0x8000 : h);
    }
  });

  it('rounds to nearest even like numpy astype(float16)', () => {
    expect(floatToHalf(1 + 2 ** -11)).toBe(0x3c00); // tie -> even (down)
    expect(floatToHalf(1 + 3 * 2 ** -11)).toBe(0x3c02); // tie -> even (up)
    expect(floatToHalf(65520)).toBe(0x7c00); // overflows to inf
    expect(floatToHalf(2 ** -25)).toBe(0); // tie to even at the bottom of the subnormals
    expect(floatToHalf(3 * 2 ** -25)).toBe(2);
    const buf = Buffer.alloc(8);
    buf.writeFloatLE(0.1, 0);
    buf.writeFloatLE(-2.5, 4);
    expect([...new Float32Array(new Uint8Array(f16BufferToF32(f32BufferToF16(buf))).buffer)]).toEqual([Math.fround(halfToFloat(0x2e66)), -2.5]);
  });
});

describe('CTranslate2 -> ggml', () => {
  // whisper.cpp's fixture from ../shared, like the other transcriber suites': missing, this fails (never skips).
  it("computes mel filters bit-identical to whisper.cpp's own model files", () => {
    const fixture = readFileSync(new URL('for-tests-ggml-tiny.bin', SHARED_MODELS));
    expect([fixture.readInt32LE(48), fixture.readInt32LE(52)]).toEqual([80, 201]);
    const expected = fixture.subarray(56, 56 + 80 * 201 * 4);
    const ours = melFilters(80);
    expect(Buffer.from(ours.buffer).equals(expected)).toBe(true);
  });

  it('decodes byte-level BPE vocabulary lines to raw bytes', () => {
    expect(ggmlVocabulary('!\nĠthe\nÃ©\nĊ\n', 4).map((b) => [...b])).toEqual([[0x21], [0x20, 0x74, 0x68, 0x65], [0xc3, 0xa9], [0x0a]]);
    expect(() => ggmlVocabulary('a\n', 5)).toThrow(/expected at least 5/);
    expect(() => ggmlVocabulary('日\n', 1)).toThrow(/not byte-level BPE/);
  });

  /** A 1-layer, 4-wide Whisper in CTranslate2's binary format (version 6). */
  function tinyCt2(): Buffer {
    const d = 4;
    const nVocab = 51864; // English-only: 50256 text tokens
    const parts: Buffer[] = [];
    const u8 = (v: number) => Buffer.from([v]);
    const u16 = (v: number) => {
      const b = Buffer.alloc(2);
      b.writeUInt16LE(v);
      return b;
    };
    const u32 = (v: number) => {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(v);
      return b;
    };
    const str = (s: string) => [u16(s.length + 1), Buffer.from(`${s}\0`)];
    const vars: Array<[string, number[], number, Buffer]> = [];
    let counter = 0;
    const f16 = (dims: number[]) => {
      const n = dims.reduce((a, b) => a * b, 1);
      const b = Buffer.alloc(n * 2);
      for (let i = 0; i < n; i++) b.writeUInt16LE(floatToHalf(++counter / 1024), i * 2);
      return b;
    };
    const add = (name: string, dims: number[]) => vars.push([name, dims, 4, f16(dims)]);
    const scalar16 = (name: string, v: number) => vars.push([name, [], 2, u16(v)]);
    add('encoder/conv1/weight', [d, 80, 3]);
    add('encoder/conv1/bias', [d]);
    add('encoder/conv2/weight', [d, d, 3]);
    add('encoder/conv2/bias', [d]);
    add('encoder/position_encodings/encodings', [3, d]);
    scalar16('encoder/num_heads', 1);
    scalar16('decoder/num_heads', 1);
    const lin = (p: string, rows: number, cols: number) => {
      add(`${p}/weight`, [rows, cols]);
      add(`${p}/bias`, [rows]);
    };
    const ln = (p: string) => {
      add(`${p}/gamma`, [d]);
      add(`${p}/beta`, [d]);
    };
    lin('encoder/layer_0/self_attention/linear_0', 3 * d, d);
    lin('encoder/layer_0/self_attention/linear_1', d, d);
    ln('encoder/layer_0/self_attention/layer_norm');
    lin('encoder/layer_0/ffn/linear_0', 4 * d, d);
    lin('encoder/layer_0/ffn/linear_1', d, 4 * d);
    ln('encoder/layer_0/ffn/layer_norm');
    ln('encoder/layer_norm');
    add('decoder/embeddings/weight', [nVocab, d]);
    add('decoder/position_encodings/encodings', [2, d]);
    lin('decoder/layer_0/self_attention/linear_0', 3 * d, d);
    lin('decoder/layer_0/self_attention/linear_1', d, d);
    ln('decoder/layer_0/self_attention/layer_norm');
    lin('decoder/layer_0/attention/linear_0', d, d);
    lin('decoder/layer_0/attention/linear_1', 2 * d, d);
    lin('decoder/layer_0/attention/linear_2', d, d);
    ln('decoder/layer_0/attention/layer_norm');
    lin('decoder/layer_0/ffn/linear_0', 4 * d, d);
    lin('decoder/layer_0/ffn/linear_1', d, 4 * d);
    ln('decoder/layer_0/ffn/layer_norm');
    ln('decoder/layer_norm');
    parts.push(u32(6), ...str('WhisperSpec'), u32(3), u32(vars.length));
    for (const [name, dims, dtype, data] of vars) parts.push(...str(name), u8(dims.length), ...dims.map(u32), u8(dtype), u32(data.length), data);
    parts.push(u32(1), ...str('decoder/projection/weight'), ...str('decoder/embeddings/weight'));
    return Buffer.concat(parts);
  }

  const vocabulary = Array.from({ length: 51864 }, (_, i) => `t${i}`).join('\n');

  it('writes header, mel filters, vocabulary and tensors the way convert-pt-to-ggml.py does', () => {
    const ct2 = tinyCt2();
    const model = parseCt2Model(ct2);
    const out = Buffer.concat(convertCt2ToGgml({ model: ct2, vocabulary }));
    const header = Array.from({ length: 12 }, (_, i) => out.readInt32LE(i * 4));
    expect(header).toEqual([0x67676d6c, 51864, 3, 4, 1, 1, 2, 4, 1, 1, 80, 1]);
    let o = 48 + 8 + 80 * 201 * 4;
    expect(out.readInt32LE(o)).toBe(50256);
    o += 4;
    for (let i = 0; i < 50256; i++) {
      const len = out.readInt32LE(o);
      if (i === 0 || i === 50255) expect(out.toString('latin1', o + 4, o + 4 + len)).toBe(`t${i}`);
      o += 4 + len;
    }
    const tensors = readTensors(out, o);
    expect(tensors.map((t) => t.name).slice(0, 8)).toEqual([
      'encoder.positional_embedding',
      'encoder.conv1.weight',
      'encoder.conv1.bias',
      'encoder.conv2.weight',
      'encoder.conv2.bias',
      'encoder.blocks.0.attn.query.weight',
      'encoder.blocks.0.attn.query.bias',
      'encoder.blocks.0.attn.key.weight',
    ]);
    expect(tensors).toHaveLength(5 + 15 + 2 + 2 + 24 + 2);
    const byName = new Map(tensors.map((t) => [t.name, t]));
    // Matrices stay f16 with dims reversed; vectors, conv biases ([n] -> [n, 1]) and positions become f32.
    expect(byName.get('encoder.conv1.weight')).toMatchObject({ ne: [3, 80, 4], ftype: 1 });
    expect(byName.get('encoder.conv1.bias')).toMatchObject({ ne: [1, 4], ftype: 0 });
    expect(byName.get('encoder.positional_embedding')).toMatchObject({ ne: [4, 3], ftype: 0 });
    expect(byName.get('decoder.token_embedding.weight')).toMatchObject({ ne: [4, 51864], ftype: 1 });
    // Fused q|k|v is split by rows; the key has no bias (CTranslate2 stores zeros there).
    const fused = model.variables.get('encoder/layer_0/self_attention/linear_0/weight')!.data;
    const rowBytes = 4 * 2;
    expect(byName.get('encoder.blocks.0.attn.key.weight')!.data.equals(fused.subarray(4 * rowBytes, 8 * rowBytes))).toBe(true);
    expect(byName.get('encoder.blocks.0.attn.value.weight')!.data.equals(fused.subarray(8 * rowBytes, 12 * rowBytes))).toBe(true);
    expect(byName.has('encoder.blocks.0.attn.key.bias')).toBe(false);
    const fusedBias = model.variables.get('encoder/layer_0/self_attention/linear_0/bias')!.data;
    expect(byName.get('encoder.blocks.0.attn.value.bias')!.data.readFloatLE(0)).toBe(halfToFloat(fusedBias.readUInt16LE(8 * 2)));
    // Cross-attention: q alone, k|v fused.
    const kv = model.variables.get('decoder/layer_0/attention/linear_1/weight')!.data;
    expect(byName.get('decoder.blocks.0.cross_attn.value.weight')!.data.equals(kv.subarray(4 * rowBytes))).toBe(true);
    expect(byName.get('decoder.blocks.0.mlp.2.weight')).toMatchObject({ ne: [16, 4], ftype: 1 });
    expect(byName.get('decoder.ln.bias')).toMatchObject({ ne: [4], ftype: 0 });
  });

  it('refuses truncated or foreign input', () => {
    const ct2 = tinyCt2();
    expect(() => parseCt2Model(ct2.subarray(0, ct2.length - 10))).toThrow(/truncated/);
    expect(() => parseCt2Model(Buffer.from('ggml....'))).toThrow(/binary version/);
  });
});

describe('Silero safetensors -> ggml', () => {
  function safetensors(without?: string, reshape?: [string, number[]]): Buffer {
    const shapes: Record<string, number[]> = {
      'stft_conv.weight': [258, 1, 256],
      'conv1.weight': [128, 129, 3],
      'conv1.bias': [128],
      'conv2.weight': [64, 128, 3],
      'conv2.bias': [64],
      'conv3.weight': [64, 64, 3],
      'conv3.bias': [64],
      'conv4.weight': [128, 64, 3],
      'conv4.bias': [128],
      'lstm_cell.weight_ih': [512, 128],
      'lstm_cell.weight_hh': [512, 128],
      'lstm_cell.bias_ih': [512],
      'lstm_cell.bias_hh': [512],
      'final_conv.weight': [1, 128, 1],
      'final_conv.bias': [1],
    };
    const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
    const datas: Buffer[] = [];
    let offset = 0;
    if (without) delete shapes[without];
    if (reshape) shapes[reshape[0]] = reshape[1];
    for (const [name, shape] of Object.entries(shapes)) {
      const n = shape.reduce((a, b) => a * b, 1);
      const data = Buffer.alloc(n * 4);
      for (let i = 0; i < n; i++) data.writeFloatLE((i % 7) / 8, i * 4);
      header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + data.length] };
      datas.push(data);
      offset += data.length;
    }
    const json = Buffer.from(JSON.stringify(header));
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(json.length));
    return Buffer.concat([len, json, ...datas]);
  }

  it('parses safetensors', () => {
    const t = parseSafetensors(safetensors());
    expect(t.get('conv2.bias')).toMatchObject({ dtype: 'F32', shape: [64] });
    expect(t.get('conv2.bias')!.data.readFloatLE(4)).toBe(0.125);
  });

  it("writes the header and tensors whisper.cpp's VAD loader reads", () => {
    const out = Buffer.concat(convertSileroToGgml(safetensors(), '6.2.3'));
    expect(out.readUInt32LE(0)).toBe(0x67676d6c);
    expect(out.toString('utf8', 8, 8 + out.readInt32LE(4))).toBe('silero-16k');
    const ints = Array.from({ length: 22 }, (_, i) => out.readInt32LE(18 + i * 4));
    expect(ints).toEqual([6, 2, 3, 512, 64, 4, 129, 128, 3, 128, 64, 3, 64, 64, 3, 64, 128, 3, 128, 128, 128, 1]);
    const tensors = readTensors(out, 18 + 22 * 4);
    expect(tensors.map((t) => [t.name, t.ne.join('x'), t.ftype])).toEqual([
      ['_model.encoder.0.reparam_conv.weight', '3x129x128', 1],
      ['_model.encoder.0.reparam_conv.bias', '128', 0],
      ['_model.encoder.1.reparam_conv.weight', '3x128x64', 1],
      ['_model.encoder.1.reparam_conv.bias', '64', 0],
      ['_model.encoder.2.reparam_conv.weight', '3x64x64', 1],
      ['_model.encoder.2.reparam_conv.bias', '64', 0],
      ['_model.encoder.3.reparam_conv.weight', '3x64x128', 1],
      ['_model.encoder.3.reparam_conv.bias', '128', 0],
      ['_model.decoder.rnn.weight_ih', '128x512', 0],
      ['_model.decoder.rnn.weight_hh', '128x512', 0],
      ['_model.decoder.rnn.bias_ih', '512', 0],
      ['_model.decoder.rnn.bias_hh', '512', 0],
      ['_model.decoder.decoder.2.weight', '128', 1],
      ['_model.decoder.decoder.2.bias', '', 0],
      ['_model.stft.forward_basis_buffer', '256x1x258', 1],
    ]);
    expect(tensors[0]!.data.readUInt16LE(2)).toBe(floatToHalf(0.125));
  });

  it('names a missing or misshapen tensor', () => {
    expect(() => convertSileroToGgml(safetensors('final_conv.bias'), '6.2.3')).toThrow(/lack final_conv.bias/);
    expect(() => convertSileroToGgml(safetensors(undefined, ['conv1.weight', [128, 129, 5]]), '6.2.3')).toThrow(
      /conv1.weight has shape 128x129x5, expected 128x129x3/,
    );
    expect(() => convertSileroToGgml(safetensors(), '6.2')).toThrow(/X.Y.Z/);
  });
});
