"""Calls the service through the client openapi-python-client wrote from its served OpenAPI document (package
`docproc_client`, on PYTHONPATH), as a user of that client would: only the generated functions, models and File
type. Used by test/e2e/generated-clients.test.ts.

Arguments: base URL, API key, a PDF to upload, HTML to convert, a directory for the downloads. Prints one JSON line
with what came back; a call that answers anything but its success model ends the script with exit 1, naming it.
"""
import json
import os
import sys

import httpx

from docproc_client import AuthenticatedClient
from docproc_client.api.common import get_api_common_samples_filename
from docproc_client.api.jobs import get_api_jobs_job_id, get_api_jobs_job_id_download_archive, post_api_jobs
from docproc_client.api.legacy_event_jobs import get_api_event_job_files_path
from docproc_client.api.pdf import post_api_pdf_process
from docproc_client.api.transformer import post_api_transformer_html_to_markdown
from docproc_client.models import (
    CreateJob,
    CreateJobJobType,
    CreateJobParameters,
    JobStatus,
    PostApiJobsResponse200,
    PostApiPdfProcessBody,
    PostApiPdfProcessBodyExtractionMethod,
    PostApiPdfProcessResponse200,
    PostApiTransformerHtmlToMarkdownBody,
    PostApiTransformerHtmlToMarkdownResponse200,
)
from docproc_client.types import File


def expect(what, answer, model):
    if not isinstance(answer, model):
        sys.stderr.write(f"{what}: expected {model.__name__}, got {answer!r}\n")
        sys.exit(1)
    return answer


def main():
    base_url, key, pdf_path, html, out_dir = sys.argv[1:6]
    # The generated client sends the key as a Bearer token (the document's BearerAuth scheme).
    client = AuthenticatedClient(base_url=base_url, token=key, timeout=httpx.Timeout(120.0))
    out = {}
    with client:
        # A JSON endpoint.
        md = post_api_transformer_html_to_markdown.sync(
            client=client, body=PostApiTransformerHtmlToMarkdownBody(html=html)
        )
        out["markdown"] = expect("html-to-markdown", md, PostApiTransformerHtmlToMarkdownResponse200).data.markdown

        # A multipart endpoint: the file as the generated File type, the fields as their own text/plain parts.
        with open(pdf_path, "rb") as f:
            body = PostApiPdfProcessBody(
                file=File(payload=f, file_name=os.path.basename(pdf_path), mime_type="application/pdf"),
                extraction_method=PostApiPdfProcessBodyExtractionMethod.NATIVE,
            )
            pdf = expect("pdf/process", post_api_pdf_process.sync(client=client, body=body), PostApiPdfProcessResponse200)
        out["pdf_text"] = pdf.data.extracted_text
        out["pdf_pages"] = pdf.data.metadata.page_count

        # A job, then its ZIP archive through the generated download function.
        created = post_api_jobs.sync(
            client=client,
            body=CreateJob(
                job_type=CreateJobJobType.TRANSFORMER,
                parameters=CreateJobParameters.from_dict({"operation": "html-to-markdown", "html": html}),
            ),
        )
        job_id = expect("jobs", created, PostApiJobsResponse200).data.job_id
        for _ in range(60):
            job = get_api_jobs_job_id.sync(job_id, client=client, wait=5)
            if job.data.status in (JobStatus.COMPLETED, JobStatus.FAILED):
                break
        out["job_id"] = job_id
        out["job_status"] = job.data.status.value
        archive = expect("download-archive", get_api_jobs_job_id_download_archive.sync(job_id, client=client), File)
        out["zip_file"] = os.path.join(out_dir, "python-archive.zip")
        with open(out["zip_file"], "wb") as f:
            f.write(archive.payload.read())

        # A file the job produced, by its path (slashes and all), through the generated files function.
        produced = expect(
            "event-job/files", get_api_event_job_files_path.sync(f"{job_id}/result.md", client=client), File
        )
        out["result_text"] = produced.payload.read().decode("utf-8")

        # A binary download with several media types: the bytes as served.
        sample = expect("samples", get_api_common_samples_filename.sync("sample.pdf", client=client), File)
        out["sample_file"] = os.path.join(out_dir, "python-sample.pdf")
        with open(out["sample_file"], "wb") as f:
            f.write(sample.payload.read())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
