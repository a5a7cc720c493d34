#!/usr/bin/env bash
# Installs the native packages examkit needs, with apt, when any is missing; does nothing when
# all are present. `make run` (through `make build`) and `make test` both call it.
#
#   scripts/native-packages.sh          to build and run the service: Tesseract and Leptonica
#                                       (OCR, linked through leptess, whose bindings need clang
#                                       and pkg-config) with English and orientation data
#   scripts/native-packages.sh --test   also what the suites use: curl, poppler's pdftotext and
#                                       pdftoppm, the tesseract command, two handwriting fonts
#
# It needs Debian or Ubuntu and root, or passwordless sudo. Elsewhere it names the packages and
# exits non-zero: install their equivalents, then run the command again.
set -euo pipefail

test_packages=false
case "${1:-}" in
  "") ;;
  --test) test_packages=true ;;
  *) echo "usage: $0 [--test]" >&2; exit 2 ;;
esac

missing=()
need() { missing+=("$1"); }
command -v cc >/dev/null 2>&1 || need build-essential
command -v pkg-config >/dev/null 2>&1 || need pkg-config
command -v clang >/dev/null 2>&1 || need clang
[ -e /usr/include/tesseract/baseapi.h ] || need libtesseract-dev
[ -e /usr/include/leptonica/allheaders.h ] || need libleptonica-dev
ls /usr/share/tesseract-ocr/*/tessdata/eng.traineddata >/dev/null 2>&1 || need tesseract-ocr-eng
ls /usr/share/tesseract-ocr/*/tessdata/osd.traineddata >/dev/null 2>&1 || need tesseract-ocr-osd
if $test_packages; then
  command -v curl >/dev/null 2>&1 || need curl
  command -v pdftotext >/dev/null 2>&1 && command -v pdftoppm >/dev/null 2>&1 || need poppler-utils
  command -v tesseract >/dev/null 2>&1 || need tesseract-ocr
  [ -e /usr/share/fonts/truetype/fifthhorseman/dkg.ttf ] || need fonts-dkg-handwriting
  [ -e /usr/share/fonts/opentype/comic-neue/ComicNeue-Regular.otf ] || need fonts-comic-neue
fi
[ "${#missing[@]}" -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "examkit needs these packages (Debian names): ${missing[*]}" >&2
  echo "there is no apt-get here: install their equivalents, then run the command again" >&2
  exit 1
fi
sudo=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "examkit needs these packages: ${missing[*]}" >&2
    echo "run as root, or: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
echo "installing ${missing[*]}" >&2
# `env` carries DEBIAN_FRONTEND through sudo, which resets the environment.
${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get update -qq
${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
  "${missing[@]}" >/dev/null
