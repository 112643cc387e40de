import type { JobGrounding, SessionPart, TemplateSources } from '../core/results/result-schemas-chunks';
import { sourceSpans, type SpanPart } from '../domain/chunks/provenance';
import type { GroundedOutput } from '../domain/grounding/ground';
import { placeInParts, placeInTime, placeOnPages, timedTexts, type TextPart } from '../domain/grounding/place';

/**
 * Grounding on a job's template (contract §14): the template step (activities/text-operations.ts `applyTemplate`)
 * checks the values against the text it was filled from; here each source is placed where a client can point at
 * it: on a document's pages and boxes, in a recording's seconds, or in a session's page, transcript or attachments.
 * The results' builders of PDFs, documents, transcriptions and sessions call it, so every operation places sources
 * one way.
 */

/** A template's output as `applyTemplate` answers it; null when it holds no grounding (not asked). */
function groundedOf(output: Record<string, unknown>): (GroundedOutput & { fields: Record<string, unknown> }) | null {
  if (!output.template_sources) return null;
  return {
    fields: (output.template_fields ?? {}) as Record<string, unknown>,
    template_sources: output.template_sources as GroundedOutput['template_sources'],
    unsupported_fields: (output.unsupported_fields ?? []) as string[],
  };
}

/** The template's grounding with its sources placed by `place`; undefined when it holds none. */
function placed(
  output: Record<string, unknown>,
  place: (sources: GroundedOutput['template_sources']) => TemplateSources,
): JobGrounding | undefined {
  const g = groundedOf(output);
  if (!g) return undefined;
  return {
    template_fields: g.fields,
    template_sources: place(g.template_sources),
    unsupported_fields: g.unsupported_fields,
  };
}

/** A document's grounding: each source with the page (and, where the parts have blocks, the box) of its words. */
export function documentGrounding(
  output: Record<string, unknown>,
  text: string,
  parts: readonly SpanPart[],
): JobGrounding | undefined {
  return placed(output, (sources) => placeOnPages(sources, sourceSpans(text, parts)));
}

/** A transcript's grounding: each source with the seconds its words were said in (words' times where kept). */
export function mediaGrounding(
  output: Record<string, unknown>,
  text: string,
  segments: Parameters<typeof timedTexts>[1],
): JobGrounding | undefined {
  return placed(output, (sources) => placeInTime(sources, timedTexts(text, segments)));
}

/**
 * A session's grounding: each source in the part of the session's text it stands in (`part`, offsets into that
 * part's own text), with the seconds its words were said in where the part is the transcript and `transcript` gives
 * the segments that time it (offsets into its text as kept, the result's `output.video_transcript`).
 */
export function sessionGrounding(
  output: Record<string, unknown>,
  parts: readonly TextPart<SessionPart>[],
  transcript: { text: string; segments: Parameters<typeof timedTexts>[1] } | null,
): JobGrounding | undefined {
  const timed = transcript ? { transcript: timedTexts(transcript.text, transcript.segments) } : {};
  return placed(output, (sources) => placeInParts(sources, parts, timed));
}
