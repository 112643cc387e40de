import type proto from '@temporalio/proto';

type History = proto.temporal.api.history.v1.IHistory;
type Payload = proto.temporal.api.common.v1.IPayload;

/**
 * What a recorded history shows of its run: read from its events, the way replay.test.ts and the recorder check them.
 */

const text = (data: Uint8Array | string | null | undefined): string =>
  data == null
    ? ''
    : typeof data === 'string'
      ? Buffer.from(data, 'base64').toString('utf8')
      : Buffer.from(data).toString('utf8');

const json = (p: Payload | undefined): unknown => {
  const s = text(p?.data);
  return s ? JSON.parse(s) : undefined;
};

/** The patch markers the run recorded (`patched`/`deprecatePatch` calls that took the new branch), in order. */
export function patchMarkers(history: History): { id: string; deprecated: boolean }[] {
  const out: { id: string; deprecated: boolean }[] = [];
  for (const e of history.events ?? []) {
    const m = e.markerRecordedEventAttributes;
    if (m?.markerName !== 'core_patch') continue;
    const data = json(m.details?.['patch-data']?.payloads?.[0]) as { id?: string; deprecated?: boolean } | undefined;
    if (data?.id) out.push({ id: data.id, deprecated: Boolean(data.deprecated) });
  }
  return out;
}

/** The first argument the run was started with (a job's `JobInput`, a batch's `BatchInput`, ...). */
export function startInput(history: History): Record<string, unknown> | undefined {
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  return json(started?.input?.payloads?.[0]) as Record<string, unknown> | undefined;
}

/** How the run closed: `completed`, `failed`, `cancelled`, `terminated`, `continued`, `timed-out`, or `open`. */
export function closeOf(history: History): string {
  const last = history.events?.at(-1);
  if (last?.workflowExecutionCompletedEventAttributes) return 'completed';
  if (last?.workflowExecutionFailedEventAttributes) return 'failed';
  if (last?.workflowExecutionCanceledEventAttributes) return 'cancelled';
  if (last?.workflowExecutionTerminatedEventAttributes) return 'terminated';
  if (last?.workflowExecutionContinuedAsNewEventAttributes) return 'continued';
  if (last?.workflowExecutionTimedOutEventAttributes) return 'timed-out';
  return 'open';
}

/** The failure type (our error code) the run failed with, if it failed. */
export function failureType(history: History): string | undefined {
  const f = history.events?.at(-1)?.workflowExecutionFailedEventAttributes?.failure;
  return f?.applicationFailureInfo?.type ?? undefined;
}

/** How many activities of this type the run scheduled (local activities not counted). */
export function scheduledActivities(history: History, type: string): number {
  return (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type)
    .length;
}

/** The workflow ids of the children the run started. */
export function childWorkflowIds(history: History): string[] {
  return (history.events ?? []).flatMap((e) => {
    const id = e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
    return id ? [id] : [];
  });
}

/** How many updates the run accepted. */
export function acceptedUpdates(history: History): number {
  return (history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
}
