import { expect } from 'chai';
import { assertValidKey } from '../../core/stores/blob-store';
import {
  fromKeySegment,
  keySegment,
  MAX_NAME_BYTES,
  sanitizeName,
  sessionDir,
  sessionPath,
} from '../../core/stores/session-store';

describe('session names and paths', () => {
  it('sanitizing keeps ordinary names and unicode as they are', () => {
    for (const n of [
      'Open Source Hardware',
      'KI & Gesellschaft',
      'Überblick – Straßenbahn',
      '会议 2025',
      'talk-01_v2.final',
      'emoji 🚀 track',
    ]) {
      expect(sanitizeName(n)).to.equal(n);
    }
  });

  it('sanitizing removes separators, traversal, control and bidi characters and bounds the length', () => {
    expect(sanitizeName('../../etc/passwd')).to.equal('-.-etc-passwd');
    expect(() => sanitizeName('..', 'track')).to.throw(/track has no usable characters/);
    expect(() => sanitizeName(' \u0000\t ', 'event')).to.throw(/event/);
    expect(sanitizeName('a\\b/c:d*e?f"g<h>i|j')).to.equal('a-b-c-d-e-f-g-h-i-j');
    expect(sanitizeName('evil\u202Etxt.md\u0007\n')).to.equal('eviltxt.md');
    expect(sanitizeName('  many   spaces\r\nand lines ')).to.equal('many spaces and lines');
    expect(sanitizeName('.hidden.')).to.equal('hidden');
    const long = 'ä'.repeat(100);
    const cut = sanitizeName(long);
    expect(Buffer.byteLength(cut)).to.be.at.most(MAX_NAME_BYTES);
    expect(cut).to.equal('ä'.repeat(MAX_NAME_BYTES / 2));
    // A cut never splits a character (4-byte emoji).
    expect(sanitizeName('🚀'.repeat(30))).to.equal('🚀'.repeat(20));
  });

  it('key segments round-trip and use only key characters, never a dot', () => {
    for (const n of [
      'Open Source Hardware',
      'a_b',
      '_z',
      'x.y',
      '会议中心的主题演讲',
      'ÄÖÜ äöü ß',
      '',
      '-',
      '🚀🚀',
      'A/B',
    ]) {
      const s = keySegment(n);
      expect(s).to.match(/^[A-Za-z0-9_-]*$/);
      expect(fromKeySegment(s)).to.equal(n);
    }
    // The shorter form is chosen: escapes for Latin text, base64 for mostly non-Latin text.
    expect(keySegment('Open Source')).to.equal('Open_20Source');
    expect(keySegment('会议中心的主题演讲').startsWith('_z')).to.equal(true);
  });

  it('session paths stay under sessions/ with one segment per name, for hostile names too', () => {
    const p = sessionPath('FOSDEM 2025', 'de', 'Open Source', 'talk.md');
    expect(p).to.equal('sessions/FOSDEM_202025/de/Open_20Source/talk.md');
    const names = [
      '../..',
      '../../../etc',
      '/abs/path',
      'a/../../b',
      '..\\..\\win',
      'x\u0000y',
      '.',
      '%2e%2e%2f',
      '会议/../../x',
    ];
    for (const n of names) {
      let key: string;
      try {
        key = sessionPath(n, n.length > 2 ? n : 'de', n, n);
      } catch (e) {
        expect((e as Error).message).to.match(/no usable characters/);
        continue;
      }
      assertValidKey(key);
      expect(key.split('/')).to.have.length(5);
      expect(key.startsWith('sessions/')).to.equal(true);
      expect(key.split('/').every((s) => s !== '..' && s !== '.')).to.equal(true);
    }
    // The longest names still make a valid key.
    const longest = 'ü'.repeat(200);
    assertValidKey(sessionPath(longest, longest, longest, longest));
    expect(sessionDir('E', 'en', 'T')).to.equal('sessions/E/en/T/');
  });
});
