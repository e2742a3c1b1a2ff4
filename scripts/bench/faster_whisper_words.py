#!/usr/bin/env python3
"""Word-level transcripts from faster-whisper: the side-by-side baseline of the accuracy bench.

Run it with the venv python that scripts/bench/faster-whisper-setup prints. Reads one JSON job on stdin:

  {"model": "<CTranslate2 model dir>", "threads": 2, "beam_size": 5,
   "files": [{"path": "a.wav", "language": "en"}, {"path": "b.wav", "language": null}],
   "compute_type": "float32"}          # optional; float32 is the default, see below

and prints one JSON line per file, in order:

  {"path", "language", "language_probability", "seconds", "words": [{"text", "start", "end", "probability"}]}

`seconds` is the wall time of transcribe() including iterating its segment generator (where the decoding
happens); loading the model, once per job, is not in it. Word text is faster-whisper's, stripped of the
leading space. `language: null` lets faster-whisper detect the language.

compute_type float32: the weights (float16 in model.bin) are widened to float32 losslessly, so decoding
sees OpenAI's weights unchanged, like the reference implementation on CPU; int8 (faster-whisper's usual
CPU choice) quantizes them and moves the transcripts a little. A baseline for accuracy wants the former.

HF_HUB_OFFLINE=1 is forced: the model dir must hold tokenizer.json, and nothing may reach the Hugging Face hub.
"""
import json
import os
import sys
import time

os.environ["HF_HUB_OFFLINE"] = "1"

from faster_whisper import WhisperModel  # noqa: E402


def main() -> int:
    job = json.load(sys.stdin)
    model_dir = job["model"]
    if not os.path.isfile(os.path.join(model_dir, "tokenizer.json")):
        print(f"faster_whisper_words: {model_dir}/tokenizer.json is missing (run scripts/bench/faster-whisper-setup)",
              file=sys.stderr)
        return 2
    model = WhisperModel(model_dir, device="cpu", compute_type=job.get("compute_type", "float32"),
                         cpu_threads=int(job.get("threads", 2)))
    beam_size = int(job.get("beam_size", 5))
    for f in job["files"]:
        t0 = time.perf_counter()
        segments, info = model.transcribe(f["path"], language=f.get("language"), beam_size=beam_size,
                                          word_timestamps=True, vad_filter=False,
                                          condition_on_previous_text=True)
        words = [{"text": w.word.lstrip(" "), "start": round(w.start, 3), "end": round(w.end, 3),
                  "probability": round(w.probability, 4)}
                 for seg in segments for w in (seg.words or [])]
        seconds = time.perf_counter() - t0
        print(json.dumps({"path": f["path"], "language": info.language,
                          "language_probability": round(info.language_probability, 4),
                          "seconds": round(seconds, 3), "words": words}, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
