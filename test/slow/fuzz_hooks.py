"""Schemathesis hooks of the fuzz suite (test/slow/fuzz.test.ts), loaded through SCHEMATHESIS_HOOKS.

Nothing the fuzzer sends may make the service reach out of this machine: before every call, every string in the
case (body at any depth, multipart fields, query, path parameters, headers) that a URL parser would read as a URL
of a scheme the service could fetch is replaced by a URL of a closed port on loopback (FUZZ_CLOSED_URL). The service
runs with its URL guard enforced, so such URLs are refused (403) before any connection; the rewrite makes sure a
guard that failed would still find nothing to reach.
"""
import os
import re

import schemathesis

CLOSED_URL = os.environ.get("FUZZ_CLOSED_URL", "http://127.0.0.1:9/fuzz")
# WHATWG URL parsing drops leading/trailing C0 controls and spaces and every tab/newline, and is case-insensitive
# in the scheme; "http:host" and "http:\\host" are URLs too. Any scheme is rewritten, not only http(s).
_STRIP = re.compile(r"[\t\n\r]")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.\-]*:")


def _is_url(value):
    text = _STRIP.sub("", value).strip("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ").lower()
    return bool(_SCHEME.match(text)) or text.startswith("//") or text.startswith("\\\\")


def _rewrite(value):
    if isinstance(value, str):
        return CLOSED_URL if _is_url(value) else value
    if isinstance(value, dict):
        return {k: _rewrite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rewrite(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_rewrite(v) for v in value)
    return value


REWRITTEN = {"count": 0}


@schemathesis.hook
def before_call(context, case, **kwargs):
    for part in ("body", "query", "path_parameters", "headers", "cookies"):
        value = getattr(case, part, None)
        if value is None:
            continue
        new = _rewrite(value)
        if new != value:
            REWRITTEN["count"] += 1
            setattr(case, part, new)
