/**
 * Usage: tsx convert-silero-to-ggml.ts <silero_vad_16k.safetensors> <version X.Y.Z> <out ggml .bin>
 * Prints `<sha1> <bytes>` of the written file. Used by scripts/build-whisper.
 */
import { convertSileroFileToGgml } from '../silero-to-ggml.ts';

const [safetensorsPath, version, outPath] = process.argv.slice(2);
if (!safetensorsPath || !version || !outPath) {
  console.error('usage: convert-silero-to-ggml <silero_vad_16k.safetensors> <X.Y.Z> <out.bin>');
  process.exit(2);
}
const { sha1, bytes } = await convertSileroFileToGgml({ safetensorsPath, version, outPath });
console.log(`${sha1} ${bytes}`);
