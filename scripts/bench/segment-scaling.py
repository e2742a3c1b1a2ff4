"""How far one ffmpeg pipeline (decode -> overlay a caption band -> x264) scales on a many-core
machine, against the same frames cut into K segments encoded by K pipelines at once.

A stand-in for the render stage of a 60 s 1080x1920 job: the source is h264 1080x1920 30 fps
(keyframe every second), the band is 1080x480 RGBA, a new band image every frame (as the
renderer pipes one), overlaid at y=1300, x264 veryfast CRF 23 (the renderer's medium quality).
PyAV (FFmpeg libraries with libx264) runs each pipeline in one process, as the ffmpeg CLI does:
one thread decodes, filters and feeds the encoder; x264 has its own threads.

  python3 scripts/bench/segment-scaling.py --seconds 60 --plan 1x0,2x8,4x4,8x2,16x1

It needs PyAV (`av` from PyPI: its wheels carry the FFmpeg libraries and libx264) and numpy. It is
Python because it was written for a lent GPU machine that has Python and neither Node nor the
ffmpeg command; see docs/performance.md, "Render segments in parallel".
"""
from fractions import Fraction
import argparse
import os
import time
from multiprocessing import get_context

import av
import numpy as np

W, H, FPS = 1080, 1920, 30
TB = Fraction(1, FPS)
BAND_H, BAND_Y = 480, 1300


def make_source(path, seconds):
    src = av.open(f'testsrc2=size={W}x{H}:rate={FPS}:duration={seconds}', format='lavfi')
    out = av.open(path, 'w')
    st = out.add_stream('libx264', rate=FPS)
    st.width, st.height, st.pix_fmt = W, H, 'yuv420p'
    st.options = {'preset': 'veryfast', 'crf': '18', 'g': str(FPS), 'keyint_min': str(FPS)}
    for frame in src.decode(video=0):
        for p in st.encode(frame):
            out.mux(p)
    for p in st.encode():
        out.mux(p)
    out.close()
    src.close()


def bands():
    rng = np.random.default_rng(1)
    imgs = []
    for i in range(8):
        a = np.zeros((BAND_H, W, 4), dtype=np.uint8)
        # text-like blocks with antialiased-ish alpha, a box behind the active word
        for j in range(12):
            x, y = int(rng.integers(40, W - 200)), int(rng.integers(40, BAND_H - 120))
            a[y:y + 90, x:x + 140, :3] = 255
            a[y:y + 90, x:x + 140, 3] = 230
        a[100 + i * 10:200 + i * 10, 300:600, :] = (250, 200, 0, 255)
        imgs.append(a)
    return imgs


def segment(args):
    path, out_path, start, count, threads, overlay = args
    t0 = time.perf_counter()
    cpu0 = os.times()
    inp = av.open(path)
    vs = inp.streams.video[0]
    vs.thread_type = 'AUTO'
    out = av.open(out_path, 'w')
    st = out.add_stream('libx264', rate=FPS)
    st.width, st.height, st.pix_fmt = W, H, 'yuv420p'
    st.options = {'preset': 'veryfast', 'crf': '23', 'threads': str(threads)}
    graph = None
    if overlay:
        graph = av.filter.Graph()
        a = graph.add_buffer(template=vs)
        b = graph.add_buffer(width=W, height=BAND_H, format='rgba', time_base=vs.time_base)
        ov = graph.add('overlay', f'x=0:y={BAND_Y}:format=yuv420')
        sink = graph.add('buffersink')
        a.link_to(ov, 0, 0)
        b.link_to(ov, 0, 1)
        ov.link_to(sink)
        graph.configure()
    imgs = bands()
    first_pts = int(start / FPS / vs.time_base)
    if start:
        inp.seek(first_pts, stream=vs, backward=True, any_frame=False)
    n = 0
    for frame in inp.decode(vs):
        if frame.pts < first_pts:
            continue
        if n >= count:
            break
        if graph:
            bf = av.VideoFrame.from_ndarray(imgs[n % 8], format='rgba')
            bf.pts, bf.time_base = frame.pts, frame.time_base
            a.push(frame)
            b.push(bf)
            outf = sink.pull()
        else:
            outf = frame
        outf.pts = n
        outf.time_base = TB
        for p in st.encode(outf):
            out.mux(p)
        n += 1
    for p in st.encode():
        out.mux(p)
    out.close()
    inp.close()
    cpu1 = os.times()
    return n, time.perf_counter() - t0, (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)


def run_plan(path, total, k, threads, overlay, workdir):
    per = -(-total // k)
    jobs = []
    for i in range(k):
        start = i * per
        cnt = min(per, total - start)
        jobs.append((path, os.path.join(workdir, f'seg{k}-{i}.mp4'), start, cnt, threads, overlay))
    t0 = time.perf_counter()
    with get_context('spawn').Pool(k) as pool:
        res = pool.map(segment, jobs)
    wall = time.perf_counter() - t0
    frames = sum(r[0] for r in res)
    cpu = sum(r[2] for r in res)
    return frames, wall, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--seconds', type=int, default=60)
    ap.add_argument('--plan', default='1x0,2x0,4x0,8x0')
    ap.add_argument('--rounds', type=int, default=1)
    ap.add_argument('--dir', default='/tmp/segbench')
    ap.add_argument('--no-overlay', action='store_true')
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    src = os.path.join(a.dir, 'source.mp4')
    t0 = time.perf_counter()
    if not os.path.exists(src):
        make_source(src, a.seconds)
    print(f'source: {a.seconds} s {W}x{H} {FPS} fps made in {time.perf_counter() - t0:.1f} s, {os.path.getsize(src) / 1e6:.1f} MB; cores {os.cpu_count()}; PyAV {av.__version__}', flush=True)
    total = a.seconds * FPS
    for r in range(a.rounds):
        for item in a.plan.split(','):
            k, t = (int(x) for x in item.split('x'))
            frames, wall, cpu = run_plan(src, total, k, t, not a.no_overlay, a.dir)
            print(f'round {r + 1} K={k} x264 threads={t or "auto"}: {frames} frames in {wall:.2f} s = {frames / wall:.0f} fps, CPU {cpu:.1f} s', flush=True)


if __name__ == '__main__':
    main()
