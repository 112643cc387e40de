import type { Connection } from '@temporalio/client';
import type { SearchAttributeType } from '@temporalio/common';
import proto from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_KEYS } from '../core/runtime/search-attributes';

const IndexedValueType = proto.temporal.api.enums.v1.IndexedValueType;

const indexedType = (t: SearchAttributeType) =>
  IndexedValueType[`INDEXED_VALUE_TYPE_${t}` as keyof typeof IndexedValueType];

export interface RegistrationResult {
  namespace: string;
  /** Attributes this call added. */
  added: string[];
  /** Attributes that were already there with the right type. */
  present: string[];
}

/**
 * Registers the project's search attributes on an existing namespace through the operator service, idempotently:
 * attributes already registered with the same type are left alone, missing ones are added in one call. An attribute
 * of the same name with another type is an error (it would break every job start), as is a missing namespace.
 * Temporal Cloud has no operator service for this: there, add them with `tcld` or the Cloud UI.
 */
export async function registerSearchAttributes(connection: Connection, namespace: string): Promise<RegistrationResult> {
  const listed = await connection.operatorService.listSearchAttributes({ namespace });
  const existing = new Map<string, number>(
    Object.entries({ ...(listed.systemAttributes ?? {}), ...(listed.customAttributes ?? {}) }),
  );
  const missing: Record<string, number> = {};
  const present: string[] = [];
  for (const key of SEARCH_ATTRIBUTE_KEYS) {
    const want = indexedType(key.type);
    const have = existing.get(key.name);
    if (have === undefined) missing[key.name] = want;
    else if (have === want) present.push(key.name);
    else
      throw new Error(
        `search attribute ${key.name} exists in namespace ${namespace} with type ${IndexedValueType[have]}, expected ${IndexedValueType[want]}`,
      );
  }
  const added = Object.keys(missing);
  if (added.length) await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
  return { namespace, added, present };
}
