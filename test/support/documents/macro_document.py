"""A document with a live macro, for the office engine's tests (Debian's python3 with python3-uno).

  macro_document.py make   PROFILE_DIR OUT.odt MARKER   writes OUT.odt: a Writer document whose Basic macro, bound to
                                                        its open events, writes MARKER
  macro_document.py allow  PROFILE_DIR DOC.odt          opens DOC.odt as a user who allows macros would (a visible
                                                        frame, MacroExecutionMode ALWAYS_EXECUTE_NO_WARN), then closes it

Each run starts a soffice of its own on PROFILE_DIR and kills it (its process group) before it exits.
"""
import os
import subprocess
import sys
import time

import uno
from com.sun.star.beans import PropertyValue

ALWAYS_EXECUTE_NO_WARN = 4
EVENTS = ('OnLoad', 'OnLoadFinished', 'OnViewCreated')


def prop(name, value):
    p = PropertyValue()
    p.Name = name
    p.Value = value
    return p


def office(profile):
    pipe = 'docproc-macro-%d' % os.getpid()
    proc = subprocess.Popen(['soffice', '-env:UserInstallation=' + uno.systemPathToFileUrl(profile), '--headless',
                             '--norestore', '--accept=pipe,name=%s;urp;StarOffice.ComponentContext' % pipe],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext('com.sun.star.bridge.UnoUrlResolver', local)
    deadline = time.time() + 90
    while True:
        try:
            ctx = resolver.resolve('uno:pipe,name=%s;urp;StarOffice.ComponentContext' % pipe)
            break
        except Exception:
            if proc.poll() is not None or time.time() > deadline:
                raise SystemExit('soffice did not start')
            time.sleep(0.1)
    return proc, ctx.ServiceManager.createInstanceWithContext('com.sun.star.frame.Desktop', ctx)


def main():
    mode, profile, doc_path = sys.argv[1], sys.argv[2], sys.argv[3]
    proc, desktop = office(profile)
    try:
        if mode == 'make':
            marker = sys.argv[4]
            doc = desktop.loadComponentFromURL('private:factory/swriter', '_blank', 0, (prop('Hidden', True),))
            doc.Text.setString('A document with a macro.')
            libs = doc.BasicLibraries
            lib = libs.getByName('Standard') if libs.hasByName('Standard') else libs.createLibrary('Standard')
            lib.insertByName('Module1', 'Sub Main\n  Open "%s" For Output As #1\n  Print #1, "ran"\n  Close #1\n'
                                        'End Sub\n' % marker)
            script = 'vnd.sun.star.script:Standard.Module1.Main?language=Basic&location=document'
            for event in EVENTS:
                binding = uno.Any('[]com.sun.star.beans.PropertyValue',
                                  (prop('EventType', 'Script'), prop('Script', script)))
                uno.invoke(doc.Events, 'replaceByName', (event, binding))
            doc.storeToURL(uno.systemPathToFileUrl(doc_path), (prop('FilterName', 'writer8'),))
            doc.close(True)
        else:
            doc = desktop.loadComponentFromURL(uno.systemPathToFileUrl(doc_path), '_blank', 0,
                                               (prop('MacroExecutionMode', ALWAYS_EXECUTE_NO_WARN),))
            time.sleep(2)
            doc.close(True)
    finally:
        try:
            desktop.terminate()
        except Exception:
            pass
        try:
            os.killpg(proc.pid, 9)
        except OSError:
            pass


if __name__ == '__main__':
    main()
