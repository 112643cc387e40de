import { createRequire } from 'node:module';
import proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root';

type History = proto.temporal.api.history.v1.IHistory;

/*
 * History ⇄ JSON in the format of `temporal workflow show --output json` (the SDK's historyToJSON and
 * historyFromJSON). Those two cannot be used here: npm installs three copies of protobufjs 8 (under
 * @temporalio/common, /proto and /worker, as @grpc/proto-loader holds protobufjs 7 at the top), and the SDK pairs
 * the protojson codec of one copy with the message types of another, which fails with "type must be a Type".
 * The same codec from @temporalio/proto's own copy works.
 */
const requireFromProto = createRequire(createRequire(import.meta.url).resolve('@temporalio/proto'));
const { toJson, fromJson } = requireFromProto('protobufjs/ext/protojson') as {
  toJson(type: unknown, message: unknown): unknown;
  fromJson(type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }): unknown;
};
const historyType = (patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown }).lookupType(
  'temporal.api.history.v1.History',
);

export function historyToJson(history: History): string {
  return JSON.stringify(toJson(historyType, proto.temporal.api.history.v1.History.fromObject(history)), null, 2);
}

export function historyFromJson(json: unknown): History {
  const h = fromJson(historyType, json, { ignoreUnknownFields: true });
  if (!h) throw new TypeError('not a workflow history');
  return h as History;
}
