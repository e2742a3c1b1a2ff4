/**
 * Usage: tsx convert-ct2-to-ggml.ts <ct2 model.bin> <vocabulary.txt> <out ggml .bin>
 * Prints `<sha1> <bytes>` of the written file. Used by scripts/fetch-test-model.
 */
import { convertCt2FileToGgml } from '../ct2-to-ggml.ts';

const [modelPath, vocabularyPath, outPath] = process.argv.slice(2);
if (!modelPath || !vocabularyPath || !outPath) {
  console.error('usage: convert-ct2-to-ggml <model.bin> <vocabulary.txt> <out.bin>');
  process.exit(2);
}
const { sha1, bytes } = await convertCt2FileToGgml({ modelPath, vocabularyPath, outPath });
console.log(`${sha1} ${bytes}`);
