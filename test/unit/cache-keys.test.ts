import { expect } from 'chai';
import {
  audioCacheKey,
  contentHash,
  externalOcrCacheKey,
  imageOcrCacheKey,
  pdfCacheKey,
  pdfPageCacheKey,
  sessionTranscriptCacheKey,
  transformCacheKey,
} from '../../core/stores/cache-keys';

// Each expected value is a key the cache holds entries under (0.1.0 computes them so): a key that changes here misses
// every entry stored under it.
const SHA = contentHash('fixed input bytes');

describe('cache keys', () => {
  it('hashes input content with sha256', () => {
    expect(SHA).to.equal('62d4ecb47e26b9d712a9e660253dd66af50634e22c62ec35cafad01e9099f20e');
  });

  it('keys a PDF result by document, method, page range, languages, text engine and vision model', () => {
    const pdftotext = { textEngine: 'pdftotext' };
    const vision = { textEngine: 'pdfjs', visionModel: 'vis-1' };
    expect(pdfCacheKey(SHA, { extraction_method: 'native', page_start: 2, page_end: 5 }, pdftotext)).to.equal(
      '02f0ec5b23d59d77467e2848aad7cb3bf7ad7591f6b06366200d6d7318813c73',
    );
    expect(pdfCacheKey(SHA, {}, { textEngine: 'pdftotext', visionModel: 'vis-1' })).to.equal(
      'b3291b4013c1aeabb92061a3baf86276328da7148084cb36c1e15d893838ff4e',
    );
    expect(pdfCacheKey(SHA, { extraction_method: 'local_ocr', ocr_language: 'deu+eng' }, pdftotext)).to.equal(
      '59259dac405823f973dd4dcb9ca6d4d29a3be06046011b09bf288b303e7697db',
    );
    expect(pdfCacheKey(SHA, { extraction_method: 'combined', source_language: 'de' }, vision)).to.equal(
      '9a8a5d6b51fc2fd1e79d9e6ec083b4bdb1f87ea1faefaa44a78361bd8ab01f3e',
    );
    expect(pdfCacheKey(SHA, { extraction_method: 'vision_llm' }, vision)).to.equal(
      '771a33a01a305d40bc967922956a808d01d49be1bcc246c2845ca364ed6a1c13',
    );
  });

  it('keys Markdown results and pages apart from text ones, and text ones as before', () => {
    const ctx = { textEngine: 'pdftotext' };
    const text = pdfCacheKey(SHA, { extraction_method: 'native' }, ctx);
    expect(pdfCacheKey(SHA, { extraction_method: 'native', output_format: 'text' }, ctx)).to.equal(text);
    expect(pdfCacheKey(SHA, { extraction_method: 'native', output_format: 'markdown' }, ctx)).not.to.equal(text);
    const page = { page: 1, method: 'local_ocr', languages: ['eng'], engine: 'pdftotext' };
    expect(pdfPageCacheKey(SHA, { ...page, markdown: false }, undefined)).to.equal(
      pdfPageCacheKey(SHA, page, undefined),
    );
    expect(pdfPageCacheKey(SHA, { ...page, markdown: true }, undefined)).not.to.equal(
      pdfPageCacheKey(SHA, page, undefined),
    );
  });

  it('does not key a PDF request with a template, with page images or without a document hash', () => {
    expect(pdfCacheKey(SHA, { template: 'x' }, { textEngine: 'pdfjs' })).to.equal(null);
    expect(pdfCacheKey(SHA, { includeImages: true }, { textEngine: 'pdfjs' })).to.equal(null);
    expect(pdfCacheKey('', {}, { textEngine: 'pdfjs' })).to.equal(null);
  });

  it('keys a PDF page by document, page, method, languages, text engine and model', () => {
    expect(pdfPageCacheKey(SHA, { page: 3, method: 'native', languages: ['deu'], engine: 'pdftotext' }, 'm')).to.equal(
      'b027fed2ef5867f8f2019611cc1d9f827cdc0ab88216dc7a412172312c0793ff',
    );
    expect(
      pdfPageCacheKey(SHA, { page: 3, method: 'local_ocr', languages: ['deu', 'eng'], engine: 'pdftotext' }, 'm'),
    ).to.equal('7ec4eb521ff6ef3f2e0068aa3fac9bf5cad9deba8215c9f764cbd22cf3996151');
    expect(pdfPageCacheKey(SHA, { page: 1, method: 'combined', languages: ['eng'], engine: 'pdfjs' }, 'm')).to.equal(
      'fa3f7437b33851b8f18d32ece35f0fd5a4cd0781e966676f7983631a766d5d04',
    );
    expect(pdfPageCacheKey(SHA, { page: 7, method: 'vision_llm', languages: [], engine: 'pdfjs' }, undefined)).to.equal(
      '536c76f66a9c7c82ad13835c4c0c7f9abe9e06df9bba7b4db1c3b9582ebb0dc6',
    );
  });

  it('keys an image OCR by image, languages and, with a template, its source, context and model', () => {
    expect(imageOcrCacheKey(SHA, { ocr_language: 'deu' }, { model: 'm' })).to.equal(
      '7bb580b3908d25c598d4c7fececb00f394f0c4679a747c16e34f41ed8de06ab1',
    );
    expect(imageOcrCacheKey(SHA, { source_language: 'en' }, {})).to.equal(
      '05473357e3df5393f440572fbf8e7c2d642fbb876a539ae75d059a8b704e56f4',
    );
    expect(
      imageOcrCacheKey(
        SHA,
        { ocr_language: 'deu', context: { b: 1, a: 'x' } },
        { templateSource: '# T {{x}}', model: 'm' },
      ),
    ).to.equal('e4ab09d092a1dbe73a638472d4cf3e32f66cbf8ebad3dcaf11e7324e5c791273');
    expect(imageOcrCacheKey(SHA, {}, { templateSource: '# T' })).to.equal(
      '8599339e1d258b0a41b23c793e51ffcf879d25a2c0faf93b1f74b9691d534260',
    );
  });

  it('keys an external OCR answer by document, pages, images option and service', () => {
    expect(
      externalOcrCacheKey(
        SHA,
        { pages: [0, 2, 5], includeImages: true },
        { url: 'http://ocr.example/v1', model: 'mistral-ocr' },
      ),
    ).to.equal('798d0854d5623b7593808ad590842554652088316c2ba4fd67c026f8a24c57cc');
    expect(
      externalOcrCacheKey(SHA, { pages: [], includeImages: false }, { url: 'http://ocr.example', model: 'x' }),
    ).to.equal('2c91f596663b375fd8076702bf3fc37a2cee4ae4b335565a39ad71a8a7d26480');
  });

  it('keys a transformer operation by its parameters, the template source and the model of the operations that use one', () => {
    expect(
      transformCacheKey(
        { operation: 'html-to-markdown', html: '<p>Hi</p>', use_cache: false, webhook: { url: 'http://x' } },
        { model: 'm' },
      ),
    ).to.equal('5c4cc6d2b7ba9e8dd56ceb7ca32309b63e5347f82c771b9761d9ddced07da5d1');
    expect(transformCacheKey({ operation: 'extract-tables', html: '<table></table>' })).to.equal(
      '07d79e10e1ddd95eb2084dfd1237d86c83c33b92c37178a7df395ae2c0c1016f',
    );
    expect(
      transformCacheKey(
        { operation: 'translate', text: 'Hallo', target_language: 'en', source_language: 'de' },
        { model: 'm' },
      ),
    ).to.equal('5ae4ee3235cea444318849fbeec394ffdc4fed4ea099a604b2f8a258492ebab0');
    expect(
      transformCacheKey(
        { operation: 'template', text: 'x', template: 'Session', context: { z: 1 } },
        { model: 'm', templateSource: '# Session {{x}}' },
      ),
    ).to.equal('28555e385656b46d76fd419a7eaee8c44076d3e9cf3994e87f51b5534764e518');
    expect(transformCacheKey({ operation: 'summarize', text: 'x' })).to.equal(
      'bb5d963229cecc32f6ef25abdbcd5a4ac7b31800e7fe68f3cadde5ec0ad44078',
    );
  });

  it('keys an audio job by file, languages (de by default), template and both models', () => {
    expect(audioCacheKey(SHA, { source_language: 'en' }, { speechModel: 'whisper-base' })).to.equal(
      '5c3683826112e8023aa2048060242bb45473dda71e84b387cfbfe7fd28acd584',
    );
    expect(audioCacheKey(SHA, {}, { speechModel: 'whisper-base', llmModel: 'qwen' })).to.equal(
      'c0652f6d40106e3e0401d76c4fbc545c3e9f22578de5068cf6367f776743a2ed',
    );
    expect(
      audioCacheKey(
        SHA,
        { source_language: 'de', target_language: 'en', template: 'Session' },
        { templateSource: '# Session {{x}}', speechModel: 'whisper-base', llmModel: 'qwen' },
      ),
    ).to.equal('740c8447a767ad1e9e316470b38a5af6263aa2cd0f694bcfcb18a84abfb61133');
  });

  it('keys an audio job by the options beyond the spec only when they change the outcome', () => {
    const ctx = { speechModel: 'whisper-base' };
    const plain = audioCacheKey(SHA, { source_language: 'en' }, ctx);
    // The defaults (word timings not asked, VAD on, no prompt) keep the key requests without them had.
    expect(audioCacheKey(SHA, { source_language: 'en', word_timestamps: false, vad: true, prompt: ' ' }, ctx)).to.equal(
      plain,
    );
    const words = audioCacheKey(SHA, { source_language: 'en', word_timestamps: true }, ctx);
    expect(words).not.to.equal(plain);
    // Subtitles need the words: the same entry as word timings.
    expect(audioCacheKey(SHA, { source_language: 'en', subtitles: 'srt' }, ctx)).to.equal(words);
    const keys = new Set([
      plain,
      words,
      audioCacheKey(SHA, { source_language: 'en', vad: false }, ctx),
      audioCacheKey(SHA, { source_language: 'en', prompt: 'Kowalczyk' }, ctx),
      audioCacheKey(SHA, { source_language: 'en', prompt: 'Kubernetes' }, ctx),
      audioCacheKey(SHA, { source_language: 'en', diarize: true }, ctx),
      audioCacheKey(SHA, { source_language: 'en', diarize: true, max_speakers: 2 }, ctx),
    ]);
    expect(keys.size).to.equal(7);
    // diarize=false is the default.
    expect(audioCacheKey(SHA, { source_language: 'en', diarize: false }, ctx)).to.equal(plain);
  });

  it("keys a session video's transcript by URL, source language and speech model", () => {
    expect(sessionTranscriptCacheKey('https://video.example/a.mp4', 'de', 'whisper-base')).to.equal(
      'bdd93d0457f9a521c62a1070e02f29974e86f202b807e3fa9fcbefa32971059f',
    );
    expect(sessionTranscriptCacheKey('', '', '')).to.equal(
      'a71e3c045bfd2ef0997bb3c8de1c9cefd17970e82c0f02e4f77d3ae24081a224',
    );
  });
});
