import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';
import SEARCH_ATTRIBUTES from './search-attributes.json';

/**
 * The custom search attributes of jobs and batches; the Temporal UI filters by them. Their names and types are
 * search-attributes.json, which the dev server's start (scripts/services.mjs, plain Node) registers too; every one
 * is a Keyword. Pure: workflows, the API and the worker import it.
 */
type Name = keyof typeof SEARCH_ATTRIBUTES;
const keyword = (name: Name) => defineSearchAttributeKey(name, SearchAttributeType.KEYWORD);

export const jobTypeAttribute = keyword('JobType');
export const jobStatusAttribute = keyword('JobStatus');
const batchIdAttribute = keyword('BatchId');
const userIdAttribute = keyword('UserId');

/** Every attribute, as registered on a namespace (worker/search-attributes.ts) and on the dev server. */
export const SEARCH_ATTRIBUTE_KEYS = [jobTypeAttribute, jobStatusAttribute, batchIdAttribute, userIdAttribute];

/** The search attributes a job starts with (pending), typed. */
export function jobSearchAttributes(a: { jobType: string; batchId?: string; userId?: string }): SearchAttributePair[] {
  return [
    { key: jobTypeAttribute, value: a.jobType },
    { key: jobStatusAttribute, value: 'pending' },
    ...(a.batchId ? [{ key: batchIdAttribute, value: a.batchId }] : []),
    ...(a.userId ? [{ key: userIdAttribute, value: a.userId }] : []),
  ];
}

/** The search attributes a batch starts with (pending), typed. */
export function batchSearchAttributes(a: { batchId: string; userId?: string }): SearchAttributePair[] {
  return [
    { key: batchIdAttribute, value: a.batchId },
    { key: jobStatusAttribute, value: 'pending' },
    ...(a.userId ? [{ key: userIdAttribute, value: a.userId }] : []),
  ];
}
