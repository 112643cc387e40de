/**
 * The external OCR engine behind one interface (a Mistral-OCR-compatible HTTP API, contract §6): a PDF or one image
 * in, each page's Markdown out. The real one is providers/external-ocr/mistral.ts `createExternalOcr`; its settings
 * and its error (`ExternalOcrError`) are the provider's (providers/external-ocr/types.ts).
 */

/** The shapes of the external OCR provider (Mistral OCR's wire format, as `data.external_ocr_raw` shows it). */

/** One picture the OCR found on a page; `image_base64` is a `data:` URL, null when images were not asked for. */
export interface ExternalOcrImage {
  id: string;
  image_base64: string | null;
  top_left_x: number;
  top_left_y: number;
  bottom_right_x: number;
  bottom_right_y: number;
}

export interface ExternalOcrPage {
  /** 0-based page index within the whole document. */
  index: number;
  markdown: string;
  images: ExternalOcrImage[];
  dimensions?: { dpi: number; height: number; width: number } | null;
}

/**
 * The merged answer: `data.external_ocr_raw` of `/api/pdf/process-external-ocr`. Pages are in ascending index order.
 */
export interface ExternalOcrRaw {
  pages: ExternalOcrPage[];
  model: string;
  /** `pages_processed` summed over every request; `doc_size_bytes` is the size of the document sent. */
  usage_info: { pages_processed: number; doc_size_bytes: number };
}

export interface OcrPdfOptions {
  /** 0-based page indexes to recognise; default every page. */
  pages?: number[];
  /** The document's page count: lets a big document be split into groups even when `pages` is not given. */
  pageCount?: number;
  /** Ask for the pictures as base64 (`include_image_base64`). */
  includeImages: boolean;
  signal?: AbortSignal;
  /** After each page group: pages done so far and pages asked for. */
  onProgress?(done: number, total: number): void;
}

export interface OcrImageOptions {
  includeImages?: boolean;
  signal?: AbortSignal;
}

export interface ExternalOcrRetryInfo {
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  reason: string;
  status?: number;
}

export interface ExternalOcr {
  ocrPdf(bytes: Buffer, opts: OcrPdfOptions): Promise<ExternalOcrRaw>;
  /** A single image (`image_url` document); the answer has one page, index 0. */
  ocrImage(bytes: Buffer, mime: string, opts?: OcrImageOptions): Promise<ExternalOcrRaw>;
  /** Model and endpoint host, for logs and health (never the key). */
  describe(): { model: string; host: string };
}
