import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The settings every office-engine profile starts with, written as the profile's `registrymodifications.xcu` before
 * LibreOffice first opens it (it keeps them: a profile is reused by its slot across restarts, so LibreOffice starts
 * warm). The load itself also passes MacroExecutionMode=NEVER and UpdateDocMode=NO_UPDATE (uno_bridge.py); these are
 * the second lock on each door:
 * - macros: security level 3 ("very high": only signed macros from trusted locations, of which there are none) and
 *   macro execution disabled outright;
 * - linked content: Writer's and Calc's link updates set to "never" (Writer 0, Calc 1: their enums differ), and
 *   links from untrusted referers (a document's remote images) blocked;
 * - network: a manual proxy on the loopback discard port for HTTP, HTTPS and FTP with no exceptions, so whatever
 *   LibreOffice might still try to fetch fails at once instead of reaching out;
 * - no first-start wizard, no update check, no crash-report dialog waiting for a click that never comes.
 */
const SETTINGS: Array<[string, string, string]> = [
  ['/org.openoffice.Office.Common/Security/Scripting', 'MacroSecurityLevel', '3'],
  ['/org.openoffice.Office.Common/Security/Scripting', 'DisableMacrosExecution', 'true'],
  ['/org.openoffice.Office.Common/Security/Scripting', 'BlockUntrustedRefererLinks', 'true'],
  ['/org.openoffice.Office.Writer/Content/Update', 'Link', '0'],
  ['/org.openoffice.Office.Calc/Content/Update', 'Link', '1'],
  ['/org.openoffice.Inet/Settings', 'ooInetProxyType', '1'],
  ['/org.openoffice.Inet/Settings', 'ooInetHTTPProxyName', '127.0.0.1'],
  ['/org.openoffice.Inet/Settings', 'ooInetHTTPProxyPort', '9'],
  ['/org.openoffice.Inet/Settings', 'ooInetHTTPSProxyName', '127.0.0.1'],
  ['/org.openoffice.Inet/Settings', 'ooInetHTTPSProxyPort', '9'],
  ['/org.openoffice.Inet/Settings', 'ooInetFTPProxyName', '127.0.0.1'],
  ['/org.openoffice.Inet/Settings', 'ooInetFTPProxyPort', '9'],
  ['/org.openoffice.Inet/Settings', 'ooInetNoProxy', ''],
  ['/org.openoffice.Setup/Office', 'ooSetupInstCompleted', 'true'],
  ['/org.openoffice.Office.Common/Misc', 'FirstRun', 'false'],
  ['/org.openoffice.Office.Common/Misc', 'ShowTipOfTheDay', 'false'],
  [
    "/org.openoffice.Office.Jobs/Jobs/org.openoffice.Office.Jobs:Job['UpdateCheck']/Arguments",
    'AutoCheckEnabled',
    'false',
  ],
  ['/org.openoffice.Office.Recovery/RecoveryInfo', 'Enabled', 'false'],
  ['/org.openoffice.Office.Recovery/AutoSave', 'Enabled', 'false'],
];

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

/** The `registrymodifications.xcu` text of `SETTINGS`. */
export function profileSettingsXcu(): string {
  const items = SETTINGS.map(
    ([p, name, value]) =>
      `<item oor:path="${esc(p)}"><prop oor:name="${esc(name)}" oor:op="fuse"><value>${esc(value)}</value></prop></item>`,
  );
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" ' +
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n' +
    items.join('\n') +
    '\n</oor:items>\n'
  );
}

/**
 * Creates the profile directory `dir` with the settings above (overwriting what LibreOffice saved there last time:
 * a profile never keeps anything a document changed).
 */
export async function prepareProfile(dir: string): Promise<void> {
  await mkdir(path.join(dir, 'user'), { recursive: true, mode: 0o700 });
  await writeFile(path.join(dir, 'user', 'registrymodifications.xcu'), profileSettingsXcu(), { mode: 0o600 });
}
