import type { IncomingMessage } from 'node:http';

/** Collects a request's body for the test servers; `json` is its parse, or undefined when it is not JSON. */
export function onBody(req: IncomingMessage, handle: (body: string, json: any) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    let json: any;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    handle(body, json);
  });
}
