import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../core/config/config';
import { outboundPolicy } from '../../providers/http/ssrf';
import { loopbackLaunchEnv } from '../../scripts/launch-env.mjs';

describe('the outbound policy: one setting, never where a process listens', () => {
  it('is ALLOW_PRIVATE_URLS alone, for a process on loopback, on every address, or with no HOST at all', () => {
    for (const HOST of [undefined, '127.0.0.1', '::1', 'localhost', '0.0.0.0']) {
      expect(outboundPolicy(loadConfig({ HOST })), `HOST=${HOST}`).to.deep.equal({ allowPrivate: false });
      expect(outboundPolicy(loadConfig({ HOST, ALLOW_PRIVATE_URLS: 'true' }))).to.deep.equal({ allowPrivate: true });
    }
  });

  it('inputs roots are the data directory alone unless INPUT_ROOTS says more, whatever HOST is', () => {
    expect(loadConfig({ HOST: '127.0.0.1', DATA_DIR: '/srv/d' }).inputRoots).to.deep.equal(['/srv/d']);
  });

  it('npm start on loopback sets ALLOW_PRIVATE_URLS, ALLOW_HTTP_CALLBACKS and the temp-dir input root', () => {
    for (const HOST of [undefined, '127.0.0.1', '[::1]', 'localhost']) {
      const { set, names } = loopbackLaunchEnv({ HOST }, '/srv/d');
      expect(set, `HOST=${HOST}`).to.deep.equal({
        ALLOW_PRIVATE_URLS: 'true',
        ALLOW_HTTP_CALLBACKS: 'true',
        INPUT_ROOTS: [path.resolve('/srv/d'), os.tmpdir()].join(','),
      });
      expect(names).to.have.length(3);
    }
  });

  it('npm start on any other address sets nothing, and an explicit setting of the operator is kept', () => {
    expect(loopbackLaunchEnv({ HOST: '0.0.0.0' }, '/srv/d').set).to.deep.equal({});
    expect(loopbackLaunchEnv({ HOST: '10.0.0.5' }, '/srv/d').set).to.deep.equal({});
    const kept = loopbackLaunchEnv({ ALLOW_PRIVATE_URLS: 'false', INPUT_ROOTS: '/in' }, '/srv/d').set;
    expect(kept).to.deep.equal({ ALLOW_HTTP_CALLBACKS: 'true' });
  });
});
