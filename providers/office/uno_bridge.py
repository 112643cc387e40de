"""Keeps one LibreOffice (soffice --headless) running and converts documents through its UNO API, one at a time.

Started by providers/office/libreoffice.ts with Debian's /usr/bin/python3 (python3-uno gives `uno`). Why a kept
process: a `soffice --convert-to` per file pays LibreOffice's start (about 1 s here) every time; a kept one pays it
once per worker slot. Why our own ~150 lines and not unoserver: the load must carry MacroExecutionMode=NEVER,
UpdateDocMode=NO_UPDATE and an interaction handler that refuses password prompts (so an encrypted file is told
apart from a corrupt one), which unoserver's convert does not set.

Usage: uno_bridge.py SOFFICE PROFILE_DIR PIPE_NAME
Protocol: requests on stdin, one JSON object a line: {"id": n, "input": path, "output": path, "filter": name,
"filterOptions": str?, "password": str?}. Answers on stdout, one JSON line each: {"id": n, "ok": true} or
{"id": n, "ok": false, "reason": "password_protected"|"corrupt"|"unsupported_conversion"|"engine", "message": str}.
The first line written is {"ready": true} once soffice answers. When stdin closes (the parent is gone) soffice is
killed and the bridge exits: neither outlives the Node process.
"""

import json
import os
import signal
import subprocess
import sys
import time
import zipfile

import uno
import unohelper
from com.sun.star.beans import PropertyValue
from com.sun.star.task import XInteractionHandler

SOFFICE, PROFILE, PIPE = sys.argv[1], sys.argv[2], sys.argv[3]

# Import filters LibreOffice falls back to when it recognises nothing: the bytes would come out as garbage text.
TEXT_FALLBACK = {'Text', 'Text (encoded)'}

# The document kinds and the export filter each target has for them.
KINDS = [
    ('com.sun.star.text.TextDocument', 'writer'),
    ('com.sun.star.sheet.SpreadsheetDocument', 'calc'),
    ('com.sun.star.presentation.PresentationDocument', 'impress'),
    ('com.sun.star.drawing.DrawingDocument', 'draw'),
]
FILTERS = {
    'docx': {'writer': 'MS Word 2007 XML'},
    'xlsx': {'calc': 'Calc MS Excel 2007 XML'},
    'pptx': {'impress': 'Impress MS PowerPoint 2007 XML', 'draw': 'Impress MS PowerPoint 2007 XML'},
    'pdf': {'writer': 'writer_pdf_Export', 'calc': 'calc_pdf_Export', 'impress': 'impress_pdf_Export',
            'draw': 'draw_pdf_Export'},
    # Binary formats: the tests write DOC/XLS/PPT inputs with them (the engine's API offers the four above).
    'doc': {'writer': 'MS Word 97'},
    'xls': {'calc': 'MS Excel 97'},
    'ppt': {'impress': 'MS PowerPoint 97'},
    'odt': {'writer': 'writer8'},
}


def prop(name, value):
    p = PropertyValue()
    p.Name = name
    p.Value = value
    return p


def answer(obj):
    sys.stdout.write(json.dumps(obj) + '\n')
    sys.stdout.flush()


class RefusingHandler(unohelper.Base, XInteractionHandler):
    """Aborts every question LibreOffice asks while loading (a repair, a filter choice): nothing waits for an answer."""

    def __init__(self):
        self.asked_password = False

    def handle(self, request):
        if 'Password' in type(request.getRequest()).__name__:
            self.asked_password = True
        for c in request.getContinuations():
            if c.queryInterface(uno.getTypeByName('com.sun.star.task.XInteractionAbort')):
                c.select()
                return


def looks_encrypted(path):
    """Whether a file LibreOffice could not open is an encrypted one, by its container's own markers.

    LibreOffice 7.4 does not route the password question of a headless load to our handler (checked: `handle` is
    never called), so the load just fails; these markers tell an encrypted file from a corrupt one: an encrypted
    OOXML file is an OLE container with an `EncryptionInfo` stream, an encrypted ODF package lists
    `encryption-data` in its manifest. (An encrypted legacy DOC/XLS/PPT carries a flag deep in its own streams and is
    reported as corrupt.)
    """
    try:
        with open(path, 'rb') as f:
            head = f.read(8)
            if head == b'\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1':
                f.seek(0)
                return 'EncryptionInfo'.encode('utf-16-le') in f.read(64 * 1024 * 1024)
        if head[:4] == b'PK\x03\x04':
            with zipfile.ZipFile(path) as z:
                manifest = z.open('META-INF/manifest.xml').read(4 * 1024 * 1024)
                return b'encryption-data' in manifest
    except (OSError, KeyError, zipfile.BadZipFile):
        return False
    return False


def start_office():
    args = [SOFFICE, '--headless', '--invisible', '--nologo', '--nodefault', '--norestore', '--nolockcheck',
            '-env:UserInstallation=' + uno.systemPathToFileUrl(PROFILE),
            '--accept=pipe,name=%s;urp;StarOffice.ComponentContext' % PIPE]
    # Its own session, so the bridge can kill soffice and every process it forks as one group.
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext('com.sun.star.bridge.UnoUrlResolver', local)
    deadline = time.time() + 60
    while True:
        try:
            ctx = resolver.resolve('uno:pipe,name=%s;urp;StarOffice.ComponentContext' % PIPE)
            break
        except Exception:
            if proc.poll() is not None or time.time() > deadline:
                raise SystemExit('soffice did not start (exit %s)' % proc.poll())
            time.sleep(0.05)
    desktop = ctx.ServiceManager.createInstanceWithContext('com.sun.star.frame.Desktop', ctx)
    return proc, desktop


def kind_of(doc):
    for service, kind in KINDS:
        if doc.supportsService(service):
            return kind
    return None


def convert(desktop, req):
    handler = RefusingHandler()
    load = [prop('Hidden', True), prop('ReadOnly', True),
            prop('MacroExecutionMode', 0),  # com.sun.star.document.MacroExecMode.NEVER_EXECUTE
            prop('UpdateDocMode', 0),  # com.sun.star.document.UpdateDocMode.NO_UPDATE: links stay as saved
            prop('InteractionHandler', handler)]
    if req.get('password') is not None:
        load.append(prop('Password', req['password']))
    try:
        doc = desktop.loadComponentFromURL(uno.systemPathToFileUrl(req['input']), '_blank', 0, tuple(load))
    except Exception as err:  # IOException / IllegalArgumentException: the file could not be opened
        if 'Disposed' in type(err).__name__:  # the office died loading it: the outer handler answers 'engine'
            raise
        doc, message = None, str(err)
    else:
        message = 'LibreOffice could not open the file'
    if doc is None:
        if handler.asked_password or looks_encrypted(req['input']):
            return {'ok': False, 'reason': 'password_protected',
                    'message': 'the document is encrypted with a password'}
        return {'ok': False, 'reason': 'corrupt', 'message': message or 'LibreOffice could not open the file'}
    try:
        kind = kind_of(doc)
        filter_used = next((a.Value for a in doc.getArgs() if a.Name == 'FilterName'), None)
        if filter_used in TEXT_FALLBACK:
            return {'ok': False, 'reason': 'corrupt', 'message': 'LibreOffice recognised no document format in the file'}
        filt = FILTERS.get(req['target'], {}).get(kind)
        if filt is None:
            return {'ok': False, 'reason': 'unsupported_conversion',
                    'message': 'a %s document cannot be written as %s' % (kind or 'unknown', req['target'])}
        store = [prop('FilterName', filt), prop('Overwrite', True)]
        if req.get('filterOptions'):
            store.append(prop('FilterOptions', req['filterOptions']))
        if req.get('filterData'):
            store.append(prop('FilterData', uno.Any('[]com.sun.star.beans.PropertyValue',
                                                    tuple(prop(k, v) for k, v in req['filterData'].items()))))
        if req.get('encryptionPassword'):  # the tests write password-protected documents with it
            store.append(prop('Password', req['encryptionPassword']))
        try:
            doc.storeToURL(uno.systemPathToFileUrl(req['output']), tuple(store))
        except Exception as err:
            if 'Disposed' in type(err).__name__:  # the office went away under us: the outer handler restarts it
                raise
            return {'ok': False, 'reason': 'write_failed', 'message': str(err)}
        return {'ok': True, 'kind': kind}
    finally:
        try:
            doc.close(True)
        except Exception:
            doc.dispose()


def main():
    proc, desktop = start_office()

    def stop(*_):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    answer({'ready': True, 'pid': proc.pid})
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        try:
            res = convert(desktop, req)
        except Exception as err:  # the office itself failed (a crash, a lost bridge): the parent restarts us
            answer({'id': req.get('id'), 'ok': False, 'reason': 'engine', 'message': str(err)})
            stop()
        res['id'] = req.get('id')
        answer(res)
    stop()


if __name__ == '__main__':
    main()
