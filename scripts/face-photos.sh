#!/usr/bin/env bash
# Real photographs for packages/framing's tests (face detection, reframing), from a package
# registry only: scikit-image 0.25.2's wheel on PyPI ships them in skimage/data/.
#   astronaut.png  Eileen Collins, NASA astronaut portrait (NASA, public domain): one face
#   camera.png     "cameraman" (scikit-image: CC0 by Lav Varshney): a man behind a camera, greyscale (not used by the tests yet)
#   coffee.png     a cup of coffee (scikit-image: CC0 by Rachel Michetti): no person
#   chelsea.png    Chelsea the cat (scikit-image: CC0 by Stefan van der Walt): no person
#   rocket.jpg     a SpaceX Falcon 9 launch (released by SpaceX into the public domain): no person
# The wheel and each photo are checked against pinned SHA-256 sums. Prints the folder:
# ${XDG_CACHE_HOME:-$HOME/.cache}/captionfarm/faces. Idempotent: a complete folder is reused.
# Needs pip (python3 -m pip) and python3.
set -euo pipefail
log() { printf 'face-photos: %s\n' "$*" >&2; }

cache=${XDG_CACHE_HOME:-$HOME/.cache}/captionfarm
out="$cache/faces"
stamp_want="face-photos v2 scikit-image 0.25.2"
complete() { [ -f "$out/.complete" ] && [ "$(cat "$out/.complete")" = "$stamp_want" ]; }
if complete; then echo "$out"; exit 0; fi

mkdir -p "$cache"
exec 9>"$cache/.faces.lock"
flock 9
if complete; then echo "$out"; exit 0; fi

wheel=scikit_image-0.25.2-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
wheel_sha=a17e17eb8562660cc0d31bb55643a4da996a81944b82c54805c91b3fe66f4824
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log "downloading scikit-image 0.25.2 (its wheel, no dependencies) from PyPI"
# Any platform's wheel carries the same skimage/data; this one is pinned by its sum.
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux_2_17_x86_64 \
  scikit-image==0.25.2 -d "$tmp" >&2
echo "$wheel_sha  $tmp/$wheel" | sha256sum -c --quiet - || { log "the wheel's SHA-256 differs from the pinned one"; exit 1; }

mkdir -p "$out.partial"
python3 - "$tmp/$wheel" "$out.partial" <<'PY'
import sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in ("astronaut.png", "camera.png", "coffee.png", "chelsea.png", "rocket.jpg"):
        with open(f"{dest}/{name}", "wb") as f:
            f.write(z.read(f"skimage/data/{name}"))
PY
(
  cd "$out.partial"
  sha256sum -c --quiet - <<'SUMS'
88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5  astronaut.png
b0793d2adda0fa6ae899c03989482bff9a42d3d5690fc7e3648f2795d730c23a  camera.png
596aa1e7cb875eb79f437e310381d26b338a81c2da23439704a73c4651e8c4bb  chelsea.png
cc02f8ca188b167c775a7101b5d767d1e71792cf762c33d6fa15a4599b5a8de7  coffee.png
c2dd0de7c538df8d111e479619b129464d0269d0ae5fd18ca91d33a7fdfea95c  rocket.jpg
SUMS
) || { log "a photo's SHA-256 differs from the pinned one"; exit 1; }
rm -rf "$out"
mv "$out.partial" "$out"
echo "$stamp_want" >"$out/.complete"
log "photos in $out"
echo "$out"
