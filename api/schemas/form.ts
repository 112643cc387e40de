import { z } from '../openapi';

/** A multipart field read as a boolean: true/false (any case)/1/0, absent or empty → the default. */
export const formBool = (fallback: boolean) =>
  z.preprocess((v) => {
    if (v === undefined || v === '') return fallback;
    // Any case: Python clients (requests, openapi-python-client) send str(True) = "True".
    const text = typeof v === 'string' ? v.toLowerCase() : v;
    if (text === true || text === 'true' || text === '1') return true;
    if (text === false || text === 'false' || text === '0') return false;
    return v;
  }, z.boolean());

/** An optional multipart field read as an integer in [min, max]. */
export const formInt = (min: number, max: number) =>
  z.preprocess(
    (v) => (v === undefined || v === '' ? undefined : Number(v)),
    z.number().int().min(min).max(max).optional(),
  );

/** An absolute http(s) URL a job downloads (the address checks come at download time). */
export const httpUrl = z
  .string()
  .url()
  .max(4096)
  .refine((u) => /^https?:\/\//i.test(u), 'an http or https URL');
