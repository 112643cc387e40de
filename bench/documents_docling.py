"""docling-slim as bench/documents.bench.ts runs it: one converter for the whole run, requests on stdin.

Run in the bench's own venv (~/.cache/docproc/docling-venv). Office, OpenDocument, e-mail, EPUB and HTML go through
docling's declarative backends and its SimplePipeline: no model is loaded, PDF and images are not allowed formats.

Each stdin line is {"path", "out", "runs"}: the file's bytes are read before timing, then `runs` conversions
(convert + export_to_markdown) of an in-memory stream are timed; the last Markdown is written to `out`. Each answer is
one stdout line {"ms": [...]} or {"error": "..."}.

docling-slim 2.143.0 imports its ASR pipeline at the top of document_converter, and that module imports torch, which
the slim package does not install: the module is replaced by an empty stand-in before the import. No converter used
here touches it (ASR is for audio and video, which are not allowed formats).
"""

import io
import json
import logging
import sys
import time
import types

stand_in = types.ModuleType("docling.pipeline.asr_transformers")
stand_in.TransformersAsrDecoder = None
sys.modules.setdefault("docling.pipeline.asr_transformers", stand_in)

from docling.datamodel.base_models import DocumentStream, InputFormat  # noqa: E402
from docling.document_converter import DocumentConverter  # noqa: E402

logging.disable(logging.WARNING)

FORMATS = [
    InputFormat.DOCX,
    InputFormat.PPTX,
    InputFormat.XLSX,
    InputFormat.ODT,
    InputFormat.ODS,
    InputFormat.ODP,
    InputFormat.EPUB,
    InputFormat.EMAIL,
    InputFormat.HTML,
]


def main():
    converter = DocumentConverter(allowed_formats=FORMATS)
    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        req = json.loads(line)
        try:
            data = open(req["path"], "rb").read()
            name = req["path"].rsplit("/", 1)[-1]
            times = []
            md = ""
            for _ in range(req["runs"]):
                t0 = time.perf_counter()
                result = converter.convert(DocumentStream(name=name, stream=io.BytesIO(data)), raises_on_error=True)
                md = result.document.export_to_markdown()
                times.append((time.perf_counter() - t0) * 1000)
            open(req["out"], "w", encoding="utf-8").write(md)
            answer = {"ms": times}
        except Exception as e:  # a document docling cannot convert is reported as such
            answer = {"error": f"{type(e).__name__}: {e}"[:300]}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
