#!/usr/bin/env bash
# The committed keyword clips (tools/clips/wav) must be exactly what
# tools/clips/make_clips.py generates with Debian 12's espeak-ng and sox.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v espeak-ng >/dev/null || ! command -v sox >/dev/null; then
  sudo_=""; [ "$(id -u)" = 0 ] || sudo_=sudo
  $sudo_ apt-get update -qq
  $sudo_ apt-get install -y -qq espeak-ng sox >/dev/null
fi
python3 "$here/tools/clips/make_clips.py" --check "$here/tools/clips/wav"
# The listening test's recording: the clips above plus shared/'s real Speech
# Commands recordings (beside the repository, or $ETCH_SHARED).
shared=${ETCH_SHARED:-$here/../shared}
if [ -d "$shared/data/speech-commands" ]; then
  python3 "$here/tools/clips/make_recording.py" --check "$here/tools/clips/listen" --shared "$shared"
else
  echo "shared/data/speech-commands not found: recording check skipped"
fi
