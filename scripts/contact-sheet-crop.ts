// Crops a region out of a contact sheet to look at it at full size:
//   npx tsx scripts/contact-sheet-crop.ts IN.png OUT.png X Y WIDTH HEIGHT
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { writeFileSync } from 'node:fs';
const [inp, out, x, y, w, h] = process.argv.slice(2);
const img = await loadImage(inp!);
const c = createCanvas(+w!, +h!);
c.getContext('2d').drawImage(img, -+x!, -+y!);
writeFileSync(out!, c.toBuffer('image/png'));
