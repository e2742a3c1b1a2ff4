import { join } from 'node:path';
import type { Box } from '@captionfarm/contracts';
import { runToEnd } from '@captionfarm/process';
import { ffmpegPaths } from '@captionfarm/process/tools';
import { ASTRONAUT_FACE, ASTRONAUT_SIZE, type PhotoName, photo } from './photos.ts';

/** One shot: a blurred real photograph as the background, and the astronaut's face sliding from `from` to `to` (its centre, clip pixels), or nobody. */
export interface ShotSpec {
  frames: number;
  background: PhotoName;
  face: { from: { x: number; y: number }; to: { x: number; y: number } } | null;
}

export interface Clip {
  file: string;
  width: number;
  height: number;
  fps: number;
  durationSeconds: number;
  /** Each shot's first frame (the first is 0). */
  shotFrames: number[];
  /** The face's box in clip pixels at frame `n` (by construction), or null where nobody is in the picture. */
  faceAt(n: number): Box | null;
}

const pos = (from: number, to: number, k: number, n: number) => Math.floor(from + ((to - from) * k) / Math.max(1, n - 1));

/**
 * A `width` x `height` H.264 clip at `fps` built with ffmpeg from the photographs: each shot a
 * blurred background photo, the astronaut scaled by `scale` laid over it so that her face's centre
 * moves linearly from `from` to `to` over the shot (whole pixels a frame), hard cuts between shots;
 * `grain` adds temporal noise of that strength (a camera's grain, so an encoder works as on real
 * footage), `preset` is x264's (default ultrafast), `kbps` a bitrate cap instead of CRF 20 (grain at
 * CRF 20 makes a 76 Mbit/s stream, far above what cameras and phones record).
 */
export async function makeClip(
  dir: string,
  name: string,
  o: { width: number; height: number; fps: number; scale: number; shots: ShotSpec[]; grain?: number; preset?: string; kbps?: number },
): Promise<Clip> {
  const file = join(dir, name);
  const side = Math.round(ASTRONAUT_SIZE * o.scale);
  const centre = { x: (ASTRONAUT_FACE.x + ASTRONAUT_FACE.width / 2) * o.scale, y: (ASTRONAUT_FACE.y + ASTRONAUT_FACE.height / 2) * o.scale };
  const inputs: string[] = [];
  const graph: string[] = [];
  o.shots.forEach((s, i) => {
    const secs = (s.frames / o.fps).toFixed(6);
    inputs.push('-loop', '1', '-framerate', String(o.fps), '-t', secs, '-i', photo(s.background));
    graph.push(`[${inputs.filter((a) => a === '-i').length - 1}:v]scale=480:270,boxblur=3,scale=${o.width}:${o.height},setsar=1[bg${i}]`);
    if (s.face) {
      inputs.push('-loop', '1', '-framerate', String(o.fps), '-t', secs, '-i', photo('astronaut.png'));
      const n = s.frames - 1;
      const x0 = s.face.from.x - centre.x;
      const y0 = s.face.from.y - centre.y;
      const dx = s.face.to.x - s.face.from.x;
      const dy = s.face.to.y - s.face.from.y;
      graph.push(`[${inputs.filter((a) => a === '-i').length - 1}:v]scale=${side}:${side},setsar=1[fg${i}]`);
      graph.push(
        `[bg${i}][fg${i}]overlay=x='floor(${x0}+${dx}*n/${Math.max(1, n)})':y='floor(${y0}+${dy}*n/${Math.max(1, n)})':eval=frame,trim=end_frame=${s.frames}[s${i}]`,
      );
    } else graph.push(`[bg${i}]trim=end_frame=${s.frames}[s${i}]`);
  });
  graph.push(`${o.shots.map((_, i) => `[s${i}]`).join('')}concat=n=${o.shots.length}:v=1${o.grain ? `,noise=alls=${o.grain}:allf=t` : ''},format=yuv420p[v]`);
  await runToEnd(ffmpegPaths().ffmpeg, {
    args: [
      '-y',
      '-hide_banner',
      '-loglevel',
      'error',
      ...inputs,
      '-filter_complex',
      graph.join(';'),
      '-map',
      '[v]',
      '-r',
      String(o.fps),
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-crf',
      '20',
      file,
    ],
  });
  const shotFrames = o.shots.map((_, i) => o.shots.slice(0, i).reduce((a, s) => a + s.frames, 0));
  const total = o.shots.reduce((a, s) => a + s.frames, 0);
  return {
    file,
    width: o.width,
    height: o.height,
    fps: o.fps,
    durationSeconds: total / o.fps,
    shotFrames,
    faceAt(n) {
      const i = shotFrames.findLastIndex((f) => f <= n);
      const s = o.shots[i];
      if (!s?.face) return null;
      const k = n - (shotFrames[i] ?? 0);
      const x = pos(s.face.from.x - centre.x, s.face.to.x - centre.x, k, s.frames);
      const y = pos(s.face.from.y - centre.y, s.face.to.y - centre.y, k, s.frames);
      return {
        x: x + ASTRONAUT_FACE.x * o.scale,
        y: y + ASTRONAUT_FACE.y * o.scale,
        width: ASTRONAUT_FACE.width * o.scale,
        height: ASTRONAUT_FACE.height * o.scale,
      };
    },
  };
}
